//! The crate's error type.

use std::fmt;

/// Characters allowed in a [`ServerName`](crate::ServerName), as shown in error messages.
pub(crate) const SERVER_NAME_CHARS: &str = "A-Z a-z 0-9 _ -";
/// Characters allowed in an [`EnvironmentId`](crate::EnvironmentId), as shown in error messages.
pub(crate) const ENVIRONMENT_ID_CHARS: &str = "A-Z a-z 0-9 . _ -";

/// Everything that can go wrong when building an identity from text.
///
/// Every message names the offending value, what is wrong with it (for a bad character: the
/// character and its byte position) and what is allowed instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A server name was empty, too long, or held a character outside `[A-Za-z0-9_-]`.
    #[error(
        "invalid server name `{}`: {}",
        shown(.value),
        .problem.describe(SERVER_NAME_CHARS)
    )]
    InvalidServerName {
        /// The rejected text.
        value: String,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// An environment id was empty, too long, or held a character outside `[A-Za-z0-9._-]`.
    #[error(
        "invalid environment id `{}`: {}",
        shown(.value),
        .problem.describe(ENVIRONMENT_ID_CHARS)
    )]
    InvalidEnvironmentId {
        /// The rejected text.
        value: String,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// A server key in text form (`name` or `name@environment`) did not parse.
    ///
    /// Positions in `problem` count bytes from the start of the whole key text.
    #[error(
        "invalid server key `{}`: {part}: {}; write `name` or `name@environment`",
        shown(.value),
        .problem.describe(.part.allowed())
    )]
    InvalidKey {
        /// The rejected text.
        value: String,
        /// Which half of the key is wrong.
        part: KeyPart,
        /// What is wrong with it.
        problem: NameProblem,
    },
}

impl KeyError {
    /// True for [`KeyError::InvalidServerName`].
    pub fn is_invalid_server_name(&self) -> bool {
        matches!(self, Self::InvalidServerName { .. })
    }

    /// True for [`KeyError::InvalidEnvironmentId`].
    pub fn is_invalid_environment_id(&self) -> bool {
        matches!(self, Self::InvalidEnvironmentId { .. })
    }

    /// True for [`KeyError::InvalidKey`].
    pub fn is_invalid_key(&self) -> bool {
        matches!(self, Self::InvalidKey { .. })
    }

    /// The rejected text, whatever the variant.
    pub fn value(&self) -> &str {
        match self {
            Self::InvalidServerName { value, .. }
            | Self::InvalidEnvironmentId { value, .. }
            | Self::InvalidKey { value, .. } => value,
        }
    }

    /// What is wrong with the rejected text, whatever the variant.
    pub fn problem(&self) -> &NameProblem {
        match self {
            Self::InvalidServerName { problem, .. }
            | Self::InvalidEnvironmentId { problem, .. }
            | Self::InvalidKey { problem, .. } => problem,
        }
    }
}

/// Why a piece of text is not a valid name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameProblem {
    /// The text is empty.
    Empty,
    /// The text is longer than allowed.
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The largest allowed length in bytes.
        max: usize,
    },
    /// The text holds a character that is not allowed (the first such one).
    BadChar {
        /// The character.
        ch: char,
        /// Its byte offset.
        position: usize,
    },
}

impl NameProblem {
    fn describe(&self, allowed: &'static str) -> Describe<'_> {
        Describe {
            problem: self,
            allowed,
        }
    }

    /// The same problem with its byte position moved by `offset`.
    pub(crate) fn shifted(self, offset: usize) -> Self {
        match self {
            Self::BadChar { ch, position } => Self::BadChar {
                ch,
                position: position + offset,
            },
            other => other,
        }
    }
}

struct Describe<'a> {
    problem: &'a NameProblem,
    allowed: &'static str,
}

impl fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self.problem {
            NameProblem::Empty => write!(f, "it is empty (use 1 to 64 of {})", self.allowed),
            NameProblem::TooLong { len, max } => {
                write!(f, "it is {len} bytes long (use at most {max})")
            }
            NameProblem::BadChar { ch, position } => write!(
                f,
                "character {ch:?} at position {position} is not allowed (use {})",
                self.allowed
            ),
        }
    }
}

/// Which half of a `name@environment` key text is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyPart {
    /// The server name (before `@`).
    ServerName,
    /// The environment id (after `@`).
    Environment,
}

impl KeyPart {
    fn allowed(self) -> &'static str {
        match self {
            Self::ServerName => SERVER_NAME_CHARS,
            Self::Environment => ENVIRONMENT_ID_CHARS,
        }
    }
}

impl fmt::Display for KeyPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ServerName => "server name",
            Self::Environment => "environment id",
        })
    }
}

/// Longest prefix of a rejected value shown in a message, in characters.
const SHOWN_CHARS: usize = 80;

/// The rejected value as shown in a message: control characters escaped, long values cut.
fn shown(value: &str) -> String {
    let mut out = String::new();
    for (i, ch) in value.chars().enumerate() {
        if i == SHOWN_CHARS {
            out.push('…');
            break;
        }
        if ch.is_control() {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out
}

/// Checks `value` against a length limit and a byte class; the first offending character
/// (not byte) is reported.
pub(crate) fn check_name(
    value: &str,
    max: usize,
    allowed: fn(u8) -> bool,
) -> Result<(), NameProblem> {
    if value.is_empty() {
        return Err(NameProblem::Empty);
    }
    if let Some((position, ch)) = value
        .char_indices()
        .find(|&(_, ch)| !(ch.is_ascii() && allowed(ch as u8)))
    {
        return Err(NameProblem::BadChar { ch, position });
    }
    if value.len() > max {
        return Err(NameProblem::TooLong {
            len: value.len(),
            max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_escapes_and_cuts() {
        assert_eq!(shown("a\nb`c"), "a\\nb`c");
        let long = "x".repeat(200);
        assert_eq!(shown(&long), format!("{}…", "x".repeat(80)));
    }

    #[test]
    fn bad_character_wins_over_length() {
        let text = format!("{} ", "a".repeat(70));
        assert_eq!(
            check_name(&text, 64, |b| b.is_ascii_alphanumeric()),
            Err(NameProblem::BadChar {
                ch: ' ',
                position: 70
            })
        );
    }
}

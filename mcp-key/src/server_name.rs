//! [`ServerName`]: the configured name of one MCP server.

use crate::error::{KeyError, check_name};
use crate::text_impls::validated_text;

/// The longest allowed [`ServerName`] and [`EnvironmentId`](crate::EnvironmentId), in bytes.
pub const MAX_NAME_LEN: usize = 64;

/// The name a host configured for one MCP server, such as `github` or `my-db_2`.
///
/// Valid names are 1 to 64 bytes of `[A-Za-z0-9_-]`. Case is preserved and significant:
/// `GitHub` and `github` are two servers. A name alone does not identify a server when
/// several environments are in play: use [`McpServerKey`](crate::McpServerKey) for that.
///
/// ```
/// use mcp_key::ServerName;
///
/// let name = ServerName::new("github")?;
/// assert_eq!(name.as_str(), "github");
/// assert!(ServerName::new("my srv").is_err());
/// # Ok::<(), mcp_key::KeyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerName(String);

impl ServerName {
    /// Validates `s` as a server name.
    ///
    /// # Errors
    /// [`KeyError::InvalidServerName`] when `s` is empty, longer than 64 bytes, or holds a
    /// character outside `[A-Za-z0-9_-]` (the message names the first such character and
    /// its byte position).
    pub fn new(s: impl Into<String>) -> Result<Self, KeyError> {
        let value = s.into();
        match check_name(&value, MAX_NAME_LEN, is_server_name_byte) {
            Ok(()) => Ok(Self(value)),
            Err(problem) => Err(KeyError::InvalidServerName { value, problem }),
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// True for the bytes allowed in a server name (and in a model-visible tool name).
pub(crate) fn is_server_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

validated_text!(ServerName);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NameProblem;

    #[test]
    fn accepts_the_allowed_bytes_and_keeps_case() {
        for ok in ["a", "GitHub", "my-db_2", "-", "_", &"x".repeat(64)] {
            assert_eq!(ServerName::new(ok).unwrap().as_str(), ok);
        }
        assert_ne!(ServerName::new("A").unwrap(), ServerName::new("a").unwrap());
    }

    #[test]
    fn rejects_empty_long_and_bad_characters() {
        assert_eq!(
            *ServerName::new("").unwrap_err().problem(),
            NameProblem::Empty
        );
        assert_eq!(
            *ServerName::new("x".repeat(65)).unwrap_err().problem(),
            NameProblem::TooLong { len: 65, max: 64 }
        );
        for (bad, ch, position) in [
            ("a.b", '.', 1),
            ("a/b", '/', 1),
            ("aé", 'é', 1),
            ("a@b", '@', 1),
        ] {
            let err = ServerName::new(bad).unwrap_err();
            assert!(err.is_invalid_server_name());
            assert_eq!(*err.problem(), NameProblem::BadChar { ch, position });
            assert_eq!(err.value(), bad);
        }
    }

    #[test]
    fn position_is_a_byte_offset() {
        // 'é' is two bytes, so the space after it is at byte 3.
        let err = ServerName::new("é b").unwrap_err();
        assert_eq!(
            *err.problem(),
            NameProblem::BadChar {
                ch: 'é',
                position: 0
            }
        );
        let err = ServerName::new("ab\u{e9}").unwrap_err();
        assert_eq!(
            *err.problem(),
            NameProblem::BadChar {
                ch: 'é',
                position: 2
            }
        );
    }

    #[test]
    fn text_conversions_round_trip() {
        let name: ServerName = "srv".parse().unwrap();
        assert_eq!(name.to_string(), "srv");
        assert_eq!(ServerName::try_from("srv").unwrap(), name);
        assert_eq!(ServerName::try_from(String::from("srv")).unwrap(), name);
        assert_eq!(AsRef::<str>::as_ref(&name), "srv");
        assert_eq!(String::from(name), "srv");
    }
}

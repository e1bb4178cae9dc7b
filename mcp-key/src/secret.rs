//! [`Secret`]: a string that never prints.

use std::fmt;

/// A token or secret header value. `Debug` and `Display` print `<redacted>`; only
/// [`Secret::expose`] gives the text.
///
/// Serde reads and writes the plain string, so credential stores can persist it: keep
/// serialized forms out of logs.
///
/// ```
/// use mcp_key::Secret;
///
/// let token = Secret::new("ghp_abc123");
/// assert_eq!(format!("{token} {token:?}"), "<redacted> <redacted>");
/// assert_eq!(token.expose(), "ghp_abc123");
/// ```
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }

    /// The secret text. Call it only where the value leaves the process on purpose (a
    /// request header, a credential store).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// True when the secret is the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl PartialEq for Secret {
    /// Compares in time that depends only on the lengths, not on where the values differ.
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl Eq for Secret {}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Self(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_the_value() {
        let s = Secret::new("hunter2");
        assert_eq!(
            format!("{s}|{s:?}|{:?}", Some(&s)),
            "<redacted>|<redacted>|Some(<redacted>)"
        );
        assert_eq!(s.expose(), "hunter2");
        assert!(!s.is_empty());
        assert!(Secret::default().is_empty());
    }

    #[test]
    fn compares_by_value() {
        assert_eq!(Secret::new("a"), Secret::from(String::from("a")));
        assert_ne!(Secret::new("a"), Secret::new("b"));
        assert_ne!(Secret::new("a"), Secret::new("ab"));
    }
}

//! [`EnvironmentId`]: where a server runs.

use std::borrow::Cow;

use crate::MAX_NAME_LEN;
use crate::error::{KeyError, check_name};
use crate::text_impls::validated_text;

/// The execution environment a server runs in: the local machine, a devbox, a container.
///
/// Valid ids are 1 to 64 bytes of `[A-Za-z0-9._-]`. [`EnvironmentId::LOCAL`] (`"local"`) is
/// the default environment.
///
/// ```
/// use mcp_key::EnvironmentId;
///
/// let devbox = EnvironmentId::new("devbox.eu-1")?;
/// assert!(!devbox.is_local());
/// assert!(EnvironmentId::LOCAL.is_local());
/// # Ok::<(), mcp_key::KeyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EnvironmentId(Cow<'static, str>);

impl EnvironmentId {
    /// The local machine, `"local"`: the default environment.
    pub const LOCAL: EnvironmentId = EnvironmentId(Cow::Borrowed("local"));

    /// Validates `s` as an environment id.
    ///
    /// # Errors
    /// [`KeyError::InvalidEnvironmentId`] when `s` is empty, longer than 64 bytes, or holds
    /// a character outside `[A-Za-z0-9._-]` (the message names the first such character
    /// and its byte position).
    pub fn new(s: impl Into<String>) -> Result<Self, KeyError> {
        let value = s.into();
        match check_name(&value, MAX_NAME_LEN, is_environment_byte) {
            Ok(()) => Ok(Self(Cow::Owned(value))),
            Err(problem) => Err(KeyError::InvalidEnvironmentId { value, problem }),
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for [`EnvironmentId::LOCAL`] (however it was built).
    pub fn is_local(&self) -> bool {
        self.as_str() == Self::LOCAL.as_str()
    }
}

impl Default for EnvironmentId {
    /// [`EnvironmentId::LOCAL`].
    fn default() -> Self {
        Self::LOCAL
    }
}

/// True for the bytes allowed in an environment id.
pub(crate) fn is_environment_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

validated_text!(EnvironmentId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_is_local_however_built() {
        assert_eq!(EnvironmentId::LOCAL.as_str(), "local");
        assert!(EnvironmentId::LOCAL.is_local());
        let built = EnvironmentId::new("local").unwrap();
        assert!(built.is_local());
        assert_eq!(built, EnvironmentId::LOCAL);
        assert_eq!(EnvironmentId::default(), EnvironmentId::LOCAL);
        assert!(!EnvironmentId::new("Local").unwrap().is_local());
    }

    #[test]
    fn allows_dots_but_not_at_signs() {
        assert_eq!(
            EnvironmentId::new("eu-1.devbox_2").unwrap().as_str(),
            "eu-1.devbox_2"
        );
        let err = EnvironmentId::new("a@b").unwrap_err();
        assert!(err.is_invalid_environment_id());
        assert_eq!(
            err.to_string(),
            "invalid environment id `a@b`: character '@' at position 1 is not allowed \
             (use A-Z a-z 0-9 . _ -)"
        );
        assert!(EnvironmentId::new("").is_err());
        assert!(EnvironmentId::new("e".repeat(65)).is_err());
        assert!(EnvironmentId::new("e".repeat(64)).is_ok());
    }
}

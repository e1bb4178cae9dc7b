//! [`AuthStatus`]: how a server is authenticated, computed without starting it.

use serde::Serialize;

/// The authentication state of one server, as shown by `mcpctl` and host UIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuthStatus {
    /// No OAuth for this server (stdio, or the server publishes no OAuth metadata).
    Unsupported,
    /// A bearer token from configuration (`bearer_token_env_var` or a header).
    BearerToken,
    /// Usable OAuth tokens are stored (possibly after a refresh).
    #[serde(rename = "oauth")]
    OAuth,
    /// Nothing is stored; the user must log in.
    LoginRequired,
    /// Tokens are stored but unusable (expired without refresh, or refresh rejected).
    ReloginRequired,
    /// The state could not be determined (e.g. the store or discovery failed).
    Unknown,
}

impl AuthStatus {
    /// The snake_case name used in JSON and CLI output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unsupported => "unsupported",
            Self::BearerToken => "bearer_token",
            Self::OAuth => "oauth",
            Self::LoginRequired => "login_required",
            Self::ReloginRequired => "relogin_required",
            Self::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for AuthStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names_match_as_str() {
        for status in [
            AuthStatus::Unsupported,
            AuthStatus::BearerToken,
            AuthStatus::OAuth,
            AuthStatus::LoginRequired,
            AuthStatus::ReloginRequired,
            AuthStatus::Unknown,
        ] {
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::json!(status.as_str())
            );
        }
    }
}

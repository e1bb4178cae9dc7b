//! How streamable-HTTP servers get their `Authorization` header.
//!
//! The connection set asks an [`AuthHeaderProvider`] for a bearer token when it connects.
//! This crate ships the providers for the configuration's `bearer_token_env_var` and for
//! a fixed token; OAuth providers (from `mcp-auth`) implement the same trait.

use std::sync::Arc;

use mcp_key::{McpServerKey, Secret};

use crate::BoxFuture;
use crate::failure::FailureReason;

/// Why no usable credential could be produced.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CredentialsError {
    /// The environment variable holding the token is missing, empty or not UTF-8.
    MissingEnvVar {
        /// The server.
        server: McpServerKey,
        /// The variable.
        var: String,
        /// `missing` (unset, or not valid UTF-8) or `empty`.
        problem: &'static str,
    },
    /// The user must log in (no stored credentials).
    LoginRequired {
        /// The server.
        server: McpServerKey,
        /// The `mcp-auth` error behind it, when there is one.
        source: Option<Arc<mcp_auth::AuthError>>,
    },
    /// Stored credentials can no longer be used; the user must log in again.
    ReloginRequired {
        /// The server.
        server: McpServerKey,
        /// The `mcp-auth` error behind it, when there is one.
        source: Option<Arc<mcp_auth::AuthError>>,
    },
    /// The enterprise identity provider refused the grant for a server with
    /// enterprise-managed authorization: the enterprise login must be redone.
    EnterpriseReloginRequired {
        /// The server.
        server: McpServerKey,
        /// The `mcp-auth` error behind it, when there is one.
        source: Option<Arc<mcp_auth::AuthError>>,
    },
    /// The server wants a scope the token lacks (HTTP 403 `insufficient_scope`) and no
    /// step-up login is possible here.
    InsufficientScope {
        /// The server.
        server: McpServerKey,
        /// The scope the server asked for, when its challenge names one.
        scope: Option<String>,
    },
    /// The credentials could not be produced for another reason (the authorization server
    /// is unreachable, the credential store failed); trying again later may work.
    Unavailable {
        /// The server.
        server: McpServerKey,
        /// What failed.
        detail: String,
        /// The `mcp-auth` error behind it, when there is one.
        source: Option<Arc<mcp_auth::AuthError>>,
    },
}

impl std::fmt::Display for CredentialsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MissingEnvVar {
                server,
                var,
                problem,
            } => write!(
                f,
                "MCP server `{server}`: environment variable `{var}` named by bearer_token_env_var is {problem}; set it or remove bearer_token_env_var"
            ),
            Self::LoginRequired { server, .. } => write!(f, "MCP server `{server}` requires login"),
            // With a cause, the cause says why (mcp-auth's error).
            Self::ReloginRequired { server, source } => {
                write!(f, "MCP server `{server}` needs a new login")?;
                if source.is_none() {
                    f.write_str(" (its stored credentials were rejected)")?;
                }
                Ok(())
            }
            Self::EnterpriseReloginRequired { server, source } => {
                write!(f, "MCP server `{server}` needs a new enterprise sign-in")?;
                if source.is_none() {
                    f.write_str(" (the identity provider refused access)")?;
                }
                Ok(())
            }
            Self::InsufficientScope { server, scope } => write!(
                f,
                "MCP server `{server}` needs more access{}: log in again with the extra scope",
                scope
                    .as_ref()
                    .map(|s| format!(" (scope `{s}`)"))
                    .unwrap_or_default()
            ),
            Self::Unavailable { server, detail, .. } => {
                write!(
                    f,
                    "MCP server `{server}`: credentials unavailable: {detail}"
                )
            }
        }
    }
}

/// The source is `mcp-auth`'s own error (not the `Arc` around it), so a host can downcast
/// it and use its predicates.
impl std::error::Error for CredentialsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::LoginRequired { source, .. }
            | Self::ReloginRequired { source, .. }
            | Self::EnterpriseReloginRequired { source, .. }
            | Self::Unavailable { source, .. } => source
                .as_deref()
                .map(|e| e as &(dyn std::error::Error + 'static)),
            Self::MissingEnvVar { .. } | Self::InsufficientScope { .. } => None,
        }
    }
}

impl CredentialsError {
    /// The `mcp-auth` error behind it, when there is one.
    pub fn auth_error(&self) -> Option<&Arc<mcp_auth::AuthError>> {
        match self {
            Self::LoginRequired { source, .. }
            | Self::ReloginRequired { source, .. }
            | Self::EnterpriseReloginRequired { source, .. }
            | Self::Unavailable { source, .. } => source.as_ref(),
            Self::MissingEnvVar { .. } | Self::InsufficientScope { .. } => None,
        }
    }

    /// The failure reason a startup with this error reports.
    pub fn reason(&self) -> FailureReason {
        match self {
            Self::MissingEnvVar { .. } => FailureReason::Config,
            Self::LoginRequired { .. } => FailureReason::LoginRequired,
            Self::ReloginRequired { .. } => FailureReason::ReloginRequired,
            Self::EnterpriseReloginRequired { .. } => FailureReason::EnterpriseReloginRequired,
            Self::Unavailable { .. } => FailureReason::Transport,
            Self::InsufficientScope { .. } => FailureReason::LoginRequired,
        }
    }

    /// The user must (re-)authenticate.
    pub fn is_auth_required(&self) -> bool {
        matches!(
            self,
            Self::LoginRequired { .. }
                | Self::ReloginRequired { .. }
                | Self::EnterpriseReloginRequired { .. }
        )
    }
}

/// Produces the bearer token for a server's HTTP requests.
///
/// The set asks before every request, so a provider that refreshes tokens shortly before
/// they expire (as `mcp-auth`'s OAuth credentials do) keeps long sessions working; keep
/// [`authorization`](Self::authorization) cheap when nothing needs refreshing.
pub trait AuthHeaderProvider: Send + Sync {
    /// The bearer token (without the `Bearer ` prefix), or `None` to send no credentials.
    fn authorization<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>>;

    /// The server answered 401 to a request that carried `rejected` (`None`: no token was
    /// sent), with `challenge` as its `WWW-Authenticate` value: return a fresh token to retry
    /// that request once, or an error (the server then needs a login). The default has
    /// nothing to refresh.
    fn refresh_after_unauthorized<'a>(
        &'a self,
        server: &'a McpServerKey,
        rejected: Option<&'a Secret>,
        challenge: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        let _ = (rejected, challenge);
        Box::pin(async move {
            Err(CredentialsError::LoginRequired {
                server: server.clone(),
                source: None,
            })
        })
    }

    /// The server answered 403 `insufficient_scope` with `challenge`: return a token with
    /// the missing scope to retry the request once (a step-up login), or an error. The
    /// default cannot step up.
    fn step_up<'a>(
        &'a self,
        server: &'a McpServerKey,
        challenge: &'a str,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        let scope = challenge_scope(challenge);
        Box::pin(async move {
            Err(CredentialsError::InsufficientScope {
                server: server.clone(),
                scope,
            })
        })
    }

    /// The DPoP proof (RFC 9449) that binds `token` to one request (`method` to `url`),
    /// when the token is DPoP-bound: the request then carries `Authorization: DPoP <token>`
    /// and `DPoP: <proof>` instead of a Bearer header. `nonce` is the server's latest
    /// `DPoP-Nonce`. The default: `None` (Bearer tokens).
    fn dpop_proof<'a>(
        &'a self,
        server: &'a McpServerKey,
        method: &'a str,
        url: &'a str,
        token: &'a Secret,
        nonce: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        let _ = (server, method, url, token, nonce);
        Box::pin(async { Ok(None) })
    }

    /// A request (possibly retried after a refresh or step-up) succeeded. Providers that
    /// count step-up attempts reset them here. The default does nothing.
    fn request_succeeded(&self, server: &McpServerKey) {
        let _ = server;
    }
}

/// The `scope` parameter of a `WWW-Authenticate: Bearer ...` challenge, if any.
pub fn challenge_scope(challenge: &str) -> Option<String> {
    let at = challenge.find("scope=")?;
    let before = challenge[..at].chars().last();
    if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let rest = challenge[at + "scope=".len()..].trim_start();
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next().unwrap_or_default(),
        None => rest.split([',', ' ']).next().unwrap_or_default(),
    };
    (!value.is_empty()).then(|| value.to_owned())
}

/// The catalog's [`EnvLookup`](mcp_catalog::EnvLookup), shared between the set's tasks:
/// how `env_vars`, `bearer_token_env_var` and `env_http_headers` are read (a closure
/// `|name: &str| -> Option<String>`, a map, or [`mcp_catalog::ProcessEnv`]).
pub type SharedEnvLookup = Arc<dyn mcp_catalog::EnvLookup + Send + Sync>;

/// The lookup of the real process environment.
pub fn process_env() -> SharedEnvLookup {
    Arc::new(mcp_catalog::ProcessEnv)
}

/// Reads the token from an environment variable at connect time
/// (`bearer_token_env_var`).
#[derive(Clone)]
pub struct BearerEnvVar {
    var: String,
    env: SharedEnvLookup,
}

impl BearerEnvVar {
    /// Reads `var` from the process environment.
    pub fn new(var: impl Into<String>) -> Self {
        Self::with_lookup(var, process_env())
    }

    /// Reads `var` through `env`.
    pub fn with_lookup(var: impl Into<String>, env: SharedEnvLookup) -> Self {
        Self {
            var: var.into(),
            env,
        }
    }
}

impl std::fmt::Debug for BearerEnvVar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerEnvVar")
            .field("var", &self.var)
            .finish()
    }
}

impl AuthHeaderProvider for BearerEnvVar {
    fn authorization<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        let result = match self.env.get(&self.var) {
            None => Err("missing"),
            Some(s) if s.is_empty() => Err("empty"),
            Some(s) => Ok(Some(Secret::new(s))),
        }
        .map_err(|problem| CredentialsError::MissingEnvVar {
            server: server.clone(),
            var: self.var.clone(),
            problem,
        });
        Box::pin(async move { result })
    }
}

/// A fixed token.
#[derive(Debug, Clone)]
pub struct StaticBearer(Secret);

impl StaticBearer {
    /// Always sends `token`.
    pub fn new(token: Secret) -> Self {
        Self(token)
    }
}

impl AuthHeaderProvider for StaticBearer {
    fn authorization<'a>(
        &'a self,
        _server: &'a McpServerKey,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        let token = self.0.clone();
        Box::pin(async move { Ok(Some(token)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_of_a_challenge() {
        assert_eq!(
            challenge_scope(r#"Bearer error="insufficient_scope", scope="files:write admin""#),
            Some("files:write admin".to_owned())
        );
        assert_eq!(
            challenge_scope("Bearer scope=read, error=x"),
            Some("read".to_owned())
        );
        assert_eq!(
            challenge_scope(r#"Bearer resource_metadata="https://x/y""#),
            None
        );
        assert_eq!(challenge_scope(r#"Bearer myscope="a""#), None);
    }

    fn key() -> McpServerKey {
        McpServerKey::unscoped("tickets".parse().unwrap())
    }

    #[tokio::test]
    async fn env_var_problems_name_the_variable_and_server() {
        let env: SharedEnvLookup = Arc::new(|name: &str| match name {
            "EMPTY" => Some(String::new()),
            "GOOD" => Some("s3cret".to_owned()),
            _ => None,
        });
        let k = key();
        let missing = BearerEnvVar::with_lookup("NOPE", env.clone())
            .authorization(&k)
            .await
            .unwrap_err();
        assert_eq!(
            missing.to_string(),
            "MCP server `tickets`: environment variable `NOPE` named by bearer_token_env_var is missing; set it or remove bearer_token_env_var"
        );
        let empty = BearerEnvVar::with_lookup("EMPTY", env.clone())
            .authorization(&k)
            .await
            .unwrap_err();
        assert!(empty.to_string().contains("`EMPTY`") && empty.to_string().contains("empty"));
        let good = BearerEnvVar::with_lookup("GOOD", env)
            .authorization(&k)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(good.expose(), "s3cret");
        assert_eq!(format!("{good:?}"), "<redacted>");
    }
}

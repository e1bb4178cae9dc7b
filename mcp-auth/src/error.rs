//! [`AuthError`]: why the OAuth client could not produce a usable credential.

use mcp_key::McpServerKey;

use crate::store::StoreError;

/// A boxed error kept as the `source` of an [`AuthError`] (rmcp's or reqwest's errors,
/// never shown in our own messages).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a login, refresh or token lookup failed.
///
/// Messages name the server and what to do; they never contain a token, a client secret
/// or text copied from an authorization server's error response (only its OAuth error
/// code).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// Nothing usable is stored: the user must log in.
    #[error("MCP server `{server}` requires login; run the login for this server")]
    LoginRequired {
        /// The server.
        server: McpServerKey,
    },
    /// Stored tokens exist but were rejected (`invalid_grant`) or cannot be refreshed.
    #[error("MCP server `{server}`: stored credentials are no longer valid; log in again")]
    ReloginRequired {
        /// The server.
        server: McpServerKey,
    },
    /// Protected-resource or authorization-server metadata could not be found or used.
    #[error("MCP server `{server}`: OAuth discovery failed: {detail}")]
    Discovery {
        /// The server.
        server: McpServerKey,
        /// What failed.
        detail: String,
        /// The underlying error.
        #[source]
        source: Option<BoxError>,
    },
    /// No client identity: registration failed or is not offered.
    #[error(
        "MCP server `{server}`: OAuth client registration failed: {detail}; configure a client_id"
    )]
    Registration {
        /// The server.
        server: McpServerKey,
        /// What failed.
        detail: String,
        /// The underlying error.
        #[source]
        source: Option<BoxError>,
    },
    /// The authorization response carried a `state` other than the one we sent.
    #[error(
        "MCP server `{server}`: the login callback's state does not match this login; start the login again"
    )]
    StateMismatch {
        /// The server.
        server: McpServerKey,
    },
    /// An issuer differs from the one the metadata promised (RFC 8414 / RFC 9207).
    #[error(
        "MCP server `{server}`: authorization server issuer mismatch: expected `{expected}`, got `{received}`"
    )]
    IssuerMismatch {
        /// The server.
        server: McpServerKey,
        /// The issuer we trust.
        expected: String,
        /// The issuer presented.
        received: String,
    },
    /// The protected-resource metadata describes another resource (RFC 9728 section 3.3).
    #[error(
        "MCP server `{server}`: protected resource metadata names another resource; refusing to authorize"
    )]
    ResourceMismatch {
        /// The server.
        server: McpServerKey,
        /// The underlying error.
        #[source]
        source: Option<BoxError>,
    },
    /// The login callback was malformed or reported an error.
    #[error("MCP server `{server}`: login callback failed: {detail}")]
    Callback {
        /// The server.
        server: McpServerKey,
        /// What failed (an OAuth error code, never the server's free text).
        detail: String,
        /// The OAuth `error` code of the authorization response, if it carried one.
        code: Option<String>,
    },
    /// The login was not completed in time.
    #[error("MCP server `{server}`: {what} did not complete in time")]
    Timeout {
        /// The server.
        server: McpServerKey,
        /// What timed out.
        what: &'static str,
    },
    /// The token endpoint answered with an OAuth error.
    #[error("MCP server `{server}`: the token endpoint refused the request ({code})")]
    TokenEndpoint {
        /// The server.
        server: McpServerKey,
        /// The OAuth error code only (`invalid_client`, ...).
        code: String,
    },
    /// The server wants a scope the token lacks and step-up is exhausted or impossible.
    #[error("MCP server `{server}`: the token lacks scope `{scope}`; log in with that scope")]
    InsufficientScope {
        /// The server.
        server: McpServerKey,
        /// The scope(s) the server asked for.
        scope: String,
    },
    /// The credential store failed.
    #[error("MCP server `{server}`: credential store failed")]
    Store {
        /// The server.
        server: McpServerKey,
        /// The store's error (boxed: it is large).
        #[source]
        source: Box<StoreError>,
    },
    /// A network or HTTP-level failure talking to an OAuth endpoint (retryable).
    #[error("MCP server `{server}`: HTTP request to {what} failed")]
    Http {
        /// The server.
        server: McpServerKey,
        /// Which endpoint.
        what: String,
        /// The underlying error.
        #[source]
        source: Option<BoxError>,
    },
    /// The enterprise IdP's ID token failed validation.
    #[error(
        "{server}: the enterprise ID token is invalid: {reason}; log in to the identity provider again"
    )]
    InvalidIdToken {
        /// The IdP's pseudo-server name.
        server: McpServerKey,
        /// Which check failed.
        reason: &'static str,
    },
    /// The [`UserAgent`](crate::UserAgent) could not hand the login URL over (headless
    /// agent: no redirect, or a redirect that is not the loopback callback).
    #[error("login: {detail}")]
    Agent {
        /// What failed.
        detail: String,
    },
    /// A DPoP key (RFC 9449) could not be generated, or a stored one is corrupt.
    #[error("DPoP: {detail}")]
    Dpop {
        /// What failed (never key material).
        detail: &'static str,
    },
    /// A workload identity token (a platform token for the JWT-bearer grant) could not be
    /// read.
    #[error("MCP server `{server}`: the workload identity token {detail}")]
    WorkloadToken {
        /// The server.
        server: McpServerKey,
        /// Which source and what is wrong with it (never the token).
        detail: String,
    },
    /// The token exchange endpoint (RFC 8693) refused to exchange a caller's token for one
    /// of the server ([`TokenExchanger`](crate::TokenExchanger)).
    #[error(
        "MCP server `{server}`: the authorization server refused to exchange the caller's token ({code}); {}",
        exchange_advice(.code)
    )]
    ExchangeRefused {
        /// The server the token was for.
        server: McpServerKey,
        /// The OAuth error code only (`invalid_grant`, `invalid_client`, ...).
        code: String,
    },
    /// The settings or the endpoints are unusable (e.g. plain HTTP to a non-loopback host).
    #[error("MCP server `{server}`: {detail}")]
    Config {
        /// The server.
        server: McpServerKey,
        /// What is wrong and how to fix it.
        detail: String,
    },
    /// The gateway's per-user credential store ([`CredentialVault`](crate::CredentialVault))
    /// failed for this server's caller credentials: see
    /// [`AuthError::is_store_unreachable`], [`AuthError::is_store_wrong_key`],
    /// [`AuthError::is_store_corrupt`].
    #[cfg(feature = "shared-store")]
    #[error("MCP server `{server}`: the gateway's credential store failed")]
    Vault {
        /// The server.
        server: McpServerKey,
        /// The store's error.
        #[source]
        source: Box<crate::VaultError>,
    },
}

impl AuthError {
    /// The user must log in for the first time.
    pub fn is_login_required(&self) -> bool {
        matches!(self, Self::LoginRequired { .. })
    }

    /// Stored credentials were rejected; the user must log in again.
    pub fn is_relogin_required(&self) -> bool {
        matches!(self, Self::ReloginRequired { .. })
    }

    /// The user must (re-)authenticate: login required, re-login required, or a scope the
    /// token lacks.
    pub fn is_auth_required(&self) -> bool {
        matches!(
            self,
            Self::LoginRequired { .. }
                | Self::ReloginRequired { .. }
                | Self::InsufficientScope { .. }
        )
    }

    /// A later attempt may succeed without user action (network failures, timeouts, store
    /// lock timeouts).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Http { .. } | Self::Timeout { .. } => true,
            Self::Store { source, .. } => source.is_retryable(),
            #[cfg(feature = "shared-store")]
            Self::Vault { source, .. } => source.is_retryable(),
            _ => false,
        }
    }

    /// The gateway's credential store cannot be reached (its database is down): calls to
    /// servers that use callers' credentials fail, the others go on. Always false
    /// without the `shared-store` feature.
    pub fn is_store_unreachable(&self) -> bool {
        #[cfg(feature = "shared-store")]
        if let Self::Vault { source, .. } = self {
            return source.is_unreachable();
        }
        false
    }

    /// A row of the gateway's credential store does not open with the gateway's keys
    /// (unknown key id, wrong key, or a row altered or moved). Always false without the
    /// `shared-store` feature.
    pub fn is_store_wrong_key(&self) -> bool {
        #[cfg(feature = "shared-store")]
        if let Self::Vault { source, .. } = self {
            return source.is_wrong_key();
        }
        false
    }

    /// A row of the gateway's credential store is corrupt. Always false without the
    /// `shared-store` feature.
    pub fn is_store_corrupt(&self) -> bool {
        #[cfg(feature = "shared-store")]
        if let Self::Vault { source, .. } = self {
            return source.is_corrupt();
        }
        false
    }

    /// The token exchange endpoint refused the exchange (any reason: see
    /// [`AuthError::is_caller_token_rejected`]).
    pub fn is_exchange_refused(&self) -> bool {
        matches!(self, Self::ExchangeRefused { .. })
    }

    /// The token exchange endpoint refused the caller's own token (`invalid_grant`:
    /// expired, revoked or not trusted there): the caller must sign in to the gateway
    /// again; other refusals are the gateway's configuration to fix.
    pub fn is_caller_token_rejected(&self) -> bool {
        matches!(self, Self::ExchangeRefused { code, .. } if code == "invalid_grant")
    }

    /// The server this error is about (`None` for a user-agent failure).
    pub fn server(&self) -> Option<&McpServerKey> {
        let server = match self {
            Self::Agent { .. } | Self::Dpop { .. } => return None,
            Self::LoginRequired { server }
            | Self::ReloginRequired { server }
            | Self::Discovery { server, .. }
            | Self::Registration { server, .. }
            | Self::StateMismatch { server }
            | Self::IssuerMismatch { server, .. }
            | Self::ResourceMismatch { server, .. }
            | Self::Callback { server, .. }
            | Self::Timeout { server, .. }
            | Self::TokenEndpoint { server, .. }
            | Self::ExchangeRefused { server, .. }
            | Self::InsufficientScope { server, .. }
            | Self::Store { server, .. }
            | Self::Http { server, .. }
            | Self::Config { server, .. }
            | Self::WorkloadToken { server, .. }
            | Self::InvalidIdToken { server, .. } => server,
            #[cfg(feature = "shared-store")]
            Self::Vault { server, .. } => server,
        };
        Some(server)
    }
}

/// What to do after a refused token exchange, by its OAuth error code.
fn exchange_advice(code: &str) -> &'static str {
    if code == "invalid_grant" {
        "the caller's token is expired, revoked or not trusted there: sign in to the gateway again"
    } else {
        "check the server's `token_exchange` settings (endpoint, client, audience, scope)"
    }
}

//! [`UpstreamIdentity`]: whose credentials a gateway in front of the catalog
//! (`mcpctl serve --http`) uses with an HTTP server (`upstream_identity` in
//! `[mcp_servers.<name>]`), and the RFC 8693 token exchange settings of
//! [`UpstreamIdentity::Exchange`] (`[mcp_servers.<name>.token_exchange]`).
//!
//! ```toml
//! [mcp_servers.github]
//! url = "https://mcp.github.example.com/mcp"
//! upstream_identity = "caller"      # each caller signs in to github's own authorization server
//!
//! [mcp_servers.tickets]
//! url = "https://tickets.example.com/mcp"
//! upstream_identity = "exchange"    # the caller's token exchanged for one for tickets
//!
//! [mcp_servers.tickets.token_exchange]
//! token_endpoint = "https://idp.example.com/oauth2/token"
//! audience = "https://tickets.example.com"   # and/or resource = "https://tickets.example.com/mcp"
//! scope = "tickets:read"                     # optional
//! client_id = "mcp-gateway"                  # optional: the gateway's client at the endpoint
//! client_secret_env = "GATEWAY_EXCHANGE_SECRET"   # with client_id; the secret never sits in the file
//! ```
//!
//! Only HTTP servers have the setting: a stdio server is started by the gateway and runs
//! as the gateway, so `upstream_identity` in a stdio server's table is refused.

use std::fmt;

/// Whose credentials the gateway presents to an HTTP server (`upstream_identity`).
///
/// Outside a gateway (one user's host) every mode means the same thing: that user's own
/// credentials.
///
/// ```
/// use mcp_catalog::{HttpConfig, TokenExchangeConfig, UpstreamIdentity};
/// let http = HttpConfig::new("https://tickets.example.com/mcp");
/// assert_eq!(http.upstream_identity(), &UpstreamIdentity::Gateway);
///
/// let exchange = TokenExchangeConfig::new("https://idp.example.com/oauth2/token")
///     .with_audience("https://tickets.example.com");
/// let http = http.with_upstream_identity(UpstreamIdentity::Exchange(exchange));
/// assert_eq!(http.upstream_identity().as_str(), "exchange");
/// assert!(http.upstream_identity().is_per_caller());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamIdentity {
    /// The gateway's own credentials for every caller (`"gateway"`, the default): what the
    /// server's other settings (`bearer_token_env_var`, `oauth`, ...) give the gateway.
    #[default]
    Gateway,
    /// Each caller's own OAuth credentials with the server's authorization server
    /// (`"caller"`): discovery, registration, PKCE and refresh as for one user, once per
    /// caller.
    Caller,
    /// The caller's token exchanged (RFC 8693) at a configured token endpoint for one
    /// whose audience is the server (`"exchange"`); the caller's token itself goes only to
    /// that endpoint.
    Exchange(TokenExchangeConfig),
}

impl UpstreamIdentity {
    /// The text form used in configuration: `gateway`, `caller` or `exchange`.
    pub fn as_str(&self) -> &'static str {
        match self {
            UpstreamIdentity::Gateway => "gateway",
            UpstreamIdentity::Caller => "caller",
            UpstreamIdentity::Exchange(_) => "exchange",
        }
    }

    /// Whether each caller reaches the server with credentials of its own (`caller` or
    /// `exchange`), so a connection cannot be shared between callers.
    pub fn is_per_caller(&self) -> bool {
        !matches!(self, UpstreamIdentity::Gateway)
    }

    /// The token exchange settings of [`UpstreamIdentity::Exchange`].
    pub fn token_exchange(&self) -> Option<&TokenExchangeConfig> {
        match self {
            UpstreamIdentity::Exchange(exchange) => Some(exchange),
            _ => None,
        }
    }

    /// The settings as `setting=value` lines, as the trust review shows them (none for the
    /// default): where a caller's token goes and for what (`client_secret_env` names the
    /// variable, never its value).
    pub(crate) fn review_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if *self != UpstreamIdentity::Gateway {
            lines.push(format!("upstream_identity={}", self.as_str()));
        }
        if let Some(exchange) = self.token_exchange() {
            lines.push(format!(
                "token_exchange.token_endpoint={}",
                exchange.token_endpoint()
            ));
            let optional = [
                ("audience", exchange.audience()),
                ("resource", exchange.resource()),
                ("scope", exchange.scope()),
                ("client_id", exchange.client_id()),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    lines.push(format!("token_exchange.{key}={value}"));
                }
            }
            if let Some(var) = exchange.client_secret_env() {
                lines.push(format!("token_exchange.client_secret=${var}"));
            }
        }
        lines
    }

    /// The fingerprint input of a mode other than the default (`None` for the default, so
    /// fingerprints of servers without the setting stay as they were).
    pub(crate) fn fingerprint_input(&self) -> Option<String> {
        (*self != UpstreamIdentity::Gateway).then(|| format!("{self:?}"))
    }
}

impl fmt::Display for UpstreamIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[mcp_servers.<name>.token_exchange]`: where and for what the gateway exchanges a
/// caller's token (RFC 8693) for [`UpstreamIdentity::Exchange`].
///
/// At least one of `audience` and `resource` names the server the token is for. The
/// client secret is never in the file: `client_secret_env` names the gateway's variable
/// holding it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenExchangeConfig {
    pub(crate) token_endpoint: String,
    pub(crate) audience: Option<String>,
    pub(crate) resource: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret_env: Option<String>,
}

impl TokenExchangeConfig {
    /// An exchange at `token_endpoint` (an `https` URL, or `http` to a loopback host); set
    /// an audience or a resource before use.
    pub fn new(token_endpoint: impl Into<String>) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            audience: None,
            resource: None,
            scope: None,
            client_id: None,
            client_secret_env: None,
        }
    }

    /// Sets `audience`: the logical name of the server the token is for.
    #[must_use]
    pub fn with_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// Sets `resource`: the server's URL the token is for (RFC 8707).
    #[must_use]
    pub fn with_resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// Sets `scope` (space-separated) to ask for.
    #[must_use]
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// Sets the gateway's client at the token endpoint: its id and the environment
    /// variable holding its secret (`None`: a public client, `client_id` sent alone).
    #[must_use]
    pub fn with_client(
        mut self,
        client_id: impl Into<String>,
        client_secret_env: Option<String>,
    ) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret_env = client_secret_env;
        self
    }

    /// `token_endpoint`.
    pub fn token_endpoint(&self) -> &str {
        &self.token_endpoint
    }

    /// `audience`, when written.
    pub fn audience(&self) -> Option<&str> {
        self.audience.as_deref()
    }

    /// `resource`, when written.
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// `scope`, when written.
    pub fn scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    /// `client_id`, when written.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// `client_secret_env`: the environment variable the gateway reads its client secret
    /// from (a secret never sits in the file).
    pub fn client_secret_env(&self) -> Option<&str> {
        self.client_secret_env.as_deref()
    }
}

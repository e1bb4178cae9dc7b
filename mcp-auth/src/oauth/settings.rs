//! [`OAuthSettings`]: per-server OAuth configuration.

use std::time::Duration;

use mcp_key::Secret;

/// How long a login waits for the browser callback by default.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// Refresh a token that expires within this many seconds before using it.
pub const DEFAULT_REFRESH_MARGIN_SECS: u64 = 30;
/// Timeout of one request to an OAuth endpoint.
pub const DEFAULT_HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// The client name sent in dynamic client registration.
pub const DEFAULT_CLIENT_NAME: &str = "mcp-connections";
/// How many step-up logins (403 `insufficient_scope`) one credential attempts before
/// giving up, until [`OAuthCredentials::reset_step_up`](crate::OAuthCredentials::reset_step_up).
/// With the first login that makes at most 3 authorization requests for one operation.
pub const MAX_STEP_UP_ATTEMPTS: u32 = 2;

/// OAuth configuration of one server. Defaults: no client id (metadata document, then
/// dynamic registration), no scopes (discovered), a random callback port,
/// [`DEFAULT_LOGIN_TIMEOUT`], [`DEFAULT_CLIENT_NAME`], private addresses refused.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// A pre-registered client id.
    pub client_id: Option<String>,
    /// The secret of the pre-registered client.
    pub client_secret: Option<Secret>,
    /// Configured scopes (used when the caller passes none explicitly).
    pub scopes: Vec<String>,
    /// The RFC 8707 resource to request; default: what protected-resource metadata names.
    pub resource: Option<String>,
    /// The loopback callback port; `None` picks a free one.
    pub callback_port: Option<u16>,
    /// An https URL of the host's client ID metadata document (SEP-991).
    pub client_metadata_url: Option<String>,
    /// The client name for dynamic registration.
    pub client_name: String,
    /// How long the login waits for the callback.
    pub login_timeout: Duration,
    /// Allow an authorization server on a private (RFC 1918) address for a public MCP URL.
    pub allow_private_addresses: bool,
    /// Bind tokens to a DPoP key (RFC 9449) when the authorization server advertises ES256
    /// in `dpop_signing_alg_values_supported`. Default: off (the host opts in).
    pub dpop: bool,
    /// A workload identity: access tokens come from the JWT-bearer grant with the
    /// platform token (run again, with the token read afresh, when one expires or is
    /// rejected) instead of a login.
    pub workload: Option<super::workload::WorkloadIdentity>,
}

impl Default for OAuthSettings {
    fn default() -> Self {
        Self::new()
    }
}

impl OAuthSettings {
    /// The settings of an HTTP server's configuration: its `[oauth] client_id`, `scopes`
    /// and `oauth_resource`, the configuration's `oauth_callback_port`, and the host's
    /// `client_name` for dynamic registration. The one translation from configuration to
    /// OAuth settings; every host (the connection set, mcpctl, the conformance client)
    /// starts from it.
    pub fn from_config(
        http: &mcp_catalog::HttpConfig,
        callback_port: Option<u16>,
        client_name: impl Into<String>,
    ) -> Self {
        let mut settings = Self::new()
            .with_client_name(client_name)
            .with_scopes(http.scopes().iter().cloned());
        if let Some(oauth) = http.oauth() {
            settings = settings.with_client_id(oauth.client_id());
        }
        if let Some(resource) = http.oauth_resource() {
            settings = settings.with_resource(resource);
        }
        if let Some(port) = callback_port {
            settings = settings.with_callback_port(port);
        }
        if let Some(wif) = http.workload_identity() {
            let source = match wif.token() {
                mcp_catalog::WorkloadTokenLocation::File(path) => {
                    super::workload::WorkloadTokenSource::File(path.into())
                }
                mcp_catalog::WorkloadTokenLocation::EnvVar(var) => {
                    super::workload::WorkloadTokenSource::EnvVar(var.clone())
                }
                _ => super::workload::WorkloadTokenSource::EnvVar(String::new()),
            };
            let mut identity = super::workload::WorkloadIdentity::new(source);
            if let Some(id) = wif.client_id() {
                identity = identity.with_client_id(id);
            }
            settings = settings.with_workload_identity(identity);
        }
        settings.with_dpop(http.dpop())
    }

    /// The defaults.
    pub fn new() -> Self {
        Self {
            client_id: None,
            client_secret: None,
            scopes: Vec::new(),
            resource: None,
            callback_port: None,
            client_metadata_url: None,
            client_name: DEFAULT_CLIENT_NAME.to_owned(),
            login_timeout: DEFAULT_LOGIN_TIMEOUT,
            allow_private_addresses: false,
            dpop: false,
            workload: None,
        }
    }

    /// Uses a pre-registered client id.
    #[must_use]
    pub fn with_client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    /// The pre-registered client's secret.
    #[must_use]
    pub fn with_client_secret(mut self, secret: Secret) -> Self {
        self.client_secret = Some(secret);
        self
    }

    /// Configured scopes.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The RFC 8707 resource indicator.
    #[must_use]
    pub fn with_resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// A fixed loopback callback port.
    #[must_use]
    pub fn with_callback_port(mut self, port: u16) -> Self {
        self.callback_port = Some(port);
        self
    }

    /// The client ID metadata document URL (https).
    #[must_use]
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The client name for dynamic registration.
    #[must_use]
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// How long a login waits for its callback.
    #[must_use]
    pub fn with_login_timeout(mut self, timeout: Duration) -> Self {
        self.login_timeout = timeout;
        self
    }

    /// Use DPoP-bound tokens where the authorization server supports them.
    #[must_use]
    pub fn with_dpop(mut self, enabled: bool) -> Self {
        self.dpop = enabled;
        self
    }

    /// Authenticate as a workload (see [`OAuthSettings::workload`]).
    #[must_use]
    pub fn with_workload_identity(mut self, identity: super::workload::WorkloadIdentity) -> Self {
        self.workload = Some(identity);
        self
    }

    /// Allow private-address authorization servers.
    #[must_use]
    pub fn with_allow_private_addresses(mut self, allow: bool) -> Self {
        self.allow_private_addresses = allow;
        self
    }
}

#[cfg(test)]
mod config_tests {
    use super::*;

    #[test]
    fn the_configuration_is_translated_once() {
        let http = mcp_catalog::HttpConfig::new("https://example.com/mcp")
            .with_scopes(["read", "write"])
            .with_oauth(mcp_catalog::OAuthConfig::new("client-1"))
            .with_oauth_resource("https://example.com/");
        let s = OAuthSettings::from_config(&http, Some(8765), "host-app");
        assert_eq!(s.client_id.as_deref(), Some("client-1"));
        assert_eq!(s.scopes, ["read", "write"]);
        assert_eq!(s.resource.as_deref(), Some("https://example.com/"));
        assert_eq!(s.callback_port, Some(8765));
        assert_eq!(s.client_name, "host-app");
        let bare =
            OAuthSettings::from_config(&mcp_catalog::HttpConfig::new("https://x/"), None, "h");
        assert_eq!(bare.callback_port, None);
        assert_eq!(bare.client_id, None);
        assert!(!bare.dpop && bare.workload.is_none());
    }

    #[test]
    fn dpop_and_workload_identity_come_from_the_configuration() {
        let http = mcp_catalog::HttpConfig::new("https://example.com/mcp")
            .with_dpop(true)
            .with_workload_identity(
                mcp_catalog::WorkloadIdentityConfig::new(mcp_catalog::WorkloadTokenLocation::File(
                    "/run/token".to_owned(),
                ))
                .with_client_id("ci"),
            );
        let s = OAuthSettings::from_config(&http, None, "h");
        assert!(s.dpop);
        let wif = s.workload.expect("workload identity");
        assert_eq!(
            wif.source,
            super::super::workload::WorkloadTokenSource::File("/run/token".into())
        );
        assert_eq!(wif.client_id.as_deref(), Some("ci"));
    }
}

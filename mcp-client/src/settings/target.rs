//! The server one connection reaches: a stdio process, possibly in an environment of its
//! own, or an HTTP server with its headers and credentials.

use std::sync::Arc;

use mcp_catalog::StdioConfig;
use mcp_key::Secret;

use super::auth::{AuthHeaderProvider, SharedEnvLookup};
use super::environment::Environment;

/// The server one [`Client`](crate::Client) connects to.
#[derive(Clone)]
#[non_exhaustive]
pub enum Target {
    /// A stdio server: a process started through `mcp-pool`'s launcher.
    Stdio {
        /// Its command, arguments, variables and directory.
        config: StdioConfig,
        /// Where it runs, when not on this machine as is (a wrapper, an ssh host).
        environment: Option<Arc<dyn Environment>>,
    },
    /// A streamable-HTTP server, or a legacy HTTP+SSE one (feature `http`).
    Http(HttpTarget),
}

impl Target {
    /// A stdio server run on this machine.
    pub fn stdio(config: StdioConfig) -> Self {
        Self::Stdio {
            config,
            environment: None,
        }
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdio {
                config,
                environment,
            } => f
                .debug_struct("Stdio")
                .field("command", &config.command())
                .field("environment", &environment.is_some())
                .finish(),
            Self::Http(http) => f.debug_tuple("Http").field(http).finish(),
        }
    }
}

/// How to reach one HTTP server.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpTarget {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, Secret)>,
    pub(crate) auth: Option<Arc<dyn AuthHeaderProvider>>,
    pub(crate) allow_plain_http: bool,
    pub(crate) legacy_sse: bool,
}

impl HttpTarget {
    /// The streamable-HTTP server at `url`, with no headers and no credentials.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            auth: None,
            allow_plain_http: false,
            legacy_sse: false,
        }
    }

    /// The server's settings from its catalog entry: its URL, literal headers and headers
    /// read from `env` (`env_http_headers`), `allow_plain_http`, and its bearer token
    /// variable as the credentials (use [`Self::with_auth`] for another provider). A
    /// legacy HTTP+SSE server is marked with [`Self::with_legacy_sse`] by the caller, which
    /// knows the transport kind.
    ///
    /// # Errors
    /// A header variable that is missing or empty: a failure with reason `config` naming
    /// the server, the variable and the header.
    pub fn from_config(
        server: &mcp_key::McpServerKey,
        config: &mcp_catalog::HttpConfig,
        env: &SharedEnvLookup,
    ) -> Result<Self, crate::StartupFailure> {
        let mut headers: Vec<(String, Secret)> = config
            .http_headers()
            .iter()
            .map(|(k, v)| (k.clone(), Secret::new(v.clone())))
            .collect();
        for (header, var) in config.env_http_headers() {
            let value = env.get(var).filter(|v| !v.is_empty()).ok_or_else(|| {
                crate::StartupFailure::new(
                    crate::FailureReason::Config,
                    format!(
                        "MCP server `{server}`: environment variable `{var}` for header `{header}` (env_http_headers) is missing or empty; set it or remove the header"
                    ),
                )
            })?;
            headers.push((header.clone(), Secret::new(value)));
        }
        let auth = config.bearer_token_env_var().map(|var| {
            Arc::new(crate::BearerEnvVar::with_lookup(
                var.to_owned(),
                env.clone(),
            )) as Arc<dyn AuthHeaderProvider>
        });
        Ok(Self {
            url: config.url().to_owned(),
            headers,
            auth,
            allow_plain_http: config.allow_plain_http(),
            legacy_sse: false,
        })
    }

    /// Headers sent with every request.
    #[must_use]
    pub fn with_headers(mut self, headers: Vec<(String, Secret)>) -> Self {
        self.headers = headers;
        self
    }

    /// Where the `Authorization` header comes from (none: no header is sent).
    #[must_use]
    pub fn with_auth(mut self, auth: Option<Arc<dyn AuthHeaderProvider>>) -> Self {
        self.auth = auth;
        self
    }

    /// Lets credentials go over plain `http://` to a host that is not loopback.
    #[must_use]
    pub fn with_plain_http(mut self, allow: bool) -> Self {
        self.allow_plain_http = allow;
        self
    }

    /// The legacy HTTP+SSE transport (MCP 2024-11-05): the URL is the event stream, and
    /// the handshake is always `initialize`.
    #[must_use]
    pub fn with_legacy_sse(mut self, legacy: bool) -> Self {
        self.legacy_sse = legacy;
        self
    }

    /// Whether a configured header or the auth provider sets `Authorization`.
    pub fn has_auth(&self) -> bool {
        self.auth.is_some()
            || self
                .headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl std::fmt::Debug for HttpTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTarget")
            .field("url", &mcp_key::redact_url(&self.url))
            .field("headers", &self.headers.len())
            .field("auth", &self.auth.is_some())
            .field("allow_plain_http", &self.allow_plain_http)
            .field("legacy_sse", &self.legacy_sse)
            .finish()
    }
}

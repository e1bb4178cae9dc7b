//! How to reach a server: a local process over stdio, a streamable HTTP endpoint, a legacy
//! HTTP+SSE endpoint, or an entry that cannot be used (kept so that hosts can show why).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::diagnostic::ConfigErrors;

/// The transport of one server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// A local process speaking MCP over stdin/stdout.
    Stdio(StdioConfig),
    /// A remote server speaking streamable HTTP.
    StreamableHttp(HttpConfig),
    /// A remote server speaking the legacy HTTP+SSE transport of MCP 2024-11-05 (a `GET`
    /// event stream whose first `endpoint` event names where to `POST` messages). The URL
    /// is the event stream's; headers and authorization work as for streamable HTTP.
    /// Deprecated by MCP but still served by many deployed servers (`transport = "sse"`,
    /// `"type": "sse"`).
    Sse(HttpConfig),
    /// An entry that was written but cannot be used: invalid, or a transport this crate
    /// does not support. Only this server fails; hosts show its errors (with file, line and
    /// column) instead of starting it.
    Unusable(UnusableServer),
}

/// The label of the stdio transport in status output and events.
pub const STDIO_LABEL: &str = "stdio";
/// The label of the streamable-HTTP transport in status output and events.
pub const STREAMABLE_HTTP_LABEL: &str = "streamable_http";
/// The label of the legacy HTTP+SSE transport in status output and events.
pub const SSE_LABEL: &str = "sse";
/// The label of an entry that cannot be used.
pub const UNUSABLE_LABEL: &str = "unusable";

impl Transport {
    /// The one machine-readable label of the transport, as status output and events show
    /// it: [`STDIO_LABEL`], [`STREAMABLE_HTTP_LABEL`], [`SSE_LABEL`] or
    /// [`UNUSABLE_LABEL`]. (For sentences, [`Transport::kind_name`].)
    pub fn label(&self) -> &'static str {
        match self {
            Transport::Stdio(_) => STDIO_LABEL,
            Transport::StreamableHttp(_) => STREAMABLE_HTTP_LABEL,
            Transport::Sse(_) => SSE_LABEL,
            Transport::Unusable(_) => UNUSABLE_LABEL,
        }
    }

    /// `"stdio"`, `"streamable HTTP"`, `"legacy SSE"` or `"unusable"`, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Transport::Stdio(_) => "stdio",
            Transport::StreamableHttp(_) => "streamable HTTP",
            Transport::Sse(_) => "legacy SSE",
            Transport::Unusable(_) => "unusable",
        }
    }

    /// The stdio settings, if this is a stdio transport.
    pub fn as_stdio(&self) -> Option<&StdioConfig> {
        match self {
            Transport::Stdio(stdio) => Some(stdio),
            Transport::StreamableHttp(_) | Transport::Sse(_) | Transport::Unusable(_) => None,
        }
    }

    /// The HTTP settings (URL, headers, authorization) of either HTTP transport: streamable
    /// HTTP or legacy SSE. [`Transport::is_sse`] tells them apart.
    pub fn as_http(&self) -> Option<&HttpConfig> {
        match self {
            Transport::StreamableHttp(http) | Transport::Sse(http) => Some(http),
            Transport::Stdio(_) | Transport::Unusable(_) => None,
        }
    }

    /// True for the legacy HTTP+SSE transport.
    pub fn is_sse(&self) -> bool {
        matches!(self, Transport::Sse(_))
    }

    /// Why the entry cannot be used, if it is [`Transport::Unusable`].
    pub fn as_unusable(&self) -> Option<&UnusableServer> {
        match self {
            Transport::Unusable(unusable) => Some(unusable),
            Transport::Stdio(_) | Transport::StreamableHttp(_) | Transport::Sse(_) => None,
        }
    }
}

/// A configured server that cannot be used, with every error found in its entry.
///
/// Displays the errors joined by `; `, each as `origin:line:col: server `x`: field `y`:
/// message (hint)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnusableServer {
    errors: ConfigErrors,
}

impl UnusableServer {
    pub(crate) fn new(errors: ConfigErrors) -> Self {
        Self { errors }
    }

    /// The errors of the entry, in document order (at least one).
    pub fn errors(&self) -> &ConfigErrors {
        &self.errors
    }
}

impl fmt::Display for UnusableServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

/// A stdio server: the program to run and its environment.
///
/// `Debug` prints the names of literal environment variables, not their values.
#[derive(Clone, PartialEq, Eq)]
pub struct StdioConfig {
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) env_vars: Vec<String>,
    pub(crate) cwd: Option<PathBuf>,
}

impl StdioConfig {
    /// A stdio server running `command` with no arguments.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            env_vars: Vec::new(),
            cwd: None,
        }
    }

    /// Sets the arguments.
    #[must_use]
    pub fn with_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Adds a literal environment variable.
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Adds the name of a host environment variable to copy into the server's environment.
    #[must_use]
    pub fn with_env_var(mut self, name: impl Into<String>) -> Self {
        self.env_vars.push(name.into());
        self
    }

    /// Sets the working directory.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// The program to run.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Its arguments.
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// Literal environment variables.
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// Names of host environment variables copied into the server's environment.
    pub fn env_vars(&self) -> &[String] {
        &self.env_vars
    }

    /// The working directory, if set.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }
}

/// How a streamable HTTP server authenticates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthMode {
    /// Not configured: OAuth when the server asks for it (the default).
    #[default]
    Auto,
    /// OAuth 2.1 (`auth = "oauth"`).
    OAuth,
    /// Enterprise-managed authorization (`auth = "ema"`), configured by [`EmaConfig`].
    Ema,
    /// No authorization beyond static headers (`auth = "none"`).
    None,
}

impl AuthMode {
    /// The text form used in configuration (`auto` for the default).
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMode::Auto => "auto",
            AuthMode::OAuth => "oauth",
            AuthMode::Ema => "ema",
            AuthMode::None => "none",
        }
    }
}

impl fmt::Display for AuthMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AuthMode {
    /// Parses `oauth`, `ema` or `none` (what a person may write; `auto` is the absence).
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "oauth" => Some(AuthMode::OAuth),
            "ema" => Some(AuthMode::Ema),
            "none" => Some(AuthMode::None),
            _ => None,
        }
    }
}

/// Pre-registered OAuth client settings (`oauth = { client_id = "..." }`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthConfig {
    pub(crate) client_id: String,
}

impl OAuthConfig {
    /// A pre-registered client id: dynamic client registration is skipped.
    pub fn new(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
        }
    }

    /// The registered client id.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}

/// Enterprise-managed authorization settings (`[mcp_servers.<name>.ema]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmaConfig {
    pub(crate) issuer: String,
    pub(crate) client_id: String,
}

impl EmaConfig {
    /// The enterprise identity provider and this host's client id there.
    pub fn new(issuer: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            client_id: client_id.into(),
        }
    }

    /// The identity provider's issuer URL.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// This host's client id at the identity provider.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}

/// An HTTP server (streamable HTTP or legacy SSE): its endpoint, headers and authorization
/// settings.
///
/// `Debug` prints the names of literal headers, not their values (they may hold tokens
/// expanded from `.mcp.json`).
#[derive(Clone, PartialEq, Eq)]
pub struct HttpConfig {
    pub(crate) url: String,
    pub(crate) bearer_token_env_var: Option<String>,
    pub(crate) http_headers: BTreeMap<String, String>,
    pub(crate) env_http_headers: BTreeMap<String, String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) oauth: Option<OAuthConfig>,
    pub(crate) oauth_resource: Option<String>,
    pub(crate) auth: AuthMode,
    pub(crate) ema: Option<EmaConfig>,
    pub(crate) allow_plain_http: bool,
    pub(crate) dpop: bool,
    pub(crate) workload_identity: Option<crate::model::workload::WorkloadIdentityConfig>,
    pub(crate) upstream_identity: crate::model::upstream_identity::UpstreamIdentity,
}

impl HttpConfig {
    /// A server at `url`, with default authorization ([`AuthMode::Auto`]).
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            bearer_token_env_var: None,
            http_headers: BTreeMap::new(),
            env_http_headers: BTreeMap::new(),
            scopes: Vec::new(),
            oauth: None,
            oauth_resource: None,
            auth: AuthMode::Auto,
            ema: None,
            allow_plain_http: false,
            dpop: false,
            workload_identity: None,
            upstream_identity: crate::model::upstream_identity::UpstreamIdentity::Gateway,
        }
    }

    /// Allow credentials (tokens, configured headers) over plain `http://` to a host other
    /// than loopback (`allow_plain_http = true`; default false: such a server is refused).
    #[must_use]
    pub fn with_allow_plain_http(mut self, allow: bool) -> Self {
        self.allow_plain_http = allow;
        self
    }

    /// Whether credentials may go over plain `http://` to a non-loopback host.
    pub fn allow_plain_http(&self) -> bool {
        self.allow_plain_http
    }

    /// Sends `Authorization: Bearer $VAR`, read from the host environment.
    #[must_use]
    pub fn with_bearer_token_env_var(mut self, var: impl Into<String>) -> Self {
        self.bearer_token_env_var = Some(var.into());
        self
    }

    /// Adds a literal header.
    #[must_use]
    pub fn with_http_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http_headers.insert(name.into(), value.into());
        self
    }

    /// Adds a header whose value is read from a host environment variable.
    #[must_use]
    pub fn with_env_http_header(mut self, name: impl Into<String>, var: impl Into<String>) -> Self {
        self.env_http_headers.insert(name.into(), var.into());
        self
    }

    /// Sets the OAuth scopes to request.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets a pre-registered OAuth client.
    #[must_use]
    pub fn with_oauth(mut self, oauth: OAuthConfig) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Sets the OAuth resource indicator.
    #[must_use]
    pub fn with_oauth_resource(mut self, resource: impl Into<String>) -> Self {
        self.oauth_resource = Some(resource.into());
        self
    }

    /// Sets the authorization mode.
    #[must_use]
    pub fn with_auth(mut self, auth: AuthMode) -> Self {
        self.auth = auth;
        self
    }

    /// Sets enterprise-managed authorization and the mode to [`AuthMode::Ema`].
    #[must_use]
    pub fn with_ema(mut self, ema: EmaConfig) -> Self {
        self.ema = Some(ema);
        self.auth = AuthMode::Ema;
        self
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The host environment variable holding a bearer token, if any.
    pub fn bearer_token_env_var(&self) -> Option<&str> {
        self.bearer_token_env_var.as_deref()
    }

    /// Literal headers.
    pub fn http_headers(&self) -> &BTreeMap<String, String> {
        &self.http_headers
    }

    /// Header name -> host environment variable holding its value.
    pub fn env_http_headers(&self) -> &BTreeMap<String, String> {
        &self.env_http_headers
    }

    /// OAuth scopes to request.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The pre-registered OAuth client, if any.
    pub fn oauth(&self) -> Option<&OAuthConfig> {
        self.oauth.as_ref()
    }

    /// The OAuth resource indicator, if set.
    pub fn oauth_resource(&self) -> Option<&str> {
        self.oauth_resource.as_deref()
    }

    /// The authorization mode.
    pub fn auth(&self) -> AuthMode {
        self.auth
    }

    /// Enterprise-managed authorization settings, if any.
    pub fn ema(&self) -> Option<&EmaConfig> {
        self.ema.as_ref()
    }

    /// Bind OAuth tokens to a DPoP key when the authorization server supports it
    /// (`dpop = true`; default false).
    #[must_use]
    pub fn with_dpop(mut self, enabled: bool) -> Self {
        self.dpop = enabled;
        self
    }

    /// Whether DPoP-bound tokens are wanted.
    pub fn dpop(&self) -> bool {
        self.dpop
    }

    /// Authenticate as a workload (`[mcp_servers.<name>.workload_identity]`).
    #[must_use]
    pub fn with_workload_identity(
        mut self,
        identity: crate::model::workload::WorkloadIdentityConfig,
    ) -> Self {
        self.workload_identity = Some(identity);
        self
    }

    /// Workload identity settings, if any.
    pub fn workload_identity(&self) -> Option<&crate::model::workload::WorkloadIdentityConfig> {
        self.workload_identity.as_ref()
    }

    /// Sets whose credentials a gateway presents to the server (`upstream_identity`).
    #[must_use]
    pub fn with_upstream_identity(
        mut self,
        identity: crate::model::upstream_identity::UpstreamIdentity,
    ) -> Self {
        self.upstream_identity = identity;
        self
    }

    /// Whose credentials a gateway presents to the server (`upstream_identity`, default
    /// [`UpstreamIdentity::Gateway`](crate::UpstreamIdentity::Gateway)).
    pub fn upstream_identity(&self) -> &crate::model::upstream_identity::UpstreamIdentity {
        &self.upstream_identity
    }
}

/// Map keys with every value replaced by `<redacted>`, for `Debug`.
struct Redacted<'a>(&'a BTreeMap<String, String>);

impl fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, "<redacted>")))
            .finish()
    }
}

impl fmt::Debug for StdioConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioConfig")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &Redacted(&self.env))
            .field("env_vars", &self.env_vars)
            .field("cwd", &self.cwd)
            .finish()
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("url", &self.url)
            .field("bearer_token_env_var", &self.bearer_token_env_var)
            .field("http_headers", &Redacted(&self.http_headers))
            .field("env_http_headers", &self.env_http_headers)
            .field("scopes", &self.scopes)
            .field("oauth", &self.oauth)
            .field("oauth_resource", &self.oauth_resource)
            .field("auth", &self.auth)
            .field("ema", &self.ema)
            .field("allow_plain_http", &self.allow_plain_http)
            .field("dpop", &self.dpop)
            .field("workload_identity", &self.workload_identity)
            .field("upstream_identity", &self.upstream_identity)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_literal_env_and_header_values() {
        let stdio = StdioConfig::new("x").with_env("TOKEN", "s3cret");
        let http =
            HttpConfig::new("https://h/mcp").with_http_header("Authorization", "Bearer s3cret");
        for text in [format!("{stdio:?}"), format!("{http:?}")] {
            assert!(!text.contains("s3cret"), "{text}");
            assert!(text.contains("<redacted>"), "{text}");
        }
    }
}

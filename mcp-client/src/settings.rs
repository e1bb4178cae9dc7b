//! What one connection is opened with: the server to reach ([`Target`]) and the client's
//! settings for it ([`ClientSettings`]).

use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::StdioConfig;
use mcp_key::Secret;
use rmcp::model::{Implementation, ProtocolVersion};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::{AuthHeaderProvider, SharedEnvLookup, process_env};
use crate::environment::Environment;
use crate::era::Handshake;
use crate::host::roots::Root;

/// Default of [`ClientSettings::with_list_byte_budget`]: 16 MiB of JSON per list.
pub const DEFAULT_LIST_BYTE_BUDGET: usize = 16 * 1024 * 1024;
/// Default of [`ClientSettings::with_list_changed_debounce`].
pub const DEFAULT_LIST_CHANGED_DEBOUNCE: Duration = Duration::from_millis(100);
/// Default of [`ClientSettings::with_probe_timeout`].
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// Default of [`ClientSettings::with_process_grace`].
pub const DEFAULT_PROCESS_GRACE: Duration = Duration::from_secs(2);
/// Default of [`ClientSettings::with_startup_timeout`].
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default of [`ClientSettings::with_listen_stall`]: three missed keep-alives of a server
/// that sends one every 15 s (rmcp's servers do, by default).
pub const DEFAULT_LISTEN_STALL: Duration = Duration::from_secs(45);

/// The protocol version sent in `initialize`: the 2025 generation, which servers of that
/// generation and the official conformance suite accept (rmcp's default is newer).
pub fn default_protocol_version() -> ProtocolVersion {
    ProtocolVersion::V_2025_11_25
}

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

/// The settings of one connection: what the client announces and how long it waits. A
/// pool keeps connections with different settings apart: [`Self::fingerprint`] is part of
/// its key.
#[derive(Clone)]
#[non_exhaustive]
pub struct ClientSettings {
    pub(crate) client: Implementation,
    pub(crate) protocol_version: ProtocolVersion,
    pub(crate) handshake: Handshake,
    pub(crate) startup_timeout: Duration,
    pub(crate) probe_timeout: Duration,
    pub(crate) list_byte_budget: usize,
    pub(crate) list_changed_debounce: Duration,
    pub(crate) process_grace: Duration,
    pub(crate) listen_stall: Duration,
    pub(crate) env: SharedEnvLookup,
    pub(crate) roots: Arc<[Root]>,
    pub(crate) elicitation: bool,
    pub(crate) sampling: bool,
    pub(crate) tasks: bool,
    pub(crate) log_level: Option<mcp_catalog::LogLevel>,
    pub(crate) extensions: std::collections::BTreeMap<String, rmcp::model::JsonObject>,
    pub(crate) background: Option<(TaskTracker, CancellationToken)>,
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ClientSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSettings")
            .field("client", &self.client.name)
            .field("protocol_version", &self.protocol_version)
            .field("handshake", &self.handshake)
            .field("startup_timeout", &self.startup_timeout)
            .field("probe_timeout", &self.probe_timeout)
            .field("list_byte_budget", &self.list_byte_budget)
            .field("listen_stall", &self.listen_stall)
            .field("roots", &self.roots.len())
            .field("elicitation", &self.elicitation)
            .field("sampling", &self.sampling)
            .field("log_level", &self.log_level)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl ClientSettings {
    /// This crate as the client, the era probed, the defaults above, variables read from
    /// the process environment, no roots, no elicitation.
    pub fn new() -> Self {
        Self {
            client: Implementation::new("mcp-client", env!("CARGO_PKG_VERSION")),
            protocol_version: default_protocol_version(),
            handshake: Handshake::Probe,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            list_byte_budget: DEFAULT_LIST_BYTE_BUDGET,
            list_changed_debounce: DEFAULT_LIST_CHANGED_DEBOUNCE,
            process_grace: DEFAULT_PROCESS_GRACE,
            listen_stall: DEFAULT_LISTEN_STALL,
            env: process_env(),
            roots: Arc::from(Vec::new()),
            elicitation: false,
            sampling: false,
            tasks: true,
            log_level: None,
            extensions: std::collections::BTreeMap::new(),
            background: None,
        }
    }

    /// The client identity sent in the handshake.
    #[must_use]
    pub fn with_client_info(mut self, client: Implementation) -> Self {
        self.client = client;
        self
    }

    /// The protocol version `initialize` asks for (the 2025 era's handshake).
    #[must_use]
    pub fn with_protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.protocol_version = version;
        self
    }

    /// Which handshake the connection opens with.
    #[must_use]
    pub fn with_handshake(mut self, handshake: Handshake) -> Self {
        self.handshake = handshake;
        self
    }

    /// Bound on the whole start: transport, handshake and the first `tools/list` (and the
    /// `tools/list` after each `tools/list_changed`).
    #[must_use]
    pub fn with_startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Bound on a `server/discover` probe of a server whose era is not known.
    #[must_use]
    pub fn with_probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// Most JSON bytes one list (all of its pages) may hold.
    #[must_use]
    pub fn with_list_byte_budget(mut self, bytes: usize) -> Self {
        self.list_byte_budget = bytes;
        self
    }

    /// How long a burst of `tools/list_changed` is collected before the tools are listed
    /// again.
    #[must_use]
    pub fn with_list_changed_debounce(mut self, debounce: Duration) -> Self {
        self.list_changed_debounce = debounce;
        self
    }

    /// Grace periods of a stdio server's shutdown (after closing stdin, after SIGTERM).
    #[must_use]
    pub fn with_process_grace(mut self, grace: Duration) -> Self {
        self.process_grace = grace;
        self
    }

    /// How long a `subscriptions/listen` stream of a streamable-HTTP server (MCP
    /// 2026-07-28) may stay silent before it counts as stalled (default
    /// [`DEFAULT_LISTEN_STALL`]). Every byte the server sends resets the clock, the SSE
    /// keep-alive comments servers send on idle streams included, so a quiet server that
    /// keeps its stream alive is never cut; one that sends nothing at all for this long
    /// (a proxy or load balancer holding a dead upstream, a frozen server) has its listen
    /// ended and opened again, and what it covers is refreshed. Set it above the server's
    /// keep-alive interval: a server that sends no keep-alives has its idle listens
    /// reopened (and the lists refreshed) once per this duration. `Duration::ZERO` turns
    /// the watchdog off.
    #[must_use]
    pub fn with_listen_stall(mut self, stall: Duration) -> Self {
        self.listen_stall = stall;
        self
    }

    /// Where the variables a stdio server's `env_vars` names are read.
    #[must_use]
    pub fn with_env(mut self, env: SharedEnvLookup) -> Self {
        self.env = env;
        self
    }

    /// The roots announced to the server (none: the capability is not announced).
    #[must_use]
    pub fn with_roots(mut self, roots: Arc<[Root]>) -> Self {
        self.roots = roots;
        self
    }

    /// Announces the elicitation capability (form and URL modes), so the server may ask
    /// the [`ServerRequests`](crate::ServerRequests) given to
    /// [`Client::connect`](crate::Client::connect).
    #[must_use]
    pub fn with_elicitation(mut self, announce: bool) -> Self {
        self.elicitation = announce;
        self
    }

    /// Announces the sampling capability (with tool use), so the server may ask the
    /// [`ServerRequests`](crate::ServerRequests) given to
    /// [`Client::connect`](crate::Client::connect) for a message of the host's model.
    #[must_use]
    pub fn with_sampling(mut self, announce: bool) -> Self {
        self.sampling = announce;
        self
    }

    /// Whether to announce the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663;
    /// default: yes). A server that offers it may answer a call with a task, which
    /// [`crate::Client::call_tool`] drives to its result transparently.
    #[must_use]
    pub fn with_tasks(mut self, announce: bool) -> Self {
        self.tasks = announce;
        self
    }

    /// The least severe log level the server should send (`logging/setLevel`, sent once
    /// connected to a 2025-era server that offers logging). `None` (the default) leaves the
    /// server's own choice.
    #[must_use]
    pub fn with_log_level(mut self, level: Option<mcp_catalog::LogLevel>) -> Self {
        self.log_level = level;
        self
    }

    /// Extensions announced in the client's capabilities, by identifier.
    #[must_use]
    pub fn with_extensions(mut self, extensions: Vec<String>) -> Self {
        self.extensions = extensions
            .into_iter()
            .map(|id| (id, rmcp::model::JsonObject::new()))
            .collect();
        self
    }

    /// One more extension announced in the client's capabilities, with its settings
    /// (e.g. MCP Apps' `{"mimeTypes": [...]}`).
    #[must_use]
    pub fn with_extension(
        mut self,
        id: impl Into<String>,
        settings: rmcp::model::JsonObject,
    ) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Where the cleanup of a failed start runs (closing its session, stopping its
    /// process): on `tasks`, given up for a kill when `stop` is cancelled. Without it the
    /// cleanup runs on a task of its own.
    #[must_use]
    pub fn with_background(mut self, tasks: TaskTracker, stop: CancellationToken) -> Self {
        self.background = Some((tasks, stop));
        self
    }

    /// What tells connections opened with these settings apart, for a pool that shares
    /// connections between users (two settings with one fingerprint open connections that
    /// behave alike): every setting that changes what the connection announces, waits for,
    /// holds or sends. Three are left out:
    /// - the handshake ([`Self::with_handshake`]): chosen per start from what is known of
    ///   the server (the era it spoke last), a way to reach the same connection; key the
    ///   connection by what it is chosen from (a host's configured protocol) instead;
    /// - the variable lookup ([`Self::with_env`]): a function, which cannot be compared;
    ///   key the connection by the values it gives for the variables the server's
    ///   configuration names (`mcp_catalog`'s connection fingerprint does);
    /// - where the cleanup of a failed start runs ([`Self::with_background`]): not the
    ///   connection's behaviour.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_client::ClientSettings;
    ///
    /// let base = ClientSettings::new();
    /// assert_eq!(base.fingerprint(), ClientSettings::new().fingerprint());
    /// let small = ClientSettings::new().with_list_byte_budget(64 * 1024);
    /// assert_ne!(base.fingerprint(), small.fingerprint());
    /// let quick = ClientSettings::new().with_probe_timeout(Duration::from_millis(200));
    /// assert_ne!(base.fingerprint(), quick.fingerprint());
    /// ```
    pub fn fingerprint(&self) -> mcp_key::Fingerprint {
        // Every field named: a new setting does not compile until it is placed here.
        let Self {
            client,
            protocol_version,
            handshake: _,
            startup_timeout,
            probe_timeout,
            list_byte_budget,
            list_changed_debounce,
            process_grace,
            listen_stall,
            env: _,
            roots,
            elicitation,
            sampling,
            tasks,
            log_level,
            extensions,
            background: _,
        } = self;
        let nanos = |d: &Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let roots = roots.iter().map(|root| match &root.name {
            Some(name) => format!("{}\0+{name}", root.uri),
            None => format!("{}\0-", root.uri),
        });
        mcp_key::Fingerprint::builder("mcp-client/settings")
            .str("client", &serde_json::to_string(client).unwrap_or_default())
            .str("protocol_version", protocol_version.as_str())
            .u64("startup_timeout_ns", nanos(startup_timeout))
            .u64("probe_timeout_ns", nanos(probe_timeout))
            .u64(
                "list_byte_budget",
                u64::try_from(*list_byte_budget).unwrap_or(u64::MAX),
            )
            .u64("list_changed_debounce_ns", nanos(list_changed_debounce))
            .u64("process_grace_ns", nanos(process_grace))
            .u64("listen_stall_ns", nanos(listen_stall))
            .list("roots", roots)
            .bool("elicitation", *elicitation)
            .bool("sampling", *sampling)
            .bool("tasks", *tasks)
            .opt_str("log_level", log_level.map(|level| level.as_str()))
            .str(
                "extensions",
                &serde_json::to_string(extensions).unwrap_or_default(),
            )
            .finish()
    }

    /// The identity sent in the handshake.
    pub fn client_info(&self) -> &Implementation {
        &self.client
    }

    /// The `User-Agent` of HTTP requests: the client's name and version, and this crate's.
    pub fn user_agent(&self) -> String {
        format!(
            "{}/{} (mcp-client/{})",
            self.client.name,
            self.client.version,
            env!("CARGO_PKG_VERSION")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_of_the_connection_is_in_the_fingerprint() {
        let base = ClientSettings::new().fingerprint();
        let json = |v: serde_json::Value| match v {
            serde_json::Value::Object(map) => map,
            _ => rmcp::model::JsonObject::new(),
        };
        let changed = [
            ClientSettings::new().with_client_info(Implementation::new("host", "1")),
            ClientSettings::new().with_protocol_version(ProtocolVersion::V_2025_06_18),
            ClientSettings::new().with_startup_timeout(Duration::from_secs(31)),
            ClientSettings::new().with_probe_timeout(Duration::from_secs(4)),
            ClientSettings::new().with_list_byte_budget(1024),
            ClientSettings::new().with_list_changed_debounce(Duration::ZERO),
            ClientSettings::new().with_process_grace(Duration::from_secs(1)),
            ClientSettings::new().with_listen_stall(Duration::ZERO),
            ClientSettings::new().with_roots(Arc::from(vec![Root::new("file:///w")])),
            ClientSettings::new().with_elicitation(true),
            ClientSettings::new().with_sampling(true),
            ClientSettings::new().with_tasks(false),
            ClientSettings::new().with_log_level(Some(mcp_catalog::LogLevel::Debug)),
            ClientSettings::new().with_extensions(vec!["x/y".to_owned()]),
            ClientSettings::new().with_extension("x/y", json(serde_json::json!({"a": 1}))),
        ];
        let mut seen = std::collections::BTreeSet::from([base]);
        for (i, settings) in changed.iter().enumerate() {
            assert!(
                seen.insert(settings.fingerprint()),
                "setting {i} is not in it"
            );
        }
        // Chosen per start, or not the connection's behaviour: left out.
        let lookup: SharedEnvLookup = Arc::new(|_: &str| None);
        let same = ClientSettings::new()
            .with_handshake(Handshake::Initialize)
            .with_env(lookup)
            .with_background(TaskTracker::new(), CancellationToken::new());
        assert_eq!(same.fingerprint(), base);
    }
}

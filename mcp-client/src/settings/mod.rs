//! What one connection is opened with, in one place: the server to reach ([`Target`], in
//! [`target`]), where a stdio server runs ([`environment`]), where an HTTP server's
//! credentials come from ([`auth`]), and the client's settings ([`ClientSettings`], here):
//! what it announces, how long it waits, how much it holds. Below the connection's state,
//! which keeps them; it imports only the handshake's choice ([`Handshake`]) and the roots
//! of [`crate::host`], both leaves.

pub(crate) mod auth;
pub(crate) mod environment;
pub(crate) mod target;

pub use target::{HttpTarget, Target};

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{Implementation, ProtocolVersion};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::handshake::era::Handshake;
use crate::host::roots::Root;
use auth::{SharedEnvLookup, process_env};

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

    /// Bound on a `server/discover` probe of a server whose era is not known. A server
    /// that has not answered by then is connected with `initialize` (the 2025-11-25
    /// lifecycle), so a slow starter that speaks 2026-07-28 only (FastMCP serves skills
    /// only there) needs a larger bound or its era set (`protocol` in the catalog). rmcp
    /// gives up on a probe after its own 10 s, so values above that bound nothing more.
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

    /// Most JSON bytes one list may hold ([`Self::with_list_byte_budget`]).
    pub fn list_byte_budget(&self) -> usize {
        self.list_byte_budget
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

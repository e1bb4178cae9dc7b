//! Runtime options of a connection set.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_key::{EnvironmentId, McpServerKey};
use rmcp::model::Implementation;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::event_sink::EventSink;
use crate::events::ConnectionEvent;
use crate::policy::elicitation::ElicitationHandler;
use crate::policy::hooks::CallHook;
use crate::set::pool::{DEFAULT_RESTART_BACKOFF, DEFAULT_RESTART_BACKOFF_MAX};
use mcp_client::Environment;
use mcp_client::{AuthHeaderProvider, ClientSettings, SharedEnvLookup, process_env};

/// Default grace period `tools()` waits for servers that are still starting.
pub const DEFAULT_TOOLS_GRACE: Duration = Duration::from_secs(1);
/// Default bound on shutting down one server.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
/// Default interval between reads of the credential store while a server waits for a
/// login.
pub const DEFAULT_LOGIN_POLL: Duration = Duration::from_secs(2);

/// The client identity sent in `initialize`: this crate and its version.
pub fn default_client_info() -> Implementation {
    Implementation::new("mcp-connections", env!("CARGO_PKG_VERSION"))
}

/// Options of a [`ConnectionSet`](crate::ConnectionSet). Build with [`ConnectionSetOptions::new`]
/// and the `with_*` setters.
#[derive(Clone)]
#[non_exhaustive]
pub struct ConnectionSetOptions {
    pub(crate) client: ClientSettings,
    pub(crate) tools_grace: Duration,
    pub(crate) reserved_meta_prefix: Option<String>,
    pub(crate) events: Option<EventSink>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) approver: Option<Arc<dyn crate::policy::approver::Approver>>,
    pub(crate) sampling: Option<Arc<dyn crate::policy::sampling::SamplingHandler>>,
    pub(crate) apps: bool,
    pub(crate) answer_deadline: Option<Duration>,
    pub(crate) roots: Arc<[mcp_client::Root]>,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) restart_backoff: Duration,
    pub(crate) restart_backoff_max: Duration,
    pub(crate) env: SharedEnvLookup,
    pub(crate) cancel: CancellationToken,
    pub(crate) auth: BTreeMap<McpServerKey, Arc<dyn AuthHeaderProvider>>,
    pub(crate) identities: BTreeMap<McpServerKey, String>,
    pub(crate) environments: BTreeMap<EnvironmentId, Arc<dyn Environment>>,
    pub(crate) hooks: Vec<Arc<dyn CallHook>>,
    pub(crate) credential_store: Option<Arc<dyn mcp_auth::CredentialStore>>,
    #[cfg(feature = "oauth")]
    pub(crate) login_agent: Option<Arc<dyn mcp_auth::UserAgent>>,
    pub(crate) shared_pool: Option<crate::set::pool::ServerPool>,
    pub(crate) tool_cache: Option<crate::catalog::tool_cache::ToolCache>,
    pub(crate) login_poll: Duration,
    pub(crate) cache_only: bool,
    pub(crate) defer_cached: bool,
    pub(crate) tool_pins: Option<Arc<crate::policy::pins::ToolPins>>,
    pub(crate) authority: crate::policy::authority::HostAuthority,
    pub(crate) host_metadata: Option<Arc<dyn crate::policy::host_meta::HostMetadataProvider>>,
}

impl Default for ConnectionSetOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ConnectionSetOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionSetOptions")
            .field("client", &self.client)
            .field("tools_grace", &self.tools_grace)
            .field("reserved_meta_prefix", &self.reserved_meta_prefix)
            .field("events", &self.events.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("approver", &self.approver.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots)
            .finish_non_exhaustive()
    }
}

impl ConnectionSetOptions {
    /// Defaults: 2025-11-25 as the version an `initialize` handshake offers (which era
    /// each server speaks is the catalog's `protocol` setting, `auto` by default: see
    /// [`mcp_catalog::ProtocolChoice`]), client info of this crate, 1 s tools grace, no events,
    /// no elicitation handler (requests are declined), 10 s shutdown bound per server.
    pub fn new() -> Self {
        Self {
            client: ClientSettings::new().with_client_info(default_client_info()),
            tools_grace: DEFAULT_TOOLS_GRACE,
            reserved_meta_prefix: None,
            events: None,
            elicitation: None,
            approver: None,
            sampling: None,
            apps: false,
            answer_deadline: None,
            roots: Arc::from([]),
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            restart_backoff: DEFAULT_RESTART_BACKOFF,
            restart_backoff_max: DEFAULT_RESTART_BACKOFF_MAX,
            env: process_env(),
            cancel: CancellationToken::new(),
            auth: BTreeMap::new(),
            identities: BTreeMap::new(),
            environments: BTreeMap::new(),
            hooks: Vec::new(),
            credential_store: None,
            #[cfg(feature = "oauth")]
            login_agent: None,
            shared_pool: None,
            tool_cache: None,
            login_poll: DEFAULT_LOGIN_POLL,
            cache_only: false,
            defer_cached: false,
            tool_pins: None,
            authority: crate::policy::authority::HostAuthority::new(),
            host_metadata: None,
        }
    }

    /// The client's settings every connection of the set starts from
    /// ([`mcp_client::ClientSettings`], held as they are: every connection setting of
    /// `mcp-client` is one here), changed by `change` (`|client| client.with_…()`): the
    /// client identity (default: this crate, [`default_client_info`]), the protocol version
    /// an `initialize` handshake offers (the era each server speaks is its `protocol`
    /// setting in the catalog, see [`mcp_client::ClientSettings::with_protocol_version`]),
    /// the probe timeout, the list byte budget, the `list_changed` debounce, the listen
    /// stall, the grace periods of a stdio server's shutdown, tasks, extensions, a log
    /// level. The set fills in, per server, what is the server's: its startup timeout
    /// (`startup_timeout_sec`), the variable lookup ([`Self::with_env_lookup`]), the roots
    /// ([`Self::with_roots`]), elicitation and sampling (announced when the set has a
    /// handler for them), the catalog's log level (when it names one), the server's own
    /// extensions (added), and per start its handshake and where its cleanup runs. Like
    /// the other connection settings, a shared connection keeps the value of the set
    /// that started it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_connections::ConnectionSetOptions;
    /// use rmcp::model::Implementation;
    ///
    /// let options = ConnectionSetOptions::new().with_client(|client| {
    ///     client
    ///         .with_client_info(Implementation::new("my-host", "1.0.0"))
    ///         .with_process_grace(Duration::from_millis(300))
    /// });
    /// assert_eq!(options.client().client_info().name, "my-host");
    /// ```
    #[must_use]
    pub fn with_client(mut self, change: impl FnOnce(ClientSettings) -> ClientSettings) -> Self {
        self.client = change(self.client);
        self
    }

    /// The client's settings connections start from ([`Self::with_client`]).
    pub fn client(&self) -> &ClientSettings {
        &self.client
    }

    /// How long `tools()` waits for servers still starting.
    #[must_use]
    pub fn with_tools_grace(mut self, grace: Duration) -> Self {
        self.tools_grace = grace;
        self
    }

    /// `_meta` keys starting with this prefix belong to the host and are removed from what
    /// callers pass.
    #[must_use]
    pub fn with_reserved_meta_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.reserved_meta_prefix = Some(prefix.into());
        self
    }

    /// Where events go: an unbounded channel, so the set never waits for the host and no
    /// event is lost, at the cost of memory if the host stops reading. See
    /// [`ConnectionEvent`] for the order of events. The set keeps the sender until every
    /// handle of the set (clones included) has been dropped and its tasks have ended, so the
    /// receiver returns `None` only after `shutdown()` and dropping the set; a host that
    /// reads until `StartupComplete` need not wait for that. Replaces an earlier
    /// [`with_events_bounded`](Self::with_events_bounded).
    #[must_use]
    pub fn with_events(mut self, sender: mpsc::UnboundedSender<ConnectionEvent>) -> Self {
        self.events = Some(EventSink::Unbounded(sender));
        self
    }

    /// Where events go, through a bounded channel: when it is full the set drops the event
    /// instead of waiting or buffering, counts it
    /// ([`ConnectionSet::dropped_events`](crate::ConnectionSet::dropped_events)) and logs a
    /// warning. For hosts that must not buffer without limit; size the channel for a
    /// startup round (about two events per server, plus one) to lose nothing in normal
    /// use. The channel ends like the one of [`with_events`](Self::with_events), which this
    /// replaces.
    #[must_use]
    pub fn with_events_bounded(mut self, sender: mpsc::Sender<ConnectionEvent>) -> Self {
        self.events = Some(EventSink::bounded(sender));
        self
    }

    /// Who answers elicitation requests.
    #[must_use]
    pub fn with_elicitation_handler(mut self, handler: Arc<dyn ElicitationHandler>) -> Self {
        self.elicitation = Some(handler);
        self
    }

    /// Who answers approval questions of
    /// [`ConnectionSet::call_approved`](crate::ConnectionSet::call_approved) (a person
    /// through the host's UI, or a policy). Without one (the default) such a call whose
    /// approval mode asks is refused with [`Error::NotApproved`](crate::Error::NotApproved);
    /// [`ConnectionSet::call_tool`](crate::ConnectionSet::call_tool) and
    /// [`ConnectionSet::call_qualified`](crate::ConnectionSet::call_qualified) never ask.
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn crate::policy::approver::Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// The host's model, answering servers' sampling requests (`sampling/createMessage`,
    /// both eras). With it every connection announces the sampling capability (with tool
    /// use); the host's authority decides first ([`HostAuthority::with_sampling_reviewer`](crate::HostAuthority::with_sampling_reviewer),
    /// and [`ApprovalPolicy::Never`](crate::ApprovalPolicy::Never) refuses). A request
    /// reaches this set's handler only when this set's call caused it. Without a handler
    /// (the default) sampling is not announced and requests are refused.
    #[must_use]
    pub fn with_sampling_handler(
        mut self,
        handler: Arc<dyn crate::policy::sampling::SamplingHandler>,
    ) -> Self {
        self.sampling = Some(handler);
        self
    }

    /// The host renders MCP Apps (the `io.modelcontextprotocol/ui` extension): connections
    /// announce the extension (with [`APP_MIME_TYPE`](crate::APP_MIME_TYPE)), and each
    /// [`ToolInfo::ui`](crate::ToolInfo::ui) names the tool's app. Tools only the app may
    /// call (`visibility: ["app"]`) join the catalog, callable by the host for its app:
    /// leave them out of what the model sees ([`ToolInfo::visible_to_model`](crate::ToolInfo::visible_to_model);
    /// tool search leaves them out). Reading a `ui://` resource returns it with its MIME
    /// type unchanged, and tool results keep their `_meta`. Off by default: nothing is
    /// announced, `ui` stays `None` and app-only tools stay out of the catalog.
    #[must_use]
    pub fn with_apps(mut self, on: bool) -> Self {
        self.apps = on;
        self
    }

    /// How long the elicitation handler may take to answer one request before it is
    /// cancelled (the server gets `cancel`), and the sampling handler before the request is
    /// refused. Default: no limit, for a host whose user
    /// answers at their own pace. Set it where several users share a server: while a
    /// 2025-era server waits for one user's answer, the other sets' calls to that server
    /// wait their turn (the server's request names no call, so only turns can route it).
    #[must_use]
    pub fn with_answer_deadline(mut self, deadline: Duration) -> Self {
        self.answer_deadline = Some(deadline);
        self
    }

    /// The roots the host offers its servers (MCP roots, both eras: see [`Root`](crate::Root)),
    /// in this order. Default: none, and the `roots` capability is not announced. The roots
    /// are part of what a connection announces: sets with other roots never share a
    /// connection.
    #[must_use]
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = mcp_client::Root>) -> Self {
        self.roots = roots.into_iter().collect();
        self
    }

    /// The host's first authority (approval and elicitation policies, permission profiles,
    /// reviewer); replace it later with
    /// [`ConnectionSet::set_authority`](crate::ConnectionSet::set_authority). Default
    /// [`HostAuthority::new`](crate::HostAuthority::new).
    #[must_use]
    pub fn with_authority(mut self, authority: crate::policy::authority::HostAuthority) -> Self {
        self.authority = authority;
        self
    }

    /// Who supplies host-owned `tools/call` `_meta` (under the reserved prefix of
    /// [`Self::with_reserved_meta_prefix`], which it needs) for servers that advertise
    /// they understand it. See [`HostMetadataProvider`](crate::HostMetadataProvider).
    #[must_use]
    pub fn with_host_metadata(
        mut self,
        provider: Arc<dyn crate::policy::host_meta::HostMetadataProvider>,
    ) -> Self {
        self.host_metadata = Some(provider);
        self
    }

    /// Bound on shutting down one server.
    #[must_use]
    pub fn with_shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// First and longest delay between restarts of a crashed stdio server.
    #[must_use]
    pub fn with_restart_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.restart_backoff = first;
        self.restart_backoff_max = max.max(first);
        self
    }

    /// The environment lookup used for `env_vars`, `bearer_token_env_var` and
    /// `env_http_headers` (default: the process environment).
    #[must_use]
    pub fn with_env_lookup(mut self, env: SharedEnvLookup) -> Self {
        self.env = env;
        self
    }

    /// Cancelling this token cancels startup (servers not yet ready become `cancelled`).
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// Use `provider` for the `Authorization` of the HTTP server `key` (OAuth and other
    /// credential providers). It takes precedence over `bearer_token_env_var`.
    #[must_use]
    pub fn with_auth_provider(
        mut self,
        key: McpServerKey,
        provider: Arc<dyn AuthHeaderProvider>,
    ) -> Self {
        self.auth.insert(key, provider);
        self
    }

    /// Connect to the HTTP server `key` as `identity` (a user the host acts for), with
    /// `provider` giving that identity's `Authorization`. On a shared pool the connection
    /// is shared only by sets that connect to `key` as the same identity: another user's
    /// set gets a connection of its own, so one user's credentials never carry another's
    /// calls. The identity is an opaque name the host chooses (a subject, a caller id);
    /// it takes part in the connection's pool key, never in anything sent.
    #[must_use]
    pub fn with_identity_auth(
        mut self,
        key: McpServerKey,
        identity: impl Into<String>,
        provider: Arc<dyn AuthHeaderProvider>,
    ) -> Self {
        self.identities.insert(key.clone(), identity.into());
        self.auth.insert(key, provider);
        self
    }

    /// Launch stdio servers of environment `id` through `environment` (instead of the
    /// configuration's wrapper, if any).
    #[must_use]
    pub fn with_environment(
        mut self,
        id: EnvironmentId,
        environment: Arc<dyn Environment>,
    ) -> Self {
        self.environments.insert(id, environment);
        self
    }

    /// Adds a pre-call hook; hooks run in the order added.
    #[must_use]
    pub fn with_call_hook(mut self, hook: Arc<dyn CallHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Where stored OAuth credentials live (`mcp-auth`'s stores). With a store, every
    /// streamable-HTTP server that has no `bearer_token_env_var`, no `Authorization` header and
    /// no `auth = "none"` uses its stored tokens (refreshed when needed); without one, such
    /// servers connect without credentials. Without the `oauth` feature the store is only
    /// watched (a server waiting for a login starts when credentials appear in it); the
    /// tokens themselves are used by the OAuth client of that feature.
    #[must_use]
    pub fn with_credential_store(mut self, store: Arc<dyn mcp_auth::CredentialStore>) -> Self {
        self.credential_store = Some(store);
        self
    }

    /// With a credential store: when a server wants a login (or more scopes), log in through
    /// `agent` (a browser, or `mcp_auth::HeadlessAgent` for automated clients) instead of
    /// reporting `login_required`. (Feature `oauth`.)
    #[cfg(feature = "oauth")]
    #[must_use]
    pub fn with_login_agent(mut self, agent: Arc<dyn mcp_auth::UserAgent>) -> Self {
        self.login_agent = Some(agent);
        self
    }

    /// Starts nothing at startup: every server whose listing is in the tool catalog cache
    /// is deferred (whatever its startup policy; `tool_cache = false` servers excepted),
    /// the others are `cancelled`. For showing the last known tools at once (`mcpctl
    /// tools --cached`); a call still starts a deferred server.
    #[must_use]
    pub fn with_cache_only(mut self, on: bool) -> Self {
        self.cache_only = on;
        self
    }

    /// Pins every server's tools as first seen and compares later listings with the pins
    /// (at startup, after `list_changed`, after a restart, cached or live): a change that
    /// adds risk (a new or renamed tool, a schema that accepts more, annotations that say
    /// less safe, a tool the model now sees, any change of a text the model reads beyond
    /// spacing and punctuation: see [`ToolChange::adds_risk`](crate::ToolChange::adds_risk))
    /// keeps the tool out of the catalog and uncallable until the host accepts it
    /// ([`ConnectionSet::accept_tool_changes`](crate::ConnectionSet::accept_tool_changes));
    /// other changes are re-pinned; both are told by
    /// [`ConnectionEvent::ToolsDrifted`](crate::ConnectionEvent::ToolsDrifted). A pin is
    /// per server key (name and environment) and what runs (command, arguments and folder,
    /// or URL). Default: no pins.
    #[must_use]
    pub fn with_tool_pins(mut self, pins: Arc<crate::policy::pins::ToolPins>) -> Self {
        self.tool_pins = Some(pins);
        self
    }

    /// Treats every server as `startup = "lazy_when_cached"`: one whose listing is in the
    /// tool catalog cache is deferred (its cached tools shown, started on first use), the
    /// others start as usual. For a host that wants the whole catalog at the cost of
    /// starting only what it has never seen (`mcpctl tools --search`).
    #[must_use]
    pub fn with_defer_cached(mut self, on: bool) -> Self {
        self.defer_cached = on;
        self
    }

    /// How often the credential store is read for a server that failed with
    /// `login_required`, so it starts by itself once a login (in any process) stored
    /// credentials for it. Default [`DEFAULT_LOGIN_POLL`].
    #[must_use]
    pub fn with_login_poll_interval(mut self, interval: Duration) -> Self {
        self.login_poll = interval;
        self
    }

    /// Keeps every server's tool listing in `cache` (keyed by server and connection
    /// fingerprint), updated when a server becomes ready and after `list_changed`, and
    /// saved to its file (for a [`ToolCache::persisted`](crate::ToolCache::persisted)
    /// cache) after startup, after changes and at shutdown. Servers with
    /// `startup = "lazy_when_cached"` whose listing is cached start on first use and
    /// show the cached tools meanwhile (annotations cleared, no instructions: they are
    /// not trusted until the live server confirms them). Servers with
    /// `tool_cache = false` are neither cached nor deferred.
    #[must_use]
    pub fn with_tool_cache(mut self, cache: crate::catalog::tool_cache::ToolCache) -> Self {
        self.tool_cache = Some(cache);
        self
    }

    /// Keeps the set's connections in the host's [`ServerPool`](crate::ServerPool),
    /// shared with the other sets given the same pool (one per session or sub-agent):
    /// a server with the same connection fingerprint is one connection, one process. The
    /// fingerprint covers the connection settings of these options (the client's settings
    /// of [`Self::with_client`], roots, capabilities), so sets that differ in one get
    /// connections of their own.
    /// The pool's own backoff applies instead of [`Self::with_restart_backoff`].
    /// Without it, the set has a pool of its own, shut down with the set.
    #[must_use]
    pub fn with_shared_pool(mut self, pool: crate::set::pool::ServerPool) -> Self {
        self.shared_pool = Some(pool);
        self
    }
}

//! [`Gateway`]: the MCP server one client talks to. Each client gets its own connection
//! set (its session) on the hub's shared pool, so servers are shared between clients while
//! everything a server sends back (elicitation, sampling, progress, log messages written
//! during a call) reaches only the client whose call caused it.

use mcp_catalog::ToolExposure;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, ElicitationRequest,
    Progress, ServerPool, ServerState, elicitation_fn,
};
use mcp_key::McpServerKey;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, Prompt, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ResourceContents, ResourceUpdatedNotificationParam, ResultType,
    ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, broadcast, mpsc};

use super::approval::{self, Verdict};
use super::caller::{Caller, not_available};
use super::host_requests::{self, ClientLevel};
use super::modern;
use super::shared_uri;

/// Set events kept for `subscriptions/listen` requests that are slow to take them.
const EVENT_BUFFER: usize = 64;

/// How long a 2026-era client's request waits for its new set's servers to settle.
const SETTLE_BOUND: std::time::Duration = std::time::Duration::from_secs(2);

/// Resource URIs one `subscriptions/listen` may watch.
const MAX_LISTEN_URIS: usize = 256;

/// The server that serves `uri`: the one server that listed it (`listers`), else the one
/// server with a template whose fixed prefix `uri` starts with. Several of either is no
/// answer: a URI is never routed to one of them by a guess.
fn route(
    listers: &[McpServerKey],
    templates: &[(String, McpServerKey)],
    uri: &str,
) -> Option<McpServerKey> {
    match listers {
        [one] => return Some(one.clone()),
        [] => {}
        _ => return None,
    }
    let mut owners: Vec<&McpServerKey> = templates
        .iter()
        .filter(|(prefix, _)| uri.starts_with(prefix.as_str()))
        .map(|(_, server)| server)
        .collect();
    owners.sort();
    owners.dedup();
    match owners.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

/// What every client of one `serve` shares: the catalog, the pool, the options each
/// client's connection set starts from, and the limits.
pub(crate) struct Hub {
    pub(crate) catalog: mcp_catalog::ResolvedCatalog,
    pub(crate) pool: ServerPool,
    pub(crate) options: ConnectionSetOptions,
    /// Calls one client may have in flight at once.
    pub(crate) max_calls: usize,
    /// Clients (2025-era sessions) at once.
    pub(crate) max_clients: usize,
    /// Which tools are listed: all, or the two of search mode.
    pub(crate) tool_exposure: ToolExposure,
    /// The calls of 2026-era clients in flight: they have no session, so nothing but the
    /// token tells them apart, and they share one bound of `max_calls`.
    pub(crate) modern_calls: tokio::sync::Semaphore,
    /// How long a call waits for its client's answer (approval, elicitation).
    pub(crate) answer_deadline: std::time::Duration,
    /// Clients whose gateway is alive.
    pub(crate) clients: Arc<AtomicUsize>,
    /// Calls of 2026-era clients waiting for their answers.
    pub(crate) parked: super::modern::Parked,
    /// Tasks of 2026-era clients that declared the tasks extension.
    pub(crate) tasks: super::tasks::Tasks,
    /// 2025-era HTTP sessions with a question out to their clients.
    pub(crate) waiting: Arc<super::absent::Waiting>,
    /// 2026-era listens acknowledged and still being set up.
    pub(crate) listen_setups: super::modern::ListenSetups,
    /// Sessions by their callers, and what each caller holds.
    pub(crate) bindings: Arc<super::binding::Bindings>,
    /// What the status page keeps: live sets, restarts, calls.
    pub(crate) status: super::status::Board,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("pool", &self.pool)
            .field("max_calls", &self.max_calls)
            .finish_non_exhaustive()
    }
}

/// One client's MCP server: rmcp's server role over that client's connection set.
#[derive(Clone)]
pub(crate) struct Gateway {
    inner: Arc<Inner>,
}

struct Inner {
    set: ConnectionSet,
    /// What a 2026-era client's calls start their own sets from.
    hub: Arc<Hub>,
    /// The set's events, for 2026-era clients' `subscriptions/listen` requests.
    events: broadcast::Sender<ConnectionEvent>,
    /// The client, once it initialized: where its elicitations and notifications go.
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    /// Its HTTP session (2025 era), once a request named it.
    session: Arc<OnceLock<String>>,
    calls: Semaphore,
    max_calls: usize,
    /// Which server listed each resource URI (the last listing), for `resources/read`.
    /// Every server that listed each URI (sorted): a URI two servers list is ambiguous.
    /// Shared with the event forwarder, which names the server in the update of a URI
    /// several servers list (see [`shared_uri`]).
    resource_owners: Owners,
    /// The hub's count of live clients, decremented when this one goes (counted once
    /// it initialized: a 2026-era request has a gateway of its own but is no client).
    clients: Arc<AtomicUsize>,
    counted: std::sync::atomic::AtomicBool,
    /// Qualified prompt name -> (server, its own name), from the last listing.
    prompts: Mutex<BTreeMap<String, (McpServerKey, String)>>,
    /// In search mode, the tools this client's searches returned, listed beside the two
    /// (see [`super::exposure::Revealed`]).
    revealed: Mutex<super::exposure::Revealed>,
    /// The level of log messages the client asked for (`logging/setLevel`).
    log_level: ClientLevel,
    /// Whether the client (2025 era) announced that it renders MCP Apps.
    renders_apps: std::sync::atomic::AtomicBool,
    /// The set on the status page while this gateway lives.
    _status: super::status::Tracked,
    /// Who this client is, from its first request on (a 2025-era session's every
    /// request is its creator's: the HTTP guard sees to it); see [`super::caller`].
    caller: Arc<OnceLock<Arc<Caller>>>,
    /// The session counted against its caller's limit, while it lives.
    caller_slot: OnceLock<super::binding::ClientSlot>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.counted.load(Ordering::SeqCst) {
            self.clients.fetch_sub(1, Ordering::SeqCst);
        }
        // The client is gone: give its connections back to the pool.
        let set = self.set.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move { set.shutdown().await });
        }
    }
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("set", &self.inner.set)
            .finish_non_exhaustive()
    }
}

/// The HTTP session a request came in (2025-era clients over HTTP).
fn session_of(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .headers
        .get(super::absent::SESSION_HEADER)?
        .to_str()
        .ok()
        .map(str::to_owned)
}

/// Whether the client announced that it answers elicitation requests.
fn can_elicit(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.elicitation.is_some())
}

impl Gateway {
    /// A new client's gateway: starts its connection set on the hub's pool.
    pub(crate) fn start(hub: &Arc<Hub>) -> Self {
        let peer: Arc<OnceLock<Peer<RoleServer>>> = Arc::default();
        let session: Arc<OnceLock<String>> = Arc::default();
        let elicit_peer = Arc::clone(&peer);
        let elicit_session = Arc::clone(&session);
        let waiting = Arc::clone(&hub.waiting);
        let handler = elicitation_fn(move |request: ElicitationRequest| {
            let peer = elicit_peer.get().cloned();
            let session = elicit_session.get().cloned();
            let waiting = Arc::clone(&waiting);
            async move {
                match peer {
                    Some(peer) if can_elicit(&peer) => {
                        let _out = session.map(|s| waiting.begin(&s, &peer));
                        peer.create_elicitation(request.params)
                            .await
                            .unwrap_or_else(|e| {
                                tracing::warn!(server = %request.server, "the client's elicitation failed: {e}");
                                ElicitResult::new(ElicitationAction::Decline)
                            })
                    }
                    _ => ElicitResult::new(ElicitationAction::Decline),
                }
            }
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let sampling = host_requests::forward_sampling(
            Arc::clone(&peer),
            Arc::clone(&session),
            Arc::clone(&hub.waiting),
        );
        let options = hub
            .options
            .clone()
            .with_shared_pool(hub.pool.clone())
            .with_elicitation_handler(handler)
            .with_sampling_handler(sampling)
            .with_events(tx);
        let set = ConnectionSet::start(&hub.catalog, options);
        let events = broadcast::channel(EVENT_BUFFER).0;
        let tracked = hub.status.track(&hub.pool, &set, &events);
        let resource_owners = Owners::default();
        let log_level = ClientLevel::default();
        let caller: Arc<OnceLock<Arc<Caller>>> = Arc::default();
        tokio::spawn(forward_list_changes(
            rx,
            Arc::clone(&peer),
            events.clone(),
            (
                Arc::clone(&resource_owners),
                Arc::clone(&log_level),
                Arc::clone(&caller),
            ),
        ));
        Self {
            inner: Arc::new(Inner {
                set,
                hub: Arc::clone(hub),
                events,
                peer,
                session,
                calls: Semaphore::new(hub.max_calls),
                max_calls: hub.max_calls,
                resource_owners,
                clients: Arc::clone(&hub.clients),
                counted: std::sync::atomic::AtomicBool::new(false),
                prompts: Mutex::default(),
                revealed: Mutex::default(),
                log_level,
                renders_apps: std::sync::atomic::AtomicBool::new(false),
                _status: tracked,
                caller,
                caller_slot: OnceLock::new(),
            }),
        }
    }

    /// The client's connection set.
    pub(crate) fn set(&self) -> &ConnectionSet {
        &self.inner.set
    }
}

/// Every server that listed each resource URI in the gateway's last listing (sorted).
type Owners = Arc<Mutex<BTreeMap<String, Vec<McpServerKey>>>>;

/// The URI the client knows `server`'s `uri` by: named with its server when several
/// servers listed it (see [`shared_uri`]).
fn shown_uri(owners: &Owners, server: &McpServerKey, uri: String) -> String {
    let shared = owners
        .lock()
        .ok()
        .is_some_and(|map| map.get(&uri).is_some_and(|l| l.len() > 1));
    if shared {
        shared_uri::qualified(server, &uri)
    } else {
        uri
    }
}

/// Tells the client its tool list changed whenever a server of its set becomes ready,
/// fails or changes its tools, that its prompt or resource lists changed, that a resource
/// it subscribed to changed, and the servers' log messages at the level it asked for,
/// once the client initialized (2025 era); every event also goes to `listens`, where the
/// `subscriptions/listen` requests of 2026-era clients take them.
async fn forward_list_changes(
    mut events: mpsc::UnboundedReceiver<ConnectionEvent>,
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    listens: broadcast::Sender<ConnectionEvent>,
    (owners, log_level, caller): (Owners, ClientLevel, Arc<OnceLock<Arc<Caller>>>),
) {
    while let Some(event) = events.recv().await {
        // Nobody listening is fine.
        let _ = listens.send(event.clone());
        let Some(peer) = peer.get() else {
            continue;
        };
        // Nothing of a server the client may not use: its updates, its log messages.
        if let ConnectionEvent::ResourceUpdated { server, .. }
        | ConnectionEvent::ServerLog { server, .. } = &event
            && !caller.get().is_some_and(|c| c.may_use_server(server))
        {
            continue;
        }
        match event {
            ConnectionEvent::Ready { .. }
            | ConnectionEvent::Failed { .. }
            | ConnectionEvent::ToolsChanged { .. }
            | ConnectionEvent::ToolsDrifted { .. } => {
                let _ = peer.notify_tool_list_changed().await;
            }
            ConnectionEvent::ResourceUpdated { server, uri } => {
                let uri = shown_uri(&owners, &server, uri);
                let _ = peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await;
            }
            ConnectionEvent::PromptsChanged { .. } => {
                let _ = peer.notify_prompt_list_changed().await;
            }
            ConnectionEvent::ResourcesChanged { .. } => {
                let _ = peer.notify_resource_list_changed().await;
            }
            ConnectionEvent::ServerLog {
                server,
                level,
                logger,
                data,
                ..
            } => {
                if let Some(param) =
                    host_requests::log_for_client(&log_level, &server, level, logger, data)
                {
                    host_requests::send_log(peer, param).await;
                }
            }
            _ => {}
        }
    }
}

/// What the client gets for a call's outcome (both eras): the result marked `complete` (a
/// 2026-era client needs the discriminator, rmcp takes it off again for older clients, and
/// a 2025-era server never sends it); an unknown tool as a protocol error; any other
/// failure as an error result the model can read, with what to do.
pub(crate) fn call_outcome(
    outcome: mcp_connections::Result<CallToolResult>,
) -> Result<CallToolResult, McpError> {
    match outcome {
        Ok(mut result) => {
            result.result_type.get_or_insert(ResultType::COMPLETE);
            Ok(result)
        }
        Err(e) if e.is_unknown() => Err(McpError::invalid_params(mcp_key::error_chain(&e), None)),
        Err(e) => Ok(error_result(crate::serve::explain(&e))),
    }
}

/// An error result the model can read (not a protocol error).
pub(crate) fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let value = json!({
            "protocolVersion": ProtocolVersion::V_2025_11_25.as_str(),
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"listChanged": true, "subscribe": true},
                "prompts": {"listChanged": true},
                "logging": {},
                "completions": {},
                "extensions": {rmcp::model::TASKS_EXTENSION_ID: {}},
            },
            "serverInfo": {"name": "mcpctl-serve", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "Tools, prompts, resources and templates of every MCP server configured for mcpctl; tools and prompts under qualified names (mcp__<server>__<name>).",
        });
        serde_json::from_value(value).unwrap_or_default()
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        // Both eras: 2026-07-28 clients get elicitations and approvals as input_required
        // rounds (modern.rs), 2025 ones as requests on their session.
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let caller = self.caller(&context)?;
        if self.inner.caller_slot.get().is_none() {
            let slot = self.inner.hub.bindings.admit_client(&caller).map_err(|n| {
                McpError::invalid_request(
                    format!(
                        "you already have {n} clients connected to mcpctl serve ([gateway.limits] clients_per_principal); close one and try again"
                    ),
                    None,
                )
            })?;
            let _ = self.inner.caller_slot.set(slot);
        }
        context.peer.set_peer_info(request.clone());
        let _ = self.inner.peer.set(context.peer.clone());
        if !self.inner.counted.load(Ordering::SeqCst) {
            let max = self.inner.hub.max_clients;
            let admitted =
                self.inner
                    .clients
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                        (n < max).then_some(n + 1)
                    });
            if admitted.is_err() {
                return Err(McpError::invalid_request(
                    format!(
                        "mcpctl serve already has {max} clients (--max-clients); try again when one has left"
                    ),
                    None,
                ));
            }
            self.inner.counted.store(true, Ordering::SeqCst);
        }
        let mut result = self.negotiate_initialize(&request)?;
        // MCP Apps: announced to a client that renders them; every upstream connection
        // announces the extension (see `serve::run`), so tools' `_meta.ui`, `ui://`
        // resources and results' `_meta` come through unchanged.
        let renders_apps = request
            .capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(mcp_connections::APPS_EXTENSION));
        self.inner
            .renders_apps
            .store(renders_apps, Ordering::SeqCst);
        if renders_apps {
            result
                .capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(
                    mcp_connections::APPS_EXTENSION.to_owned(),
                    rmcp::model::JsonObject::new(),
                );
        }
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = self.caller(&context)?;
        if self.inner.hub.tool_exposure == ToolExposure::Search {
            let mut tools = mcp_connections::search_mode_tools();
            let revealed = self
                .inner
                .revealed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            if !revealed.is_empty() {
                let mut catalog = self.inner.set.tools().await;
                catalog.retain(|t| caller.may_use_tool(&t.server, &t.tool.name));
                tools.extend(revealed.listed(&catalog));
            }
            return Ok(ListToolsResult::with_all_items(tools));
        }
        self.settle_for(&context).await;
        // Tools only an MCP App may call go to clients that render apps, whose hosts keep
        // them from their models.
        let apps = self.renders_apps(&context);
        let tools = self
            .inner
            .set
            .tools()
            .await
            .iter()
            .filter(|t| apps || t.visible_to_model())
            .filter(|t| caller.may_use_tool(&t.server, &t.tool.name))
            .map(super::exposure::as_listed)
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = self.caller(&context)?;
        let search_mode = self.inner.hub.tool_exposure == ToolExposure::Search;
        if search_mode && request.name == super::exposure::SEARCH_TOOL {
            // A search answers from what the servers listed: let those starting finish
            // (bounded), as a 2026-era request's lists do.
            self.settle().await;
            let allowed =
                |t: &mcp_connections::ToolInfo| caller.may_use_tool(&t.server, &t.tool.name);
            let (result, found) =
                super::exposure::search(&self.inner.set, request.arguments.as_ref(), &allowed);
            // A 2025-era session is a client to remember; a 2026-era request is not.
            if !modern::is_modern(&context) {
                let added = self
                    .inner
                    .revealed
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .add(found);
                if added {
                    let _ = context.peer.notify_tool_list_changed().await;
                }
            }
            return Ok(result.into());
        }
        // `call_tool {name, arguments}` is the call of `name`, from here on like any.
        let request = if search_mode && request.name == super::exposure::CALL_TOOL {
            match super::exposure::unwrap_call(&request) {
                Ok(inner) => inner,
                Err(refused) => return Ok(refused.into()),
            }
        } else {
            request
        };
        let name = request.name.to_string();
        // A retry carries its `requestState`, which names the call it resumes: checked
        // when it is resumed (it is the caller's, and its tool was when it started).
        if request.request_state.is_none() && !caller.has_everything() {
            match Box::pin(self.inner.set.resolve_tool_settled(&name)).await {
                Some((server, tool)) if caller.may_use_tool(&server, &tool) => {}
                _ => return Err(not_available(&name)),
            }
        }
        let Ok(_caller_permit) = self.inner.hub.bindings.call_permit(&caller) else {
            return Ok(error_result(
                "too many of your calls are in flight ([gateway.limits] calls_per_principal); wait for one to finish".to_owned(),
            )
            .into());
        };
        let calls = if modern::is_modern(&context) {
            &self.inner.hub.modern_calls
        } else {
            &self.inner.calls
        };
        let Ok(_permit) = calls.try_acquire() else {
            return Ok(error_result(format!(
                "too many calls in flight from this client (at most {}); wait for one to finish",
                self.inner.max_calls
            ))
            .into());
        };
        // The call's futures are large (the whole upstream call): on the heap, not on the
        // stack of the poll (a debug build's worker stack overflowed).
        if modern::is_modern(&context) {
            return Box::pin(self.call_modern(name, request, &context, caller)).await;
        }
        // Asked through the client's elicitation, refused when it cannot elicit or does
        // not answer in time.
        let peer = context.peer.clone();
        let deadline = self.inner.hub.answer_deadline;
        let session = session_of(&context);
        if let Some(session) = &session {
            let _ = self.inner.session.set(session.clone());
        }
        let waiting = Arc::clone(&self.inner.hub.waiting);
        let ask = |question| async move {
            if !can_elicit(&peer) {
                return None;
            }
            let _out = session.as_deref().map(|s| waiting.begin(s, &peer));
            match tokio::time::timeout(deadline, peer.create_elicitation(question)).await {
                Ok(answer) => answer.ok(),
                Err(_) => {
                    tracing::info!(
                        "the client did not answer the approval question within {deadline:?}"
                    );
                    None
                }
            }
        };
        let arguments = request.arguments.clone().map(Value::Object);
        match Box::pin(approval::check(
            &self.inner.set,
            &name,
            arguments.as_ref(),
            true,
            ask,
        ))
        .await
        {
            Verdict::Refused(result) => Ok(result.into()),
            // What the name resolved to in the end must be the caller's too.
            Verdict::Call(target) if !super::caller::may_call(&caller, &target) => {
                Err(not_available(&name))
            }
            Verdict::Call(target) => Box::pin(self.call(target, arguments, &context)).await,
        }
    }

    /// What a `subscriptions/listen` may ask of the gateway: tool, prompt and resource list
    /// changes, and resource updates.
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        let mut accepted = rmcp::model::SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        // Bounded: the acknowledgement names the URIs accepted, the first ones asked for.
        accepted.resource_subscriptions =
            requested.resource_subscriptions.clone().map(|mut uris| {
                uris.truncate(MAX_LISTEN_URIS);
                uris
            });
        // rmcp acknowledges it before `listen` runs: calls wait for its setup.
        self.inner.hub.listen_setups.begin();
        Some(accepted)
    }

    /// A 2026-era client's `subscriptions/listen`: tool list changes (a server that
    /// changed its tools, or became ready or failed after startup) and updates of the
    /// resources it names, until the client ends the request.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let setup = self.inner.hub.listen_setups.setting_up();
        // A listen is a client of its caller while it lasts; the URIs it may watch are
        // those of servers the caller may use (the listings below are the caller's).
        let caller = self.caller(context.request_context())?;
        let _slot = self.inner.hub.bindings.admit_client(&caller).map_err(|n| {
            McpError::invalid_request(
                format!(
                    "you already have {n} clients connected to mcpctl serve ([gateway.limits] clients_per_principal); end a listen and try again"
                ),
                None,
            )
        })?;
        // Only 2026-era clients listen: see `settle_for`.
        self.settle().await;
        let accepted = context.accepted().clone();
        let sink = context.sink().clone();
        let mut events = self.inner.events.subscribe();
        let set = &self.inner.set;
        let mut settled = set
            .status()
            .iter()
            .all(|s| !matches!(s.state, ServerState::Starting));
        let tools = accepted.tools_list_changed == Some(true);
        let prompts = accepted.prompts_list_changed == Some(true);
        let resources = accepted.resources_list_changed == Some(true);
        let uris = accepted.resource_subscriptions.clone().unwrap_or_default();
        let mut subscribed = Vec::new();
        if !uris.is_empty() {
            // One listing and one template listing for all the URIs, however many name
            // nothing (each unknown URI used to cost two full upstream listings).
            let _ = self.list_resources_and_owners().await;
            let templates = self.template_prefixes().await;
            for uri in &uris {
                let (server, upstream) = match shared_uri::split(uri) {
                    Some((server, upstream)) => (Some(server), upstream),
                    None => (route(&self.listers(uri), &templates, uri), uri.as_str()),
                };
                if let Some(server) = server
                    && set.subscribe_resource(&server, upstream).await.is_ok()
                {
                    subscribed.push((server, upstream.to_owned()));
                }
            }
        }
        drop(setup);
        loop {
            tokio::select! {
                () = context.cancelled() => break,
                event = events.recv() => match event {
                    Ok(ConnectionEvent::StartupComplete { .. }) => settled = true,
                    Ok(ConnectionEvent::ToolsChanged { .. } | ConnectionEvent::ToolsDrifted { .. })
                        if tools =>
                    {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                    Ok(ConnectionEvent::Ready { .. } | ConnectionEvent::Failed { .. })
                        if tools && settled =>
                    {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                    Ok(ConnectionEvent::PromptsChanged { .. }) if prompts => {
                        let _ = sink.notify_prompt_list_changed().await;
                    }
                    Ok(ConnectionEvent::ResourcesChanged { .. }) if resources => {
                        let _ = sink.notify_resource_list_changed().await;
                    }
                    Ok(ConnectionEvent::ResourceUpdated { server, uri }) => {
                        let shown = shown_uri(&self.inner.resource_owners, &server, uri);
                        if uris.contains(&shown) {
                            let _ = sink.notify_resource_updated(shown).await;
                        }
                    }
                    // Events were lost: the tools may have changed.
                    Err(broadcast::error::RecvError::Lagged(_)) if tools => {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                    _ => {}
                },
            }
        }
        for (server, uri) in subscribed {
            let _ = set.unsubscribe_resource(&server, &uri).await;
        }
        Ok(())
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        let caller = self.caller(&context)?;
        let task = self.inner.hub.tasks.get(&request.task_id, &caller).await?;
        Ok(rmcp::model::GetTaskResult::new(task))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = self.caller(&context)?;
        self.inner
            .hub
            .tasks
            .update(&request.task_id, &request.input_responses, &caller)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = self.caller(&context)?;
        self.inner.hub.tasks.cancel(&request.task_id, &caller).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.caller(&context)?;
        self.settle_for(&context).await;
        let resources = self.list_resources_and_owners().await;
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let caller = self.caller(&context)?;
        self.settle_for(&context).await;
        let listing = self.inner.set.list_resource_templates().await;
        Ok(ListResourceTemplatesResult::with_all_items(
            listing
                .items
                .into_iter()
                .filter(|i| caller.may_use_server(&i.server))
                .map(|i| i.item)
                .collect(),
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.caller(&context)?;
        self.settle_for(&context).await;
        Ok(ListPromptsResult::with_all_items(
            self.qualified_prompts().await,
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.caller(&context)?;
        self.settle_for(&context).await;
        let owner = match self.prompt_owner(&request.name) {
            Some(owner) => Some(owner),
            None => {
                let _ = self.qualified_prompts().await;
                self.prompt_owner(&request.name)
            }
        };
        let Some((server, name)) = owner else {
            return Err(McpError::invalid_params(
                format!("no configured MCP server has the prompt {:?}", request.name),
                None,
            ));
        };
        match self
            .inner
            .set
            .get_prompt(&server, &name, request.arguments)
            .await
        {
            Ok(mut result) => {
                result.result_type.get_or_insert(ResultType::COMPLETE);
                Ok(result.into())
            }
            Err(e) => Err(McpError::internal_error(crate::serve::explain(&e), None)),
        }
    }

    #[allow(
        deprecated,
        reason = "logging/setLevel is the 2025-11-25 era's, deprecated by SEP-2577 in rmcp"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if let Ok(mut level) = self.inner.log_level.lock() {
            *level = Some(request.level);
        }
        Ok(())
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        use rmcp::model::{CompleteResult, Reference};
        self.caller(&context)?;
        self.settle_for(&context).await;
        let (server, reference) = match &request.r#ref {
            Reference::Prompt(prompt) => {
                let owner = match self.prompt_owner(&prompt.name) {
                    Some(owner) => Some(owner),
                    None => {
                        let _ = self.qualified_prompts().await;
                        self.prompt_owner(&prompt.name)
                    }
                };
                let Some((server, name)) = owner else {
                    return Err(McpError::invalid_params(
                        format!("no configured MCP server has the prompt {:?}", prompt.name),
                        None,
                    ));
                };
                (server, Reference::for_prompt(name))
            }
            Reference::Resource(template) => {
                let server = self.template_owner(&template.uri).await?;
                (server, request.r#ref.clone())
            }
            _ => {
                return Err(McpError::invalid_params(
                    "completion/complete names neither a prompt nor a resource template",
                    None,
                ));
            }
        };
        match self
            .inner
            .set
            .complete(&server, reference, request.argument, request.context)
            .await
        {
            Ok(completion) => Ok(CompleteResult::new(completion)),
            Err(e) if e.is_unsupported() => {
                Err(McpError::invalid_params(mcp_key::error_chain(&e), None))
            }
            Err(e) => Err(McpError::internal_error(crate::serve::explain(&e), None)),
        }
    }

    #[allow(
        deprecated,
        reason = "the gateway speaks the 2025-11-25 era downstream"
    )]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.caller(&context)?;
        let (server, uri) = self.resource_target(&request.uri).await?;
        match self.inner.set.subscribe_resource(&server, &uri).await {
            Ok(()) => Ok(()),
            Err(e) if e.is_unsupported() => {
                Err(McpError::invalid_request(mcp_key::error_chain(&e), None))
            }
            Err(e) => Err(McpError::internal_error(crate::serve::explain(&e), None)),
        }
    }

    #[allow(
        deprecated,
        reason = "the gateway speaks the 2025-11-25 era downstream"
    )]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = self.caller(&context)?;
        let target = match shared_uri::split(&request.uri) {
            Some((server, uri)) if caller.may_use_server(&server) => Some((server, uri.to_owned())),
            Some(_) => None,
            None => self
                .owner_of(&request.uri)
                .await
                .map(|server| (server, request.uri.clone())),
        };
        if let Some((server, uri)) = target {
            self.inner
                .set
                .unsubscribe_resource(&server, &uri)
                .await
                .map_err(|e| McpError::internal_error(mcp_key::error_chain(&e), None))?;
        }
        Ok(())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.caller(&context)?;
        self.settle_for(&context).await;
        let (server, uri) = self.resource_target(&request.uri).await?;
        match self.inner.set.read_resource(&server, &uri).await {
            Ok(mut result) => {
                result.result_type.get_or_insert(ResultType::COMPLETE);
                if uri != request.uri {
                    for contents in &mut result.contents {
                        if let ResourceContents::TextResourceContents { uri: shown, .. }
                        | ResourceContents::BlobResourceContents { uri: shown, .. } = contents
                            && *shown == uri
                        {
                            shown.clone_from(&request.uri);
                        }
                    }
                }
                Ok(result.into())
            }
            Err(e) => Err(McpError::internal_error(mcp_key::error_chain(&e), None)),
        }
    }
}

/// The error for a resource URI no server the caller may use lists.
fn not_listed(uri: &str) -> McpError {
    McpError::resource_not_found(
        format!("no configured MCP server lists the resource {uri:?} (or a template for it)"),
        None,
    )
}

impl Gateway {
    /// The caller of the request of `context` ([`super::caller::caller_for`]), kept for
    /// the gateway's life: a request of another caller on the same gateway is refused
    /// (the HTTP guard's binding of sessions already keeps them out).
    fn caller(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Caller>, McpError> {
        let caller = super::caller::caller_for(context);
        let kept = self.inner.caller.get_or_init(|| Arc::clone(&caller));
        if kept.id() != caller.id() {
            return Err(McpError::invalid_request(
                "this session belongs to another caller",
                None,
            ));
        }
        Ok(caller)
    }

    /// The caller [`Self::caller`] kept (nobody before the first request).
    fn kept_caller(&self) -> Arc<Caller> {
        self.inner
            .caller
            .get()
            .cloned()
            .unwrap_or_else(|| Arc::new(Caller::nobody()))
    }

    /// Over HTTP a 2026-era client's every request gets a gateway of its own (no session),
    /// whose set is only starting: its lists would miss servers not attached yet, so such
    /// a request waits until the set's servers settled (on a warm pool, a moment), for at
    /// most [`SETTLE_BOUND`] (a server still starting for the first time is left out, as
    /// `tools()` leaves it out after its grace). A 2025-era session's set started at
    /// `initialize` and answers as it stands.
    async fn settle_for(&self, context: &RequestContext<RoleServer>) {
        if modern::is_modern(context) {
            self.settle().await;
        }
    }

    /// Whether the client renders MCP Apps: announced in its `initialize` (2025 era), or
    /// in the request's client capabilities (2026 era).
    fn renders_apps(&self, context: &RequestContext<RoleServer>) -> bool {
        if modern::is_modern(context) {
            return context.client_capabilities().is_some_and(|c| {
                c.extensions
                    .is_some_and(|e| e.contains_key(mcp_connections::APPS_EXTENSION))
            });
        }
        self.inner.renders_apps.load(Ordering::SeqCst)
    }

    /// See [`Self::settle_for`].
    async fn settle(&self) {
        let _ = tokio::time::timeout(SETTLE_BOUND, self.inner.set.wait_startup()).await;
    }

    /// A 2026-era client's call: a new one on a set of its own, or the retry of one that
    /// asked the client something (its `requestState`), run until it ends or asks again.
    async fn call_modern(
        &self,
        name: String,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        caller: Arc<Caller>,
    ) -> Result<CallToolResponse, McpError> {
        let parked = &self.inner.hub.parked;
        self.inner.hub.listen_setups.settled().await;
        let caps = context.client_capabilities();
        let can = modern::Abilities {
            elicit: caps.as_ref().is_some_and(|c| c.elicitation.is_some()),
            sample: caps.as_ref().is_some_and(|c| c.sampling.is_some()),
        };
        let run = match request.request_state.as_deref() {
            Some(state) => modern::resume(
                &self.inner.hub,
                state,
                request.input_responses.as_ref(),
                caller,
                can,
            )?,
            None => modern::start(
                &self.inner.hub,
                name,
                request.arguments.map(Value::Object),
                can,
                caller,
            ),
        };
        let tasks = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks())
            .then_some(&self.inner.hub.tasks);
        modern::drive(parked, tasks, run, context).await
    }

    /// Lists every server's prompts under qualified names and remembers which is which.
    async fn qualified_prompts(&self) -> Vec<Prompt> {
        let listing = self.inner.set.list_prompts().await;
        // Named like the tools: with the catalog's naming options.
        let namer = self.inner.set.namer();
        let table = namer.qualify(
            listing
                .items
                .iter()
                .map(|i| (&i.server, i.item.name.as_str())),
        );
        let mut map = BTreeMap::new();
        let mut prompts = Vec::new();
        let caller = self.kept_caller();
        for item in listing.items {
            let Some(qualified) = table.qualified_name(&item.server, &item.item.name) else {
                continue;
            };
            if !caller.may_use_server(&item.server) {
                continue;
            }
            map.insert(
                qualified.to_owned(),
                (item.server.clone(), item.item.name.clone()),
            );
            let mut prompt = item.item;
            prompt.name = qualified.to_owned();
            prompts.push(prompt);
        }
        if let Ok(mut known) = self.inner.prompts.lock() {
            *known = map;
        }
        prompts
    }

    fn prompt_owner(&self, qualified: &str) -> Option<(McpServerKey, String)> {
        self.inner
            .prompts
            .lock()
            .ok()
            .and_then(|map| map.get(qualified).cloned())
    }

    /// Runs a call on the client's set: progress forwarded in order to the client under
    /// its own token; the client's cancellation cancels the call upstream. `fail_fast`: a
    /// server that is not ready fails the call instead of being started.
    async fn call(
        &self,
        target: approval::Target,
        arguments: Option<Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let mut options = CallOptions::new();
        let mut forwarder = None;
        if let Some(token) = context.meta.get_progress_token() {
            let (tx, mut rx) = super::progress::latest::<Progress>();
            let peer = context.peer.clone();
            forwarder = Some(tokio::spawn(async move {
                while let Some(p) = rx.recv().await {
                    let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                    param.total = p.total;
                    param.message = p.message;
                    let _ = peer.notify_progress(param).await;
                }
                if rx.dropped() > 0 {
                    tracing::debug!(
                        dropped = rx.dropped(),
                        "progress updates overtaken before the client took them"
                    );
                }
            }));
            options = options.with_progress(Arc::new(move |p| tx.send(p)));
        }
        let outcome = tokio::select! {
            () = context.ct.cancelled() => None,
            r = target.call(&self.inner.set, &self.inner.hub.status, arguments, options) => Some(r),
        };
        if let Some(forwarder) = forwarder {
            // The callback (and its sender) went with the call: the forwarder drains and ends.
            let _ = forwarder.await;
        }
        match outcome {
            None => Err(McpError::internal_error(
                "the client cancelled the call",
                None,
            )),
            Some(outcome) => call_outcome(outcome).map(Into::into),
        }
    }

    /// The server to ask for `uri` and the URI to ask it for: the server a
    /// [`shared_uri::qualified`] URI names, else [`Self::owner_or_not_found`].
    async fn resource_target(&self, uri: &str) -> Result<(McpServerKey, String), McpError> {
        if let Some((server, upstream)) = shared_uri::split(uri) {
            if !self.kept_caller().may_use_server(&server) {
                return Err(not_listed(uri));
            }
            return Ok((server, upstream.to_owned()));
        }
        Ok((self.owner_or_not_found(uri).await?, uri.to_owned()))
    }

    /// [`Self::owner_of`], or the error for a URI no server serves, or that several list.
    async fn owner_or_not_found(&self, uri: &str) -> Result<McpServerKey, McpError> {
        if let Some(server) = self.owner_of(uri).await {
            return Ok(server);
        }
        let listers = self.listers(uri);
        if listers.len() > 1 {
            let names: Vec<String> = listers.iter().map(|s| format!("`{s}`")).collect();
            return Err(McpError::invalid_params(
                format!(
                    "the resource {uri:?} is listed by the MCP servers {}: which one is meant cannot be told, so it is read from none; use the URI `resources/list` shows for each (e.g. {:?}), or `mcpctl read --server NAME {uri:?}`",
                    names.join(" and "),
                    shared_uri::qualified(&listers[0], uri)
                ),
                None,
            ));
        }
        Err(not_listed(uri))
    }

    /// The servers that listed `uri` in the latest listing.
    fn listers(&self, uri: &str) -> Vec<McpServerKey> {
        self.inner
            .resource_owners
            .lock()
            .ok()
            .and_then(|map| map.get(uri).cloned())
            .unwrap_or_default()
    }

    /// The server that serves `uri`: the one that listed it, else the only server with a
    /// template whose fixed prefix `uri` starts with. A URI that several servers list has
    /// none: it is never routed to one of them by a guess (a hostile server could shadow
    /// another's resource).
    async fn owner_of(&self, uri: &str) -> Option<McpServerKey> {
        let mut listers = self.listers(uri);
        if listers.is_empty() {
            let _ = self.list_resources_and_owners().await;
            listers = self.listers(uri);
        }
        if listers.is_empty() {
            route(&[], &self.template_prefixes().await, uri)
        } else {
            route(&listers, &[], uri)
        }
    }

    /// Every server's resource templates as (fixed prefix, server).
    /// The one server that lists resource template `uri_template` (none or several: a
    /// clear error, never a guess).
    async fn template_owner(&self, uri_template: &str) -> Result<McpServerKey, McpError> {
        let mut owners: Vec<McpServerKey> = self
            .inner
            .set
            .list_resource_templates()
            .await
            .items
            .into_iter()
            .filter(|t| t.item.uri_template == uri_template)
            .filter(|t| self.kept_caller().may_use_server(&t.server))
            .map(|t| t.server)
            .collect();
        owners.dedup();
        match owners.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(McpError::invalid_params(
                format!("no configured MCP server has the resource template {uri_template:?}"),
                None,
            )),
            several => Err(McpError::invalid_params(
                format!(
                    "several MCP servers have the resource template {uri_template:?} ({}); it cannot be completed through the gateway",
                    several
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            )),
        }
    }

    async fn template_prefixes(&self) -> Vec<(String, McpServerKey)> {
        self.inner
            .set
            .list_resource_templates()
            .await
            .items
            .into_iter()
            .filter(|t| self.kept_caller().may_use_server(&t.server))
            .filter_map(|t| {
                let fixed = t.item.uri_template.split('{').next().unwrap_or_default();
                (!fixed.is_empty()).then(|| (fixed.to_owned(), t.server))
            })
            .collect()
    }

    /// Lists every server's resources and remembers which servers listed each URI.
    async fn list_resources_and_owners(&self) -> Vec<rmcp::model::Resource> {
        let mut listing = self.inner.set.list_resources().await;
        let caller = self.kept_caller();
        listing.items.retain(|i| caller.may_use_server(&i.server));
        let mut owners: BTreeMap<String, Vec<McpServerKey>> = BTreeMap::new();
        for item in &listing.items {
            let listers = owners.entry(item.item.uri.clone()).or_default();
            if !listers.contains(&item.server) {
                listers.push(item.server.clone());
                listers.sort();
            }
        }
        let resources = listing
            .items
            .into_iter()
            .map(|mut item| {
                if owners.get(&item.item.uri).is_some_and(|l| l.len() > 1) {
                    item.item.uri = shared_uri::qualified(&item.server, &item.item.uri);
                }
                item.item
            })
            .collect();
        if let Ok(mut map) = self.inner.resource_owners.lock() {
            *map = owners;
        }
        resources
    }
}

#[cfg(test)]
mod route_tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn key(name: &str) -> McpServerKey {
        McpServerKey::unscoped(name.parse().unwrap())
    }

    #[test]
    fn a_uri_goes_to_its_one_lister_else_its_one_template_else_nowhere() {
        let templates = vec![
            ("notes://".to_owned(), key("notes")),
            ("file:///".to_owned(), key("files")),
            ("file:///".to_owned(), key("other")),
        ];
        assert_eq!(route(&[key("a")], &templates, "x://y"), Some(key("a")));
        assert_eq!(route(&[key("a"), key("b")], &templates, "notes://1"), None);
        assert_eq!(route(&[], &templates, "notes://1"), Some(key("notes")));
        assert_eq!(
            route(&[], &templates, "file:///etc/passwd"),
            None,
            "two templates"
        );
        assert_eq!(route(&[], &templates, "unknown://"), None);
    }
}

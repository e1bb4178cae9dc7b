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
    ConnectionEvent, ConnectionSet, ConnectionSetOptions, ElicitationRequest, ServerPool,
    elicitation_fn,
};
use mcp_key::McpServerKey;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ResourceContents, ResultType, ServerConfig,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::json;
use tokio::sync::{Semaphore, broadcast, mpsc};

use super::caller::Caller;
use super::host_requests::{self, ClientLevel, InCalls};
use super::modern;
use super::outcome::explain;
use super::shared_uri;

mod calls;
mod event_relay;
mod event_stream;
mod events;
mod listen;
mod own_set;
mod routing;
mod skills;
mod webhook;

pub(crate) use event_relay::EventRelay;
use events::forward_list_changes;
pub(crate) use listen::ListenSetups;
use routing::Owners;
pub(crate) use webhook::{routes as webhook_routes, status_routes as event_status_routes};

/// Set events kept for `subscriptions/listen` requests that are slow to take them.
const EVENT_BUFFER: usize = 64;

/// How long a 2026-era client's request waits for its new set's servers to settle.
const SETTLE_BOUND: std::time::Duration = std::time::Duration::from_secs(2);

/// Resource URIs one `subscriptions/listen` may watch.
const MAX_LISTEN_URIS: usize = 256;

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
    /// The connection sets of ended 2026-era calls, kept for their callers' next calls.
    pub(crate) kept: super::modern::KeptSets,
    /// Tasks of 2026-era clients that declared the tasks extension.
    pub(crate) tasks: super::tasks::Tasks,
    /// 2025-era HTTP sessions with a question out to their clients.
    pub(crate) waiting: Arc<super::absent::Waiting>,
    /// 2026-era listens acknowledged and still being set up.
    pub(crate) listen_setups: ListenSetups,
    /// Sessions by their callers, and what each caller holds.
    pub(crate) bindings: Arc<super::binding::Bindings>,
    /// What the status page keeps: live sets, restarts, calls.
    pub(crate) status: super::status::Board,
    /// Callers' event subscriptions and the webhook receiver's state (see `event_relay`).
    pub(crate) events: Arc<EventRelay>,
    /// The encrypted store of each caller's upstream credentials (servers with
    /// `upstream_identity` `caller` or `exchange`; see `identity::vault`).
    pub(crate) vault: super::identity::vault::HubVault,
    /// Per-caller upstream identities: the exchangers of `exchange` servers, callers'
    /// latest tokens, the sign-in pages of `caller` servers (see `identity`).
    pub(crate) identities: super::identity::Identities,
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
    /// Started at `initialize` (2025 era), else when a request first reads it (see
    /// [`own_set`]).
    set: own_set::OwnSet,
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
    /// Who this client is, from its first request on (a 2025-era session's every
    /// request is its creator's: the HTTP guard sees to it); see [`super::caller`].
    caller: Arc<OnceLock<Arc<Caller>>>,
    /// The session counted against its caller's limit, while it lives.
    caller_slot: OnceLock<super::binding::ClientSlot>,
    /// The servers this client's calls are running on: only they may ask it something.
    in_calls: Arc<InCalls>,
    /// The skills this client's reads loaded, verified (see [`skills`]).
    loaded_skills: skills::LoadedSkills,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.counted.load(Ordering::SeqCst) {
            self.clients.fetch_sub(1, Ordering::SeqCst);
        }
        // The client is gone: give its connections back to the pool.
        let Some(set) = self.set.started().cloned() else {
            return;
        };
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

/// Lets `set` load skills without asking: the gateway's client is the host that asks its
/// user before a skill enters a model's context; the gateway only passes verified files
/// on (see `skills`).
fn allow_skill_loading(set: &ConnectionSet) {
    set.set_authority(
        (*set.authority())
            .clone()
            .with_skill_loading(mcp_connections::SkillLoading::Allow),
    );
}

impl Gateway {
    /// A new client's gateway, its connection set on the hub's pool not started yet
    /// (see [`own_set`]).
    pub(crate) fn start(hub: &Arc<Hub>) -> Self {
        let peer: Arc<OnceLock<Peer<RoleServer>>> = Arc::default();
        let session: Arc<OnceLock<String>> = Arc::default();
        let elicit_peer = Arc::clone(&peer);
        let elicit_session = Arc::clone(&session);
        let waiting = Arc::clone(&hub.waiting);
        let caller: Arc<OnceLock<Arc<Caller>>> = Arc::default();
        let in_calls = Arc::<InCalls>::default();
        let (elicit_calls, elicit_caller) = (Arc::clone(&in_calls), Arc::clone(&caller));
        // A server's question reaches the client only during the client's call to that
        // server, and only when the caller may use it; it says which server asks.
        let handler = elicitation_fn(move |request: ElicitationRequest| {
            let peer = elicit_peer.get().cloned();
            let session = elicit_session.get().cloned();
            let waiting = Arc::clone(&waiting);
            let refused = host_requests::refusal(
                &elicit_calls,
                elicit_caller.get().map(|c| &**c),
                &request.server,
            );
            async move {
                if let Some(why) = refused {
                    tracing::info!(server = %request.server, "elicitation declined: {why}");
                    return ElicitResult::new(ElicitationAction::Decline);
                }
                match peer {
                    Some(peer) if can_elicit(&peer) => {
                        let _out = session.map(|s| waiting.begin(&s, &peer));
                        let params =
                            host_requests::with_asker(&request.server.to_string(), request.params);
                        peer.create_elicitation(params)
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
            (Arc::clone(&in_calls), Arc::clone(&caller)),
        );
        // On the hub's pool; `caller` and `exchange` servers as this session's caller.
        let options = super::identity::session_options(hub, &caller)
            .with_elicitation_handler(handler)
            .with_sampling_handler(sampling)
            .with_events(tx);
        let events = broadcast::channel(EVENT_BUFFER).0;
        let resource_owners = Owners::default();
        let log_level = ClientLevel::default();
        let forwarder = Box::pin(forward_list_changes(
            rx,
            Arc::clone(&peer),
            events.clone(),
            (
                Arc::clone(&resource_owners),
                Arc::clone(&log_level),
                Arc::clone(&caller),
            ),
        ));
        let (start_hub, start_events) = (Arc::clone(hub), events.clone());
        let start: own_set::Start = Box::new(move || {
            let set = ConnectionSet::start(&start_hub.catalog, options.clone());
            allow_skill_loading(&set);
            let tracked = start_hub.status.track(&start_hub.pool, &set, &start_events);
            (set, Box::new(tracked))
        });
        let set = own_set::OwnSet::new(start, forwarder);
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
                caller,
                caller_slot: OnceLock::new(),
                in_calls,
                loaded_skills: skills::LoadedSkills::default(),
            }),
        }
    }

    /// The client's connection set, started now if it was not.
    pub(crate) fn set(&self) -> &ConnectionSet {
        self.inner.set.start()
    }
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
                // Skills: announced to a client in `initialize` only when an upstream
                // server serves them (see `skills`).
                "extensions": {
                    rmcp::model::TASKS_EXTENSION_ID: {},
                    rmcp::model::SKILLS_EXTENSION_ID: {},
                    // Events of the servers the caller may use, by poll (`event_relay`).
                    mcp_client::EVENTS_EXTENSION_ID: {},
                },
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
        // A client's session: its set starts now, and serves it until it goes.
        self.inner.set.start();
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
        if !self.upstream_serves_skills().await
            && let Some(extensions) = result.capabilities.extensions.as_mut()
        {
            extensions.remove(rmcp::model::SKILLS_EXTENSION_ID);
        }
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
            // Tools a server pins (`always_load`, `always_load_tools`) beside the two.
            let mut pinned = self.inner.set.always_loaded_tools();
            pinned.retain(|t| caller.may_use_tool(&t.server, &t.tool.name));
            tools.extend(pinned.iter().map(super::exposure::as_listed));
            let revealed = self
                .inner
                .revealed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            if !revealed.is_empty() {
                let mut catalog = self.inner.set.tools().await;
                catalog.retain(|t| caller.may_use_tool(&t.server, &t.tool.name));
                let more = revealed.listed(&catalog);
                tools.extend(
                    more.into_iter()
                        .filter(|t| !pinned.iter().any(|p| p.qualified_name == *t.name)),
                );
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
        self.call_tool_for(request, context).await
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
        self.listen_until_ended(context).await
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        self.custom_request(request, context).await
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, McpError> {
        self.list_skills_for(&context).await
    }

    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, McpError> {
        self.get_skill_for(&request, &context).await
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
            Err(e) => Err(McpError::internal_error(explain(&e), None)),
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
            Err(e) => Err(McpError::internal_error(explain(&e), None)),
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
            Err(e) => Err(McpError::internal_error(explain(&e), None)),
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
        if let Some(read) = self.read_skill_file(&server, &uri, &request.uri).await {
            return read.map(Into::into);
        }
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

impl Gateway {
    /// The caller of the request of `context` ([`super::caller::caller_for`]), kept for
    /// the gateway's life: a request of another caller on the same gateway is refused
    /// (the HTTP guard's binding of sessions already keeps them out).
    fn caller(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Caller>, McpError> {
        let caller = super::caller::caller_for(context);
        let kept = self.inner.caller.get_or_init(|| Arc::clone(&caller));
        // Its latest token, for servers that exchange it (`identity`).
        self.inner.hub.identities.saw(&caller);
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
    /// whose set starts when the request first reads it: its lists would miss servers not
    /// attached yet, so such a request waits until the set's servers settled (on a warm
    /// pool, a moment), for at most [`SETTLE_BOUND`] (a server still starting for the
    /// first time is left out, as `tools()` leaves it out after its grace). A 2025-era session's set started at
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
}

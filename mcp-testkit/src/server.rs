//! [`FakeServer`]: the rmcp `ServerHandler` that plays a [`Scenario`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelledNotificationParam, GetPromptRequestParams,
    GetPromptResponse, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
};
use rmcp::model::{CancelTaskParams, GetTaskParams, GetTaskResult, UpdateTaskParams};
use rmcp::model::{
    CompleteRequestParams, CompleteResult, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::model::{
    GetSkillRequestParams, GetSkillResult, ListSkillsResult, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::paging::page;
use crate::record::{RequestLog, lock};
pub(crate) use crate::shared::{CrashMode, Shared};
use crate::{RecordedRequest, Scenario, wire};

/// An MCP server (rmcp `ServerHandler`) that plays a [`Scenario`].
///
/// The runners ([`crate::InProcessServer`], [`crate::HttpFakeServer`], the
/// `mcp-fake-server` binary) wrap it; use it directly to serve a scenario on a
/// transport of your own with `rmcp::ServiceExt::serve`. Clones share state (the
/// current tools, prompts and resources, the log level, barriers, the request log, the
/// tasks).
#[derive(Clone)]
pub struct FakeServer {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer")
            .field("server", &self.shared.scenario.server_info.name)
            .finish_non_exhaustive()
    }
}

impl FakeServer {
    /// A server for `scenario`. [`crate::Behavior::Exit`] cancels
    /// [`FakeServer::stop_token`] (serve with `serve_with_ct` and that token to have the
    /// transport closed).
    pub fn new(scenario: Scenario) -> Self {
        let stop = CancellationToken::new();
        Self::with_crash(scenario, CrashMode::Cancel(stop.clone()), stop)
    }

    pub(crate) fn with_crash(
        scenario: Scenario,
        crash: CrashMode,
        stop: CancellationToken,
    ) -> Self {
        Self::build(scenario, crash, stop, false)
    }

    /// The server of the stdio binary: crashes exit the process, and raw reply faults
    /// ([`crate::Behavior::BrokenReply`], a task's `garbage_get`) are written to stdout.
    pub(crate) fn for_stdio(scenario: Scenario, stop: CancellationToken) -> Self {
        Self::build(scenario, CrashMode::ExitProcess, stop, true)
    }

    fn build(scenario: Scenario, crash: CrashMode, stop: CancellationToken, stdio: bool) -> Self {
        let log = RequestLog::new(
            scenario.record.request_log.clone(),
            scenario
                .record
                .kept_requests
                .unwrap_or(crate::DEFAULT_KEPT_REQUESTS),
        );
        Self {
            shared: Arc::new(Shared {
                tools: Mutex::new(scenario.tools.clone()),
                prompts: Mutex::new(scenario.prompts.clone()),
                resources: Mutex::new(scenario.resources.clone()),
                log_level: Mutex::new(None),
                scenario,
                barriers: Mutex::new(BTreeMap::new()),
                log,
                crash,
                stop,
                listeners: Mutex::new(Vec::new()),
                listens_pending: tokio::sync::watch::channel(0).0,
                listen_faults: Arc::default(),
                subscribed: Mutex::new(std::collections::BTreeSet::new()),
                calls: std::sync::atomic::AtomicU64::new(0),
                stdio,
                tasks: Arc::default(),
                task_work: crate::shared::TaskWork::default(),
                events: crate::events::log::EventLog::default(),
                webhooks: crate::events::webhook::Webhooks::default(),
            }),
        }
    }

    /// The token that stops this server: cancelled by a crash ([`crate::Behavior::Exit`]);
    /// cancel it to end hanging calls and initializations.
    pub fn stop_token(&self) -> CancellationToken {
        self.shared.stop.clone()
    }

    /// The scenario being played.
    pub fn scenario(&self) -> &Scenario {
        &self.shared.scenario
    }

    /// The latest requests received, in arrival order (plus `notifications/cancelled`):
    /// at most [`Recording::kept_requests`](crate::Recording::kept_requests) of them
    /// (default [`DEFAULT_KEPT_REQUESTS`](crate::DEFAULT_KEPT_REQUESTS)).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.log.snapshot()
    }

    /// How many requests (and cancellations) were received per method, all of them,
    /// kept in memory or not.
    pub fn request_counts(&self) -> std::collections::BTreeMap<String, u64> {
        self.shared.log.counts()
    }

    /// The first received request (or cancellation) with `method`, waiting until it
    /// arrives. Wrap it in a timeout.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future loses nothing.
    pub async fn wait_for_request(&self, method: &str) -> RecordedRequest {
        self.shared.log.wait_for(method).await
    }

    /// How many `subscriptions/listen` requests (2026-07-28 clients) are open and notified
    /// now, all sessions together (the ones [`crate::Behavior::EndListens`] ended and
    /// [`crate::Behavior::SilenceListens`] silenced do not count).
    pub fn open_listens(&self) -> usize {
        lock(&self.shared.listeners).len()
    }

    /// Names of the current tools (they change with [`crate::Behavior::ChangeTools`]).
    pub fn tool_names(&self) -> Vec<String> {
        lock(&self.shared.tools)
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    /// The level of the latest `logging/setLevel` request (`"debug"` … `"emergency"`), or
    /// `None` when no client set one. [`crate::Behavior::Log`] sends nothing below it.
    pub fn log_level(&self) -> Option<String> {
        lock(&self.shared.log_level).clone()
    }

    /// The status of every task of [`crate::Behavior::Task`] tools the server remembers
    /// (`"working"`, `"input_required"`, `"completed"`, `"failed"`, `"cancelled"`), by
    /// task id (`task-1`, `task-2`, …). Tasks past their TTL are forgotten.
    pub fn task_statuses(&self) -> BTreeMap<String, String> {
        self.shared.tasks.statuses()
    }

    /// How many tasks' background work is still running: cancelled, forgotten and
    /// finished work is not counted (a task ending [`crate::TaskEnd::Never`] counts until
    /// it is cancelled). The work of a cancelled task stops at once, yet is counted until
    /// the runtime has dropped it: wait for 0.
    pub fn task_work_running(&self) -> usize {
        self.shared.task_work.running()
    }

    /// [`crate::Faults::protocol_version`] as rmcp's type.
    fn forced_protocol_version(&self) -> Option<ProtocolVersion> {
        let version = self.shared.scenario.faults.protocol_version.as_ref()?;
        serde_json::from_value(json!(version)).ok()
    }

    fn record<P: Serialize>(&self, method: &str, params: &P) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.shared.log.record(method, params);
    }

    /// [`Self::record`], with the request's `_meta` (which rmcp moves into the context) put
    /// back into the params, as it was sent.
    fn record_sent<P: Serialize>(
        &self,
        method: &str,
        params: &P,
        context: &RequestContext<RoleServer>,
    ) {
        let mut recorded = serde_json::to_value(params).unwrap_or(Value::Null);
        if !context.meta.0.0.is_empty() {
            if recorded.is_null() {
                recorded = Value::Object(serde_json::Map::new());
            }
            if let Value::Object(map) = &mut recorded {
                map.insert(
                    "_meta".to_owned(),
                    serde_json::to_value(&context.meta).unwrap_or(Value::Null),
                );
            }
        }
        self.shared.log.record(method, recorded);
    }

    fn list<T: Clone>(
        &self,
        key: &str,
        items: &[T],
        request: Option<&PaginatedRequestParams>,
        to_wire: impl Fn(&T) -> Value,
        synth: impl Fn(u64) -> Value,
    ) -> Result<Value, McpError> {
        let cursor = request.and_then(|r| r.cursor.as_deref());
        let wire_items: Vec<Value> = items.iter().map(to_wire).collect();
        let p = page(&wire_items, cursor, &self.shared.scenario.faults, synth)?;
        Ok(wire::list(
            key,
            p.items,
            p.next_cursor,
            self.shared.scenario.cache_hints.as_ref(),
        ))
    }
}

impl ServerHandler for FakeServer {
    fn get_info(&self) -> ServerConfig {
        let value = wire::server_config(&self.shared.scenario);
        // The scenario's shape is fixed by this crate, so this cannot fail in practice.
        serde_json::from_value(value).unwrap_or_else(|_| ServerConfig::default())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // rmcp negotiates again after `initialize` answered, within this list: a forced
        // version must be the only one for it to reach the client.
        match self.forced_protocol_version() {
            Some(version) => Cow::Owned(vec![version]),
            None => Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25)),
        }
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        self.record_sent("initialize", &request, &context);
        let faults = &self.shared.scenario.faults;
        if faults.hang_initialize {
            self.shared.stop.cancelled().await;
            return Err(McpError::internal_error(
                "fake server stopped while hanging in initialize",
                None,
            ));
        }
        if let Some(ms) = faults.init_delay_ms {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        if let Some(version) = self.forced_protocol_version() {
            result.protocol_version = version;
        }
        Ok(result)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.record_sent("tools/list", &request, &context);
        if let Some(ms) = self.shared.scenario.faults.list_delay_ms {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        let tools = lock(&self.shared.tools).clone();
        let value = self.list(
            "tools",
            &tools,
            request.as_ref(),
            wire::tool,
            wire::endless_tool,
        )?;
        wire::from_wire("tools", value)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.record_sent("tools/call", &request, &context);
        let tool = lock(&self.shared.tools)
            .iter()
            .find(|t| t.name == request.name)
            .cloned();
        let Some(tool) = tool else {
            return Err(McpError::invalid_params(
                format!(
                    "fake server {:?} has no tool {:?}",
                    self.shared.scenario.server_info.name, request.name
                ),
                None,
            ));
        };
        let result = if matches!(tool.behavior, crate::Behavior::Task { .. }) {
            crate::tasks::call(&self.shared, &tool, &request, &context).await
        } else {
            if let Some(round) = crate::behavior::input_round(&tool, &request, &context) {
                return round;
            }
            crate::behavior::call(&self.shared, &tool, request, context.clone())
                .await
                .map(CallToolResponse::from)
        };
        let answered = 1 + self
            .shared
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        for change in &self.shared.scenario.tool_changes {
            if change.after_calls == answered {
                // A change the server makes by itself: a failed notification is not the
                // call's failure.
                let _ = crate::behavior::change_tools(
                    &self.shared,
                    &context,
                    &change.add,
                    &change.remove,
                )
                .await;
            }
        }
        result
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.record("resources/list", &request);
        let resources = lock(&self.shared.resources).clone();
        let value = self.list(
            "resources",
            &resources,
            request.as_ref(),
            wire::resource,
            wire::endless_resource,
        )?;
        wire::from_wire("resources", value)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.record("resources/templates/list", &request);
        let value = self.list(
            "resourceTemplates",
            &self.shared.scenario.resource_templates,
            request.as_ref(),
            wire::template,
            wire::endless_template,
        )?;
        wire::from_wire("resource templates", value)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.record_sent("resources/read", &request, &context);
        let scenario = &self.shared.scenario;
        if let Some(read) = crate::skills::serve::read(scenario, &request.uri) {
            return read.map(ReadResourceResponse::from);
        }
        let found = lock(&self.shared.resources)
            .iter()
            .find(|r| r.uri == request.uri)
            .cloned();
        let (text, mime) = match found {
            Some(r) => (
                match &r.text_from_env {
                    Some(name) => std::env::var(name).unwrap_or_default(),
                    None => r.text.clone(),
                },
                r.mime_type
                    .clone()
                    .unwrap_or_else(|| "text/plain".to_owned()),
            ),
            None if !scenario.resource_templates.is_empty() => {
                (request.uri.clone(), "text/plain".to_owned())
            }
            None => {
                return Err(McpError::resource_not_found(
                    format!("fake server has no resource {:?}", request.uri),
                    None,
                ));
            }
        };
        let value = json!({"contents": [{"uri": request.uri, "mimeType": mime, "text": text}]});
        wire::from_wire::<rmcp::model::ReadResourceResult>("resource contents", value)
            .map(ReadResourceResponse::from)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        self.record_sent("skills/list", &request, &context);
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        crate::skills::serve::list(&self.shared.scenario, cursor)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        self.record_sent("skills/get", &request, &context);
        crate::skills::serve::get(&self.shared.scenario, &request.uri)
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, McpError> {
        self.record_sent("resources/directory/read", &request, &context);
        crate::skills::serve::read_directory(&self.shared.scenario, &request.uri)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.record("prompts/list", &request);
        let prompts = lock(&self.shared.prompts).clone();
        let value = self.list(
            "prompts",
            &prompts,
            request.as_ref(),
            wire::prompt,
            wire::endless_prompt,
        )?;
        wire::from_wire("prompts", value)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.record_sent("prompts/get", &request, &context);
        let prompt = lock(&self.shared.prompts)
            .iter()
            .find(|p| p.name == request.name)
            .cloned();
        let Some(prompt) = prompt else {
            return Err(McpError::invalid_params(
                format!("fake server has no prompt {:?}", request.name),
                None,
            ));
        };
        let mut text = prompt.text.clone();
        for name in &prompt.arguments {
            let value = request
                .arguments
                .as_ref()
                .and_then(|a| a.get(name))
                .ok_or_else(|| {
                    McpError::invalid_params(
                        format!("prompt {:?} needs argument {name:?}", prompt.name),
                        None,
                    )
                })?;
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            text = text.replace(&format!("{{{name}}}"), &value);
        }
        let value = json!({
            "description": prompt.description,
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        });
        wire::from_wire::<rmcp::model::GetPromptResult>("prompt", value)
            .map(GetPromptResponse::from)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.record("tasks/get", &request);
        crate::tasks::get(&self.shared, &request.task_id, &context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.record("tasks/update", &request);
        self.shared
            .tasks
            .update(&request.task_id, &request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.record("tasks/cancel", &request);
        self.shared.tasks.cancel(&request.task_id)
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        self.record("notifications/cancelled", &notification);
    }

    /// The Events extension's requests (see [`crate::EventsSpec`]).
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        self.record_sent(&request.method, &request.params, &context);
        crate::events::serve::request(&self.shared, request, context).await
    }

    async fn ping(&self, _context: RequestContext<RoleServer>) -> Result<(), McpError> {
        self.record("ping", &Value::Null);
        Ok(())
    }

    /// Every category a client asks for that the scenario announces: tool, prompt and
    /// resource list changes when their `listChanged` flag is on, resource updates with
    /// `resources.subscribe`. None with [`crate::Faults::refuse_listen`].
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        if self.shared.scenario.faults.refuse_listen {
            // rmcp answers "method not found", as for a server without listens.
            self.record("subscriptions/listen", requested);
            return None;
        }
        self.shared.listens_pending.send_modify(|n| *n += 1);
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    #[expect(
        deprecated,
        reason = "logging/setLevel is deprecated by SEP-2577 in rmcp, yet MCP 2025-11-25 defines it"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.record("logging/setLevel", &request);
        let level = serde_json::to_value(request.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned));
        *lock(&self.shared.log_level) = level;
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.record("completion/complete", &request);
        crate::completion::complete(&self.shared, &request)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.record("subscriptions/listen", context.accepted());
        let sink = context.sink().clone();
        let mut ended = self.shared.listen_faults.end_signal();
        lock(&self.shared.listeners).push(sink.clone());
        self.shared
            .listens_pending
            .send_modify(|n| *n = n.saturating_sub(1));
        tokio::select! {
            () = context.cancelled() => {}
            () = self.shared.stop.cancelled() => {}
            // Behavior::EndListens: the final result ends the listen.
            _ = ended.changed() => {}
        }
        lock(&self.shared.listeners).retain(|s| s.id() != sink.id());
        Ok(())
    }

    #[allow(deprecated, reason = "the 2025-11-25 era's resources/subscribe")]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.record_sent("resources/subscribe", &request, &context);
        lock(&self.shared.subscribed).insert(request.uri);
        Ok(())
    }

    #[allow(deprecated, reason = "the 2025-11-25 era's resources/unsubscribe")]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.record("resources/unsubscribe", &request);
        lock(&self.shared.subscribed).remove(&request.uri);
        Ok(())
    }
}

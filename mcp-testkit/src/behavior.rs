//! What each [`Behavior`] does when its tool is called.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    ElicitRequestParams, ElicitResult, InputRequest, InputRequiredResult,
    ProgressNotificationParam, ProtocolVersion, ResourceUpdatedNotificationParam, ServerRequest,
};
use rmcp::service::{RequestContext, ServiceError};
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Map, Value, json};

use crate::record::lock;
use crate::shared::{CrashMode, Shared};
use crate::{Behavior, PromptSpec, ReplyFault, ResourceSpec, ToolSpec, wire};

/// Whether the call came from a 2026-07-28 client (change notifications then go through
/// its `subscriptions/listen` requests, not the call's own stream).
pub(crate) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// The key of the one input request of an MRTR round.
const INPUT_KEY: &str = "input";

/// In the 2026-07-28 era a server sends no requests of its own: the behaviours that need
/// the client's input run as an MRTR round (SEP-2322) instead. `None` for every other
/// behaviour, and in the 2025-11-25 era.
pub(crate) fn input_round(
    tool: &ToolSpec,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResponse, McpError>> {
    if !is_modern(context) {
        return None;
    }
    let input = match &tool.behavior {
        Behavior::ElicitForm { message, schema } => json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": message, "requestedSchema": schema},
        }),
        Behavior::ElicitUrl {
            message,
            url,
            elicitation_id,
        } => json!({
            "method": "elicitation/create",
            "params": {
                "mode": "url", "message": message, "url": url, "elicitationId": elicitation_id,
            },
        }),
        Behavior::ListRoots => json!({"method": "roots/list"}),
        Behavior::Sample {
            prompt,
            max_tokens,
            tools,
        } => json!({
            "method": SAMPLING_METHOD,
            "params": sampling_params(prompt, *max_tokens, tools),
        }),
        _ => return None,
    };
    Some(
        mrtr_round(&tool.name, input, request).map(|round| match round {
            Round::Ask(response) => response,
            Round::Answered(answer) => answered(&tool.behavior, &answer).into(),
        }),
    )
}

/// Where an MRTR round of one input request stands.
pub(crate) enum Round {
    /// The first call: answer it with this `input_required` result.
    Ask(CallToolResponse),
    /// The retry: the client's answer to the input request.
    Answered(Value),
}

/// One MRTR round (SEP-2322) of the tool `tool_name` asking `input` (an input request:
/// `{"method", "params"}`) under the key `input`, with the `requestState`
/// `<tool_name>/round-1` that the retry must echo.
pub(crate) fn mrtr_round(
    tool_name: &str,
    input: Value,
    request: &CallToolRequestParams,
) -> Result<Round, McpError> {
    let state = format!("{tool_name}/round-1");
    match (&request.input_responses, &request.request_state) {
        (None, _) => wire::from_wire::<InputRequest>("input request", input).map(|input| {
            let requests = BTreeMap::from([(INPUT_KEY.to_owned(), input)]);
            Round::Ask(InputRequiredResult::new(Some(requests), Some(state)).into())
        }),
        (Some(responses), Some(echoed)) if *echoed == state => match responses.get(INPUT_KEY) {
            Some(answer) => Ok(Round::Answered(answer.clone())),
            None => Err(McpError::invalid_params(
                format!("inputResponses has no `{INPUT_KEY}`, the key this server asked for"),
                None,
            )),
        },
        (Some(_), echoed) => Err(McpError::invalid_params(
            format!("requestState {echoed:?} is not {state:?}, the state this server sent"),
            None,
        )),
    }
}

/// What a behaviour returns once the client answered its input request (either era).
fn answered(behavior: &Behavior, answer: &Value) -> CallToolResult {
    match behavior {
        Behavior::ListRoots => {
            let roots = answer.get("roots").cloned().unwrap_or(Value::Null);
            structured(json!({ "roots": roots }))
        }
        Behavior::Sample { .. } => structured(json!({ "result": answer })),
        _ => elicitation_answer(answer),
    }
}

/// `{"action", "content"}` of an elicitation's answer (no `content` when there is none),
/// as structured content.
fn elicitation_answer(answer: &Value) -> CallToolResult {
    structured(elicitation_fields(answer))
}

/// `{"action", "content"}` of an elicitation's answer (no `content` when there is none).
pub(crate) fn elicitation_fields(answer: &Value) -> Value {
    let mut out = Map::new();
    for key in ["action", "content"] {
        if let Some(v) = answer.get(key).filter(|v| !v.is_null()) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(out)
}

/// Which list changed, for [`notify_list_changed`].
#[derive(Debug, Clone, Copy)]
enum ListKind {
    Tools,
    Prompts,
    Resources,
}

/// Sends `notifications/<list>/list_changed`: to the listening clients whose accepted
/// filter asks for that list in the 2026-07-28 era, to the calling session before.
async fn notify_list_changed(
    server: &Shared,
    context: &RequestContext<RoleServer>,
    kind: ListKind,
) -> Result<(), McpError> {
    if is_modern(context) {
        let wanted = |f: &rmcp::model::SubscriptionFilter| {
            let flag = match kind {
                ListKind::Tools => f.tools_list_changed,
                ListKind::Prompts => f.prompts_list_changed,
                ListKind::Resources => f.resources_list_changed,
            };
            flag == Some(true)
        };
        for sink in server.listening(wanted).await {
            // A subscription that just ended is not an error of this call.
            let _ = match kind {
                ListKind::Tools => sink.notify_tool_list_changed().await,
                ListKind::Prompts => sink.notify_prompt_list_changed().await,
                ListKind::Resources => sink.notify_resource_list_changed().await,
            };
        }
        return Ok(());
    }
    let sent = match kind {
        ListKind::Tools => context.peer.notify_tool_list_changed().await,
        ListKind::Prompts => context.peer.notify_prompt_list_changed().await,
        ListKind::Resources => context.peer.notify_resource_list_changed().await,
    };
    sent.map_err(|e| McpError::internal_error(format!("send list_changed: {e}"), None))
}

/// Replaces the tool set (removes `remove`, appends `add`) and tells the client: the
/// listening clients in the 2026-07-28 era, the calling session before. Returns the names
/// of the tools now.
pub(crate) async fn change_tools(
    server: &Shared,
    context: &RequestContext<RoleServer>,
    add: &[ToolSpec],
    remove: &[String],
) -> Result<Vec<String>, McpError> {
    let names = {
        let mut tools = lock(&server.tools);
        tools.retain(|t| !remove.contains(&t.name));
        tools.extend(add.iter().cloned());
        tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
    };
    notify_list_changed(server, context, ListKind::Tools).await?;
    Ok(names)
}

/// [`change_tools`] for prompts (removed by name); returns the names of the prompts now.
async fn change_prompts(
    server: &Shared,
    context: &RequestContext<RoleServer>,
    add: &[PromptSpec],
    remove: &[String],
) -> Result<Vec<String>, McpError> {
    let names = {
        let mut prompts = lock(&server.prompts);
        prompts.retain(|p| !remove.contains(&p.name));
        prompts.extend(add.iter().cloned());
        prompts.iter().map(|p| p.name.clone()).collect::<Vec<_>>()
    };
    notify_list_changed(server, context, ListKind::Prompts).await?;
    Ok(names)
}

/// [`change_tools`] for static resources (removed by URI); returns the URIs now.
async fn change_resources(
    server: &Shared,
    context: &RequestContext<RoleServer>,
    add: &[ResourceSpec],
    remove: &[String],
) -> Result<Vec<String>, McpError> {
    let uris = {
        let mut resources = lock(&server.resources);
        resources.retain(|r| !remove.contains(&r.uri));
        resources.extend(add.iter().cloned());
        resources.iter().map(|r| r.uri.clone()).collect::<Vec<_>>()
    };
    notify_list_changed(server, context, ListKind::Resources).await?;
    Ok(uris)
}

pub(crate) async fn call(
    server: &Shared,
    tool: &ToolSpec,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResult, McpError> {
    let args = Value::Object(request.arguments.clone().unwrap_or_default());
    match &tool.behavior {
        Behavior::Echo => Ok(structured(args)),
        Behavior::Structured { value } => Ok(structured(value.clone())),
        Behavior::Error { message } => Ok(CallToolResult::error(vec![ContentBlock::text(
            message.clone(),
        )])),
        Behavior::Sleep { ms } => {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(*ms)) => Ok(structured(args)),
                () = context.ct.cancelled() => Err(cancelled(tool)),
            }
        }
        Behavior::Barrier { name, parties } => {
            barrier(server, tool, name, *parties, &context).await?;
            Ok(structured(args))
        }
        Behavior::Progress { steps } => progress(*steps, 0, &request, &context).await,
        Behavior::SlowProgress { steps, interval_ms } => {
            tokio::select! {
                r = progress(*steps, *interval_ms, &request, &context) => r,
                () = server.stop.cancelled() => Err(cancelled(tool)),
                () = context.ct.cancelled() => Err(cancelled(tool)),
            }
        }
        Behavior::ElicitForm { message, schema } => {
            let params = json!({"mode": "form", "message": message, "requestedSchema": schema});
            elicit(&context, params).await
        }
        Behavior::ElicitUrl {
            message,
            url,
            elicitation_id,
        } => {
            let params = json!({
                "mode": "url", "message": message, "url": url, "elicitationId": elicitation_id,
            });
            elicit(&context, params).await
        }
        Behavior::ElicitRaw { params } => {
            raw_request(&context, "elicitation/create", params.clone()).await
        }
        Behavior::ListRoots => list_roots(tool, &context).await,
        Behavior::ChangeTools { add, remove } => {
            let names = change_tools(server, &context, add, remove).await?;
            Ok(structured(json!({ "tools": names })))
        }
        Behavior::ChangePrompts { add, remove } => {
            let names = change_prompts(server, &context, add, remove).await?;
            Ok(structured(json!({ "prompts": names })))
        }
        Behavior::ChangeResources { add, remove } => {
            let uris = change_resources(server, &context, add, remove).await?;
            Ok(structured(json!({ "resources": uris })))
        }
        Behavior::Sample {
            prompt,
            max_tokens,
            tools,
        } => {
            let params = sampling_params(prompt, *max_tokens, tools);
            raw_request(&context, SAMPLING_METHOD, params).await
        }
        Behavior::SampleRaw { params } => {
            raw_request(&context, SAMPLING_METHOD, params.clone()).await
        }
        Behavior::Result { result } => wire::from_wire("tool result", result.clone()),
        Behavior::Log {
            level,
            logger,
            data,
            count,
        } => {
            let sent =
                crate::log_messages::send(server, &context, level, logger.as_ref(), data, *count)
                    .await?;
            Ok(structured(json!({ "sent": sent })))
        }
        Behavior::UpdateResource { uri } => {
            let notified = update_resource(server, &context, uri).await?;
            Ok(structured(json!({ "notified": notified })))
        }
        Behavior::Exit { code } => Err(crash(server, *code)),
        Behavior::AnswerThenExit { code } => {
            let result = structured(json!({ "exited": code }));
            if server.stdio {
                answer_then_exit(&context, &result, *code);
            }
            Ok(result)
        }
        Behavior::Large { bytes } => Ok(CallToolResult::success(vec![ContentBlock::text(
            "x".repeat(*bytes),
        )])),
        Behavior::BrokenReply { fault } => Err(broken_reply(server, tool, *fault, &context).await),
        Behavior::ReportEnv => Ok(report_env()),
        Behavior::EndListens { hold } => {
            Ok(structured(crate::listen_faults::end(server, *hold).await))
        }
        Behavior::ReleaseListens => Ok(structured(crate::listen_faults::release(server))),
        Behavior::SilenceListens => Ok(structured(crate::listen_faults::silence(server).await)),
        Behavior::EmitEvent { name, data } => Ok(structured(crate::events::serve::emit(
            server,
            name,
            data,
            request.arguments.as_ref(),
        ))),
        Behavior::ForgetEvents { keep } => {
            Ok(structured(crate::events::serve::forget(server, *keep)))
        }
        Behavior::EndEventStreams { silent } => Ok(structured(crate::events::serve::end_streams(
            server, *silent,
        ))),
        Behavior::Task { .. } => Err(McpError::internal_error(
            format!(
                "fake tool {:?}: task tools are called through tasks::call",
                tool.name
            ),
            None,
        )),
    }
}

/// Waits at the barrier `name` (made for `parties` on first use) until enough callers
/// arrive; an error when the call is cancelled or the server stops first.
async fn barrier(
    server: &Shared,
    tool: &ToolSpec,
    name: &str,
    parties: usize,
    context: &RequestContext<RoleServer>,
) -> Result<(), McpError> {
    let barrier = Arc::clone(
        lock(&server.barriers)
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new(tokio::sync::Barrier::new(parties))),
    );
    tokio::select! {
        _ = barrier.wait() => Ok(()),
        () = context.ct.cancelled() => Err(cancelled(tool)),
        () = server.stop.cancelled() => Err(cancelled(tool)),
    }
}

/// Asks the client for its roots and answers with them.
async fn list_roots(
    tool: &ToolSpec,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, McpError> {
    #[expect(
        deprecated,
        reason = "roots are deprecated by SEP-2577 in rmcp, yet MCP 2025-11-25 defines roots/list"
    )]
    let roots = context
        .peer
        .list_roots()
        .await
        .map_err(|e| McpError::internal_error(format!("roots/list failed: {e}"), None))?;
    let answer = serde_json::to_value(&roots).unwrap_or(Value::Null);
    Ok(answered(&tool.behavior, &answer))
}

/// Sends `resources/updated` for `uri` to the clients subscribed to it; returns how many
/// were told.
async fn update_resource(
    server: &Shared,
    context: &RequestContext<RoleServer>,
    uri: &String,
) -> Result<u32, McpError> {
    let mut notified = 0;
    if is_modern(context) {
        let sinks = server
            .listening(|f| {
                f.resource_subscriptions
                    .as_ref()
                    .is_some_and(|uris| uris.contains(uri))
            })
            .await;
        for sink in sinks {
            if sink.notify_resource_updated(uri.clone()).await.is_ok() {
                notified += 1;
            }
        }
    } else if lock(&server.subscribed).contains(uri) {
        context
            .peer
            .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone()))
            .await
            .map_err(|e| McpError::internal_error(format!("send resources/updated: {e}"), None))?;
        notified = 1;
    }
    Ok(notified)
}

/// Crashes the server as its [`CrashMode`] says: the process exits with `code`, or the
/// in-process transport is cancelled (and the returned error is never seen).
fn crash(server: &Shared, code: i32) -> McpError {
    match &server.crash {
        CrashMode::ExitProcess => std::process::exit(code),
        CrashMode::Cancel(token) => {
            // The transport is killed before this error could be written, so the
            // client never sees it; returning (not hanging) lets rmcp stop at once.
            token.cancel();
            McpError::internal_error("fake server crashed", None)
        }
    }
}

/// Writes `result` as the answer to the call straight to stdout, then exits with `code`
/// (stdio binary only): nothing of rmcp's is written after it.
fn answer_then_exit(context: &RequestContext<RoleServer>, result: &CallToolResult, code: i32) -> ! {
    let reply = json!({ "jsonrpc": "2.0", "id": context.id, "result": result });
    write_stdout_line(reply.to_string().as_bytes());
    std::process::exit(code)
}

/// Writes a broken reply to stdout (stdio server only), then never answers properly:
/// the error comes when the call is cancelled or the server stops.
async fn broken_reply(
    server: &Shared,
    tool: &ToolSpec,
    fault: ReplyFault,
    context: &RequestContext<RoleServer>,
) -> McpError {
    if server.stdio {
        let id = serde_json::to_string(&context.id).unwrap_or_else(|_| "0".to_owned());
        write_stdout_line(&fault.line(&id));
    }
    // Never a proper answer: the client must not wait for one.
    tokio::select! {
        () = context.ct.cancelled() => cancelled(tool),
        () = server.stop.cancelled() => cancelled(tool),
    }
}

/// Writes `line` and a newline straight to stdout, past rmcp (stdio binary only: stdout is
/// its transport). Best effort.
pub(crate) fn write_stdout_line(line: &[u8]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// The server process's environment and working directory.
fn report_env() -> CallToolResult {
    let env: BTreeMap<String, String> = std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    let cwd = std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    structured(json!({ "env": env, "cwd": cwd }))
}

/// Text content holding the JSON of `value`, plus `value` as structured content.
pub(crate) fn structured(value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    result.structured_content = Some(value);
    result
}

fn cancelled(tool: &ToolSpec) -> McpError {
    McpError::internal_error(format!("fake tool {:?} was cancelled", tool.name), None)
}

async fn progress(
    steps: u32,
    interval_ms: u64,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, McpError> {
    let token = request
        .meta
        .as_ref()
        .and_then(|m| m.get_progress_token())
        .or_else(|| context.meta.get_progress_token());
    if let Some(token) = &token {
        for step in 1..=steps {
            if interval_ms > 0 {
                tokio::time::sleep(Duration::from_millis(interval_ms)).await;
            }
            let param = ProgressNotificationParam::new(token.clone(), f64::from(step))
                .with_total(f64::from(steps));
            context
                .peer
                .notify_progress(param)
                .await
                .map_err(|e| McpError::internal_error(format!("send progress: {e}"), None))?;
        }
    }
    let token = token
        .and_then(|t| serde_json::to_value(t).ok())
        .unwrap_or(Value::Null);
    Ok(structured(
        json!({ "progress_token": token, "steps": steps }),
    ))
}

async fn elicit(
    context: &RequestContext<RoleServer>,
    params: Value,
) -> Result<CallToolResult, McpError> {
    Ok(structured(elicit_value(context, params).await?))
}

/// Sends `elicitation/create` with `params` (a request of the server's own, 2025-11-25
/// era) and returns the answer's `{"action", "content"}`.
pub(crate) async fn elicit_value(
    context: &RequestContext<RoleServer>,
    params: Value,
) -> Result<Value, McpError> {
    let params: ElicitRequestParams = wire::from_wire("elicitation", params)?;
    let result: ElicitResult = context
        .peer
        .create_elicitation(params)
        .await
        .map_err(|e| McpError::internal_error(format!("elicitation failed: {e}"), None))?;
    let answer = serde_json::to_value(&result).unwrap_or(Value::Null);
    Ok(elicitation_fields(&answer))
}

/// The method of [`Behavior::Sample`]'s request.
const SAMPLING_METHOD: &str = "sampling/createMessage";

/// The `sampling/createMessage` params of [`Behavior::Sample`].
fn sampling_params(prompt: &str, max_tokens: u32, tools: &[String]) -> Value {
    let mut params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens,
    });
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
            .collect();
        params["tools"] = Value::Array(tools);
    }
    params
}

/// Sends a request `method` with `params` as given, bypassing rmcp's typed requests (and
/// their checks of the client's capabilities), and returns the client's answer as
/// `{"result": ...}`, or its JSON-RPC error as `{"error": {"code", "message"}}`.
async fn raw_request(
    context: &RequestContext<RoleServer>,
    method: &str,
    params: Value,
) -> Result<CallToolResult, McpError> {
    let request = ServerRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    match context.peer.send_request(request).await {
        Ok(result) => Ok(structured(
            json!({ "result": serde_json::to_value(&result).unwrap_or(Value::Null) }),
        )),
        Err(ServiceError::McpError(e)) => Ok(structured(
            json!({ "error": { "code": e.code.0, "message": e.message } }),
        )),
        Err(e) => Err(McpError::internal_error(
            format!("{method} failed: {e}"),
            None,
        )),
    }
}

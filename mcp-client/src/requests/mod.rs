//! Requests on a live connection: tool calls (timeouts paused while an elicitation is
//! pending, progress, cancellation, the 2026 era's `input_required` rounds, unreadable
//! replies), reads and lists, with what a call is made with ([`CallSettings`]) and the
//! cancellation sent when a call's future is dropped ([`on_drop`], a leaf). The
//! pagination every list goes through is [`crate::listing`]'s; MCP Tasks, which a call may
//! turn into, are [`crate::tasks`]' (the two import each other, a pair).

#![expect(
    deprecated,
    reason = "rmcp marks logging and sampling deprecated (SEP-2577), yet MCP 2025-11-25 defines them and hosts still meet them"
)]

mod call_settings;
pub(crate) mod on_drop;

pub use call_settings::CallSettings;

use rmcp::RoleClient;
use rmcp::model::{
    ArgumentInfo, CallToolRequest, CallToolRequestParams, CallToolResult,
    CancelledNotificationParam, ClientRequest, CompleteRequest, CompleteRequestParams,
    CompletionContext, CompletionInfo, GetPromptRequest, GetPromptRequestParams, GetPromptResult,
    JsonObject, LoggingLevel, MetaObject, Prompt, ReadResourceRequest, ReadResourceRequestParams,
    ReadResourceResult, Reference, RequestId, RequestMetaObject, Resource, ResourceTemplate,
    ServerResult, SetLevelRequest, SetLevelRequestParams,
};
use rmcp::service::{Peer, PeerRequestOptions};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::client::Client;
use crate::error::RequestError;
use crate::listing::paginate::{self, ListKind, Page, PageError};
use crate::state::{ProgressGuard, ProgressSink, ReplyFaults};

/// Most `input_required` rounds (SEP-2322) one call goes through before it fails.
pub const MAX_INPUT_ROUNDS: usize = 8;

/// The wire form of a configured log level.
fn wire_level(level: mcp_catalog::LogLevel) -> LoggingLevel {
    use mcp_catalog::LogLevel as L;
    match level {
        L::Debug => LoggingLevel::Debug,
        L::Info => LoggingLevel::Info,
        L::Notice => LoggingLevel::Notice,
        L::Warning => LoggingLevel::Warning,
        L::Error => LoggingLevel::Error,
        L::Critical => LoggingLevel::Critical,
        L::Alert => LoggingLevel::Alert,
        _ => LoggingLevel::Emergency,
    }
}

/// How a call's rounds ended.
pub(crate) enum CallOutcome {
    /// The call's result.
    Result(CallToolResult),
    /// The server made a task of the call; the call's progress registration, to keep
    /// while the task runs.
    Task(crate::tasks::Seed, ProgressGuard),
}

/// Sends `notifications/cancelled` for request `id` if dropped while armed (the caller
/// dropped the call future, or the call ended without its answer).
fn cancel_on_drop(peer: &Peer<RoleClient>, id: RequestId) -> crate::requests::on_drop::SpawnOnDrop {
    let peer = peer.clone();
    crate::requests::on_drop::SpawnOnDrop::lazy(move || async move {
        let _ = peer
            .notify_cancelled(CancelledNotificationParam::new(
                Some(id),
                Some("the caller cancelled the request".to_owned()),
            ))
            .await;
    })
}

/// The error of a call pending when the server sent `what`, a line rmcp cannot read.
fn unreadable_reply(what: &str) -> RequestError {
    RequestError::Protocol {
        detail: format!(
            "the server sent {what} while this request was pending; rmcp cannot read it, so no answer can arrive"
        ),
    }
}

impl Client {
    /// Calls `tool` (its raw name) with `arguments`.
    ///
    /// The timeout is paused while an elicitation of the server is pending. On timeout,
    /// on abort, and when this future is dropped before the result arrives,
    /// `notifications/cancelled` is sent to the server. A 2026-era server's
    /// `input_required` replies are answered (at most [`MAX_INPUT_ROUNDS`] rounds) and the
    /// call sent again with the inputs. The result is returned unchanged.
    ///
    /// # Errors
    /// [`RequestError`]: timeout, abort, the server's error, a protocol fault (an
    /// unreadable reply while the call was pending fails it at once), a lost connection.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the server.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        settings: CallSettings,
    ) -> Result<CallToolResult, RequestError> {
        let judge = crate::telemetry::tool_result_error;
        let called = self.traced_judged("tools/call", Some(tool), judge, async {
            // In the call's span (this block runs in it).
            let span = settings.record_payloads.then(|| {
                crate::telemetry::payloads::record_arguments(arguments.as_ref());
                tracing::Span::current()
            });
            let mut deadline = settings.first_deadline();
            let abort = settings.abort_token();
            let result = match self
                .call_rounds(tool, arguments, &settings, &abort, &mut deadline)
                .await?
            {
                CallOutcome::Result(result) => result,
                // The call's progress keeps flowing to its callback while the task runs.
                // On the heap: waiting for a task is a rare path whose future is many times
                // a plain call's, and inline it would be moved with every call.
                CallOutcome::Task(seed, _progress) => {
                    Box::pin(self.finish_task(seed, &settings, &abort, &mut deadline)).await?
                }
            };
            if let Some(span) = &span {
                crate::telemetry::payloads::record_result(span, &result);
            }
            Ok(result)
        });
        called.await
    }

    /// Sends the call until it has its result or a task (see the `tasks` module).
    pub(crate) async fn call_until_task(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        settings: &CallSettings,
    ) -> Result<CallOutcome, RequestError> {
        let mut deadline = settings.first_deadline();
        let abort = settings.abort_token();
        self.call_rounds(tool, arguments, settings, &abort, &mut deadline)
            .await
    }

    async fn call_rounds(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        settings: &CallSettings,
        abort: &CancellationToken,
        deadline: &mut Instant,
    ) -> Result<CallOutcome, RequestError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        if let Some(meta) = settings.meta.clone() {
            params.meta = Some(RequestMetaObject(MetaObject(meta)));
        }
        if let Some((responses, state)) = settings.resume.clone() {
            params.input_responses = responses;
            params.request_state = state;
        }
        let mut rounds = 0usize;
        let mut as_task =
            self.era() == crate::Era::V2025_11_25 && self.shared.task_support.requires(tool);
        // One round per request: a 2026-era server may answer `input_required` (SEP-2322);
        // the inputs are gathered and the call sent again with them and the server's state.
        loop {
            let request = if as_task {
                crate::tasks::legacy_task_call(&params, settings.effective_timeout())
            } else {
                ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()))
            };
            let round = match self.call_round(request, settings, abort, deadline).await {
                // MCP 2025-11-25: a tool that must run as a task is refused with "method
                // not found" when called plainly; one whose listing said so was called as a
                // task already, one this client could not see the listing of is called once
                // more as a task.
                Err(RequestError::Server { code: -32601, .. })
                    if !as_task && self.era() == crate::Era::V2025_11_25 =>
                {
                    as_task = true;
                    continue;
                }
                other => other?,
            };
            match round {
                (ServerResult::CallToolResult(result), _) => {
                    return Ok(CallOutcome::Result(result));
                }
                (ServerResult::CreateTaskResult(created), progress) => {
                    let seed = crate::tasks::Seed::of_extension(&created.task);
                    return Ok(CallOutcome::Task(seed, progress));
                }
                (ServerResult::CustomResult(raw), progress) if as_task => {
                    let seed = crate::tasks::Seed::of_legacy(&raw.0)?;
                    return Ok(CallOutcome::Task(seed, progress));
                }
                (ServerResult::InputRequiredResult(input), _) if settings.hand_back_input => {
                    let result =
                        serde_json::to_value(&input).map_err(|e| RequestError::Protocol {
                            detail: e.to_string(),
                        })?;
                    return Err(RequestError::InputRequired {
                        result: Box::new(result),
                    });
                }
                (ServerResult::InputRequiredResult(input), _) if rounds < MAX_INPUT_ROUNDS => {
                    rounds += 1;
                    // On the heap: a rare path whose future would otherwise widen every
                    // call's (futures are moved, and their size copied, as they are built).
                    let (responses, state) = Box::pin(
                        self.shared
                            .fulfil_input_requests(settings.requests(), input),
                    )
                    .await?;
                    params.input_responses = responses;
                    params.request_state = state;
                }
                (ServerResult::InputRequiredResult(_), _) => {
                    return Err(RequestError::Protocol {
                        detail: format!(
                            "the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
                        ),
                    });
                }
                _ => {
                    return Err(RequestError::Protocol {
                        detail: "the reply is not a tools/call result".to_owned(),
                    });
                }
            }
        }
    }

    /// The connection's reply faults and the count of unreadable replies so far, subscribed
    /// before a request goes out (an unreadable reply that arrives before the wait begins
    /// must still fail the call). A stdio server whose process is gone gets no request:
    /// no answer could come.
    async fn watch_faults(
        &self,
    ) -> Result<(tokio::sync::watch::Receiver<ReplyFaults>, u64), RequestError> {
        let mut reply_faults = self.shared.reply_faults();
        let before = {
            let faults = reply_faults.borrow_and_update();
            (!faults.gone).then_some(faults.unreadable)
        };
        match before {
            Some(before) => Ok((reply_faults, before)),
            None => Err(RequestError::Disconnected {
                detail: Box::pin(self.gone_detail()).await,
            }),
        }
    }

    /// Sends one request (a `tools/call`, or a 2025-era `tasks/result`) and waits for its
    /// reply: until `deadline` (pushed back while an elicitation of the server is pending,
    /// and renewed by progress when the settings say so), `abort`, or an unreadable reply,
    /// which fails it at once.
    pub(crate) async fn call_round(
        &self,
        request: ClientRequest,
        settings: &CallSettings,
        abort: &CancellationToken,
        deadline: &mut Instant,
    ) -> Result<(ServerResult, ProgressGuard), RequestError> {
        let timeout = settings.effective_timeout();
        let (mut reply_faults, unreadable_before) = self.watch_faults().await?;
        let mut request = request;
        if settings
            .meta
            .as_ref()
            .is_none_or(|meta| !meta.contains_key("traceparent"))
        {
            crate::telemetry::inject(&mut request);
        }
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| RequestError::not_sent(&e))?;
        tracing::Span::current().record("jsonrpc.request.id", tracing::field::display(&handle.id));
        let mut guard = cancel_on_drop(&self.peer, handle.id.clone());
        let (tick_tx, mut tick_rx) = tokio::sync::mpsc::unbounded_channel();
        let progress = self.shared.watch_progress(
            handle.progress_token.clone(),
            ProgressSink {
                callback: settings.progress.clone(),
                tick: settings.reset_timeout_on_progress.then_some(tick_tx),
                last: None,
            },
        );
        let mut rx = handle.rx;
        let mut answers = self.shared.pending_answers();
        let mut paused_since: Option<Instant> = (*answers.borrow() > 0).then(Instant::now);
        let outcome = loop {
            tokio::select! {
                biased;
                // Before the reply: an abort (the set's shutdown) also closes the
                // connection, and a call it ended must say so, not that the server went
                // away. The guard stays armed: the server is told the call is cancelled.
                () = abort.cancelled() => return Err(RequestError::Aborted),
                r = &mut rx => break r,
                () = tokio::time::sleep_until(*deadline), if paused_since.is_none() => {
                    guard.disarm();
                    // The rare paths' futures go on the heap (see `call_rounds`).
                    let _ = Box::pin(self.peer.notify_cancelled(CancelledNotificationParam::new(
                        Some(handle.id.clone()),
                        Some(format!("timed out after {}s", timeout.as_secs_f64())),
                    )))
                    .await;
                    return Err(RequestError::Timeout { after: timeout });
                }
                Ok(()) = reply_faults.changed() => {
                    let unreadable = reply_faults.borrow_and_update().unreadable_since(unreadable_before);
                    let Some(what) = unreadable else {
                        // The process exited a while ago and no answer came with its
                        // last output: none can come now.
                        guard.disarm();
                        return Err(RequestError::Disconnected {
                            detail: Box::pin(self.gone_detail()).await,
                        });
                    };
                    // The guard stays armed: the server is told the call is cancelled.
                    return Err(unreadable_reply(&what));
                }
                Some(()) = tick_rx.recv() => {
                    *deadline = mcp_pool::deadline_in(timeout);
                }
                changed = answers.changed() => {
                    if changed.is_err() {
                        continue;
                    }
                    let pending = *answers.borrow_and_update() > 0;
                    match (pending, paused_since) {
                        (true, None) => paused_since = Some(Instant::now()),
                        (false, Some(since)) => {
                            *deadline += since.elapsed();
                            paused_since = None;
                        }
                        _ => {}
                    }
                }
            }
        };
        guard.disarm();
        match outcome {
            Ok(Ok(result)) => Ok((result, progress)),
            // The reply channel lost the race with an abort that closed the connection.
            Ok(Err(_)) | Err(_) if abort.is_cancelled() => Err(RequestError::Aborted),
            Ok(Err(e)) => Err(Box::pin(RequestError::of_service(self, e)).await),
            Err(_) => Err(RequestError::Disconnected {
                detail: Box::pin(self.gone_detail()).await,
            }),
        }
    }

    /// Reads resource `uri` (sent again, in the 2026 era, when the response stream
    /// breaks: a read is idempotent).
    ///
    /// # Errors
    /// [`RequestError`]: the server's error, a protocol fault, a lost connection.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, RequestError> {
        self.traced("resources/read", None, async {
            let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
                ReadResourceRequestParams::new(uri),
            ));
            match self.read(request).await? {
                ServerResult::ReadResourceResult(r) => Ok(r),
                _ => Err(RequestError::Protocol {
                    detail: "the reply is not a resources/read result".to_owned(),
                }),
            }
        })
        .await
    }

    /// Gets prompt `name` with `arguments`.
    ///
    /// # Errors
    /// As [`Self::read_resource`].
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, RequestError> {
        self.traced("prompts/get", Some(name), async {
            let mut params = GetPromptRequestParams::new(name);
            params.arguments = arguments;
            let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
            match self.read(request).await? {
                ServerResult::GetPromptResult(r) => Ok(r),
                _ => Err(RequestError::Protocol {
                    detail: "the reply is not a prompts/get result".to_owned(),
                }),
            }
        })
        .await
    }

    /// Completions for `argument` of a prompt or resource template (`completion/complete`),
    /// with the values of arguments already chosen in `context`.
    ///
    /// # Errors
    /// [`RequestError::Unsupported`] when the server did not announce the `completions`
    /// capability; otherwise as [`Self::read_resource`].
    pub async fn complete(
        &self,
        reference: Reference,
        argument: ArgumentInfo,
        context: Option<CompletionContext>,
    ) -> Result<CompletionInfo, RequestError> {
        self.traced("completion/complete", None, async {
            let offers = self
                .peer
                .peer_info()
                .is_some_and(|info| info.capabilities.completions.is_some());
            if !offers {
                return Err(RequestError::Unsupported {
                    detail: "the server does not offer completions (no `completions` capability)"
                        .to_owned(),
                });
            }
            let mut params = CompleteRequestParams::new(reference, argument);
            params.context = context;
            let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
            match self.read(request).await? {
                ServerResult::CompleteResult(r) => Ok(r.completion),
                _ => Err(RequestError::Protocol {
                    detail: "the reply is not a completion/complete result".to_owned(),
                }),
            }
        })
        .await
    }

    /// Asks the server to send log messages of `level` and more severe
    /// (`logging/setLevel`, MCP 2025-11-25).
    ///
    /// # Errors
    /// [`RequestError::Unsupported`] when the server did not announce the `logging`
    /// capability or speaks the 2026-07-28 era; otherwise as [`Self::read_resource`].
    pub async fn set_log_level(&self, level: mcp_catalog::LogLevel) -> Result<(), RequestError> {
        self.traced("logging/setLevel", None, async {
            let info = self.peer.peer_info();
            let offers = info
                .as_ref()
                .is_some_and(|info| info.capabilities.logging.is_some());
            if !offers || self.era() != crate::Era::V2025_11_25 {
                return Err(RequestError::Unsupported {
                    detail: "the server does not offer logging/setLevel (no `logging` capability, or the 2026-07-28 era)".to_owned(),
                });
            }
            let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(
                SetLevelRequestParams::new(wire_level(level)),
            ));
            match self.read(request).await? {
                ServerResult::EmptyResult(_) => Ok(()),
                _ => Err(RequestError::Protocol {
                    detail: "the reply is not a logging/setLevel result".to_owned(),
                }),
            }
        })
        .await
    }

    /// Every resource (all pages), within `budget` bytes of JSON and the page limits.
    ///
    /// # Errors
    /// As [`Self::read_resource`]; a list over its limits is a protocol fault.
    pub async fn list_resources(&self, budget: usize) -> Result<Vec<Resource>, RequestError> {
        self.traced("resources/list", None, async {
            let listed = paginate::all_resources(&self.peer, budget).await;
            self.listed(listed).await
        })
        .await
    }

    /// Every resource template (all pages), like [`Self::list_resources`].
    ///
    /// # Errors
    /// As [`Self::list_resources`].
    pub async fn list_resource_templates(
        &self,
        budget: usize,
    ) -> Result<Vec<ResourceTemplate>, RequestError> {
        self.traced("resources/templates/list", None, async {
            let listed = paginate::all_templates(&self.peer, budget).await;
            self.listed(listed).await
        })
        .await
    }

    /// Every prompt (all pages), like [`Self::list_resources`]; none, without asking, when
    /// the server did not announce the `prompts` capability.
    ///
    /// # Errors
    /// As [`Self::list_resources`].
    pub async fn list_prompts(&self, budget: usize) -> Result<Vec<Prompt>, RequestError> {
        self.traced("prompts/list", None, async {
            let offers = self
                .peer
                .peer_info()
                .is_some_and(|info| info.capabilities.prompts.is_some());
            if !offers {
                return Ok(Vec::new());
            }
            let listed = paginate::all_prompts(&self.peer, budget).await;
            self.listed(listed).await
        })
        .await
    }

    /// One page of the resources, and the cursor of the next.
    ///
    /// # Errors
    /// As [`Self::list_resources`].
    pub async fn list_resources_page(
        &self,
        cursor: Option<String>,
    ) -> Result<(Vec<Resource>, Option<String>), RequestError> {
        match self.page(ListKind::Resources, cursor).await? {
            (Page::Resources(items), next) => Ok((items, next)),
            (_, next) => Ok((Vec::new(), next)),
        }
    }

    /// One page of the resource templates, and the cursor of the next.
    ///
    /// # Errors
    /// As [`Self::list_resources`].
    pub async fn list_resource_templates_page(
        &self,
        cursor: Option<String>,
    ) -> Result<(Vec<ResourceTemplate>, Option<String>), RequestError> {
        match self.page(ListKind::Templates, cursor).await? {
            (Page::Templates(items), next) => Ok((items, next)),
            (_, next) => Ok((Vec::new(), next)),
        }
    }

    async fn page(
        &self,
        kind: ListKind,
        cursor: Option<String>,
    ) -> Result<(Page, Option<String>), RequestError> {
        let page = paginate::fetch_page(&self.peer, kind, cursor).await;
        self.listed(page).await
    }

    /// Sends an idempotent read (again, in the 2026 era, when its response stream breaks).
    async fn read(&self, request: ClientRequest) -> Result<ServerResult, RequestError> {
        match crate::transport::reissue::send_read(&self.peer, request).await {
            Ok(result) => Ok(result),
            Err(e) => Err(RequestError::of_service(self, e).await),
        }
    }

    async fn listed<T>(&self, listed: Result<T, PageError>) -> Result<T, RequestError> {
        match listed {
            Ok(items) => Ok(items),
            Err(PageError::Service(e)) => Err(RequestError::of_service(self, e).await),
            Err(other) => Err(RequestError::Protocol {
                detail: other.to_string(),
            }),
        }
    }
}

//! A client's tool calls through the gateway: a 2025-era session's on its set, with
//! progress and cancellation passed on, a 2026-era client's as runs that may park, and what
//! the client gets for an outcome.

use std::sync::Arc;

use mcp_connections::{CallOptions, Progress};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequestParams, ElicitResult,
    ProgressNotificationParam,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;

use mcp_catalog::ToolExposure;

use super::{Gateway, can_elicit, session_of};
use crate::serve::approval::{self, Verdict};
use crate::serve::caller::{Caller, not_available};
use crate::serve::identity::NeedsSignIn;
use crate::serve::modern;
use crate::serve::outcome::{call_outcome, error_result};
use crate::serve::target::Target;

/// How a 2025-era call on the client's set ended.
pub(super) enum Called {
    /// With this answer.
    Done(CallToolResponse),
    /// For want of the caller's sign-in to a `caller` server.
    NeedsSignIn(NeedsSignIn),
}

/// Whether a 2025-era session's client declared it takes URL-mode elicitations.
fn can_elicit_url(peer: &rmcp::Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Url)
}

impl Gateway {
    /// The body of [`rmcp::ServerHandler::call_tool`] for the gateway: the search mode's
    /// two tools, the caller's grants and limits, then a 2026-era run or a 2025-era call
    /// asked for approval through the client.
    pub(super) async fn call_tool_for(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = self.caller(&context)?;
        let search_mode = self.inner.hub.tool_exposure == ToolExposure::Search;
        if search_mode && request.name == crate::serve::exposure::SEARCH_TOOL {
            return Ok(self.search(&request, &context, &caller).await);
        }
        // `call_tool {name, arguments}` is the call of `name`, from here on like any.
        let request = if search_mode && request.name == crate::serve::exposure::CALL_TOOL {
            match crate::serve::exposure::unwrap_call(&request) {
                Ok(inner) => inner,
                Err(refused) => return Ok(refused.into()),
            }
        } else {
            request
        };
        let name = request.name.to_string();
        let modern = modern::is_modern(&context);
        // A 2025-era call's name must be the caller's, resolved on the session's set. A
        // 2026-era call's is checked by its run on the set lent to it, so its request
        // starts no set of its own (see `modern::launch`). A retry carries its
        // `requestState`, which names the call it resumes: checked when it is resumed (it
        // is the caller's, and its tool was when it started).
        if !modern
            && request.request_state.is_none()
            && !caller.has_everything()
            && let Some(answer) = self.not_usable(&name, &context, &caller).await
        {
            return answer;
        }
        let Ok(_caller_permit) = self.inner.hub.bindings.call_permit(&caller) else {
            return Ok(error_result(
                "too many of your calls are in flight ([gateway.limits] calls_per_principal); wait for one to finish".to_owned(),
            )
            .into());
        };
        let calls = if modern {
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
        if modern {
            return Box::pin(self.call_modern(name, request, &context, caller)).await;
        }
        Box::pin(self.call_asked(name, request, &context, caller)).await
    }

    /// The search mode's search tool: what the servers listed that `caller` may use. A
    /// 2025-era session remembers what it revealed (and is told its tool list changed).
    async fn search(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        caller: &Caller,
    ) -> CallToolResponse {
        // A search answers from what the servers listed: let those starting finish
        // (bounded), as a 2026-era request's lists do.
        self.settle().await;
        let tool = |t: &mcp_connections::ToolInfo| caller.may_use_tool(&t.server, &t.tool.name);
        let server = |s: &mcp_key::McpServerKey| caller.may_use_server(s);
        let grants = crate::serve::exposure::SearchGrants {
            tool: &tool,
            server: &server,
        };
        let (result, found) =
            crate::serve::exposure::search(&self.inner.set, request.arguments.as_ref(), &grants)
                .await;
        // A 2025-era session is a client to remember; a 2026-era request is not.
        if !modern::is_modern(context) {
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
        result.into()
    }

    /// A 2025-era session's call of `name`: its approval asked through the client's
    /// elicitation (refused when it cannot elicit or does not answer in time), then the
    /// call on the session's set.
    ///
    /// A call that needs the caller to sign in to a `caller` server first: when the
    /// client takes URL elicitations, it is sent to the sign-in page through one, and once
    /// the caller's credentials are in the vault the server starts again and the call is
    /// made (asked about again) in the same request; otherwise the URL elicitation error.
    async fn call_asked(
        &self,
        name: String,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        caller: Arc<Caller>,
    ) -> Result<CallToolResponse, McpError> {
        if let Some(session) = session_of(context) {
            let _ = self.inner.session.set(session);
        }
        let arguments = request.arguments.clone().map(Value::Object);
        let mut consented = false;
        loop {
            // A `caller` server the caller signed in to since it failed starts again.
            crate::serve::identity::restart_signed_in(&self.inner.hub, self.set(), &caller).await;
            let ask = |question| self.ask_client(context, question);
            let verdict = Box::pin(approval::check(
                &self.inner.set,
                &self.inner.hub.vault,
                &caller,
                &name,
                arguments.as_ref(),
                true,
                ask,
            ))
            .await;
            let target = match verdict {
                Verdict::Refused(result) => return Ok(result.into()),
                // What the name resolved to in the end must be the caller's too.
                Verdict::Call(target) if !crate::serve::caller::may_call(&caller, &target) => {
                    return Err(not_available(&name));
                }
                Verdict::Call(target) => target,
            };
            let sign_in = match Box::pin(self.call(target, arguments.clone(), context)).await? {
                Called::Done(response) => return Ok(response),
                Called::NeedsSignIn(sign_in) => sign_in,
            };
            if let Err(answer) = self
                .sign_in_during(&sign_in, context, &caller, &mut consented)
                .await
            {
                return answer;
            }
        }
    }

    /// A 2025-era call of `name` by a caller with grants: `None` when the name resolves to
    /// a tool the caller may use, else the answer (the "not available" error). A name in
    /// the namespace of a `caller` server the caller's grants cover, down for want of the
    /// caller's sign-in, sends the caller to sign in first (a URL elicitation when the
    /// client takes one, else the URL elicitation error), then is checked once the server
    /// is up.
    async fn not_usable(
        &self,
        name: &str,
        context: &RequestContext<RoleServer>,
        caller: &Arc<Caller>,
    ) -> Option<Result<CallToolResponse, McpError>> {
        let hub = &self.inner.hub;
        let mut consented = false;
        loop {
            // A `caller` server signed in to since it failed starts again: its tools
            // resolve only once it is up.
            crate::serve::identity::restart_signed_in(hub, self.set(), caller).await;
            match Box::pin(self.set().resolve_tool_settled(name)).await {
                Some((server, tool)) if caller.may_use_tool(&server, &tool) => return None,
                Some(_) => return Some(Err(not_available(name))),
                None => {}
            }
            let sign_in = crate::serve::identity::sign_in_for_name(hub, self.set(), caller, name);
            let Some(sign_in) = sign_in else {
                return Some(Err(not_available(name)));
            };
            if let Err(answer) = self
                .sign_in_during(&sign_in, context, caller, &mut consented)
                .await
            {
                return Some(answer);
            }
        }
    }

    /// Sends the caller to sign in during the call, once per call (`consented` says
    /// whether it was already): `Ok` once the credentials are in the vault (the call goes
    /// on), else the call's answer: the URL elicitation error for a client that takes no
    /// URL elicitation (or a second time), the tool error of a sign-in that did not happen.
    async fn sign_in_during(
        &self,
        sign_in: &NeedsSignIn,
        context: &RequestContext<RoleServer>,
        caller: &Caller,
        consented: &mut bool,
    ) -> Result<(), Result<CallToolResponse, McpError>> {
        if *consented || !can_elicit_url(&context.peer) {
            return Err(Err(sign_in.error()));
        }
        *consented = true;
        self.consent(sign_in, context, caller)
            .await
            .map_err(|refusal| Ok(error_result(refusal).into()))
    }

    /// Puts `question` to a 2025-era session's client (`None`: it cannot elicit, or gave
    /// no answer within the hub's answer deadline).
    async fn ask_client(
        &self,
        context: &RequestContext<RoleServer>,
        question: ElicitRequestParams,
    ) -> Option<ElicitResult> {
        let peer = &context.peer;
        if !can_elicit(peer) {
            return None;
        }
        let deadline = self.inner.hub.answer_deadline;
        let session = session_of(context);
        let _out = session
            .as_deref()
            .map(|s| self.inner.hub.waiting.begin(s, peer));
        match tokio::time::timeout(deadline, peer.create_elicitation(question)).await {
            Ok(answer) => answer.ok(),
            Err(_) => {
                tracing::info!("the client did not answer the question within {deadline:?}");
                None
            }
        }
    }

    /// Sends the caller to `sign_in`'s page through a URL elicitation and waits for the
    /// credentials (see [`NeedsSignIn::given`]); once they are there, the client is told the
    /// elicitation is complete. `Err`: the tool error's text (declined, no answer, no
    /// sign-in in time, the client cancelled the call).
    async fn consent(
        &self,
        sign_in: &NeedsSignIn,
        context: &RequestContext<RoleServer>,
        caller: &Caller,
    ) -> Result<(), String> {
        let params = sign_in.elicitation();
        let given = async {
            let answer = self.ask_client(context, params.clone()).await;
            sign_in.given(&self.inner.hub, caller, answer).await
        };
        tokio::select! {
            () = context.ct.cancelled() => {
                return Err(format!("the client cancelled the call while signing in to {}", sign_in.server));
            }
            given = given => given?,
        }
        if let Some(completed) = crate::serve::identity::consent::elicitation::completed(&params) {
            let _ = context.peer.send_notification(completed).await;
        }
        Ok(())
    }

    /// A 2026-era client's call: a new one on a set of its own, or the retry of one that
    /// asked the client something (its `requestState`), run until it ends or asks again.
    pub(super) async fn call_modern(
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
            elicit_url: caps
                .as_ref()
                .and_then(|c| c.elicitation.as_ref())
                .is_some_and(|e| e.url.is_some()),
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

    /// Runs a call on the client's set: progress forwarded in order to the client under
    /// its own token; the client's cancellation cancels the call upstream. A call that
    /// failed for want of the caller's sign-in to a `caller` server says so
    /// ([`Called::NeedsSignIn`]).
    pub(super) async fn call(
        &self,
        target: Target,
        arguments: Option<Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Called, McpError> {
        let mut options = CallOptions::new();
        let mut forwarder = None;
        if let Some(token) = context.meta.get_progress_token() {
            let (tx, mut rx) = crate::serve::progress::latest::<Progress>();
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
            options = options.with_call(|c| c.with_progress(Some(Arc::new(move |p| tx.send(p)))));
        }
        // While it runs, its server may ask the client (see `host_requests::refusal`).
        let _in_call = match &target {
            Target::Resolved(server, _) => Some(self.inner.in_calls.enter(server)),
            Target::Unresolved(_) => None,
        };
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
            Some(Err(e)) => {
                // A `caller` server the caller has not signed in to: the sign-in page.
                let caller = self.kept_caller();
                match crate::serve::identity::sign_in_required(&self.inner.hub, &caller, &e) {
                    Some(sign_in) => Ok(Called::NeedsSignIn(sign_in)),
                    None => call_outcome(Err(e)).map(|r| Called::Done(r.into())),
                }
            }
            Some(outcome) => call_outcome(outcome).map(|r| Called::Done(r.into())),
        }
    }
}

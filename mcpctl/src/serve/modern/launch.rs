//! Launching a 2026-era client's call ([`launch`]): a connection set lent to it alone
//! (see [`super::kept`]), whose handlers put the upstream server's questions to the
//! client, and the task that makes the call, answering itself what it can of a 2026-era
//! upstream server's questions and handing the rest back to the client.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_connections::model::CallToolResult;
use mcp_connections::{CallOptions, ConnectionSet};
use rmcp::ErrorData as McpError;
use rmcp::model::{ElicitResult, InputResponses};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};

use super::{Abilities, Ask, Run, UpstreamCall, ask, put};
use crate::serve::Hub;
use crate::serve::approval::{self, Verdict};
use crate::serve::caller::{self, Caller};
use crate::serve::host_requests::{InCalls, json_with_asker};
use crate::serve::identity::NeedsSignIn;
use crate::serve::outcome::{call_outcome, error_result};
use crate::serve::status::Board;
use crate::serve::target::Target;

/// What a run does.
pub(super) enum Work {
    /// Call a tool by the name the client gave (approval first).
    New(String, Option<Value>, Abilities),
    /// Send a handed-back call to its server again with the client's answers (its
    /// approval was given before it was handed back).
    Resume(UpstreamCall, Option<InputResponses>, Abilities),
}

/// Most rounds of an upstream server's questions the gateway answers itself in one run.
const MAX_LOCAL_ROUNDS: usize = 8;

/// What a call resumes with: the answers to the server's questions, and the server's own
/// `requestState`.
type Resume = (Option<InputResponses>, Option<String>);

/// Starts a run of `work` for `caller` (see [`start`](super::start)).
pub(super) fn launch(hub: &Arc<Hub>, work: Work, caller: Arc<Caller>) -> Run {
    let can = match &work {
        Work::New(_, _, can) | Work::Resume(_, _, can) => *can,
    };
    let (asks_tx, asks) = mpsc::channel::<Ask>(1);
    let (progress_tx, progress) = crate::serve::progress::latest();
    let (states_tx, task_states) = watch::channel(None);
    let lent = hub.kept.lend(hub, &caller, can, &asks_tx);
    let options = CallOptions::new().with_call(|c| {
        c.with_progress(Some(Arc::new(move |p| progress_tx.send(p))))
            .with_task_state(Some(Arc::new(move |state: &mcp_connections::TaskState| {
                states_tx.send_replace(Some(state.clone()));
            })))
            .with_input_handed_back(true)
    });
    let (hand_back, handed_back) = oneshot::channel();
    let call = RunCall {
        hub: Arc::clone(hub),
        set: lent.set().clone(),
        board: hub.status.clone(),
        caller: Arc::clone(&caller),
        in_calls: Arc::clone(lent.in_calls()),
        can,
        options,
        hand_back: Some(hand_back),
    };
    // In the request's span: the upstream call's spans are in the client's trace.
    let task = tokio::spawn(tracing::Instrument::in_current_span(
        call.run(work, asks_tx),
    ));
    Run {
        set: lent,
        task,
        asks,
        progress,
        task_states,
        caller,
        handed_back,
    }
}

/// The call a run makes, and what it needs for it.
struct RunCall {
    /// For the sign-in of `caller` servers ([`crate::serve::identity`]).
    hub: Arc<Hub>,
    set: ConnectionSet,
    board: Board,
    caller: Arc<Caller>,
    /// The server in a call now (the one that may ask the client).
    in_calls: Arc<InCalls>,
    can: Abilities,
    /// The call's options: progress and task states to the run, input handed back.
    options: CallOptions,
    /// Where a 2026-era upstream server's questions go when the call is handed back
    /// (taken then).
    hand_back: Option<oneshot::Sender<UpstreamCall>>,
}

/// How a run's rounds ended.
enum Rounds {
    /// With this outcome.
    Ended(Result<CallToolResult, McpError>),
    /// For want of the caller's sign-in to a `caller` server.
    NeedsSignIn(NeedsSignIn),
}

/// What a run calls first, or how it ended before calling.
enum First {
    /// The call to make: its target, its arguments, and what it resumes with.
    Call(Target, Option<Value>, Option<Resume>),
    /// Refused (by the approval, or the target is not the caller's).
    Ended(Result<CallToolResult, McpError>),
    /// The name lies in a `caller` server's namespace that waits for the caller's sign-in.
    NeedsSignIn(NeedsSignIn),
}

/// What the gateway makes of a 2026-era upstream server's questions.
enum Answered {
    /// It answered them all itself: the call goes on at once with these answers.
    Here(Resume),
    /// Some are for the client: the call is handed back with them.
    ToClient(UpstreamCall),
    /// One ends the call (the text of its error result).
    Refused(String),
}

impl RunCall {
    /// The run's task: what to call (`asks` puts the approval question to the client),
    /// then the call's rounds.
    ///
    /// A new call that needs the caller to sign in to a `caller` server first, from a
    /// client that takes URL elicitations: the URL request goes to the client through
    /// `asks` (an `input_required` round, like the approval question); once it accepted
    /// and the caller's credentials are in the vault, the call starts over (the server
    /// started again, the approval asked again). Otherwise the URL elicitation error.
    async fn run(
        mut self,
        work: Work,
        asks: mpsc::Sender<Ask>,
    ) -> Result<CallToolResult, McpError> {
        let again = match &work {
            Work::New(name, arguments, can) if can.elicit_url => {
                Some(Work::New(name.clone(), arguments.clone(), *can))
            }
            Work::New(..) | Work::Resume(..) => None,
        };
        let sign_in = match self.first_then_rounds(work, &asks).await {
            Rounds::Ended(outcome) => return outcome,
            Rounds::NeedsSignIn(sign_in) => sign_in,
        };
        let Some(again) = again else {
            return Err(sign_in.error());
        };
        let answer = match serde_json::to_value(sign_in.input_request()) {
            Ok(input) => put(&asks, input)
                .await
                .and_then(|answer| serde_json::from_value::<ElicitResult>(answer).ok()),
            Err(_) => None,
        };
        if let Err(refusal) = sign_in.given(&self.hub, &self.caller, answer).await {
            return Ok(error_result(refusal));
        }
        match self.first_then_rounds(again, &asks).await {
            Rounds::Ended(outcome) => outcome,
            Rounds::NeedsSignIn(sign_in) => Err(sign_in.error()),
        }
    }

    /// What to call ([`Self::first`]), then the call's rounds ([`Self::rounds`]).
    async fn first_then_rounds(&mut self, work: Work, asks: &mpsc::Sender<Ask>) -> Rounds {
        match self.first(work, asks).await {
            First::Call(target, arguments, resume) => self.rounds(target, arguments, resume).await,
            First::Ended(outcome) => Rounds::Ended(outcome),
            First::NeedsSignIn(sign_in) => Rounds::NeedsSignIn(sign_in),
        }
    }

    /// What the run calls: the tool the client named, once approved (which may ask the
    /// client), or the handed-back call's server and tool. Either must be the caller's to
    /// call.
    async fn first(&self, work: Work, asks: &mpsc::Sender<Ask>) -> First {
        match work {
            Work::New(name, arguments, _) => {
                // A `caller` server the caller signed in to since it failed starts again
                // (first: its tools resolve only once it is up).
                crate::serve::identity::restart_signed_in(&self.hub, &self.set, &self.caller).await;
                // Before anything is asked: a name that is not the caller's answers like
                // one that does not exist, unless it lies in a `caller` server the caller
                // may use that waits for its sign-in (the tool is checked once it is up).
                if !self.may_use(&name).await {
                    let sign_in = crate::serve::identity::sign_in_for_name(
                        &self.hub,
                        &self.set,
                        &self.caller,
                        &name,
                    );
                    return match sign_in {
                        Some(sign_in) => First::NeedsSignIn(sign_in),
                        None => First::Ended(Err(caller::not_available(&name))),
                    };
                }
                let question = |q| async { Some(ask(asks, self.can.elicit, q).await) };
                let verdict = approval::check(
                    &self.set,
                    &self.hub.vault,
                    &self.caller,
                    &name,
                    arguments.as_ref(),
                    false,
                    question,
                )
                .await;
                match verdict {
                    Verdict::Refused(result) => First::Ended(Ok(result)),
                    Verdict::Call(target) if !caller::may_call(&self.caller, &target) => {
                        First::Ended(Err(caller::not_available(&name)))
                    }
                    Verdict::Call(target) => First::Call(target, arguments, None),
                }
            }
            Work::Resume(call, answers, _) => {
                let key = self
                    .set
                    .servers()
                    .find(|k| k.to_string() == call.server)
                    .cloned();
                let target = key.map(|key| Target::Resolved(key, call.tool.clone()));
                match target {
                    Some(target) if caller::may_call(&self.caller, &target) => {
                        First::Call(target, call.arguments, Some((answers, call.state)))
                    }
                    _ => First::Ended(Err(caller::not_available(&call.tool))),
                }
            }
        }
    }

    /// Whether the tool `name` resolves to, on the set the call runs on and now (its
    /// server brought up first), is one the caller may use (a caller with everything may
    /// use any name, also one that resolves to nothing). Checked before the approval rule,
    /// so a caller is never asked about, nor told of, a tool that is not theirs.
    async fn may_use(&self, name: &str) -> bool {
        if self.caller.has_everything() {
            return true;
        }
        match Box::pin(self.set.resolve_tool_settled(name)).await {
            Some((server, tool)) => self.caller.may_use_tool(&server, &tool),
            None => false,
        }
    }

    /// Makes the call. A 2026-era upstream server's questions the gateway answers itself
    /// send it again at once, for at most [`MAX_LOCAL_ROUNDS`] rounds; questions for the
    /// client hand it back (the task ends with an error its driver does not show).
    async fn rounds(
        &mut self,
        mut target: Target,
        arguments: Option<Value>,
        mut resume: Option<Resume>,
    ) -> Rounds {
        for _ in 0..=MAX_LOCAL_ROUNDS {
            let resolved = match &target {
                Target::Resolved(server, tool) => Some((server.clone(), tool.clone())),
                Target::Unresolved(_) => None,
            };
            let options = match resume.take() {
                Some((answers, state)) => self
                    .options
                    .clone()
                    .with_call(|c| c.with_resume(answers, state)),
                None => self.options.clone(),
            };
            let in_call = resolved
                .as_ref()
                .map(|(server, _)| self.in_calls.enter(server));
            let outcome = target
                .call(&self.set, &self.board, arguments.clone(), options)
                .await;
            drop(in_call);
            // A `caller` server the caller has not signed in to: the sign-in page.
            if let Err(e) = &outcome
                && let Some(sign_in) =
                    crate::serve::identity::sign_in_required(&self.hub, &self.caller, e)
            {
                return Rounds::NeedsSignIn(sign_in);
            }
            let (Err(e), Some((key, tool))) = (&outcome, resolved) else {
                return Rounds::Ended(call_outcome(outcome));
            };
            let Some(asked) = e.input_required() else {
                return Rounds::Ended(call_outcome(outcome));
            };
            match self.answer(key.to_string(), tool.clone(), asked, &arguments) {
                Answered::Here(answers) => {
                    resume = Some(answers);
                    target = Target::Resolved(key, tool);
                }
                Answered::ToClient(call) => {
                    if let Some(hand_back) = self.hand_back.take() {
                        let _ = hand_back.send(call);
                    }
                    return Rounds::Ended(Err(McpError::internal_error(
                        "the call was handed back to its client",
                        None,
                    )));
                }
                Answered::Refused(refusal) => return Rounds::Ended(Ok(error_result(refusal))),
            }
        }
        Rounds::Ended(Ok(error_result(format!(
            "the server still asked for input after {MAX_LOCAL_ROUNDS} rounds answered by mcpctl serve"
        ))))
    }

    /// Sorts what `server` asked during the call of `tool` (its `input_required` result)
    /// into what the gateway answers itself and what goes to the client.
    fn answer(
        &self,
        server: String,
        tool: String,
        asked: &Value,
        arguments: &Option<Value>,
    ) -> Answered {
        let state = asked
            .get("requestState")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let (to_client, answered) = match split(&server, asked.get("inputRequests"), self.can) {
            Ok(split) => split,
            Err(refusal) => return Answered::Refused(refusal),
        };
        if to_client.is_empty() {
            return Answered::Here(((!answered.is_empty()).then_some(answered), state));
        }
        Answered::ToClient(UpstreamCall {
            caller: self.caller.id().to_owned(),
            server,
            tool,
            arguments: arguments.clone(),
            requests: Some(Value::Object(to_client)),
            answered,
            state,
        })
    }
}

/// What goes to the client (requests under the server's keys), and what the gateway
/// answered itself.
type Split = (serde_json::Map<String, Value>, BTreeMap<String, Value>);

/// Splits what a 2026-era upstream `server` asked (its `inputRequests`) into what goes to
/// the client (under the server's keys) and what the gateway answers itself, as it would
/// for a 2025-era server: an elicitation the client cannot answer is declined, the
/// gateway's roots are none. A sampling request the client cannot answer, or a request
/// the gateway does not know, ends the call (the text of its error result).
fn split(server: &str, requests: Option<&Value>, can: Abilities) -> Result<Split, String> {
    let mut to_client = serde_json::Map::new();
    let mut answered = BTreeMap::new();
    for (key, request) in requests.and_then(Value::as_object).into_iter().flatten() {
        match request.get("method").and_then(Value::as_str) {
            Some("elicitation/create") if can.elicit => {
                let mut request = request.clone();
                json_with_asker(server, &mut request);
                to_client.insert(key.clone(), request);
            }
            Some("elicitation/create") => {
                answered.insert(key.clone(), json!({"action": "decline"}));
            }
            Some("sampling/createMessage") if can.sample => {
                to_client.insert(key.clone(), request.clone());
            }
            Some("sampling/createMessage") => {
                return Err(format!(
                    "MCP server `{server}` asked for a message of the client's model (sampling), and {}",
                    crate::serve::host_requests::NO_SAMPLING
                ));
            }
            Some("roots/list") => {
                answered.insert(key.clone(), json!({"roots": []}));
            }
            other => {
                return Err(format!(
                    "MCP server `{server}` asked for an input mcpctl serve does not know: {}",
                    other.unwrap_or("(no method)")
                ));
            }
        }
    }
    Ok((to_client, answered))
}

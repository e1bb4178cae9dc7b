//! The gateway's MCP 2026-07-28 downstream. That era has no sessions and no requests from
//! server to client: what a call needs from its client (an upstream server's elicitation
//! or sampling request, the gateway's own approval question, the URL request to sign in
//! to a `caller` server) goes back as an
//! `input_required` result (MRTR, SEP-2322), and the client's retry, carrying the answer
//! and the `requestState`, resumes the same call.
//!
//! Each such call runs on a connection set lent to it alone ([`Run`], [`kept::Lent`]) on
//! the hub's pool, so an upstream elicitation is routed to exactly that call (the pool's
//! session gate), whoever else uses the server. The set is one the hub kept from an
//! ended call of the same caller and client abilities when there is one
//! ([`kept::KeptSets`]): starting a set per call cost more than the call. A call waiting for its client is parked in [`Parked`], in this
//! process's memory, for at most the hub's answer deadline (`--answer-deadline`, expired
//! by a timer: [`expire_every_second`]). The `requestState` handed out is sealed
//! ([`super::seal`]): it names the parked call, the instance keeping it, its caller and
//! its expiry, so an instance sharing the key tells a state of another instance (the
//! retry must reach the instance keeping the call: a load balancer routes it there, or
//! the client calls again) from an altered or expired one. A state the gateway does not
//! know (or no longer knows) is refused, and so is a state presented by another caller
//! than the one whose call it is ([`super::caller`]): the call stays parked for its own
//! caller.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_connections::model::{
    CallToolResult, ElicitRequestParams, ElicitResult, ElicitationAction,
};
use mcp_connections::{SamplingRefusal, SamplingRequest};
use rmcp::model::{
    CallToolResponse, CreateTaskResult, InputRequest, InputRequiredResult,
    ProgressNotificationParam,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::Hub;

mod kept;
mod launch;

pub(crate) use kept::KeptSets;
use launch::{Work, launch};

/// The key of the one input request of each round.
pub(crate) const INPUT_KEY: &str = "input";

/// Calls waiting for their clients at once, at most; beyond it a question is declined.
pub(crate) const MAX_PARKED: usize = 256;

/// Calls of one caller waiting for their clients at once, at most (beside [`MAX_PARKED`]
/// for all callers); beyond it that caller's questions are declined, so that one caller's
/// flood of questions leaves everyone else's asked. Tasks kept per caller have the same
/// bound.
pub(crate) const MAX_PARKED_PER_CALLER: usize = 32;

/// Whether the request came from a client speaking MCP 2026-07-28 or later.
pub(crate) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| mcp_client::Era::of(&v) == mcp_client::Era::V2026_07_28)
}

/// A question a call asks its client (an input request as JSON: `{"method", "params"}`),
/// and where the client's answer goes (`None`: it gave none).
pub(crate) type Ask = (Value, oneshot::Sender<Option<Value>>);

/// One call of a 2026-era client: the connection set lent to it, the task running it, the
/// questions it asks and its progress.
pub(crate) struct Run {
    /// Its set, the call's alone until it is released (the call ended) or shut down
    /// (given up).
    pub(crate) set: kept::Lent,
    pub(crate) task: JoinHandle<Result<CallToolResult, McpError>>,
    pub(crate) asks: mpsc::Receiver<Ask>,
    pub(crate) progress: super::progress::Receiver,
    /// The latest state of the upstream task the call became, if it became one.
    pub(crate) task_states: watch::Receiver<Option<mcp_connections::TaskState>>,
    /// Whose call it is: only they may resume it (or, as a task, look at it).
    pub(crate) caller: Arc<super::caller::Caller>,
    /// What a 2026-era upstream server asked, when the call ended by handing it back.
    handed_back: oneshot::Receiver<UpstreamCall>,
}

impl Run {
    /// The state of the upstream task the call became, if a new one came since the last
    /// look.
    pub(crate) fn task_state(&mut self) -> Option<mcp_connections::TaskState> {
        if self.task_states.has_changed().unwrap_or(false) {
            self.task_states.borrow_and_update().clone()
        } else {
            None
        }
    }

    /// Gives the call up: its task stops and its set shuts down (not kept: its server may
    /// still be at the call).
    pub(crate) async fn abandon(self) {
        self.task.abort();
        self.set.shutdown().await;
    }
}

/// A call waiting for its client's answer.
struct ParkedRun {
    run: Run,
    answer: oneshot::Sender<Option<Value>>,
    since: Instant,
}

/// The calls waiting for their clients, by the random handle their sealed
/// `requestState` names.
pub(crate) struct Parked {
    runs: Mutex<HashMap<String, ParkedRun>>,
    /// What the handed-out states are sealed with.
    key: super::seal::SealKey,
    /// This process among the instances sharing the key.
    instance: String,
    /// How long a handed-out state may be presented.
    ttl: Duration,
    /// The upstream states resumed here: each resumes its call once.
    spent: super::seal::Spent,
}

/// What a `requestState` holds, sealed.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum SealedState {
    /// A call parked in one instance's memory.
    Parked {
        /// The instance keeping the call.
        instance: String,
        /// The call's handle there.
        handle: String,
        /// Whose call it is.
        caller: String,
    },
    /// A call a 2026-era upstream server keeps no state of but its own `requestState`:
    /// any instance resumes it.
    Upstream(UpstreamCall),
}

/// A call to a 2026-era upstream server that asked for input, as any instance needs it
/// to send the call again with the client's answers.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct UpstreamCall {
    /// Whose call it is.
    caller: String,
    /// The server's key, as it is written.
    server: String,
    /// The tool's own name on the server.
    tool: String,
    arguments: Option<Value>,
    /// The server's `inputRequests` the client answers, under the server's keys.
    requests: Option<Value>,
    /// The answers the gateway gave itself to the server's other requests.
    #[serde(default)]
    answered: BTreeMap<String, Value>,
    /// The server's own `requestState`, unmodified.
    state: Option<String>,
}

/// What a retry's `requestState` resumes.
enum Resumed {
    /// A parked call, its answer given.
    Parked(Run),
    /// A call to send upstream again.
    Upstream(UpstreamCall),
}

impl std::fmt::Debug for Parked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = self.runs.lock().map_or(0, |runs| runs.len());
        f.debug_struct("Parked").field("waiting", &waiting).finish()
    }
}

impl Parked {
    /// No call parked yet; handed-out states are sealed with `key` and valid for `ttl`.
    pub(crate) fn new(
        key: super::seal::SealKey,
        ttl: Duration,
    ) -> Result<Self, crate::error::CliError> {
        let instance = super::random_hex(8).map_err(|e| {
            crate::error::CliError::failure(format!("no random bytes from the system: {e}"))
        })?;
        Ok(Self {
            runs: Mutex::default(),
            key,
            instance,
            ttl,
            spent: super::seal::Spent::default(),
        })
    }

    /// Parks `run` until its client answers; the `requestState` to hand out, or the run
    /// back when too many calls wait already.
    fn park(&self, run: Run, answer: oneshot::Sender<Option<Value>>) -> Result<String, Run> {
        let Ok(handle) = super::random_hex(16) else {
            return Err(run);
        };
        let sealed = SealedState::Parked {
            instance: self.instance.clone(),
            handle: handle.clone(),
            caller: run.caller.id().to_owned(),
        };
        // A second more than the answer deadline: the timer gives the call up first.
        let Ok(state) = self.key.seal(&sealed, self.ttl + Duration::from_secs(1)) else {
            return Err(run);
        };
        let Ok(mut runs) = self.runs.lock() else {
            return Err(run);
        };
        let theirs = runs
            .values()
            .filter(|p| p.run.caller.id() == run.caller.id())
            .count();
        if runs.len() >= MAX_PARKED || theirs >= MAX_PARKED_PER_CALLER {
            return Err(run);
        }
        runs.insert(
            handle,
            ParkedRun {
                run,
                answer,
                since: Instant::now(),
            },
        );
        Ok(state)
    }

    /// How many calls each caller has waiting for its client, by caller id (sorted): the
    /// status page's parked calls per principal.
    pub(crate) fn by_caller(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        if let Ok(runs) = self.runs.lock() {
            for parked in runs.values() {
                *counts.entry(parked.run.caller.id().to_owned()).or_insert(0) += 1;
            }
        }
        counts
    }

    /// Seals what a 2026-era upstream server asked, for the client to bring back to any
    /// instance.
    fn seal_upstream(&self, call: UpstreamCall) -> Result<String, super::seal::SealError> {
        self.key.seal(&SealedState::Upstream(call), self.ttl)
    }

    /// What `state` resumes: the run parked under it, once `answer` went to it, or the
    /// upstream call it carries.
    fn resume(
        &self,
        state: &str,
        answer: Option<Value>,
        caller: &super::caller::Caller,
    ) -> Result<Resumed, Refusal> {
        // An upstream state is spent by its caller's retry: presented again, it would
        // send the approved call again.
        let own_upstream = |sealed: &SealedState| match sealed {
            SealedState::Upstream(call) => call.caller == caller.id(),
            SealedState::Parked { .. } => false,
        };
        let (sealed, _) = self
            .key
            .open_once(state, &self.spent, own_upstream)
            .map_err(Refusal::Unsealed)?;
        let (instance, handle) = match sealed {
            SealedState::Upstream(call) if call.caller == caller.id() => {
                return Ok(Resumed::Upstream(call));
            }
            SealedState::Parked {
                instance,
                handle,
                caller: owner,
            } if owner == caller.id() => (instance, handle),
            _ => return Err(Refusal::OtherCaller),
        };
        if instance != self.instance {
            return Err(Refusal::OtherInstance);
        }
        let mut runs = self.runs.lock().map_err(|_| Refusal::Unknown)?;
        let parked = runs.get(&handle).ok_or(Refusal::Unknown)?;
        if parked.run.caller.id() != caller.id() {
            return Err(Refusal::OtherCaller);
        }
        let parked = runs.remove(&handle).ok_or(Refusal::Unknown)?;
        drop(runs);
        // The call may have ended meanwhile (its server died): then the answer is moot.
        let _ = parked.answer.send(answer);
        Ok(Resumed::Parked(parked.run))
    }

    /// Gives up every call that waited longer than `ttl`.
    pub(crate) async fn expire(&self, ttl: Duration) {
        let expired: Vec<Run> = match self.runs.lock() {
            Ok(mut runs) => {
                let old: Vec<String> = runs
                    .iter()
                    .filter(|(_, p)| p.since.elapsed() > ttl)
                    .map(|(state, _)| state.clone())
                    .collect();
                old.iter()
                    .filter_map(|state| runs.remove(state))
                    .map(|p| p.run)
                    .collect()
            }
            Err(_) => Vec::new(),
        };
        for run in expired {
            tracing::info!("a call waited more than {ttl:?} for its client's answer; given up");
            run.abandon().await;
        }
    }

    /// Gives up every waiting call (the gateway stops).
    pub(crate) async fn clear(&self) {
        let all: Vec<Run> = match self.runs.lock() {
            Ok(mut runs) => runs.drain().map(|(_, p)| p.run).collect(),
            Err(_) => Vec::new(),
        };
        for run in all {
            run.abandon().await;
        }
    }
}

/// Gives up, once a second, the calls whose clients did not answer within the hub's
/// answer deadline; ends with the hub.
pub(crate) async fn expire_every_second(hub: std::sync::Weak<Hub>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(hub) = hub.upgrade() else {
            return;
        };
        hub.parked.expire(hub.answer_deadline).await;
        hub.tasks.expire(hub.answer_deadline).await;
        hub.kept.expire().await;
    }
}

/// The client's answer in a retry's `inputResponses`, as it sent it.
pub(crate) fn answer_of(responses: Option<&rmcp::model::InputResponses>) -> Option<Value> {
    responses.and_then(|r| r.get(INPUT_KEY)).cloned()
}

/// The run a retry resumes: the parked run it names, or its upstream call sent again
/// with the client's answers; the error for a state the gateway cannot resume.
pub(crate) fn resume(
    hub: &Arc<Hub>,
    state: &str,
    responses: Option<&rmcp::model::InputResponses>,
    caller: Arc<super::caller::Caller>,
    can: Abilities,
) -> Result<Run, McpError> {
    let answer_deadline = hub.answer_deadline;
    let message = match hub.parked.resume(state, answer_of(responses), &caller) {
        Ok(Resumed::Parked(run)) => return Ok(run),
        Ok(Resumed::Upstream(call)) => {
            let responses = answers_to(&call, responses);
            return Ok(launch(hub, Work::Resume(call, responses, can), caller));
        }
        Err(Refusal::OtherCaller) => format!(
            "requestState {state:?} belongs to a call of another caller; only the caller that started it may resume it"
        ),
        Err(Refusal::OtherInstance) => format!(
            "requestState {state:?} names a call waiting on another instance of this gateway: a call whose answer goes to a 2025-era server, or to the gateway's approval question, is kept by the instance that asked; send the retry there (route by requestState) or call the tool again"
        ),
        Err(Refusal::Unsealed(e)) => format!("requestState {state:?} is refused: {e}"),
        Err(Refusal::Unknown) => format!(
            "requestState {state:?} names no call waiting for input here (answered already, or given up after {}s); call the tool again",
            answer_deadline.as_secs()
        ),
    };
    Err(McpError::invalid_params(message, None))
}

/// The client's answers to what `call`'s server asked: those under the keys it asked.
fn answers_to(
    call: &UpstreamCall,
    responses: Option<&rmcp::model::InputResponses>,
) -> Option<rmcp::model::InputResponses> {
    let asked = call.requests.as_ref().and_then(Value::as_object);
    let mut answers: rmcp::model::InputResponses = responses
        .into_iter()
        .flatten()
        .filter(|(key, _)| asked.is_some_and(|asked| asked.contains_key(key.as_str())))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    answers.extend(call.answered.clone());
    (!answers.is_empty()).then_some(answers)
}

/// Why a retry's `requestState` resumes nothing.
enum Refusal {
    /// It does not open: altered, another key's, expired, too large.
    Unsealed(super::seal::SealError),
    /// It is another caller's; the call stays parked for them.
    OtherCaller,
    /// Another instance keeps the call.
    OtherInstance,
    /// No such call here (answered already, given up).
    Unknown,
}

/// Runs `run` until it ends (its result) or asks its client something (an
/// `input_required` result, the run parked); progress goes to this round's request.
///
/// With `tasks` (the client declared the tasks extension), a call whose upstream server
/// made a task of it is answered with a task of the gateway's own (see `tasks.rs`).
pub(crate) async fn drive(
    parked: &Parked,
    tasks: Option<&super::tasks::Tasks>,
    mut run: Run,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let token = context.meta.get_progress_token();
    loop {
        tokio::select! {
            Ok(()) = run.task_states.changed(), if tasks.is_some() => {
                let Some(tasks) = tasks else { continue };
                let message = run
                    .task_states
                    .borrow_and_update()
                    .as_ref()
                    .and_then(|state| state.message.clone());
                match tasks.adopt(run, message) {
                    Ok(task) => return Ok(CallToolResponse::Task(CreateTaskResult::new(task))),
                    Err(back) => {
                        tracing::warn!("more than {MAX_PARKED} tasks (or {MAX_PARKED_PER_CALLER} of one caller) are kept; the call goes on as a plain one");
                        run = back;
                    }
                }
            }
            result = &mut run.task => {
                run.set.release().await;
                if let Ok(call) = run.handed_back.try_recv() {
                    return hand_back(parked, call);
                }
                return match result {
                    Ok(Ok(result)) => Ok(result.into()),
                    Ok(Err(e)) => Err(e),
                    Err(e) => Err(McpError::internal_error(format!("the call stopped: {e}"), None)),
                };
            }
            Some(p) = run.progress.recv() => {
                if let Some(token) = &token {
                    let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                    param.total = p.total;
                    param.message = p.message;
                    let _ = context.peer.notify_progress(param).await;
                }
            }
            Some((input, answer)) = run.asks.recv() => {
                let request = match serde_json::from_value::<InputRequest>(input) {
                    Ok(request) => request,
                    Err(e) => {
                        tracing::warn!("a question could not be passed on: {e}");
                        let _ = answer.send(None);
                        continue;
                    }
                };
                match parked.park(run, answer) {
                    Ok(state) => {
                        let requests = std::collections::BTreeMap::from([(INPUT_KEY.to_owned(), request)]);
                        return Ok(InputRequiredResult::new(Some(requests), Some(state)).into());
                    }
                    Err(back) => {
                        // Too many calls wait already (of all callers, or of this one):
                        // the question's answer sender was
                        // dropped, which declines it, and the call goes on.
                        tracing::warn!("more than {MAX_PARKED} calls (or {MAX_PARKED_PER_CALLER} of one caller) wait for their clients; a question was declined");
                        run = back;
                    }
                }
            }
            () = context.ct.cancelled() => {
                run.abandon().await;
                return Err(McpError::internal_error("the client cancelled the call", None));
            }
        }
    }
}

/// The `input_required` result passing on what a 2026-era upstream server asked: its
/// input requests, under its keys, and a sealed state any instance resumes the call from.
fn hand_back(parked: &Parked, call: UpstreamCall) -> Result<CallToolResponse, McpError> {
    let requests = match call
        .requests
        .clone()
        .map(serde_json::from_value)
        .transpose()
    {
        Ok(requests) => requests,
        Err(e) => {
            return Err(McpError::internal_error(
                format!(
                    "MCP server `{}` asked for input this gateway cannot pass on: {e}",
                    call.server
                ),
                None,
            ));
        }
    };
    let state = parked.seal_upstream(call).map_err(|e| {
        McpError::internal_error(
            format!("the call's state could not be handed to the client: {e}"),
            None,
        )
    })?;
    Ok(InputRequiredResult::new(requests, Some(state)).into())
}

/// Puts `input` (`{"method", "params"}`) to a 2026-era client through its call's run: its
/// answer, or `None` when it gave none (or the call is over).
async fn put(asks: &mpsc::Sender<Ask>, input: Value) -> Option<Value> {
    let (answer, answered) = oneshot::channel();
    asks.send((input, answer)).await.ok()?;
    answered.await.ok().flatten()
}

/// Asks a 2026-era client through its call's run (declined when it cannot elicit, or
/// answers with something that is no elicitation result).
async fn ask(
    asks: &mpsc::Sender<Ask>,
    can_elicit: bool,
    params: ElicitRequestParams,
) -> ElicitResult {
    let declined = || ElicitResult::new(ElicitationAction::Decline);
    if !can_elicit {
        return declined();
    }
    let input = json!({"method": "elicitation/create", "params": params});
    put(asks, input)
        .await
        .and_then(|answer| serde_json::from_value::<ElicitResult>(answer).ok())
        .unwrap_or_else(declined)
}

/// Passes an upstream server's sampling request to a 2026-era client through its call's
/// run: refused when the client does not offer sampling, or gives no message back.
async fn sample(
    asks: &mpsc::Sender<Ask>,
    can_sample: bool,
    request: SamplingRequest,
) -> mcp_connections::SamplingAnswer {
    if !can_sample {
        return Err(SamplingRefusal::new(super::host_requests::NO_SAMPLING));
    }
    let input = json!({"method": "sampling/createMessage", "params": request.params});
    match put(asks, input).await {
        Some(answer) => serde_json::from_value::<mcp_connections::model::CreateMessageResult>(
            answer,
        )
        .map_err(|e| {
            SamplingRefusal::new(format!(
                "the client of mcpctl serve answered with no message: {e}"
            ))
        }),
        None => Err(SamplingRefusal::new(
            "the client of mcpctl serve gave no answer",
        )),
    }
}

/// What a 2026-era client said it can answer (its request's client capabilities).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Abilities {
    /// Elicitation.
    pub(crate) elicit: bool,
    /// URL-mode elicitation (a sign-in to a `caller` server is asked as one).
    pub(crate) elicit_url: bool,
    /// Sampling.
    pub(crate) sample: bool,
}

/// Starts a 2026-era client's call on a connection set lent to it alone (see [`kept`]):
/// whatever the call asks (the approval question first, when its mode says to ask,
/// then the upstream server's elicitations) goes to the run's question channel.
/// Approvals are not remembered: the era has no session to remember them in. The call is
/// `caller`'s: what the name resolves to must be theirs to call.
///
/// A 2026-era upstream server's own questions (its `input_required` replies) are not
/// answered here: the call ends with them ([`hand_back`]), sealed with the server's
/// state, and the client's retry sends it again from any instance ([`resume`]).
pub(crate) fn start(
    hub: &Arc<Hub>,
    name: String,
    arguments: Option<Value>,
    can: Abilities,
    caller: Arc<super::caller::Caller>,
) -> Run {
    launch(hub, Work::New(name, arguments, can), caller)
}

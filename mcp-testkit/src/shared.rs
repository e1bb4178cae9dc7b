//! The state a [`FakeServer`](crate::FakeServer) shares between its clones and with the
//! tool behaviours: the scenario, the current tools, prompts and resources, the log level,
//! barriers, the request log, the tasks and their work, the listen faults, and what a
//! crash does. The bottom of the fake server: it names no behaviour.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::service::SubscriptionSink;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::record::{RequestLog, lock};
use crate::tasks::table::TaskTable;
use crate::{PromptSpec, ResourceSpec, Scenario, ToolSpec};

/// What [`crate::Behavior::Exit`] does.
#[derive(Debug, Clone)]
pub(crate) enum CrashMode {
    /// `std::process::exit(code)` (the stdio binary).
    ExitProcess,
    /// Cancel this token, which closes the transport (in process, HTTP).
    Cancel(CancellationToken),
}

pub(crate) struct Shared {
    pub(crate) scenario: Scenario,
    pub(crate) tools: Mutex<Vec<ToolSpec>>,
    /// The current prompts (they change with [`crate::Behavior::ChangePrompts`]).
    pub(crate) prompts: Mutex<Vec<PromptSpec>>,
    /// The current static resources (they change with [`crate::Behavior::ChangeResources`]).
    pub(crate) resources: Mutex<Vec<ResourceSpec>>,
    /// The level of the latest `logging/setLevel` (`None`: never set, every message goes).
    pub(crate) log_level: Mutex<Option<String>>,
    pub(crate) barriers: Mutex<BTreeMap<String, Arc<tokio::sync::Barrier>>>,
    pub(crate) log: RequestLog,
    pub(crate) crash: CrashMode,
    /// Cancelled when the server stops; long waits (hang, barrier) end with it.
    pub(crate) stop: CancellationToken,
    /// Open `subscriptions/listen` requests (2026-07-28 clients): where change
    /// notifications go in that era.
    pub(crate) listeners: Mutex<Vec<SubscriptionSink>>,
    /// Listens accepted but not registered in `listeners` yet: rmcp acknowledges a listen
    /// before it hands it to the server, so a client may act on the acknowledgment first.
    /// Notifying waits for this to drop to zero.
    pub(crate) listens_pending: tokio::sync::watch::Sender<usize>,
    /// Faults of the open listens ([`crate::Behavior::EndListens`] and the like).
    pub(crate) listen_faults: Arc<ListenFaults>,
    /// URIs of `resources/subscribe` (2025-11-25 clients).
    pub(crate) subscribed: Mutex<BTreeSet<String>>,
    /// `tools/call` requests answered so far (for [`crate::ToolsChange`]).
    pub(crate) calls: std::sync::atomic::AtomicU64,
    /// stdout is the transport (the stdio binary): raw reply faults are written to it.
    pub(crate) stdio: bool,
    /// The tasks of [`crate::Behavior::Task`] tools, for every session.
    pub(crate) tasks: Arc<TaskTable>,
    /// Their background work.
    pub(crate) task_work: TaskWork,
    /// The events emitted (the Events extension), and the push stream faults.
    pub(crate) events: crate::events::log::EventLog,
    /// Webhook subscriptions (`events/subscribe`) and the callbacks verified.
    pub(crate) webhooks: crate::events::webhook::Webhooks,
}

impl Shared {
    /// The open subscriptions whose accepted filter passes `wanted`, once every listen already
    /// acknowledged is registered (at most a second's wait: a listen the SDK refused after
    /// accepting it never registers).
    pub(crate) async fn listening(
        &self,
        wanted: impl Fn(&rmcp::model::SubscriptionFilter) -> bool,
    ) -> Vec<rmcp::service::SubscriptionSink> {
        let mut pending = self.listens_pending.subscribe();
        let _ = tokio::time::timeout(Duration::from_secs(1), pending.wait_for(|n| *n == 0)).await;
        lock(&self.listeners)
            .iter()
            .filter(|sink| wanted(sink.accepted()))
            .cloned()
            .collect()
    }
}

/// The listen faults of one server (all its sessions).
#[derive(Debug)]
pub(crate) struct ListenFaults {
    /// Counts [`Behavior::EndListens`](crate::Behavior::EndListens) calls: a listen open
    /// when it moves ends.
    pub(crate) ended: watch::Sender<u64>,
    /// While `true`, new listen requests wait (HTTP runners) before the server sees them.
    pub(crate) hold: watch::Sender<bool>,
    /// Listen requests waiting now.
    pub(crate) held: AtomicUsize,
    /// Counts [`Behavior::SilenceListens`](crate::Behavior::SilenceListens) calls: a listen
    /// stream answered before it moves sends nothing more.
    pub(crate) silenced: watch::Sender<u64>,
}

impl Default for ListenFaults {
    fn default() -> Self {
        Self {
            ended: watch::channel(0).0,
            hold: watch::channel(false).0,
            held: AtomicUsize::new(0),
            silenced: watch::channel(0).0,
        }
    }
}

impl ListenFaults {
    /// A receiver that changes when the listens open now are to end.
    pub(crate) fn end_signal(&self) -> watch::Receiver<u64> {
        self.ended.subscribe()
    }
}

/// The background work of a server's tasks. Dropping it (with the server's last clone)
/// aborts what is still running; each work also ends when the server stops.
#[derive(Debug, Default)]
pub(crate) struct TaskWork {
    running: Mutex<JoinSet<()>>,
}

impl TaskWork {
    /// Runs `work` in the background (and forgets the works that ended).
    pub(crate) fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        let mut running = lock(&self.running);
        while running.try_join_next().is_some() {}
        running.spawn(work);
    }

    /// How many works are still running.
    pub(crate) fn running(&self) -> usize {
        let mut running = lock(&self.running);
        while running.try_join_next().is_some() {}
        running.len()
    }
}

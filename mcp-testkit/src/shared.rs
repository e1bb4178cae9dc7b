//! The state a [`FakeServer`](crate::FakeServer) shares between its clones and with the
//! tool behaviours: the scenario, the current tools, barriers, the request log, and what a
//! crash does.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::record::RequestLog;
use crate::{Scenario, ToolSpec};

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
    pub(crate) barriers: Mutex<BTreeMap<String, Arc<tokio::sync::Barrier>>>,
    pub(crate) log: RequestLog,
    pub(crate) crash: CrashMode,
    /// Cancelled when the server stops; long waits (hang, barrier) end with it.
    pub(crate) stop: CancellationToken,
}

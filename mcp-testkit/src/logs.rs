//! Captured `tracing` output, for tests that check what reaches the logs (and that no
//! secret does).

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::record::lock;

/// The formatted log lines written so far (no ANSI colours), shared with the subscriber
/// that [`capture_logs`] or [`capture_logs_globally`] installed. Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct CapturedLogs(Arc<Mutex<Vec<u8>>>);

impl CapturedLogs {
    /// Everything written so far (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.0)).into_owned()
    }
}

impl Write for CapturedLogs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn subscriber(captured: &CapturedLogs) -> impl tracing::Subscriber + Send + Sync + 'static {
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::TRACE)
        .finish()
}

/// Captures every event (TRACE level, every target) of the current thread until the
/// returned guard drops. Events of other threads (tasks of a multi-thread runtime) are
/// not seen: use [`capture_logs_globally`] for those.
///
/// ```
/// let (logs, guard) = mcp_testkit::capture_logs();
/// tracing::warn!(server = "tickets", "token refreshed");
/// drop(guard);
/// assert!(logs.text().contains("WARN"));
/// assert!(logs.text().contains("token refreshed"));
/// ```
pub fn capture_logs() -> (CapturedLogs, tracing::subscriber::DefaultGuard) {
    let captured = CapturedLogs::default();
    let guard = tracing::subscriber::set_default(subscriber(&captured));
    (captured, guard)
}

/// Captures every event (TRACE level, every target) of the whole process from now on,
/// by installing the global subscriber; `None` when a global subscriber is already set
/// (it can be set once per test binary).
pub fn capture_logs_globally() -> Option<CapturedLogs> {
    let captured = CapturedLogs::default();
    tracing::subscriber::set_global_default(subscriber(&captured))
        .ok()
        .map(|()| captured)
}

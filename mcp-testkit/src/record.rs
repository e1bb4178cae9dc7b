//! The request log: every request a fake server receives, in memory and optionally in a
//! file (one JSON line each).

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request received by a fake server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The JSON-RPC method, e.g. `tools/call`.
    pub method: String,
    /// The request params as received (`null` when absent).
    pub params: Value,
}

impl RecordedRequest {
    /// A record.
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        Self {
            method: method.into(),
            params,
        }
    }

    /// Read a request log file written by a fake server (`--request-log`): one record per
    /// line. A missing file reads as no requests; malformed lines are skipped.
    pub fn read_log(path: impl AsRef<std::path::Path>) -> Vec<Self> {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Vec::new();
        };
        text.lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }
}

/// Lock a mutex, ignoring poisoning (a panicked test thread must not hide the log).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Default)]
pub(crate) struct RequestLog {
    entries: Mutex<Vec<RecordedRequest>>,
    file: Option<PathBuf>,
    added: tokio::sync::Notify,
}

impl RequestLog {
    pub(crate) fn new(file: Option<PathBuf>) -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
            file,
            added: tokio::sync::Notify::new(),
        }
    }

    pub(crate) fn record(&self, method: &str, params: Value) {
        let entry = RecordedRequest::new(method, params);
        if let Some(path) = &self.file {
            // Best effort: a test that asked for the file checks its contents.
            if let Ok(line) = serde_json::to_string(&entry)
                && let Ok(mut file) = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
            {
                let _ = writeln!(file, "{line}");
            }
        }
        lock(&self.entries).push(entry);
        self.added.notify_waiters();
    }

    /// The first record with `method`, waiting for it to arrive.
    pub(crate) async fn wait_for(&self, method: &str) -> RecordedRequest {
        loop {
            let added = self.added.notified();
            tokio::pin!(added);
            added.as_mut().enable();
            if let Some(found) = lock(&self.entries).iter().find(|r| r.method == method) {
                return found.clone();
            }
            added.await;
        }
    }

    pub(crate) fn snapshot(&self) -> Vec<RecordedRequest> {
        lock(&self.entries).clone()
    }
}

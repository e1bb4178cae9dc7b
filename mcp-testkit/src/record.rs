//! The request log: every request a fake server receives, counted per method, the latest
//! ones kept in memory (a bounded ring), and optionally all of them in a file (one JSON
//! line each).

use std::collections::{BTreeMap, VecDeque};
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

/// What is kept in memory: the latest requests and every method's count.
#[derive(Debug, Default)]
struct Kept {
    latest: VecDeque<RecordedRequest>,
    counts: BTreeMap<String, u64>,
}

#[derive(Debug)]
pub(crate) struct RequestLog {
    kept: Mutex<Kept>,
    /// The most requests `kept.latest` holds.
    limit: usize,
    file: Option<PathBuf>,
    added: tokio::sync::Notify,
}

impl RequestLog {
    /// A log keeping the latest `limit` requests in memory, all of them in `file`.
    pub(crate) fn new(file: Option<PathBuf>, limit: usize) -> Self {
        Self {
            kept: Mutex::new(Kept::default()),
            limit,
            file,
            added: tokio::sync::Notify::new(),
        }
    }

    pub(crate) fn record(&self, method: &str, params: Value) {
        let entry = RecordedRequest::new(method, params);
        {
            // Under the lock, one write per line: `writeln!` writes the line and its newline
            // separately, so two requests recorded at once interleaved into one unreadable
            // line (a request missing from the log under load).
            let mut kept = lock(&self.kept);
            if let Some(path) = &self.file {
                // Best effort: a test that asked for the file checks its contents.
                if let Ok(mut line) = serde_json::to_string(&entry)
                    && let Ok(mut file) = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                {
                    line.push('\n');
                    let _ = file.write_all(line.as_bytes());
                }
            }
            *kept.counts.entry(entry.method.clone()).or_default() += 1;
            if self.limit > 0 {
                if kept.latest.len() >= self.limit {
                    kept.latest.pop_front();
                }
                kept.latest.push_back(entry);
            }
        }
        self.added.notify_waiters();
    }

    /// The first record with `method`, waiting for it to arrive.
    pub(crate) async fn wait_for(&self, method: &str) -> RecordedRequest {
        loop {
            let added = self.added.notified();
            tokio::pin!(added);
            added.as_mut().enable();
            if let Some(found) = lock(&self.kept).latest.iter().find(|r| r.method == method) {
                return found.clone();
            }
            added.await;
        }
    }

    pub(crate) fn snapshot(&self) -> Vec<RecordedRequest> {
        lock(&self.kept).latest.iter().cloned().collect()
    }

    /// Requests received per method, however many were kept.
    pub(crate) fn counts(&self) -> BTreeMap<String, u64> {
        lock(&self.kept).counts.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_latest_requests_are_kept_and_every_one_is_counted() {
        let log = RequestLog::new(None, 3);
        for i in 0..1000 {
            log.record("tools/call", serde_json::json!({ "i": i }));
        }
        log.record("ping", Value::Null);
        let kept: Vec<Value> = log.snapshot().into_iter().map(|r| r.params).collect();
        assert_eq!(
            kept,
            [
                serde_json::json!({"i": 998}),
                serde_json::json!({"i": 999}),
                Value::Null
            ]
        );
        assert_eq!(log.counts()["tools/call"], 1000);
        assert_eq!(log.counts()["ping"], 1);
    }

    #[test]
    fn a_limit_of_zero_keeps_nothing_but_counts() {
        let log = RequestLog::new(None, 0);
        log.record("initialize", Value::Null);
        assert!(log.snapshot().is_empty());
        assert_eq!(log.counts()["initialize"], 1);
    }
}

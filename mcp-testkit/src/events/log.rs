//! The history of events one fake server emitted (all sessions share it), the retention
//! floor [`crate::Behavior::ForgetEvents`] moves, and the signals that kill push streams.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::cursor::{CURSOR_PREFIX, cursor};
use crate::record::lock;
use crate::shared::Shared;

/// One emitted event.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    /// Its number, from 1.
    pub(crate) seq: u64,
    /// Its event type.
    pub(crate) name: String,
    /// The `EventOccurrence`, without `cursor`.
    pub(crate) occurrence: Value,
}

impl Stored {
    /// Whether each of `arguments` equals the field of that name in the event's `data`.
    fn matches(&self, name: &str, arguments: &Map<String, Value>) -> bool {
        self.name == name
            && arguments
                .iter()
                .all(|(k, v)| self.occurrence["data"].get(k) == Some(v))
    }

    /// The occurrence with the cursor of the position after it.
    pub(crate) fn with_cursor(&self) -> Value {
        let mut occurrence = self.occurrence.clone();
        occurrence["cursor"] = json!(cursor(self.seq));
        occurrence
    }
}

/// What a subscription gets after a position.
pub(crate) struct Since {
    /// The matching events, in order.
    pub(crate) events: Vec<Stored>,
    /// The position checked up to (after the last event returned when cut by a limit).
    pub(crate) checked: u64,
    /// Events after the asked position were forgotten: the answer starts later.
    pub(crate) truncated: bool,
    /// A limit cut the answer: more events follow `checked`.
    pub(crate) has_more: bool,
}

#[derive(Default)]
struct History {
    /// The events kept, oldest first.
    kept: VecDeque<Stored>,
    /// The events emitted.
    head: u64,
    /// The events up to this position are forgotten.
    floor: u64,
}

/// The event history of one server, and its push stream faults.
pub(crate) struct EventLog {
    history: Mutex<History>,
    /// The number of events emitted, for push streams waiting for the next.
    pub(crate) head: watch::Sender<u64>,
    /// Counts [`crate::Behavior::EndEventStreams`] calls that end the open streams.
    pub(crate) ended: watch::Sender<u64>,
    /// Counts [`crate::Behavior::EndEventStreams`] calls that silence them.
    pub(crate) silenced: watch::Sender<u64>,
    /// Push streams open now (silenced ones included).
    pub(crate) open_streams: AtomicUsize,
    /// The timers of [`crate::EventTypeSpec::every_ms`], once started; aborted with the
    /// server's last clone.
    timers: Mutex<Option<JoinSet<()>>>,
    /// The file the history is kept in ([`crate::EventsSpec::history_file`]), once read.
    file: OnceLock<Option<PathBuf>>,
}

impl Default for EventLog {
    fn default() -> Self {
        Self {
            history: Mutex::default(),
            head: watch::channel(0).0,
            ended: watch::channel(0).0,
            silenced: watch::channel(0).0,
            open_streams: AtomicUsize::new(0),
            timers: Mutex::new(None),
            file: OnceLock::new(),
        }
    }
}

impl EventLog {
    /// Records an event of type `name` with `data`; returns its occurrence with its cursor.
    pub(crate) fn emit(&self, name: &str, data: Value) -> Value {
        let stored = {
            let mut history = lock(&self.history);
            history.head += 1;
            let seq = history.head;
            let timestamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let stored = Stored {
                seq,
                name: name.to_owned(),
                occurrence: json!({
                    "eventId": format!("evt-{seq}"),
                    "name": name,
                    "timestamp": timestamp,
                    "data": data,
                }),
            };
            history.kept.push_back(stored.clone());
            if let Some(Some(path)) = self.file.get() {
                append(path, &stored);
            }
            stored
        };
        self.head.send_replace(stored.seq);
        stored.with_cursor()
    }

    /// Keeps the history in `path` from now on, first reading what an earlier process on
    /// the same file emitted (events before its first line are forgotten: a cursor behind
    /// them is truncated). Only the first call counts.
    pub(crate) fn keep_in(&self, path: Option<&Path>) {
        self.file.get_or_init(|| {
            let path = path?;
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let mut history = lock(&self.history);
            for line in text.lines() {
                let Ok(line) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                let (Some(seq), Some(name)) = (line["seq"].as_u64(), line["name"].as_str()) else {
                    continue;
                };
                if history.kept.is_empty() {
                    // The events before the first line kept are forgotten.
                    history.floor = seq.saturating_sub(1);
                }
                history.head = seq;
                history.kept.push_back(Stored {
                    seq,
                    name: name.to_owned(),
                    occurrence: line["occurrence"].clone(),
                });
            }
            self.head.send_replace(history.head);
            Some(path.to_owned())
        });
    }

    /// Forgets every event but the latest `keep`; returns how many were forgotten.
    pub(crate) fn forget(&self, keep: usize) -> usize {
        let mut history = lock(&self.history);
        let mut forgotten = 0;
        while history.kept.len() > keep {
            if let Some(gone) = history.kept.pop_front() {
                history.floor = gone.seq;
                forgotten += 1;
            }
        }
        forgotten
    }

    /// The position `cursor` names: `None` for no cursor (start from now). An error text
    /// for a cursor this server never gave.
    pub(crate) fn position(&self, cursor: Option<&str>) -> Result<u64, String> {
        let head = lock(&self.history).head;
        let Some(cursor) = cursor else {
            return Ok(head);
        };
        match cursor
            .strip_prefix(CURSOR_PREFIX)
            .and_then(|n| n.parse::<u64>().ok())
        {
            Some(position) if position <= head => Ok(position),
            _ => Err(format!(
                "cursor {cursor:?} was not given by this server (its cursors are `{CURSOR_PREFIX}N`, N at most {head})"
            )),
        }
    }

    /// The events of type `name` matching `arguments` after `position`, at most `limit`.
    pub(crate) fn since(
        &self,
        position: u64,
        name: &str,
        arguments: &Map<String, Value>,
        limit: usize,
    ) -> Since {
        let history = lock(&self.history);
        let truncated = position < history.floor;
        let mut events = Vec::new();
        let mut checked = history.head;
        let mut has_more = false;
        for stored in history.kept.iter().filter(|s| s.seq > position) {
            if !stored.matches(name, arguments) {
                continue;
            }
            if events.len() == limit {
                has_more = true;
                break;
            }
            checked = stored.seq;
            events.push(stored.clone());
        }
        if !has_more {
            checked = history.head;
        }
        Since {
            events,
            checked: checked.max(position.max(history.floor)),
            truncated,
            has_more,
        }
    }

    /// Starts the timers of the event types that have one, once.
    pub(crate) fn start_timers(&self, server: Weak<Shared>, types: &[crate::EventTypeSpec]) {
        let mut timers = lock(&self.timers);
        if timers.is_some() {
            return;
        }
        let mut set = JoinSet::new();
        for event_type in types {
            let Some(ms) = event_type.every_ms else {
                continue;
            };
            let name = event_type.name.clone();
            let server = server.clone();
            set.spawn(async move {
                let mut tick = 0u64;
                loop {
                    let stop = match server.upgrade() {
                        Some(server) => server.stop.clone(),
                        None => return,
                    };
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                    }
                    let Some(server) = server.upgrade() else {
                        return;
                    };
                    tick += 1;
                    server.events.emit(&name, json!({ "tick": tick }));
                }
            });
        }
        *timers = Some(set);
    }

    /// Counts a push stream open until the guard drops.
    pub(crate) fn stream_opened(&self) -> OpenStream<'_> {
        self.open_streams.fetch_add(1, Ordering::SeqCst);
        OpenStream { log: self }
    }
}

/// Appends `stored` to the history file at `path` (a failure is the test's to see: the
/// events are missing after a restart).
fn append(path: &Path, stored: &Stored) {
    let line = json!({"seq": stored.seq, "name": stored.name, "occurrence": stored.occurrence});
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "{line}");
    }
}

/// One open push stream, counted in [`EventLog::open_streams`] while it lives.
pub(crate) struct OpenStream<'a> {
    log: &'a EventLog,
}

impl Drop for OpenStream<'_> {
    fn drop(&mut self) {
        self.log.open_streams.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_behind_the_forgotten_events_is_truncated() {
        let log = EventLog::default();
        for n in 1..=5 {
            log.emit("ping", json!({ "n": n }));
        }
        let all = Map::new();
        let since = log.since(1, "ping", &all, 100);
        assert_eq!(since.events.len(), 4);
        assert!(!since.truncated);
        assert_eq!(log.forget(2), 3);
        let since = log.since(1, "ping", &all, 100);
        assert!(since.truncated);
        assert_eq!(
            since.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![4, 5]
        );
        let limited = log.since(3, "ping", &all, 1);
        assert_eq!((limited.checked, limited.has_more), (4, true));
        assert!(log.position(Some("pos-9")).is_err());
        assert_eq!(log.position(Some("pos-5")), Ok(5));
    }
}

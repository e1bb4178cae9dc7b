//! Progress notifications of a connection, routed by token to the calls that asked for
//! them; notifications that beat their call's watch are kept for it, a bounded few.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use rmcp::model::{ProgressNotificationParam, ProgressToken};

/// A progress update of one tool call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Progress so far.
    pub progress: f64,
    /// Total, when the server knows it.
    pub total: Option<f64>,
    /// Optional message.
    pub message: Option<String>,
}

/// A per-call progress callback.
pub type ProgressCallback = Arc<dyn Fn(Progress) + Send + Sync>;

/// Notifications of a progress token nobody watches (yet) kept for a later watcher:
/// at most this many, the oldest dropped first.
const EARLY_PROGRESS: usize = 64;

/// Where progress notifications go, by token.
#[derive(Default)]
pub(super) struct ProgressRoutes {
    pub(super) sinks: HashMap<ProgressToken, ProgressSink>,
    /// Notifications that arrived before their call watched its token: rmcp picks the
    /// token as it sends the request, so a server's first notification can beat the call's
    /// [`ConnectionShared::watch_progress`](super::ConnectionShared::watch_progress) (the first of three was lost under load).
    early: VecDeque<ProgressNotificationParam>,
}

impl ProgressRoutes {
    /// Delivers `params` to its sink, or keeps it for a watcher to come.
    pub(super) fn deliver(&mut self, params: ProgressNotificationParam) {
        match self.sinks.get_mut(&params.progress_token) {
            Some(sink) => sink.deliver(params),
            None => {
                if self.early.len() >= EARLY_PROGRESS {
                    self.early.pop_front();
                }
                self.early.push_back(params);
            }
        }
    }

    /// Registers `sink` for `token` and hands it what arrived for the token before.
    pub(super) fn watch(&mut self, token: ProgressToken, mut sink: ProgressSink) {
        let early = std::mem::take(&mut self.early);
        for params in early {
            if params.progress_token == token {
                sink.deliver(params);
            } else {
                self.early.push_back(params);
            }
        }
        self.sinks.insert(token, sink);
    }
}

pub(crate) struct ProgressSink {
    pub(crate) callback: Option<ProgressCallback>,
    pub(crate) tick: Option<tokio::sync::mpsc::UnboundedSender<()>>,
    /// The last progress delivered.
    pub(crate) last: Option<f64>,
}

impl ProgressSink {
    /// Passes `params` on, unless an update with as much progress came first.
    fn deliver(&mut self, params: ProgressNotificationParam) {
        if self.last.is_some_and(|last| params.progress <= last) {
            return;
        }
        self.last = Some(params.progress);
        if let Some(tick) = &self.tick {
            let _ = tick.send(());
        }
        if let Some(cb) = &self.callback {
            cb(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::sync::{Arc, Mutex};

    use rmcp::model::NumberOrString;

    use super::*;

    fn notification(token: &str, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(
            ProgressToken(NumberOrString::String(token.into())),
            progress,
        )
        .with_total(3.0)
    }

    fn recording() -> (ProgressSink, Arc<Mutex<Vec<f64>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = Arc::clone(&seen);
        let sink = ProgressSink {
            callback: Some(Arc::new(move |p: Progress| {
                into.lock().unwrap().push(p.progress)
            })),
            tick: None,
            last: None,
        };
        (sink, seen)
    }

    #[test]
    fn a_notification_that_beats_its_watcher_is_delivered_when_it_watches() {
        let mut routes = ProgressRoutes::default();
        routes.deliver(notification("a", 1.0));
        routes.deliver(notification("other", 1.0));
        let (sink, seen) = recording();
        routes.watch(ProgressToken(NumberOrString::String("a".into())), sink);
        routes.deliver(notification("a", 2.0));
        routes.deliver(notification("a", 1.5)); // overtaken: skipped
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0]);
        assert_eq!(
            routes.early.len(),
            1,
            "the other token's stays for its watcher"
        );
    }

    #[test]
    fn unwatched_notifications_are_bounded() {
        let mut routes = ProgressRoutes::default();
        for i in 0..1000 {
            routes.deliver(notification(&format!("t{i}"), 1.0));
        }
        assert_eq!(routes.early.len(), EARLY_PROGRESS);
    }
}

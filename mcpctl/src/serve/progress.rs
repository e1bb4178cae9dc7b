//! A call's progress on its way to the gateway's client: only the latest update waits to
//! be sent. An upstream server may send progress faster than the client reads it (or
//! while a 2026-era call is parked on a question nobody answers yet); a queue of every
//! update grew without bound (hundreds of MB from one hostile server). Updates that are
//! overtaken before they are sent are counted, not kept: progress only goes forward.

use std::sync::{Arc, Mutex, PoisonError};

use mcp_connections::Progress;
use tokio::sync::Notify;

#[derive(Debug)]
struct State<T> {
    latest: Option<T>,
    closed: bool,
    dropped: u64,
}

#[derive(Debug)]
struct Shared<T> {
    state: Mutex<State<T>>,
    ready: Notify,
}

impl<T> Shared<T> {
    fn state(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Where the call's progress callback puts updates; dropping it ends the stream.
#[derive(Debug)]
pub(crate) struct Sender<T = Progress>(Arc<Shared<T>>);

/// Where the forwarder takes them from.
#[derive(Debug)]
pub(crate) struct Receiver<T = Progress>(Arc<Shared<T>>);

/// A stream of progress that holds at most one update.
pub(crate) fn latest<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            latest: None,
            closed: false,
            dropped: 0,
        }),
        ready: Notify::new(),
    });
    (Sender(Arc::clone(&shared)), Receiver(shared))
}

impl<T> Sender<T> {
    /// Replaces the waiting update (if any: it is counted as dropped) with `p`.
    pub(crate) fn send(&self, p: T) {
        let mut state = self.0.state();
        if state.latest.replace(p).is_some() {
            state.dropped += 1;
        }
        drop(state);
        self.0.ready.notify_one();
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.0.state().closed = true;
        self.0.ready.notify_one();
    }
}

impl<T> Receiver<T> {
    /// The latest update not yet taken, waiting for one; `None` once the sender is gone
    /// and nothing is left.
    ///
    /// # Cancel safety
    /// Cancel-safe: an update is only taken when this returns it.
    pub(crate) async fn recv(&mut self) -> Option<T> {
        loop {
            {
                let mut state = self.0.state();
                if let Some(p) = state.latest.take() {
                    return Some(p);
                }
                if state.closed {
                    return None;
                }
            }
            self.0.ready.notified().await;
        }
    }

    /// Updates overtaken before they were taken.
    pub(crate) fn dropped(&self) -> u64 {
        self.0.state().dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(progress: f64) -> f64 {
        progress
    }

    #[tokio::test]
    async fn a_flood_unread_keeps_one_update_and_counts_the_rest() {
        let (tx, mut rx) = latest();
        for i in 0..100_000 {
            tx.send(at(f64::from(i)));
        }
        assert_eq!(rx.recv().await, Some(99_999.0));
        assert_eq!(rx.dropped(), 99_999);
        tx.send(at(100_000.0));
        drop(tx);
        assert_eq!(rx.recv().await, Some(100_000.0));
        assert!(rx.recv().await.is_none(), "ends once the sender is gone");
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_for_the_next_update() {
        let (tx, mut rx) = latest();
        let waiter = tokio::spawn(async move { rx.recv().await });
        tokio::task::yield_now().await;
        tx.send(at(1.0));
        assert_eq!(waiter.await.unwrap(), Some(1.0));
    }
}

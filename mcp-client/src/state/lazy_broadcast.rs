//! A broadcast channel made by its first reader.
//!
//! A `tokio::sync::broadcast` channel allocates all its slots when it is made (64 slots of
//! a listen's health are about 5 KiB, of a resource URI about 3 KiB), and most connections
//! never have a reader for some of them. Before the first reader subscribes nobody could
//! receive a message anyway (a broadcast channel drops what it sends to no receiver), so
//! making the channel then changes nothing a reader can see.

use std::sync::OnceLock;

use tokio::sync::broadcast;

/// A broadcast channel of `capacity` slots, made when the first reader subscribes.
pub(crate) struct LazyBroadcast<T> {
    capacity: usize,
    sender: OnceLock<broadcast::Sender<T>>,
}

impl<T: Clone> LazyBroadcast<T> {
    /// A channel of `capacity` slots (more than zero), not made yet.
    pub(crate) const fn new(capacity: usize) -> Self {
        Self {
            capacity,
            sender: OnceLock::new(),
        }
    }

    /// A reader of every message sent from now on; a reader that falls more than the
    /// capacity behind gets `Lagged`.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<T> {
        self.sender
            .get_or_init(|| broadcast::channel(self.capacity.max(1)).0)
            .subscribe()
    }

    /// Sends `value` to the readers there are; returns whether there was one.
    pub(crate) fn send(&self, value: T) -> bool {
        self.sender
            .get()
            .is_some_and(|sender| sender.send(value).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::broadcast::error::TryRecvError;

    use super::*;

    #[test]
    fn nothing_is_made_or_kept_before_the_first_reader() {
        let channel = LazyBroadcast::new(4);
        assert!(!channel.send(1), "nobody to receive it");
        assert!(channel.sender.get().is_none(), "no slots allocated yet");
        let mut reader = channel.subscribe();
        assert_eq!(reader.try_recv(), Err(TryRecvError::Empty));
        assert!(channel.send(2));
        assert_eq!(reader.try_recv(), Ok(2));
    }

    #[test]
    fn every_reader_gets_each_message_and_a_slow_one_is_told_what_it_missed() {
        let channel = LazyBroadcast::new(2);
        let mut slow = channel.subscribe();
        let mut late = channel.subscribe();
        for n in 1..=3 {
            assert!(channel.send(n));
        }
        assert_eq!(slow.try_recv(), Err(TryRecvError::Lagged(1)));
        assert_eq!(slow.try_recv(), Ok(2));
        assert_eq!(slow.try_recv(), Ok(3));
        assert_eq!(late.try_recv(), Err(TryRecvError::Lagged(1)));
        drop((slow, late));
        assert!(!channel.send(4), "its readers are gone");
    }
}

//! A watch channel made when it is first used.
//!
//! A `tokio::sync::watch` channel allocates its shared state (the value and nine wait
//! lists) when it is made, and an idle connection never touches some of its channels (a
//! renewed session, the settled list changes nobody listens to, answers of the host).
//! Before the first send or subscription the channel would hold its default value with no
//! reader, so making it then changes nothing a reader can see.

use std::sync::OnceLock;

use tokio::sync::watch;

/// A watch channel starting at `T::default()`, made at its first send or subscription.
pub(crate) struct LazyWatch<T> {
    sender: OnceLock<watch::Sender<T>>,
}

impl<T> Default for LazyWatch<T> {
    fn default() -> Self {
        Self {
            sender: OnceLock::new(),
        }
    }
}

impl<T: Default> LazyWatch<T> {
    fn sender(&self) -> &watch::Sender<T> {
        self.sender.get_or_init(|| watch::channel(T::default()).0)
    }

    /// Changes the value in place and notifies the readers (see
    /// [`watch::Sender::send_modify`]).
    pub(crate) fn send_modify(&self, modify: impl FnOnce(&mut T)) {
        self.sender().send_modify(modify);
    }

    /// A reader that has seen the current value (see [`watch::Sender::subscribe`]).
    pub(crate) fn subscribe(&self) -> watch::Receiver<T> {
        self.sender().subscribe()
    }

    /// Whether the channel was made.
    #[cfg(test)]
    fn is_made(&self) -> bool {
        self.sender.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_at_first_use_and_keeps_what_was_sent_before_any_reader() {
        let watch = LazyWatch::<u64>::default();
        assert!(!watch.is_made());
        watch.send_modify(|n| *n += 2);
        assert!(watch.is_made());
        let mut rx = watch.subscribe();
        assert_eq!(*rx.borrow(), 2);
        assert!(!rx.has_changed().expect("the sender is alive"));
        watch.send_modify(|n| *n += 1);
        assert!(rx.has_changed().expect("the sender is alive"));
        assert_eq!(*rx.borrow_and_update(), 3);
    }

    #[test]
    fn a_first_reader_sees_the_default() {
        let watch = LazyWatch::<usize>::default();
        let rx = watch.subscribe();
        assert!(watch.is_made());
        assert_eq!(*rx.borrow(), 0);
    }
}

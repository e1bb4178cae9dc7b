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

    /// Changes the value in place when `modify` says it changed, and then notifies the
    /// readers (see [`watch::Sender::send_if_modified`]); returns what `modify` said.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "only HTTP transports report their end")
    )]
    pub(crate) fn send_if_modified(&self, modify: impl FnOnce(&mut T) -> bool) -> bool {
        self.sender().send_if_modified(modify)
    }

    /// A clone of the current value: the default while the channel is not made (reading
    /// does not make it).
    pub(crate) fn current(&self) -> T
    where
        T: Clone,
    {
        self.sender
            .get()
            .map_or_else(T::default, |sender| sender.borrow().clone())
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
    fn reading_the_value_makes_nothing_and_a_change_is_seen() {
        let watch = LazyWatch::<Option<String>>::default();
        assert_eq!(watch.current(), None);
        assert!(!watch.is_made(), "reading made the channel");
        let rx = watch.subscribe();
        assert!(!watch.send_if_modified(|_| false));
        assert!(!rx.has_changed().expect("the sender is alive"));
        assert!(watch.send_if_modified(|v| {
            *v = Some("gone".to_owned());
            true
        }));
        assert!(rx.has_changed().expect("the sender is alive"));
        assert_eq!(watch.current().as_deref(), Some("gone"));
    }

    #[test]
    fn a_first_reader_sees_the_default() {
        let watch = LazyWatch::<usize>::default();
        let rx = watch.subscribe();
        assert!(watch.is_made());
        assert_eq!(*rx.borrow(), 0);
    }
}

//! [`SpawnOnDrop`]: what to tell the server when a call's future is dropped before it
//! ended (a cancellation of its request, or of its task).

use std::future::Future;

/// What [`SpawnOnDrop`] runs when dropped armed: it spawns its future on the runtime.
type Tell = Box<dyn FnOnce(&tokio::runtime::Handle) + Send>;

/// Spawns its future when dropped while armed (the caller dropped the call, or the call
/// ended without its answer); nothing when disarmed or outside a runtime.
pub(crate) struct SpawnOnDrop(Option<Tell>);

impl SpawnOnDrop {
    /// Armed with `tell` (not run unless dropped armed).
    pub(crate) fn new(tell: impl Future<Output = ()> + Send + 'static) -> Self {
        Self::lazy(move || tell)
    }

    /// Armed with what `make` makes, made only when dropped armed: most calls end with
    /// their answer and disarm, so they never build (or allocate) the future.
    pub(crate) fn lazy<F>(make: impl FnOnce() -> F + Send + 'static) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        Self(Some(Box::new(move |runtime| {
            runtime.spawn(make());
        })))
    }

    /// Nothing is spawned on drop.
    pub(crate) fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for SpawnOnDrop {
    fn drop(&mut self) {
        if let Some(tell) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            tell(&runtime);
        }
    }
}

//! [`SpawnOnDrop`]: what to tell the server when a call's future is dropped before it
//! ended (a cancellation of its request, or of its task).

use std::future::Future;
use std::pin::Pin;

/// Spawns its future when dropped while armed (the caller dropped the call, or the call
/// ended without its answer); nothing when disarmed or outside a runtime.
pub(crate) struct SpawnOnDrop(Option<Pin<Box<dyn Future<Output = ()> + Send>>>);

impl SpawnOnDrop {
    /// Armed with `tell` (not run unless dropped armed).
    pub(crate) fn new(tell: impl Future<Output = ()> + Send + 'static) -> Self {
        Self(Some(Box::pin(tell)))
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
            runtime.spawn(tell);
        }
    }
}

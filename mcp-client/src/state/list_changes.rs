//! The change announcements of the lists a connection does not keep (prompts,
//! resources), debounced.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::LazyWatch;

/// The change announcements of a list the connection does not keep (prompts, resources):
/// each burst of `list_changed` notifications, collected for the list-changed debounce
/// like the tools' refresh, counts once.
pub(crate) struct ListChanges {
    announced: watch::Sender<u64>,
    settled: LazyWatch<u64>,
}

impl Default for ListChanges {
    fn default() -> Self {
        Self {
            announced: watch::channel(0).0,
            settled: LazyWatch::default(),
        }
    }
}

impl ListChanges {
    /// The server announced a change (either era).
    pub(crate) fn announce(&self) {
        self.announced.send_modify(|n| *n += 1);
    }

    /// Counts up once per burst of announcements, after the debounce.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.settled.subscribe()
    }

    /// [`Self::settle`] for each of `lists` on one task (a connection's prompts and
    /// resources: one task per connection instead of two).
    pub(crate) async fn settle_all(
        lists: [Arc<Self>; 2],
        debounce: Duration,
        cancel: CancellationToken,
    ) {
        let [first, second] = lists;
        tokio::join!(
            first.settle(debounce, cancel.clone()),
            second.settle(debounce, cancel)
        );
    }

    /// Collects each burst for `debounce` and counts it once, until `cancel`.
    pub(crate) async fn settle(self: Arc<Self>, debounce: Duration, cancel: CancellationToken) {
        let mut announced = self.announced.subscribe();
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                changed = announced.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
            }
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(debounce) => {}
            }
            // The rest of the burst is in this count.
            announced.mark_unchanged();
            self.settled.send_modify(|n| *n += 1);
        }
    }
}

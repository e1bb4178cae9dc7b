//! Answers kept for a time, by URL: one request for concurrent askers of the same URL
//! (single flight), failures never kept.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::time::Instant;

/// One URL's answer, being fetched or fetched at `cell`'s time.
#[derive(Debug, Default)]
struct Slot {
    cell: OnceCell<(Instant, Arc<String>)>,
}

/// Bodies by URL, each kept for `ttl` after it arrived.
#[derive(Debug)]
pub(crate) struct AnswerCache {
    ttl: Duration,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
}

impl AnswerCache {
    pub(crate) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            slots: Mutex::default(),
        }
    }

    /// The kept body of `url`, or `fetch`'s (kept when it succeeds). Concurrent callers for
    /// the same URL share one `fetch`; with a zero TTL nothing is kept.
    pub(crate) async fn get_or_fetch<E, F>(&self, url: &str, fetch: F) -> Result<Arc<String>, E>
    where
        F: Future<Output = Result<String, E>>,
    {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            let now = Instant::now();
            slots.retain(|_, slot| {
                slot.cell
                    .get()
                    .is_none_or(|(at, _)| now.duration_since(*at) < self.ttl)
            });
            Arc::clone(slots.entry(url.to_owned()).or_default())
        };
        let (_, body) = slot
            .cell
            .get_or_try_init(|| async { Ok((Instant::now(), Arc::new(fetch.await?))) })
            .await?;
        Ok(Arc::clone(body))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn answers_are_kept_for_the_ttl_and_failures_are_not() {
        let cache = AnswerCache::new(Duration::from_secs(60));
        let calls = AtomicUsize::new(0);
        let fetch = || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ()>("body".to_owned())
        };
        assert_eq!(*cache.get_or_fetch("a", fetch()).await.unwrap(), "body");
        assert_eq!(*cache.get_or_fetch("a", fetch()).await.unwrap(), "body");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        tokio::time::advance(Duration::from_secs(61)).await;
        cache.get_or_fetch("a", fetch()).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);

        assert!(
            cache
                .get_or_fetch("b", async { Err::<String, _>(()) })
                .await
                .is_err()
        );
        cache.get_or_fetch("b", fetch()).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3, "the failure was not kept");
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_askers_share_one_fetch() {
        let cache = AnswerCache::new(Duration::from_secs(60));
        let calls = AtomicUsize::new(0);
        let fetch = || async {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok::<_, ()>("body".to_owned())
        };
        let (a, b) = tokio::join!(
            cache.get_or_fetch("a", fetch()),
            cache.get_or_fetch("a", fetch())
        );
        assert_eq!((a.unwrap().as_str(), b.unwrap().as_str()), ("body", "body"));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}

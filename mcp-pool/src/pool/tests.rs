//! Unit tests of the pool with an in-memory connection and paused time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use pretty_assertions::assert_eq;
use tokio::sync::Notify;

use super::*;

#[derive(Default)]
struct Probe {
    factory_calls: AtomicUsize,
    shutdowns: AtomicUsize,
}

struct Fake {
    id: usize,
    alive: AtomicBool,
    probe: Arc<Probe>,
}

impl PooledConnection for Fake {
    fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    async fn shutdown(&self) {
        self.alive.store(false, Ordering::SeqCst);
        self.probe.shutdowns.fetch_add(1, Ordering::SeqCst);
    }
}

type Factory = Box<dyn FnOnce() -> futures_like::BoxFut + Send>;

mod futures_like {
    use std::future::Future;
    use std::pin::Pin;

    pub(super) type BoxFut =
        Pin<Box<dyn Future<Output = Result<super::Fake, std::io::Error>> + Send>>;
}

/// A factory that succeeds at once.
fn ok(probe: &Arc<Probe>) -> Factory {
    gated(probe, None)
}

/// A factory that waits for `gate` (if any) and then succeeds.
fn gated(probe: &Arc<Probe>, gate: Option<Arc<Notify>>) -> Factory {
    let probe = probe.clone();
    Box::new(move || {
        let id = probe.factory_calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if let Some(gate) = gate {
                gate.notified().await;
            }
            Ok(Fake {
                id,
                alive: AtomicBool::new(true),
                probe,
            })
        })
    })
}

fn failing(probe: &Arc<Probe>, message: &'static str) -> Factory {
    let probe = probe.clone();
    Box::new(move || {
        probe.factory_calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { Err(std::io::Error::other(message)) })
    })
}

fn pool(keep_alive: Duration) -> Pool<&'static str, Fake> {
    Pool::new(PoolConfig::new().with_idle_keep_alive(keep_alive))
}

/// Lets spawned tasks (shutdowns, timers) run.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_concurrent_acquirers_share_one_start() {
    let pool = pool(Duration::ZERO);
    let probe = Arc::new(Probe::default());
    let gate = Arc::new(Notify::new());
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..100 {
        let pool = pool.clone();
        let factory = gated(&probe, Some(gate.clone()));
        tasks.spawn(async move { pool.acquire("k", factory).await });
    }
    // Wait until the single start is running, then let it finish.
    while probe.factory_calls.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    gate.notify_one();
    let leases: Vec<_> = tasks
        .join_all()
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(probe.factory_calls.load(Ordering::SeqCst), 1);
    assert!(
        leases
            .iter()
            .all(|l| Arc::ptr_eq(l.connection(), leases[0].connection()))
    );
    assert_eq!(pool.stats().leases.get("k"), Some(&100));
    assert_eq!(pool.stats().starts, 1);
    drop(leases);
    pool.shutdown().await;
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 1);
    assert_eq!(pool.stats().live_connections, 0);
}

#[tokio::test]
async fn last_release_shuts_down_without_keep_alive() {
    let pool = pool(Duration::ZERO);
    let probe = Arc::new(Probe::default());
    let a = pool.acquire("k", ok(&probe)).await.unwrap();
    let b = pool.acquire("k", ok(&probe)).await.unwrap();
    assert_eq!(
        pool.status(&"k"),
        KeyStatus::Ready {
            generation: a.generation(),
            leases: 2
        }
    );
    drop(a);
    settle().await;
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 0);
    drop(b);
    settle().await;
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 1);
    assert_eq!(pool.status(&"k"), KeyStatus::Absent);
    assert_eq!(pool.stats().live_connections, 0);
    // A new acquisition starts a new generation.
    let c = pool.acquire("k", ok(&probe)).await.unwrap();
    assert_eq!(c.id, 1);
    assert_eq!(probe.factory_calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn keep_alive_revives_then_expires() {
    let keep = Duration::from_secs(10);
    let pool = pool(keep);
    let probe = Arc::new(Probe::default());
    let first = pool.acquire("k", ok(&probe)).await.unwrap();
    let generation = first.generation();
    drop(first);
    settle().await;
    assert_eq!(pool.status(&"k"), KeyStatus::Idle { generation });

    tokio::time::advance(Duration::from_secs(9)).await;
    settle().await;
    let revived = pool.acquire("k", ok(&probe)).await.unwrap();
    assert_eq!(revived.generation(), generation);
    assert_eq!(probe.factory_calls.load(Ordering::SeqCst), 1);

    // The old timer must not fire for the revived connection.
    tokio::time::advance(Duration::from_secs(5)).await;
    settle().await;
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 0);

    drop(revived);
    tokio::time::advance(Duration::from_secs(9)).await;
    settle().await;
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 0);
    tokio::time::advance(Duration::from_secs(2)).await;
    settle().await;
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 1);
    assert_eq!(pool.status(&"k"), KeyStatus::Absent);
}

#[tokio::test]
async fn replace_moves_new_acquirers_to_a_new_generation() {
    let pool = pool(Duration::ZERO);
    let probe = Arc::new(Probe::default());
    let old = pool.acquire("k", ok(&probe)).await.unwrap();
    assert!(pool.replace(&"k"));
    assert!(!pool.replace(&"k"));
    let new = pool.acquire("k", ok(&probe)).await.unwrap();
    assert!(new.generation() > old.generation());
    assert_eq!((old.id, new.id), (0, 1));
    assert_eq!(pool.stats().leases.get("k"), Some(&2));
    assert_eq!(pool.stats().live_connections, 2);
    // The old generation lives until its last lease is gone.
    settle().await;
    assert!(old.is_alive());
    drop(old);
    settle().await;
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 1);
    assert!(new.is_alive());
    assert_eq!(pool.stats().live_connections, 1);
}

#[tokio::test]
async fn a_dead_connection_is_never_handed_out() {
    // No crash-loop backoff, so the next acquisition may start at once.
    let pool: Pool<&str, Fake> =
        Pool::new(PoolConfig::new().with_backoff(Duration::ZERO, Duration::ZERO));
    let probe = Arc::new(Probe::default());
    let holder = pool.acquire("k", ok(&probe)).await.unwrap();
    holder.alive.store(false, Ordering::SeqCst); // crashed mid-use
    assert_eq!(
        pool.status(&"k"),
        KeyStatus::Dead {
            generation: holder.generation(),
            leases: 1
        }
    );
    let fresh = pool.acquire("k", ok(&probe)).await.unwrap();
    assert!(fresh.is_alive());
    assert_ne!(fresh.generation(), holder.generation());
    drop(holder);
    settle().await;
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 1);
    assert_eq!(pool.stats().live_connections, 1);
    assert_eq!(pool.stats().crashes, 1);
}

#[tokio::test(start_paused = true)]
async fn a_death_is_counted_once_whoever_reports_it() {
    let pool: Pool<&str, Fake> =
        Pool::new(PoolConfig::new().with_backoff(Duration::from_secs(1), Duration::from_secs(8)));
    let probe = Arc::new(Probe::default());
    let a = pool.acquire("k", ok(&probe)).await.unwrap();
    let b = pool.acquire("k", ok(&probe)).await.unwrap();
    a.alive.store(false, Ordering::SeqCst);
    // Two sessions notice the same death: one failure.
    assert!(pool.report_dead(&"k", a.generation()));
    assert!(!pool.report_dead(&"k", b.generation()));
    assert!(matches!(
        pool.status(&"k"),
        KeyStatus::CrashLoop { failures: 1, .. }
    ));
    assert_eq!(pool.stats().crashes, 1);

    // One death: the next acquisition starts a new generation at once; it dies young,
    // and an acquirer is the first to notice: two in a row, a crash loop.
    let c = pool.acquire("k", ok(&probe)).await.unwrap();
    assert_ne!(c.generation(), a.generation());
    c.alive.store(false, Ordering::SeqCst);
    let err = pool.acquire("k", ok(&probe)).await.unwrap_err();
    assert!(err.is_crash_loop(), "{err}");
    assert!(!pool.report_dead(&"k", c.generation()), "already counted");
    match pool.status(&"k") {
        KeyStatus::CrashLoop {
            failures, retry_in, ..
        } => assert_eq!((failures, retry_in), (2, Duration::from_secs(1))),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(pool.stats().crashes, 2);

    // The backoff can be lifted (the cause went away); the count stays.
    assert!(pool.clear_backoff(&"k"));
    let d = pool.acquire("k", ok(&probe)).await.unwrap();
    // A long, healthy life before the next death starts a new count.
    tokio::time::advance(Duration::from_secs(9)).await;
    d.alive.store(false, Ordering::SeqCst);
    assert!(pool.report_dead(&"k", d.generation()));
    assert!(matches!(
        pool.status(&"k"),
        KeyStatus::CrashLoop { failures: 1, .. }
    ));
    drop((a, b, c, d));
    pool.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn failed_starts_back_off_and_recover() {
    let pool: Pool<&str, Fake> =
        Pool::new(PoolConfig::new().with_backoff(Duration::from_secs(1), Duration::from_secs(3)));
    let probe = Arc::new(Probe::default());
    let err = pool
        .acquire("k", failing(&probe, "boom"))
        .await
        .unwrap_err();
    assert!(err.is_start_failed(), "{err}");
    assert_eq!(std::error::Error::source(&err).unwrap().to_string(), "boom");
    // One failure: the next acquisition retries at once.
    assert_eq!(
        pool.status(&"k"),
        KeyStatus::CrashLoop {
            failures: 1,
            retry_in: Duration::ZERO,
            last_error: "boom".into()
        }
    );
    let err = pool
        .acquire("k", failing(&probe, "boom"))
        .await
        .unwrap_err();
    assert!(err.is_start_failed(), "{err}");
    assert_eq!(probe.factory_calls.load(Ordering::SeqCst), 2);

    // Two in a row: a crash loop. Within the backoff: fail fast, no factory call.
    let err = pool
        .acquire("k", failing(&probe, "boom"))
        .await
        .unwrap_err();
    assert!(err.is_crash_loop(), "{err}");
    assert_eq!(probe.factory_calls.load(Ordering::SeqCst), 2);
    assert_eq!(
        pool.status(&"k"),
        KeyStatus::CrashLoop {
            failures: 2,
            retry_in: Duration::from_secs(1),
            last_error: "boom".into()
        }
    );

    // Backoff doubles, capped at 3 s.
    for (failures, wait) in [(3, 2), (4, 3), (5, 3)] {
        tokio::time::advance(pool_retry_in(&pool)).await;
        let err = pool
            .acquire("k", failing(&probe, "boom"))
            .await
            .unwrap_err();
        assert!(err.is_start_failed());
        match pool.status(&"k") {
            KeyStatus::CrashLoop {
                failures: f,
                retry_in,
                ..
            } => assert_eq!((f, retry_in), (failures, Duration::from_secs(wait))),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(pool.stats().failures, 5);

    tokio::time::advance(Duration::from_secs(3)).await;
    let lease = pool.acquire("k", ok(&probe)).await.unwrap();
    assert!(matches!(
        pool.status(&"k"),
        KeyStatus::Ready { leases: 1, .. }
    ));
    drop(lease);
    settle().await;
    assert_eq!(pool.status(&"k"), KeyStatus::Absent);
}

fn pool_retry_in(pool: &Pool<&'static str, Fake>) -> Duration {
    match pool.status(&"k") {
        KeyStatus::CrashLoop { retry_in, .. } => retry_in,
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn waiters_share_a_failed_start() {
    let pool = pool(Duration::ZERO);
    let probe = Arc::new(Probe::default());
    let gate = Arc::new(Notify::new());
    let slow_fail: Factory = {
        let gate = gate.clone();
        let probe = probe.clone();
        Box::new(move || {
            probe.factory_calls.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                gate.notified().await;
                Err(std::io::Error::other("nope"))
            })
        })
    };
    let first = tokio::spawn({
        let pool = pool.clone();
        async move { pool.acquire("k", slow_fail).await }
    });
    settle().await;
    let second = tokio::spawn({
        let pool = pool.clone();
        let factory = ok(&probe);
        async move { pool.acquire("k", factory).await }
    });
    settle().await;
    gate.notify_one();
    assert!(first.await.unwrap().unwrap_err().is_start_failed());
    assert!(second.await.unwrap().unwrap_err().is_start_failed());
    assert_eq!(probe.factory_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn cancelled_waiters_leave_no_lease() {
    let pool = pool(Duration::ZERO);
    let probe = Arc::new(Probe::default());
    let gate = Arc::new(Notify::new());
    let waiter = tokio::spawn({
        let pool = pool.clone();
        let factory = gated(&probe, Some(gate.clone()));
        async move { pool.acquire("k", factory).await }
    });
    settle().await;
    assert!(matches!(pool.status(&"k"), KeyStatus::Starting { .. }));
    waiter.abort();
    assert!(waiter.await.unwrap_err().is_cancelled());
    // The start goes on without anyone waiting; nobody holds it, so it is shut down.
    gate.notify_one();
    settle().await;
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 1);
    assert_eq!(pool.status(&"k"), KeyStatus::Absent);
    assert_eq!(pool.stats().live_connections, 0);
}

#[tokio::test]
async fn shutdown_cancels_starts_and_closes_everything() {
    let pool = pool(Duration::from_secs(60));
    let probe = Arc::new(Probe::default());
    let held = pool.acquire("a", ok(&probe)).await.unwrap();
    let idle = pool.acquire("b", ok(&probe)).await.unwrap();
    drop(idle);
    let never = Arc::new(Notify::new());
    let starting = tokio::spawn({
        let pool = pool.clone();
        let factory = gated(&probe, Some(never));
        async move { pool.acquire("c", factory).await }
    });
    settle().await;
    pool.shutdown().await;
    assert!(starting.await.unwrap().unwrap_err().is_closed());
    assert_eq!(probe.shutdowns.load(Ordering::SeqCst), 2);
    assert!(!held.is_alive());
    assert_eq!(pool.stats().live_connections, 0);
    let err = pool.acquire("a", ok(&probe)).await.unwrap_err();
    assert!(err.is_closed());
    assert_eq!(
        err.to_string(),
        "cannot acquire \"a\": the connection pool is shut down"
    );
    drop(held); // releasing after shutdown is harmless
    pool.shutdown().await; // idempotent
}

#[tokio::test]
async fn a_panicking_factory_is_a_failed_start() {
    let pool = pool(Duration::ZERO);
    let factory = || async {
        if true {
            panic!("factory exploded");
        }
        Err::<Fake, std::io::Error>(std::io::Error::other("unreachable"))
    };
    let err = pool.acquire("k", factory).await.unwrap_err();
    assert!(err.is_start_failed(), "{err}");
    assert!(pool.status(&"k").is_crash_loop());
}

#[tokio::test]
async fn stats_list_leases_per_key_in_order() {
    let pool = pool(Duration::ZERO);
    let probe = Arc::new(Probe::default());
    let _b = pool.acquire("b", ok(&probe)).await.unwrap();
    let _a1 = pool.acquire("a", ok(&probe)).await.unwrap();
    let _a2 = pool.acquire("a", ok(&probe)).await.unwrap();
    let stats = pool.stats();
    assert_eq!(
        stats.leases.into_iter().collect::<Vec<_>>(),
        vec![("a", 2), ("b", 1)]
    );
    assert_eq!(stats.starts, 2);
    assert_eq!(stats.live_connections, 2);
    let statuses: Vec<_> = pool.statuses().into_keys().collect();
    assert_eq!(statuses, ["a", "b"]);
}

/// A start's work is gone once the start finished: the factory's future and everything it
/// captured are dropped before the lease is handed out, and no task of the start is left
/// holding them (a pooled connection lives for hours; its start should cost nothing then).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_of_a_finished_start_outlives_it() {
    let pool = pool(Duration::from_secs(3600));
    let captured = Arc::new(vec![0u8; 4096]);
    let factory: Factory = Box::new({
        let captured = captured.clone();
        move || {
            Box::pin(async move {
                tokio::task::yield_now().await;
                let id = captured.len();
                Ok(Fake {
                    id,
                    alive: AtomicBool::new(true),
                    probe: Arc::default(),
                })
            })
        }
    });
    let lease = pool.acquire("k", factory).await.unwrap();
    assert_eq!(lease.connection().id, 4096);
    assert_eq!(
        Arc::strong_count(&captured),
        1,
        "the start's captured state outlived it"
    );
    // The task that joined the start ends right after it handed out the outcome. It runs
    // on the other worker thread, which a loaded machine may not schedule for a while: wait
    // by the clock (a bounded number of yields passed in CI before that thread ran).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while pool.inner.running_tasks() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(
        pool.inner.running_tasks(),
        0,
        "a start task is still running"
    );
    drop(lease);
    pool.shutdown().await;
    assert_eq!(pool.stats().live_connections, 0);
}

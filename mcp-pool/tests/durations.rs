//! Configured durations of any size, up to `Duration::MAX`, never panic the pool: a
//! keep-alive or backoff too large for the clock means "never".

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::time::Duration;

use mcp_pool::{Pool, PoolConfig, PooledConnection};
use proptest::prelude::*;

struct Conn;

impl PooledConnection for Conn {
    fn is_alive(&self) -> bool {
        true
    }

    async fn shutdown(&self) {}
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Durations from zero to `Duration::MAX`, the extremes included often.
fn any_duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
        (u64::MAX / 2..=u64::MAX).prop_map(Duration::from_secs),
        (0u64..10_000).prop_map(Duration::from_millis),
    ]
}

/// Releases the last lease under `keep`, then checks the pool still serves the key.
async fn release_and_reacquire(keep: Duration) {
    let pool: Pool<&str, Conn> = Pool::new(PoolConfig::new().with_idle_keep_alive(keep));
    let lease = pool
        .acquire("k", || async { Ok::<_, std::io::Error>(Conn) })
        .await
        .unwrap();
    drop(lease);
    let again = pool
        .acquire("k", || async { Ok::<_, std::io::Error>(Conn) })
        .await
        .unwrap();
    drop(again);
    pool.shutdown().await;
}

/// Two failed starts of one key under the backoff (`initial`, `max`): each is reported as
/// the failure it is (never as a shut-down pool), and another key still starts.
async fn failing_twice(initial: Duration, max: Duration) {
    let pool: Pool<&str, Conn> = Pool::new(PoolConfig::new().with_backoff(initial, max));
    let broken = || async { Err::<Conn, _>(std::io::Error::other("no such binary")) };
    let first = pool.acquire("broken", broken).await.unwrap_err();
    assert!(first.is_start_failed(), "{first}");
    let second = pool.acquire("broken", broken).await.unwrap_err();
    assert!(second.is_start_failed(), "{second}");
    let third = pool.acquire("broken", broken).await.unwrap_err();
    assert!(
        third.is_retryable() && !third.is_closed(),
        "after two failures: {third}"
    );
    let other = pool
        .acquire("other", || async { Ok::<_, std::io::Error>(Conn) })
        .await
        .unwrap();
    drop(other);
    pool.shutdown().await;
}

#[test]
fn an_endless_keep_alive_releases_without_a_panic() {
    runtime().block_on(release_and_reacquire(Duration::MAX));
}

#[test]
fn an_endless_backoff_is_a_crash_loop_not_a_closed_pool() {
    runtime().block_on(failing_twice(Duration::MAX, Duration::MAX));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_keep_alive_releases_without_a_panic(keep in any_duration()) {
        runtime().block_on(release_and_reacquire(keep));
    }

    #[test]
    fn any_backoff_keeps_the_pool_serving(initial in any_duration(), max in any_duration()) {
        runtime().block_on(failing_twice(initial, max));
    }
}

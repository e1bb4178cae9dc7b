//! A failed acquisition comes back in the caller's types: its key as it gave it, and its
//! factory's error (one shared value for every acquirer that waited for the start), also
//! through a crash loop; a pool that names no error type boxes any error.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::sync::Arc;
use std::time::Duration;

use mcp_pool::{AnyError, Failure, Pool, PoolConfig, PoolError, PooledConnection};
use pretty_assertions::assert_eq;
use tokio::sync::Notify;

struct Conn;

impl PooledConnection for Conn {
    fn is_alive(&self) -> bool {
        true
    }

    async fn shutdown(&self) {}
}

/// A caller's key: the pool hands it back as it is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct ServerId {
    name: &'static str,
    port: u16,
}

/// A caller's error with something to branch on.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("no listener on port {port}")]
struct Refused {
    port: u16,
}

#[tokio::test]
async fn waiters_of_a_failed_start_share_the_factorys_own_error() {
    let pool: Pool<ServerId, Conn, Refused> =
        Pool::new(PoolConfig::new().with_backoff(Duration::from_secs(60), Duration::from_secs(60)));
    let id = ServerId {
        name: "db",
        port: 5432,
    };
    let gate = Arc::new(Notify::new());
    let factory = |gate: Arc<Notify>| {
        move || async move {
            gate.notified().await;
            Err::<Conn, _>(Refused { port: 5432 })
        }
    };
    let first = tokio::spawn({
        let (pool, id, gate) = (pool.clone(), id.clone(), gate.clone());
        async move { pool.acquire(id, factory(gate)).await }
    });
    // The second acquirer joins the start in flight (no factory of its own runs).
    while !matches!(pool.status(&id), mcp_pool::KeyStatus::Starting { .. }) {
        tokio::task::yield_now().await;
    }
    let second = tokio::spawn({
        let (pool, id) = (pool.clone(), id.clone());
        async move { pool.acquire(id, || async { Ok::<_, Refused>(Conn) }).await }
    });
    // One thread: the second acquirer runs (and joins the start) on the first yield.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    gate.notify_one();
    let (first, second) = (
        first.await.unwrap().unwrap_err(),
        second.await.unwrap().unwrap_err(),
    );

    let (a, b) = (
        first.factory_error().unwrap(),
        second.factory_error().unwrap(),
    );
    assert!(Arc::ptr_eq(a, b), "one error, shared");
    assert_eq!(**a, Refused { port: 5432 });
    assert_eq!(first.key(), &id);
    assert!(matches!(
        &first,
        PoolError::StartFailed { key, failure: Failure::Factory(_), .. } if key == &id
    ));
    // The source is the caller's error itself.
    let source = std::error::Error::source(&first).unwrap();
    assert_eq!(
        source.downcast_ref::<Refused>(),
        Some(&Refused { port: 5432 })
    );
    assert_eq!(
        first.chain().to_string(),
        r#"starting ServerId { name: "db", port: 5432 } (generation 1) failed: no listener on port 5432"#
    );

    // Two failures in a row: a crash loop, which still holds the caller's error.
    let again = pool
        .acquire(id.clone(), || async {
            Err::<Conn, _>(Refused { port: 5433 })
        })
        .await
        .unwrap_err();
    assert!(again.is_start_failed(), "{again}");
    let looping = pool
        .acquire(id.clone(), || async { Ok::<_, Refused>(Conn) })
        .await
        .unwrap_err();
    match &looping {
        PoolError::CrashLoop {
            key,
            failures: 2,
            last: Failure::Factory(last),
            ..
        } => {
            assert_eq!(key, &id);
            assert_eq!(**last, Refused { port: 5433 });
        }
        other => panic!("expected a crash loop, got {other:?}"),
    }
    // Each layer once: the pool's sentence, then the caller's.
    assert_eq!(
        looping.chain().to_string(),
        r#"ServerId { name: "db", port: 5432 } is in a crash loop (2 failures in a row, next retry in 60.0s): no listener on port 5433"#
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn a_pool_without_an_error_type_boxes_any_error() {
    let pool: Pool<String, Conn> = Pool::new(PoolConfig::new());
    let err = pool
        .acquire("fs".to_owned(), || async {
            Err::<Conn, _>(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such binary",
            ))
        })
        .await
        .unwrap_err();
    let boxed: &Arc<AnyError> = err.factory_error().unwrap();
    let io = boxed.downcast_ref::<std::io::Error>().unwrap();
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(err.key(), "fs");
    // A boxed error from the factory converts too, and the pool's error boxes again.
    let err = pool
        .acquire("other".to_owned(), || async {
            Err::<Conn, Box<dyn std::error::Error + Send + Sync>>("refused".into())
        })
        .await
        .unwrap_err();
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
    assert_eq!(
        mcp_pool::ErrorChain(&*boxed).to_string(),
        r#"starting "other" (generation 2) failed: refused"#
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn a_panicking_factory_fails_with_its_message() {
    let pool: Pool<&str, Conn, Refused> = Pool::new(PoolConfig::new());
    let err = pool
        .acquire("k", || async {
            if true {
                panic!("factory exploded");
            }
            Err::<Conn, Refused>(Refused { port: 1 })
        })
        .await
        .unwrap_err();
    assert!(err.factory_error().is_none());
    assert_eq!(
        err.chain().to_string(),
        r#"starting "k" (generation 1) failed: the start panicked: factory exploded"#
    );
    pool.shutdown().await;
}

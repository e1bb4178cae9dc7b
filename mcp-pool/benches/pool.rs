//! Acquire + release a lease on a warm shared connection.
//!
//! The connection is kept warm by other leases (1, and 100 for "100 sessions on one
//! server"), so every iteration takes the pool's fast path: lock, count, hand out the
//! `Arc`, and give it back on drop. The connection itself is an in-memory stand-in:
//! the pool never touches a warm connection beyond `is_alive()`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark fixtures are known to be valid"
)]

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_pool::{Pool, PoolConfig, PooledConnection};

struct Warm(AtomicBool);

impl PooledConnection for Warm {
    fn is_alive(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    async fn shutdown(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

async fn start() -> Result<Warm, std::io::Error> {
    Ok(Warm(AtomicBool::new(true)))
}

fn acquire_release(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for held in [1usize, 100] {
        let pool: Pool<String, Warm> = Pool::new(PoolConfig::new());
        let key = "server@fingerprint".to_owned();
        let holders: Vec<_> = runtime.block_on(async {
            let mut leases = Vec::new();
            for _ in 0..held {
                leases.push(pool.acquire(key.clone(), start).await.unwrap());
            }
            leases
        });
        c.bench_function(&format!("pool/acquire_release_warm/{held}_sessions"), |b| {
            b.to_async(&runtime).iter(|| async {
                let lease = pool.acquire(black_box(key.clone()), start).await.unwrap();
                black_box(lease.generation());
            });
        });
        assert_eq!(pool.stats().starts, 1, "the warm key must never restart");
        drop(holders);
        runtime.block_on(pool.shutdown());
    }
}

criterion_group!(benches, acquire_release);
criterion_main!(benches);

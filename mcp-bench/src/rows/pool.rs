//! Acquire + release of a lease on a warm `mcp_pool::Pool` connection (an in-memory
//! stand-in: the pool never touches a warm connection beyond `is_alive()`).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use mcp_pool::{Pool, PoolConfig, PooledConnection};

use crate::stats::median;
use crate::table::{Row, Unit};
use crate::{Result, Settings, fail};

struct Warm(AtomicBool);

impl PooledConnection for Warm {
    fn is_alive(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    async fn shutdown(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

async fn start() -> std::result::Result<Warm, std::io::Error> {
    Ok(Warm(AtomicBool::new(true)))
}

/// The median over batches of the mean acquire + release time.
pub(crate) async fn acquire_release(s: &Settings) -> Result<Vec<Row>> {
    let pool: Pool<String, Warm> = Pool::new(PoolConfig::new());
    let key = "server@fingerprint".to_owned();
    let holder = pool.acquire(key.clone(), start).await?;
    let mut batches = Vec::new();
    for batch in 0..(s.pool_batches + s.pool_batches / 10) {
        let t = Instant::now();
        for _ in 0..s.pool_batch_size {
            let lease = pool.acquire(black_box(key.clone()), start).await?;
            black_box(lease.generation());
        }
        // The first tenth is warm-up.
        if batch >= s.pool_batches / 10 {
            batches.push(t.elapsed().as_secs_f64() / s.pool_batch_size as f64);
        }
    }
    let starts = pool.stats().starts;
    drop(holder);
    pool.shutdown().await;
    if starts != 1 {
        return Err(fail(format!("the warm key restarted: {starts} starts")));
    }
    let p50 = median(&batches);
    Ok(vec![
        Row::absolute(
            "pool: acquire + release a warm lease, p50",
            Unit::Seconds,
            p50,
            "≤ 20 µs",
            p50 <= 20e-6,
        )
        .with_note(format!(
            "median of {} batches of {}",
            batches.len(),
            s.pool_batch_size
        )),
    ])
}

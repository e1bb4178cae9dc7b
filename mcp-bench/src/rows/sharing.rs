//! Sharing: 2 and 8 sets over one `ServerPool` (processes started, call latency versus one
//! set alone), and 100 sets on one server.

use std::time::Instant;

use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, ServerPool};

use crate::fixture::Fixture;
use crate::rows::calls::{ready_set, sides};
use crate::stats::median;
use crate::table::{Row, Unit};
use crate::{Result, Settings, procs};

/// Starts `sessions` sets of one server over one new pool.
async fn shared_sets(fx: &Fixture, sessions: usize) -> Result<(ServerPool, Vec<ConnectionSet>)> {
    let pool = ServerPool::new();
    let mut sets = Vec::new();
    for _ in 0..sessions {
        match ready_set(
            fx,
            1,
            ConnectionSetOptions::new().with_shared_pool(pool.clone()),
        )
        .await
        {
            Ok(set) => sets.push(set),
            Err(e) => {
                shutdown(&pool, &sets).await;
                return Err(e);
            }
        }
    }
    Ok((pool, sets))
}

async fn shutdown(pool: &ServerPool, sets: &[ConnectionSet]) {
    for set in sets {
        set.shutdown().await;
    }
    pool.shutdown().await;
}

/// Rows for 2 and 8 sessions: processes started, and the p50 call latency from one of the
/// sessions (taking turns) versus one set alone on its own process.
pub(crate) async fn sharing(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for sessions in [2, 8] {
        let alone = ready_set(fx, 1, ConnectionSetOptions::new()).await?;
        let (pool, sets) = match shared_sets(fx, sessions).await {
            Ok(shared) => shared,
            Err(e) => {
                alone.shutdown().await;
                return Err(e);
            }
        };
        let starts = pool.stats().starts;
        let result = latency(&alone, &sets, s).await;
        alone.shutdown().await;
        shutdown(&pool, &sets).await;
        let (a, b) = result?;
        rows.push(
            Row::absolute(
                format!("sharing: processes for {sessions} sessions on 1 server"),
                Unit::Processes,
                starts as f64,
                "1 process",
                starts == 1,
            )
            .with_note("`ServerPool::stats().starts`"),
        );
        rows.push(
            Row::versus(
                format!("sharing: call p50, one of {sessions} sessions"),
                Unit::Seconds,
                median(&a),
                median(&b),
                "one session alone",
                "≤ 1.1× alone",
                |_, r| r <= 1.1,
            )
            .with_note(format!("{} calls each side", a.len())),
        );
    }
    Ok(rows)
}

async fn latency(
    alone: &ConnectionSet,
    sets: &[ConnectionSet],
    s: &Settings,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let key = &Fixture::keys(1)?[0];
    for _ in 0..s.warmup_calls {
        alone
            .call_tool(key, "echo", None, CallOptions::new())
            .await?;
        for set in sets {
            set.call_tool(key, "echo", None, CallOptions::new()).await?;
        }
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut turn = 0;
    for round in 0..s.rounds_calls {
        for side in sides(round) {
            for _ in 0..s.calls_per_round {
                let set = if side {
                    alone
                } else {
                    turn = (turn + 1) % sets.len();
                    &sets[turn]
                };
                let t = Instant::now();
                set.call_tool(key, "echo", None, CallOptions::new()).await?;
                let took = t.elapsed().as_secs_f64();
                if side { b.push(took) } else { a.push(took) }
            }
        }
    }
    Ok((a, b))
}

/// 100 sets on one server over one pool: processes started (pool counter) and processes
/// alive (found in `/proc`).
pub(crate) async fn hundred_sessions(fx: &Fixture) -> Result<Vec<Row>> {
    let (pool, sets) = shared_sets(fx, 100).await?;
    let starts = pool.stats().starts;
    let alive = procs::with_marker(fx.marker()).len();
    shutdown(&pool, &sets).await;
    Ok(vec![
        Row::absolute(
            "pool: 100 sessions on one server",
            Unit::Processes,
            starts as f64,
            "exactly 1 process",
            starts == 1 && alive == 1,
        )
        .with_note(format!("{starts} started, {alive} alive in /proc")),
    ])
}

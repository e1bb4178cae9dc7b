//! Startup fan-out (32 servers: set versus 32 bare clients started concurrently) and warm
//! start (32 servers' tools from the persisted cache, no process, versus the cold start),
//! and startup with tool pins versus without.

use std::path::Path;
use std::time::{Duration, Instant};

use mcp_connections::{ConnectionSet, ConnectionSetOptions, ServerPool, ToolCache, ToolPins};

use crate::fixture::{Fixture, cancel_all};
use crate::rows::calls::sides;
use crate::stats::{SETTLE, median};
use crate::table::{Row, Unit};
use crate::{Result, Settings, fail};

const SERVERS: usize = 32;

/// Starts 32 servers through a set, timed until all are ready and their tools listed; the
/// set is shut down untimed.
async fn cold_set(catalog: &mcp_catalog::ResolvedCatalog) -> Result<f64> {
    cold_set_pinned(catalog, None).await
}

/// [`cold_set`], with tool pins persisted in `pins` when given: the pin file is loaded
/// and every listing checked against it inside the timed span, as a new host does.
async fn cold_set_pinned(
    catalog: &mcp_catalog::ResolvedCatalog,
    pins: Option<&Path>,
) -> Result<f64> {
    let t = Instant::now();
    let mut options = ConnectionSetOptions::new();
    if let Some(dir) = pins {
        options = options.with_tool_pins(std::sync::Arc::new(ToolPins::persisted(dir)));
    }
    let set = ConnectionSet::start(catalog, options);
    let ready = set.wait_startup().await.ready();
    let tools = set.tools().await.len();
    let took = t.elapsed().as_secs_f64();
    set.shutdown().await;
    if ready != SERVERS || tools != SERVERS {
        return Err(fail(format!(
            "cold start: {ready} ready, {tools} tools of {SERVERS}"
        )));
    }
    Ok(took)
}

/// Starts 32 bare clients concurrently, timed until all are initialized and their tools
/// listed (what "ready" means for the set); cancelled untimed.
async fn cold_bare(fx: &Fixture) -> Result<f64> {
    let t = Instant::now();
    let started = futures::future::join_all((0..SERVERS).map(|_| async {
        let bare = fx.bare().await?;
        match bare.peer().list_all_tools().await {
            Ok(tools) => Ok((bare, tools.len())),
            Err(e) => {
                cancel_all(vec![bare]).await;
                Err(crate::Error::from(e))
            }
        }
    }))
    .await;
    let took = t.elapsed().as_secs_f64();
    let mut clients = Vec::new();
    let mut first_error = None;
    for outcome in started {
        match outcome {
            Ok((bare, 1)) => clients.push(bare),
            Ok((bare, n)) => {
                clients.push(bare);
                first_error.get_or_insert(fail(format!("a bare client listed {n} tools")));
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    cancel_all(clients).await;
    first_error.map_or(Ok(took), Err)
}

/// Startup fan-out: set versus bare clients, interleaved.
pub(crate) async fn fan_out(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let catalog = fx.catalog(SERVERS, false)?;
    // Warm-up: page cache, the reaper helper, the runtime's threads.
    cold_set(&catalog).await?;
    cold_bare(fx).await?;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..s.rounds_startup {
        for side in sides(round) {
            tokio::time::sleep(SETTLE).await;
            if side {
                b.push(cold_bare(fx).await?);
            } else {
                a.push(cold_set(&catalog).await?);
            }
        }
    }
    Ok(vec![
        Row::versus(
            "startup fan-out: 32 servers to all ready",
            Unit::Seconds,
            median(&a),
            median(&b),
            "32 bare rmcp clients",
            "≤ 1.1× bare",
            |_, r| r <= 1.1,
        )
        .with_note(format!(
            "initialize + tools/list; median of {} interleaved rounds",
            a.len()
        )),
    ])
}

/// Startup of 32 servers with tool pins (already pinned: each start loads the pin file and
/// checks all 32 listings) versus without, interleaved.
pub(crate) async fn pinned(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let catalog = fx.catalog(SERVERS, false)?;
    let dir = fx.join("pins");
    // Warm-up, which also pins every server's tools (trust on first use).
    cold_set_pinned(&catalog, Some(&dir)).await?;
    cold_set(&catalog).await?;
    if !dir.join(mcp_connections::TOOL_PINS_FILE).is_file() {
        return Err(fail("startup with pins: no pin file was written"));
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..s.rounds_startup {
        for side in sides(round) {
            tokio::time::sleep(SETTLE).await;
            if side {
                b.push(cold_set(&catalog).await?);
            } else {
                a.push(cold_set_pinned(&catalog, Some(&dir)).await?);
            }
        }
    }
    Ok(vec![
        Row::versus(
            "startup with tool pins: 32 servers to all ready",
            Unit::Seconds,
            median(&a),
            median(&b),
            "the same set without pins",
            "≤ 1.05× without",
            |_, r| r <= 1.05,
        )
        .with_note(format!(
            "pin file loaded and 32 listings checked per start; median of {} interleaved rounds",
            a.len()
        )),
    ])
}

fn cache(dir: &Path) -> ToolCache {
    ToolCache::persisted(dir, 64, Duration::from_secs(3600))
}

/// A new host listing 32 servers' tools from the persisted cache, timed until listed;
/// fails if a process was started.
async fn warm(catalog: &mcp_catalog::ResolvedCatalog, dir: &Path) -> Result<f64> {
    let t = Instant::now();
    let pool = ServerPool::new();
    let set = ConnectionSet::start(
        catalog,
        ConnectionSetOptions::new()
            .with_tool_cache(cache(dir))
            .with_shared_pool(pool.clone()),
    );
    let tools = set.tools().await.len();
    let took = t.elapsed().as_secs_f64();
    let starts = pool.stats().starts;
    set.shutdown().await;
    pool.shutdown().await;
    if tools != SERVERS || starts != 0 {
        return Err(fail(format!(
            "warm start: {tools} tools of {SERVERS}, {starts} processes started (want 0)"
        )));
    }
    Ok(took)
}

/// Warm start from the cache versus the cold start of the same 32 servers, interleaved.
pub(crate) async fn warm_start(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let lazy = fx.catalog(SERVERS, true)?;
    let eager = fx.catalog(SERVERS, false)?;
    let dir = fx.join("cache");
    // Fill the cache: a lazy set with nothing cached starts every server and persists.
    {
        let set = ConnectionSet::start(
            &lazy,
            ConnectionSetOptions::new().with_tool_cache(cache(&dir)),
        );
        let ready = set.wait_startup().await.ready();
        set.shutdown().await;
        if ready != SERVERS {
            return Err(fail(format!(
                "filling the cache: {ready} of {SERVERS} ready"
            )));
        }
    }
    warm(&lazy, &dir).await?;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..s.rounds_startup {
        for side in sides(round) {
            tokio::time::sleep(SETTLE).await;
            if side {
                b.push(cold_set(&eager).await?);
            } else {
                a.push(warm(&lazy, &dir).await?);
            }
        }
    }
    let value = median(&a);
    Ok(vec![
        Row::versus(
            "warm start: 32 servers' tools from the cache, 0 processes",
            Unit::Seconds,
            value,
            median(&b),
            "cold start of the 32",
            "≤ 5 ms",
            |v, _| v <= 5e-3,
        )
        .with_note(format!("median of {} interleaved rounds", a.len())),
    ])
}

//! The era probe: starting one 2025-era stdio server under `protocol = "auto"`, the first
//! time and once its era is remembered, versus `protocol = "2025-11-25"`. Two kinds of
//! 2025-era server: the fake server as it is, which closes its end on `server/discover` as
//! rmcp's own older servers do (the probe costs a second process), and the fake server
//! answering the probe with "method not found" as the TypeScript and Python SDKs' servers
//! do (rmcp falls back to `initialize` on the same process).

use std::time::{Duration, Instant};

use mcp_catalog::ProtocolChoice;
use mcp_connections::{ConnectionSet, ConnectionSetOptions, ServerPool};

use crate::fixture::Fixture;
use crate::stats::{b_first, median};
use crate::table::{Row, Unit};
use crate::{Result, Settings, fail};

/// One start until ready, timed; the set is shut down untimed.
async fn start(catalog: &mcp_catalog::ResolvedCatalog, pool: &ServerPool) -> Result<f64> {
    let t = Instant::now();
    let set = ConnectionSet::start(
        catalog,
        ConnectionSetOptions::new()
            .with_shared_pool(pool.clone())
            .with_process_grace(Duration::from_millis(50)),
    );
    let ready = set.wait_startup().await.ready();
    let took = t.elapsed().as_secs_f64();
    set.shutdown().await;
    if ready != 1 {
        return Err(fail("era probe: the server did not start"));
    }
    Ok(took)
}

pub(crate) async fn era_probe(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let pinned = fx.catalog_with_protocol(1, false, ProtocolChoice::V2025_11_25)?;
    let auto = fx.catalog_with_protocol(1, false, ProtocolChoice::Auto)?;
    let refusing_pinned = fx.refusing_catalog(ProtocolChoice::V2025_11_25)?;
    let refusing_auto = fx.refusing_catalog(ProtocolChoice::Auto)?;
    let remembering = ServerPool::new();
    start(&auto, &remembering).await?;
    let rounds = s.rounds_startup.max(3) * 4;
    let (mut base, mut first, mut remembered) = (Vec::new(), Vec::new(), Vec::new());
    let (mut refusing_base, mut refusing_first) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate the order so drift in the machine's load hits every side alike.
        if b_first(round) {
            first.push(start(&auto, &ServerPool::new()).await?);
            remembered.push(start(&auto, &remembering).await?);
            base.push(start(&pinned, &ServerPool::new()).await?);
            refusing_first.push(start(&refusing_auto, &ServerPool::new()).await?);
            refusing_base.push(start(&refusing_pinned, &ServerPool::new()).await?);
        } else {
            base.push(start(&pinned, &ServerPool::new()).await?);
            remembered.push(start(&auto, &remembering).await?);
            first.push(start(&auto, &ServerPool::new()).await?);
            refusing_base.push(start(&refusing_pinned, &ServerPool::new()).await?);
            refusing_first.push(start(&refusing_auto, &ServerPool::new()).await?);
        }
    }
    remembering.shutdown().await;
    let base = median(&base);
    Ok(vec![
        Row::versus(
            "era probe: first start under `auto` (a 2025-era stdio server)",
            Unit::Seconds,
            median(&first),
            base,
            "pinned 2025-11-25",
            "≤ 1.2× pinned",
            |_, r| r <= 1.2,
        )
        .with_note("the fake server closes on the probe: a second process is started"),
        Row::versus(
            "era probe: first start under `auto` (a 2025-era server answering the probe with an error)",
            Unit::Seconds,
            median(&refusing_first),
            median(&refusing_base),
            "pinned 2025-11-25",
            "≤ 1.2× pinned",
            |_, r| r <= 1.2,
        )
        .with_note("as TypeScript and Python SDK servers answer: one process, one extra round trip"),
        Row::versus(
            "era probe: start under `auto` with the era remembered",
            Unit::Seconds,
            median(&remembered),
            base,
            "pinned 2025-11-25",
            "≤ 1.05× pinned",
            |_, r| r <= 1.05,
        ),
    ])
}

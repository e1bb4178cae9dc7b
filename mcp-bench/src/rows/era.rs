//! The era probe: starting one 2025-era stdio server under `protocol = "auto"`, the first
//! time and once its era is remembered, versus `protocol = "2025-11-25"`. Three kinds of
//! 2025-era server, by how they answer `server/discover`: the fake server as it is, which
//! answers "unsupported protocol version" with the versions it speaks and waits for
//! `initialize`, as rmcp 3.x servers do (the set shakes hands again on the same process);
//! the fake server answering "method not found", as the TypeScript and Python SDKs'
//! servers do (rmcp falls back to `initialize` on the same process); and the fake server
//! exiting, as servers built on rmcp releases before 2026-07-28 do (the probe costs a
//! second process, once).

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
            .with_client(|c| c.with_process_grace(Duration::from_millis(50))),
    );
    let ready = set.wait_startup().await.ready();
    let took = t.elapsed().as_secs_f64();
    set.shutdown().await;
    if ready != 1 {
        return Err(fail("era probe: the server did not start"));
    }
    Ok(took)
}

/// First starts under `auto` and pinned starts of one kind of server, alternated.
struct Kind {
    auto: mcp_catalog::ResolvedCatalog,
    pinned: mcp_catalog::ResolvedCatalog,
    first: Vec<f64>,
    base: Vec<f64>,
}

impl Kind {
    fn new(
        catalog: impl Fn(ProtocolChoice) -> Result<mcp_catalog::ResolvedCatalog>,
    ) -> Result<Self> {
        Ok(Self {
            auto: catalog(ProtocolChoice::Auto)?,
            pinned: catalog(ProtocolChoice::V2025_11_25)?,
            first: Vec::new(),
            base: Vec::new(),
        })
    }

    async fn round(&mut self, auto_first: bool) -> Result<()> {
        if auto_first {
            self.first
                .push(start(&self.auto, &ServerPool::new()).await?);
            self.base
                .push(start(&self.pinned, &ServerPool::new()).await?);
        } else {
            self.base
                .push(start(&self.pinned, &ServerPool::new()).await?);
            self.first
                .push(start(&self.auto, &ServerPool::new()).await?);
        }
        Ok(())
    }

    fn row(&self, what: &str, note: &str) -> Row {
        Row::versus(
            format!("era probe: first start under `auto` ({what})"),
            Unit::Seconds,
            median(&self.first),
            median(&self.base),
            "pinned 2025-11-25",
            "≤ 1.2× pinned",
            |_, r| r <= 1.2,
        )
        .with_note(note)
    }
}

pub(crate) async fn era_probe(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let mut answering = Kind::new(|p| fx.catalog_with_protocol(1, false, p))?;
    let mut refusing = Kind::new(|p| fx.refusing_catalog(p))?;
    let mut closing = Kind::new(|p| fx.closing_catalog(p))?;
    let remembering = ServerPool::new();
    start(&answering.auto, &remembering).await?;
    let rounds = s.rounds_startup.max(3) * 4;
    let mut remembered = Vec::new();
    for round in 0..rounds {
        // Alternate the order so drift in the machine's load hits every side alike.
        let flip = b_first(round);
        answering.round(flip).await?;
        remembered.push(start(&answering.auto, &remembering).await?);
        refusing.round(!flip).await?;
        closing.round(flip).await?;
    }
    remembering.shutdown().await;
    Ok(vec![
        answering.row(
            "a 2025-era stdio server answering the probe with its versions",
            "as rmcp 3.x servers answer: the 2025 handshake follows on the same process",
        ),
        refusing.row(
            "a 2025-era server answering the probe with \"method not found\"",
            "as TypeScript and Python SDK servers answer: one process, one extra round trip",
        ),
        closing.row(
            "a 2025-era server exiting on the probe",
            "as servers of rmcp releases before 2026-07-28 do: a second process, once per server",
        ),
        Row::versus(
            "era probe: start under `auto` with the era remembered",
            Unit::Seconds,
            median(&remembered),
            median(&answering.base),
            "pinned 2025-11-25",
            "≤ 1.05× pinned",
            |_, r| r <= 1.05,
        ),
    ])
}

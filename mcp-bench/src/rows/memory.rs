//! Resident memory per idle stdio connection, client side only (the servers' own processes
//! are not counted).
//!
//! Each sample runs in a fresh process (this binary with `--memory-probe set|bare`), since
//! memory freed by earlier rows stays in the allocator and would hide new allocations. The
//! probe starts 32 idle connections, reads its RSS, starts 32 more, reads it again: the
//! difference divided by 32 is the marginal cost of one idle connection, without the
//! one-time costs (runtime threads, the launcher's reaper and spawner thread) the first
//! batch pays.

#![expect(
    clippy::disallowed_methods,
    reason = "the probe is this very binary, not an MCP server"
)]

use mcp_connections::{ConnectionSet, ConnectionSetOptions};
use serde::{Deserialize, Serialize};

use crate::fixture::{Bare, Fixture, cancel_all};
use crate::rows::calls::{ready_set, sides};
use crate::stats::median;
use crate::table::{Row, Unit};
use crate::{Result, Settings, fail, procs};

const CONNECTIONS: usize = 32;

/// The argument that turns this binary into a probe.
pub(crate) const PROBE_ARG: &str = "--memory-probe";

/// What a probe reports on stdout.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Probe {
    /// Bytes per connection (marginal, see the module docs).
    pub(crate) per_connection: f64,
    /// RSS at the start, after the first batch and after the second, in bytes.
    pub(crate) rss: [u64; 3],
    /// Server processes of the probe left after its shutdown.
    pub(crate) leftover: usize,
}

/// Bytes per connection, set versus bare clients, each sample from a fresh probe.
pub(crate) async fn memory(s: &Settings) -> Result<Vec<Row>> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..s.rounds_memory {
        for side in sides(round) {
            let probe = run_probe(if side { "bare" } else { "set" }).await?;
            if side {
                b.push(probe.per_connection);
            } else {
                a.push(probe.per_connection);
            }
        }
    }
    Ok(vec![row(median(&a), median(&b)).with_note(format!(
        "RSS(64) − RSS(32) over 32, fresh process per sample, median of {} rounds",
        a.len()
    ))])
}

/// The row for `value` bytes per connection against `bare`'s.
fn row(value: f64, bare: f64) -> Row {
    Row::versus(
        "memory per idle connection (client side)",
        Unit::Bytes,
        value,
        bare,
        "bare rmcp client",
        "≤ 1.5× bare",
        |_, ratio| ratio <= 1.5,
    )
}

async fn run_probe(side: &str) -> Result<Probe> {
    let exe = std::env::current_exe()?;
    let output = tokio::process::Command::new(exe)
        .args([PROBE_ARG, side])
        .kill_on_drop(true)
        .output()
        .await?;
    if !output.status.success() {
        return Err(fail(format!(
            "memory probe ({side}) failed: {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let probe: Probe = serde_json::from_slice(&output.stdout)?;
    if probe.leftover != 0 {
        return Err(fail(format!(
            "memory probe ({side}) left {} server process(es)",
            probe.leftover
        )));
    }
    Ok(probe)
}

/// The probe itself: `side` is `set` or `bare`.
pub(crate) async fn probe(side: &str) -> Result<Probe> {
    let fx = Fixture::new()?;
    let mut sets: Vec<ConnectionSet> = Vec::new();
    let mut bares: Vec<Bare> = Vec::new();
    let result = async {
        let mut rss = [procs::rss_bytes()?, 0, 0];
        for slot in &mut rss[1..] {
            match side {
                "set" => sets.push(ready_set(&fx, CONNECTIONS, ConnectionSetOptions::new()).await?),
                "bare" => {
                    for _ in 0..CONNECTIONS {
                        bares.push(fx.bare().await?);
                    }
                }
                other => return Err(fail(format!("unknown probe side {other:?}"))),
            }
            *slot = procs::rss_bytes()?;
        }
        Ok(rss)
    }
    .await;
    for set in &sets {
        set.shutdown().await;
    }
    cancel_all(bares).await;
    let leftover = procs::wait_gone(fx.marker(), crate::LEFTOVER_BOUND)
        .await
        .len();
    let rss = result?;
    Ok(Probe {
        per_connection: rss[2].saturating_sub(rss[1]) as f64 / CONNECTIONS as f64,
        rss,
        leftover,
    })
}

#[cfg(test)]
mod tests {
    /// The target is on the ratio to bare (the check once compared bytes with 1.5 times
    /// the ratio, which no connection could meet).
    #[test]
    fn the_target_is_one_and_a_half_times_bare() {
        assert_eq!(super::row(40_000.0, 28_000.0).meets, Some(true));
        assert_eq!(super::row(42_000.0, 28_000.0).meets, Some(true));
        assert_eq!(super::row(43_000.0, 28_000.0).meets, Some(false));
    }
}

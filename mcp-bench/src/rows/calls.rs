//! Call overhead (p50/p99 of a trivial call) and call throughput (64 callers over 8
//! servers), through the connection set versus bare rmcp clients on the same scenario.

use std::sync::Arc;
use std::time::Instant;

use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_key::McpServerKey;
use rmcp::model::{CallToolRequestParams, JsonObject};
use tokio::task::JoinSet;

use crate::fixture::{Bare, Fixture, cancel_all};
use crate::stats::{b_first, median, quantile};
use crate::table::{Row, Unit};
use crate::{Result, Settings, fail};

/// The call every latency and throughput row makes: a tool and its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Echo {
    /// The tool's name on the server the call goes to.
    pub(crate) tool: String,
    /// Its arguments.
    pub(crate) arguments: Option<JsonObject>,
}

impl Echo {
    /// The fake server's `echo`, without arguments.
    pub(crate) fn plain() -> Self {
        Self::named("echo")
    }

    /// `tool` without arguments.
    pub(crate) fn named(tool: &str) -> Self {
        Self {
            tool: tool.to_owned(),
            arguments: None,
        }
    }

    /// `tool` with `{"message": "hi"}` (server-everything's `echo` requires it).
    pub(crate) fn with_message(tool: &str) -> Self {
        let mut arguments = JsonObject::new();
        arguments.insert("message".to_owned(), "hi".into());
        Self {
            tool: tool.to_owned(),
            arguments: Some(arguments),
        }
    }
}

async fn set_call(set: &ConnectionSet, key: &McpServerKey, call: &Echo) -> Result<()> {
    let arguments = call.arguments.clone().map(serde_json::Value::Object);
    let result = set
        .call_tool(key, &call.tool, arguments, CallOptions::new())
        .await?;
    if result.is_error == Some(true) {
        return Err(fail(format!(
            "`{}` answered an error: {result:?}",
            call.tool
        )));
    }
    Ok(())
}

async fn bare_call(bare: &rmcp::Peer<rmcp::RoleClient>, call: &Echo) -> Result<()> {
    let mut params = CallToolRequestParams::new(call.tool.clone());
    if let Some(arguments) = &call.arguments {
        params = params.with_arguments(arguments.clone());
    }
    let result = bare.call_tool(params).await?;
    if result.is_error == Some(true) {
        return Err(fail(format!(
            "`{}` answered an error: {result:?}",
            call.tool
        )));
    }
    Ok(())
}

/// Starts a set of `servers` servers and waits until all are ready.
pub(crate) async fn ready_set(
    fx: &Fixture,
    servers: usize,
    options: ConnectionSetOptions,
) -> Result<ConnectionSet> {
    let set = ConnectionSet::start(&fx.catalog(servers, false)?, options);
    let summary = set.wait_startup().await;
    if summary.ready() != servers {
        set.shutdown().await;
        return Err(fail(format!(
            "only {} of {servers} servers became ready",
            summary.ready()
        )));
    }
    Ok(set)
}

/// p50 and p99 of one trivial call, set versus bare client.
pub(crate) async fn overhead(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let set = ready_set(fx, 1, ConnectionSetOptions::new()).await?;
    let bare = match fx.bare().await {
        Ok(bare) => bare,
        Err(e) => {
            set.shutdown().await;
            return Err(e);
        }
    };
    let key = &Fixture::keys(1)?[0];
    let result = overhead_on(&set, key, bare.peer(), &Echo::plain(), s).await;
    set.shutdown().await;
    cancel_all(vec![bare]).await;
    let (a, b) = result?;
    Ok(latency_rows("call overhead", &a, &b, "bare rmcp client", s))
}

/// p50 and p99 rows named `name`, the set's samples `a` against the baseline's `b`
/// (target ≤ 1.05×).
pub(crate) fn latency_rows(
    name: &str,
    a: &[f64],
    b: &[f64],
    baseline: &str,
    s: &Settings,
) -> Vec<Row> {
    [("p50", 0.5), ("p99", 0.99)]
        .into_iter()
        .map(|(label, q)| {
            Row::versus(
                format!("{name} {label}"),
                Unit::Seconds,
                quantile(a, q),
                quantile(b, q),
                baseline,
                "≤ 1.05× bare",
                |_, r| r <= 1.05,
            )
            .with_note(format!(
                "{} calls each side, {} interleaved rounds",
                a.len(),
                s.rounds_calls
            ))
        })
        .collect()
}

/// Samples of `call` through `set` to `key` (A) and through the bare client `peer` (B),
/// interleaved.
pub(crate) async fn overhead_on(
    set: &ConnectionSet,
    key: &McpServerKey,
    peer: &rmcp::Peer<rmcp::RoleClient>,
    call: &Echo,
    s: &Settings,
) -> Result<(Vec<f64>, Vec<f64>)> {
    for _ in 0..s.warmup_calls {
        set_call(set, key, call).await?;
        bare_call(peer, call).await?;
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..s.rounds_calls {
        for side in sides(round) {
            for _ in 0..s.calls_per_round {
                let t = Instant::now();
                if side {
                    bare_call(peer, call).await?;
                    b.push(t.elapsed().as_secs_f64());
                } else {
                    set_call(set, key, call).await?;
                    a.push(t.elapsed().as_secs_f64());
                }
            }
        }
    }
    Ok((a, b))
}

/// The two sides of a round in order: `false` is A (the set), `true` is B (the baseline).
pub(crate) fn sides(round: usize) -> [bool; 2] {
    if b_first(round) {
        [true, false]
    } else {
        [false, true]
    }
}

/// Servers of the throughput rows.
pub(crate) const SERVERS: usize = 8;
const CALLERS: usize = 64;

/// Calls per second with 64 concurrent callers over 8 servers.
pub(crate) async fn throughput(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let set = ready_set(fx, SERVERS, ConnectionSetOptions::new()).await?;
    let mut bares = Vec::new();
    for _ in 0..SERVERS {
        match fx.bare().await {
            Ok(b) => bares.push(b),
            Err(e) => {
                set.shutdown().await;
                cancel_all(bares).await;
                return Err(e);
            }
        }
    }
    let result = throughput_on(&set, &bares, s).await;
    set.shutdown().await;
    cancel_all(bares).await;
    let (a, b) = result?;
    Ok(vec![throughput_row(
        "call throughput (64 callers, 8 servers)",
        &a,
        &b,
        s,
    )])
}

/// The throughput row named `name`: the set's rates `a` against the bare clients' `b`.
pub(crate) fn throughput_row(name: &str, a: &[f64], b: &[f64], s: &Settings) -> Row {
    let pairs = pair_ratios(a, b);
    Row::versus(
        name,
        Unit::CallsPerSecond,
        median(a),
        median(b),
        "bare rmcp clients",
        "≥ 0.95× bare",
        |_, r| r >= 0.95,
    )
    .with_note(format!(
        "median of {} interleaved rounds of {} calls; the rounds' ratios, pair by pair: \
         quartiles {:.3}–{:.3}",
        a.len(),
        CALLERS * s.calls_per_caller,
        quantile(&pairs, 0.25),
        quantile(&pairs, 0.75),
    ))
}

/// The ratio of each round's A rate to the same round's B rate.
fn pair_ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter(|(_, b)| **b > 0.0)
        .map(|(a, b)| a / b)
        .collect()
}

/// Rates of 64 callers spread over [`Fixture::keys`]`(SERVERS)` through `set` (A) and
/// over the bare clients `bares` (B), interleaved.
pub(crate) async fn throughput_on(
    set: &ConnectionSet,
    bares: &[Bare],
    s: &Settings,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let keys = Arc::new(Fixture::keys(SERVERS)?);
    let peers: Vec<_> = bares.iter().map(|b| b.peer().clone()).collect();
    // Warm-up: one round each side.
    burst_set(set, &keys, s.calls_per_caller).await?;
    burst_bare(&peers, s.calls_per_caller).await?;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..s.rounds_throughput {
        for side in sides(round) {
            let t = Instant::now();
            let calls = if side {
                burst_bare(&peers, s.calls_per_caller).await?
            } else {
                burst_set(set, &keys, s.calls_per_caller).await?
            };
            let rate = calls as f64 / t.elapsed().as_secs_f64();
            if side { b.push(rate) } else { a.push(rate) }
        }
    }
    Ok((a, b))
}

async fn burst_set(
    set: &ConnectionSet,
    keys: &Arc<Vec<McpServerKey>>,
    per_caller: usize,
) -> Result<usize> {
    let mut tasks = JoinSet::new();
    for caller in 0..CALLERS {
        let set = set.clone();
        let keys = Arc::clone(keys);
        tasks.spawn(async move {
            let key = &keys[caller % keys.len()];
            for _ in 0..per_caller {
                set_call(&set, key, &Echo::plain()).await?;
            }
            Ok::<_, crate::Error>(())
        });
    }
    join(tasks).await?;
    Ok(CALLERS * per_caller)
}

async fn burst_bare(peers: &[rmcp::Peer<rmcp::RoleClient>], per_caller: usize) -> Result<usize> {
    let mut tasks = JoinSet::new();
    for caller in 0..CALLERS {
        let peer = peers[caller % peers.len()].clone();
        tasks.spawn(async move {
            for _ in 0..per_caller {
                bare_call(&peer, &Echo::plain()).await?;
            }
            Ok::<_, crate::Error>(())
        });
    }
    join(tasks).await?;
    Ok(CALLERS * per_caller)
}

async fn join(mut tasks: JoinSet<Result<()>>) -> Result<()> {
    let mut first = None;
    while let Some(done) = tasks.join_next().await {
        let outcome = done.map_err(crate::Error::from).and_then(|r| r);
        if let Err(e) = outcome {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_are_compared_pair_by_pair() {
        let ratios = pair_ratios(&[10.0, 30.0, 5.0], &[20.0, 10.0, 0.0]);
        assert_eq!(ratios, vec![0.5, 3.0]);
        let row = throughput_row("t", &[10.0, 30.0], &[20.0, 10.0], &Settings::full());
        assert!(row.note.contains("quartiles 0.500–3.000"), "{}", row.note);
    }
}

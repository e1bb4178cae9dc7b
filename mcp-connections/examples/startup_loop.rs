//! Rounds of startup fan-out for profiling: `R` times, 32 (or `S`) servers started to all
//! ready (initialized, tools listed) through a connection set, or through as many bare
//! rmcp clients started concurrently, on `mcp-fake-server` processes of the same scenario;
//! each round is shut down before the next. Prints the median wall time of a round, so
//! `perf stat` (which counts the servers' processes too) and `perf record` can be run on
//! either side.
//!
//! ```text
//! cargo run --release -p mcp-connections --example startup_loop -- set 20 32
//! perf stat target/release/examples/startup_loop bare 20 32
//! ```

#![allow(
    clippy::disallowed_methods,
    reason = "the baseline is a bare rmcp client spawning the server itself"
)]
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a profiling harness run by hand"
)]

use std::time::Instant;

use mcp_catalog::{CatalogBuilder, Config, LoadedConfig, ProtocolChoice, ServerConfig};
use mcp_connections::{ConnectionSet, ConnectionSetOptions};
use mcp_key::ServerName;
use mcp_testkit::{Scenario, ToolSpec};
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::transport::TokioChildProcess;

/// One round through a set of `servers` servers; the seconds until all were ready.
async fn set_round(catalog: &mcp_catalog::ResolvedCatalog, servers: usize) -> f64 {
    let began = Instant::now();
    let set = ConnectionSet::start(catalog, ConnectionSetOptions::new());
    let ready = set.wait_startup().await.ready();
    let tools = set.tools().await.len();
    let took = began.elapsed().as_secs_f64();
    set.shutdown().await;
    assert_eq!((ready, tools), (servers, servers), "not all ready");
    took
}

/// One round of `servers` bare clients started concurrently.
async fn bare_round(bin: &std::path::Path, args: &[String], servers: usize) -> f64 {
    let began = Instant::now();
    let clients = futures::future::join_all((0..servers).map(|_| async {
        let mut cmd = tokio::process::Command::new(bin);
        cmd.args(args);
        let transport = TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn")
            .0;
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("bench-bare", "0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25);
        let client = info.serve(transport).await.expect("initialize");
        let tools = client.peer().list_all_tools().await.expect("tools/list");
        assert_eq!(tools.len(), 1);
        client
    }))
    .await;
    let took = began.elapsed().as_secs_f64();
    for client in clients {
        let _ = client.cancel().await;
    }
    took
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let side = argv.next().unwrap_or_else(|| "set".to_owned());
    let rounds: usize = argv.next().and_then(|n| n.parse().ok()).unwrap_or(20);
    let servers: usize = argv.next().and_then(|n| n.parse().ok()).unwrap_or(32);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let home = mcp_testkit::TestHome::new().expect("temp dir");
    let scenario_path = home.join("startup.json");
    Scenario::new("startup")
        .with_tool(ToolSpec::echo("echo"))
        .write_json(&scenario_path)
        .expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let args = vec![
        "--scenario".to_owned(),
        scenario_path.to_string_lossy().into_owned(),
    ];
    let mut config = Config::new();
    for i in 0..servers {
        let server = ServerConfig::stdio(bin.to_string_lossy())
            .with_args(args.clone())
            .with_protocol(ProtocolChoice::V2025_11_25);
        config = config.with_server(ServerName::new(format!("s{i:02}")).expect("name"), server);
    }
    let catalog = CatalogBuilder::new()
        .with_user_config(LoadedConfig::new("bench", config))
        .build();
    rt.block_on(async {
        let mut times = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let took = if side == "bare" {
                bare_round(&bin, &args, servers).await
            } else {
                set_round(&catalog, servers).await
            };
            times.push(took);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{side}: {rounds} rounds of {servers} servers, median {:.2} ms, min {:.2} ms",
            times[times.len() / 2] * 1e3,
            times[0] * 1e3
        );
    });
}

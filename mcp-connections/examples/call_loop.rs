//! A loop of trivial calls for profiling the set's own work per call: the same `echo`
//! call `N` times through a connection set, or through a bare rmcp client, on a
//! `mcp-fake-server` process of the same scenario, with `C` callers at once. Prints the
//! wall time and this process's own CPU time per call (user + system, every thread;
//! the server's process is not counted), so the two sides compare without a profiler,
//! and runs under `perf record` to see where the difference goes.
//!
//! ```text
//! cargo run --release -p mcp-connections --example call_loop -- set 20000 1
//! cargo run --release -p mcp-connections --example call_loop -- bare 20000 1
//! perf record -g target/release/examples/call_loop set 20000 8
//! perf stat target/release/examples/call_loop set 40000 64 8
//! ```
//!
//! A fourth argument `S` spreads the callers over `S` servers (one process and one
//! connection each; caller `i` calls server `i % S`), as `mcp-bench`'s throughput row
//! does with 64 callers over 8.
//!
//! `http-set` and `http-bare` do the same over streamable HTTP, to one `mcp-fake-server
//! --http` process on a free loopback port (rmcp's reqwest client on the bare side).
//!
//! `gateway` puts a release `mcpctl serve` (over stdio, from `target/release`, or
//! `$MCPCTL`) between the set and the server, to profile the gateway's own work per call
//! (`perf record -p` on the `mcpctl` process while it runs).

#![allow(
    clippy::disallowed_methods,
    reason = "the baseline is a bare rmcp client spawning the server itself"
)]
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a profiling harness run by hand"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_catalog::{
    ApprovalMode, CatalogBuilder, Config, LoadedConfig, ProtocolChoice, ServerConfig, server_toml,
};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_key::{McpServerKey, ServerName};
use mcp_testkit::{Scenario, ToolSpec};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

/// This process's CPU time so far (every thread, user + system), from `/proc/self/stat`
/// (clock ticks of 10 ms: run enough calls).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which ends with the last ')'): utime and stime are
    // the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// One side of the comparison.
enum Side {
    /// A set: to the servers, or to `mcpctl serve` in front of one (the tool's name then
    /// the gateway's).
    Set(ConnectionSet, Vec<McpServerKey>, &'static str),
    /// One bare client per server.
    Bare(Vec<rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>>),
}

impl Side {
    /// One call to the server of caller `caller`.
    async fn call(&self, caller: usize) {
        match self {
            Self::Set(set, keys, tool) => {
                let key = &keys[caller % keys.len()];
                set.call_tool(key, tool, None, CallOptions::new())
                    .await
                    .expect("set call");
            }
            Self::Bare(bares) => {
                bares[caller % bares.len()]
                    .call_tool(CallToolRequestParams::new("echo"))
                    .await
                    .expect("bare call");
            }
        }
    }

    async fn stop(self) {
        match self {
            Self::Set(set, _, _) => set.shutdown().await,
            Self::Bare(bares) => {
                for bare in bares {
                    let _ = bare.cancel().await;
                }
            }
        }
    }
}

/// One side on `servers` processes of the server `bin args` (`gateway`: through one
/// `mcpctl serve`, its files in `dir`).
async fn start(
    side: &str,
    bin: &std::path::Path,
    args: Vec<String>,
    dir: &std::path::Path,
    servers: usize,
) -> Side {
    if side == "bare" {
        let mut bares = Vec::new();
        for _ in 0..servers {
            let mut cmd = tokio::process::Command::new(bin);
            cmd.args(&args);
            let transport = TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn")
                .0;
            bares.push(bare_info().serve(transport).await.expect("initialize"));
        }
        return Side::Bare(bares);
    }
    let direct = ServerConfig::stdio(bin.to_string_lossy())
        .with_args(args)
        .with_protocol(ProtocolChoice::V2025_11_25);
    if side == "gateway" {
        let mcpctl = std::env::var_os("MCPCTL")
            .map_or_else(|| bin.with_file_name("mcpctl"), std::path::PathBuf::from);
        set_side(gateway(direct, &mcpctl, dir), "mcp__bench__echo", 1).await
    } else {
        set_side(direct, "echo", servers).await
    }
}

/// A set of `servers` copies of `server` (`bench`, or `bench0`, `bench1`, … when more
/// than one), ready, calling `tool`.
async fn set_side(server: ServerConfig, tool: &'static str, servers: usize) -> Side {
    let names: Vec<_> = (0..servers)
        .map(|i| {
            let name = if servers == 1 {
                "bench".to_owned()
            } else {
                format!("bench{i}")
            };
            ServerName::new(name).expect("name")
        })
        .collect();
    let mut config = Config::new();
    for name in &names {
        config = config.with_server(name.clone(), server.clone());
    }
    let catalog = CatalogBuilder::new()
        .with_user_config(LoadedConfig::new("bench", config))
        .build();
    let set = ConnectionSet::start(&catalog, ConnectionSetOptions::new());
    set.wait_required().await.expect("ready");
    set.wait_startup().await;
    let keys = names.into_iter().map(McpServerKey::unscoped).collect();
    Side::Set(set, keys, tool)
}

/// The bare rmcp client's identity, pinned to 2025-11-25 as the set is.
fn bare_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("bench-bare", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

/// `http-set` or `http-bare` on a `mcp-fake-server --http` started here, returned with
/// it (killed when dropped).
async fn start_http(
    side: &str,
    bin: &std::path::Path,
    args: Vec<String>,
    servers: usize,
) -> (Side, tokio::process::Child) {
    let port = mcp_testkit::free_loopback_port().expect("port");
    let child = tokio::process::Command::new(bin)
        .args(&args)
        .arg("--http")
        .arg(format!("127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the HTTP server");
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "the HTTP server did not listen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    if side == "http-bare" {
        let mut bares = Vec::new();
        for _ in 0..servers {
            let transport = StreamableHttpClientTransport::with_client(
                reqwest::Client::new(),
                StreamableHttpClientTransportConfig::with_uri(url.clone()),
            );
            bares.push(bare_info().serve(transport).await.expect("initialize"));
        }
        return (Side::Bare(bares), child);
    }
    let server = ServerConfig::from(mcp_catalog::HttpConfig::new(url))
        .with_protocol(ProtocolChoice::V2025_11_25);
    (set_side(server, "echo", servers).await, child)
}

/// `mcpctl serve` over stdio with `server` as `bench`, approved, its configuration and
/// home in `dir`.
fn gateway(server: ServerConfig, mcpctl: &std::path::Path, dir: &std::path::Path) -> ServerConfig {
    let name = ServerName::new("bench").expect("name");
    let server = server.with_default_approval_mode(ApprovalMode::Approve);
    let config = dir.join("gateway.toml");
    std::fs::write(&config, server_toml(&name, &server)).expect("gateway config");
    let stdio = mcp_catalog::StdioConfig::new(mcpctl.to_string_lossy())
        .with_args([
            "--config".to_owned(),
            config.to_string_lossy().into_owned(),
            "serve".to_owned(),
        ])
        .with_env("MCPCTL_HOME", dir.join("mcpctl-home").to_string_lossy())
        .with_env("RUST_LOG", "off");
    ServerConfig::from(stdio).with_protocol(ProtocolChoice::V2025_11_25)
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let side = argv.next().unwrap_or_else(|| "set".to_owned());
    let calls: usize = argv.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    let callers: usize = argv.next().and_then(|n| n.parse().ok()).unwrap_or(1).max(1);
    let servers: usize = argv.next().and_then(|n| n.parse().ok()).unwrap_or(1).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let home = mcp_testkit::TestHome::new().expect("temp dir");
    let scenario_path = home.join("loop.json");
    Scenario::new("loop")
        .with_tool(ToolSpec::echo("echo"))
        .write_json(&scenario_path)
        .expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let args = vec![
        "--scenario".to_owned(),
        scenario_path.to_string_lossy().into_owned(),
    ];
    rt.block_on(async {
        let (side, server) = if side.starts_with("http-") {
            let (side, server) = start_http(&side, &bin, args, servers).await;
            (side, Some(server))
        } else {
            (start(&side, &bin, args, home.path(), servers).await, None)
        };
        let side = Arc::new(side);
        for i in 0..200 {
            side.call(i).await;
        }
        let (wall, cpu) = (Instant::now(), cpu_time());
        let mut tasks = tokio::task::JoinSet::new();
        for caller in 0..callers {
            let side = Arc::clone(&side);
            let share = calls / callers;
            tasks.spawn(async move {
                for _ in 0..share {
                    side.call(caller).await;
                }
            });
        }
        while tasks.join_next().await.is_some() {}
        let (wall, cpu) = (wall.elapsed(), cpu_time().saturating_sub(cpu));
        let per = |d: Duration| d.as_secs_f64() * 1e6 / calls as f64;
        println!(
            "{calls} calls, {callers} callers: wall {:.1} µs/call, client CPU {:.1} µs/call",
            per(wall),
            per(cpu)
        );
        if let Ok(side) = Arc::try_unwrap(side) {
            side.stop().await;
        }
        if let Some(mut server) = server {
            let _ = server.kill().await;
        }
    });
}

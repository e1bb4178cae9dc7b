//! Calls over streamable HTTP: p50/p99 of one call and the throughput of 64 callers,
//! through the connection set versus a bare rmcp client (rmcp's reqwest transport) on the
//! same server process, against the testkit's rmcp-based HTTP server and against the
//! reference server `@modelcontextprotocol/server-everything` (Node).

use mcp_catalog::{HttpConfig, ProtocolChoice, ServerConfig};
use mcp_connections::{ConnectionSet, ConnectionSetOptions};

use crate::fixture::{Bare, Fixture, cancel_all};
use crate::installs::{self, Install};
use crate::rows::calls::{Echo, SERVERS, latency_rows, overhead_on, throughput_on, throughput_row};
use crate::spawned::{Spawned, free_port, stop_all};
use crate::table::Row;
use crate::{Result, Settings, fail};

/// A streamable-HTTP server for the set, pinned to the bare client's era.
pub(crate) fn http_server_config(url: String) -> ServerConfig {
    ServerConfig::from(HttpConfig::new(url)).with_protocol(ProtocolChoice::V2025_11_25)
}

/// A set of one server per URL (`s00`, …), all ready.
pub(crate) async fn ready_http_set(urls: &[String]) -> Result<ConnectionSet> {
    let catalog = Fixture::catalog_from(urls.iter().cloned().map(http_server_config))?;
    let set = ConnectionSet::start(&catalog, ConnectionSetOptions::new());
    let summary = set.wait_startup().await;
    if summary.ready() != urls.len() {
        let status = set.status();
        set.shutdown().await;
        return Err(fail(format!(
            "only {} of {} HTTP servers became ready: {status:?}",
            summary.ready(),
            urls.len()
        )));
    }
    Ok(set)
}

/// p50/p99 of `call` over HTTP to `url`, set versus bare client.
async fn latency_at(
    url: &str,
    call: &Echo,
    fx: &Fixture,
    s: &Settings,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let set = ready_http_set(&[url.to_owned()]).await?;
    let bare = match fx.bare_http(url).await {
        Ok(bare) => bare,
        Err(e) => {
            set.shutdown().await;
            return Err(e);
        }
    };
    let key = &Fixture::keys(1)?[0];
    let result = overhead_on(&set, key, bare.peer(), call, s).await;
    set.shutdown().await;
    cancel_all(vec![bare]).await;
    result
}

/// Call p50/p99 over HTTP against `mcp-fake-server --http` (rmcp's server).
pub(crate) async fn overhead(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let server = fx.http_server().await?;
    let result = latency_at(&server.url("/mcp"), &Echo::plain(), fx, s).await;
    server.stop().await;
    let (a, b) = result?;
    Ok(latency_rows(
        "HTTP call overhead (rmcp server)",
        &a,
        &b,
        "bare rmcp client",
        s,
    ))
}

/// Calls per second of 64 callers over 8 `mcp-fake-server --http` processes.
pub(crate) async fn throughput(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let mut servers = Vec::new();
    for _ in 0..SERVERS {
        match fx.http_server().await {
            Ok(server) => servers.push(server),
            Err(e) => {
                stop_all(servers).await;
                return Err(e);
            }
        }
    }
    let urls: Vec<String> = servers.iter().map(|s| s.url("/mcp")).collect();
    let result = throughput_at(&urls, fx, s).await;
    stop_all(servers).await;
    let (a, b) = result?;
    Ok(vec![throughput_row(
        "HTTP call throughput (64 callers, 8 rmcp servers)",
        &a,
        &b,
        s,
    )])
}

async fn throughput_at(
    urls: &[String],
    fx: &Fixture,
    s: &Settings,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let set = ready_http_set(urls).await?;
    let mut bares: Vec<Bare> = Vec::new();
    for url in urls {
        match fx.bare_http(url).await {
            Ok(bare) => bares.push(bare),
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
    result
}

/// Call p50/p99 over HTTP against server-everything (Node), when installed.
pub(crate) async fn everything(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    const NAME: &str = "HTTP call overhead (server-everything, Node)";
    let Install::Found {
        node_entry,
        preload,
    } = installs::server_everything()
    else {
        return Ok(installs::missing_rows(
            NAME,
            &["p50", "p99"],
            installs::INSTALL_HINT,
        ));
    };
    let port = free_port()?;
    let mut cmd = crate::spawned::command("node");
    cmd.arg("--require")
        .arg(preload)
        .arg(node_entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let server = Spawned::listening(cmd, "server-everything streamableHttp", port).await?;
    let s = s.slower(4);
    let result = latency_at(&server.url("/mcp"), &Echo::with_message("echo"), fx, &s).await;
    server.stop().await;
    let (a, b) = result?;
    Ok(latency_rows(NAME, &a, &b, "bare rmcp client", &s))
}

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs,
    reason = "scratch"
)]
mod common;
use common::Fixture;
use mcp_catalog::{HttpConfig, ProtocolChoice, ServerConfig};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_testkit::{HttpFakeServer, Scenario, ToolSpec};
use rmcp::ServiceExt;
use std::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch() {
    let server = HttpFakeServer::start(Scenario::new("web").with_tool(ToolSpec::echo("echo")))
        .await
        .unwrap();
    let url = std::env::var("URL").unwrap_or(server.url());
    let mut fx = Fixture::new();
    fx.add(
        "web",
        ServerConfig::from(HttpConfig::new(url.clone())).with_protocol(ProtocolChoice::V2025_11_25),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    for _ in 0..10 {
        let t = Instant::now();
        set.call_qualified("mcp__web__echo", None, CallOptions::new())
            .await
            .unwrap();
        eprintln!("set {:?}", t.elapsed());
    }
    let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
        reqwest::Client::new(),
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.clone(),
        ),
    );
    let info = rmcp::model::ClientConfig::new(
        rmcp::model::ClientCapabilities::default(),
        rmcp::model::Implementation::new("b", "0"),
    )
    .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_11_25);
    let bare = info.serve(transport).await.unwrap();
    for _ in 0..10 {
        let t = Instant::now();
        bare.call_tool(rmcp::model::CallToolRequestParams::new("echo"))
            .await
            .unwrap();
        eprintln!("bare {:?}", t.elapsed());
    }
    set.shutdown().await;
    server.shutdown().await;
}

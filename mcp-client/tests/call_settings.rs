//! What a call is made with reaches the server: `_meta` given whole and entry by entry,
//! against the fake server binary over stdio.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{CallSettings, Client, ClientSettings, DeclineRequests};
use mcp_testkit::{Scenario, TestHome, ToolSpec};
use serde_json::{Map, json};

#[tokio::test]
async fn meta_entries_join_the_meta_given_whole() {
    let home = TestHome::new().unwrap();
    let server = support::stdio(
        &home,
        Scenario::new("meta").with_tool(ToolSpec::echo("echo")),
    );
    let client = Client::connect(
        "meta".parse().unwrap(),
        server.target.clone(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await
    .unwrap();
    let mut whole = Map::new();
    whole.insert("tenant".to_owned(), json!("acme"));
    whole.insert("trace".to_owned(), json!("old"));
    let settings = CallSettings::new(Duration::from_secs(20))
        .with_meta(Some(whole))
        .with_meta_entry("trace", json!("t-1"))
        .with_meta_entry("session", json!({"id": 7}));
    assert_eq!(
        settings.meta(),
        Some(&Map::from_iter([
            ("session".to_owned(), json!({"id": 7})),
            ("tenant".to_owned(), json!("acme")),
            ("trace".to_owned(), json!("t-1")),
        ]))
    );
    client.call_tool("echo", None, settings).await.unwrap();
    let calls = server.wait_for("tools/call").await;
    let sent = &calls[0].params["_meta"];
    for (key, value) in [
        ("tenant", json!("acme")),
        ("trace", json!("t-1")),
        ("session", json!({"id": 7})),
    ] {
        assert_eq!(sent[key], value, "`_meta.{key}` the server got: {sent}");
    }
    client.shutdown().await;
    server.assert_gone().await;
}

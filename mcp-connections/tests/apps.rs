//! MCP Apps (the `io.modelcontextprotocol/ui` extension) for a host that renders them: the
//! extension announced, each tool's UI named, the `ui://` resource and the tool's results
//! unchanged; nothing of it without the option. Real `mcp-fake-server` processes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use common::*;
use mcp_connections::model::ResourceContents;
use mcp_connections::{
    APP_MIME_TYPE, APPS_EXTENSION, CallOptions, ConnectionSet, ConnectionSetOptions,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, RecordedRequest, ResourceSpec, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const APP: &str = "ui://weather/app.html";

fn key() -> McpServerKey {
    McpServerKey::unscoped("weather".parse().unwrap())
}

/// A server with a tool that has an app, a tool only the app may call, and the app.
fn scenario() -> Scenario {
    Scenario::new("weather")
        .with_tool(
            ToolSpec::new(
                "forecast",
                Behavior::Result {
                    result: json!({
                        "content": [{"type": "text", "text": "sunny"}],
                        "structuredContent": {"sky": "sunny"},
                        "_meta": {"ui": {"resourceUri": APP}, "weather/trace": "t-1"},
                    }),
                },
            )
            .with_meta(json!({"ui": {"resourceUri": APP}})),
        )
        .with_tool(
            ToolSpec::echo("refresh")
                .with_meta(json!({"ui": {"resourceUri": APP, "visibility": ["app"]}})),
        )
        .with_resource(
            ResourceSpec::new(APP, "forecast app", "<html><body>sunny</body></html>")
                .with_mime_type(APP_MIME_TYPE),
        )
}

async fn start(fx: &Fixture, apps: bool) -> ConnectionSet {
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new().with_apps(apps));
    assert_eq!(set.wait_startup().await.ready(), 1);
    set
}

/// The tasks extension every connection announces.
const TASKS: &str = "io.modelcontextprotocol/tasks";

fn announced_extensions(fx: &Fixture) -> Value {
    let log = RecordedRequest::read_log(fx.request_log("weather"));
    let init = log.iter().find(|r| r.method == "initialize").unwrap();
    init.params["capabilities"]["extensions"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_renders_apps_gets_each_tools_app_unchanged() {
    let mut fx = Fixture::new();
    fx.stdio("weather", scenario());
    let set = start(&fx, true).await;
    assert_eq!(
        announced_extensions(&fx),
        json!({
            APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]},
            TASKS: {},
        })
    );
    let tools = set.tools().await;
    // Both tools are the host's; the app-only one is not for its model.
    let seen: Vec<(&str, bool)> = tools
        .iter()
        .map(|t| (t.raw_name(), t.visible_to_model()))
        .collect();
    assert_eq!(seen, [("forecast", true), ("refresh", false)]);
    let ui = tools[0].ui.clone().expect("the tool's app");
    assert_eq!(ui.resource_uri, APP);
    assert_eq!(ui.visibility, ["model", "app"]);
    assert_eq!(tools[1].ui.clone().unwrap().visibility, ["app"]);
    // The host calls the app-only tool for its app; the model's search does not find it.
    let refreshed = set
        .call_qualified(
            &tools[1].qualified_name,
            Some(json!({"k": 1})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(refreshed.structured_content, Some(json!({"k": 1})));
    let found: Vec<String> = set
        .search_tools("refresh", 10)
        .unwrap()
        .into_iter()
        .map(|hit| hit.info.tool.name.to_string())
        .collect();
    assert!(!found.contains(&"refresh".to_owned()), "{found:?}");

    // The app, with its MIME type as the server gave it.
    let read = set.read_resource(&key(), APP).await.unwrap();
    match &read.contents[0] {
        ResourceContents::TextResourceContents {
            mime_type, text, ..
        } => {
            assert_eq!(mime_type.as_deref(), Some(APP_MIME_TYPE));
            assert_eq!(text, "<html><body>sunny</body></html>");
        }
        other => panic!("not text: {other:?}"),
    }
    // The result's `_meta` reaches the host unchanged.
    let result = set
        .call_tool(&key(), "forecast", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&result.meta).unwrap(),
        json!({"ui": {"resourceUri": APP}, "weather/trace": "t-1"})
    );
    assert_eq!(result.structured_content, Some(json!({"sky": "sunny"})));
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_option_nothing_is_announced_and_no_tool_has_an_app() {
    let mut fx = Fixture::new();
    fx.stdio("weather", scenario());
    let set = start(&fx, false).await;
    // Only the tasks extension, which every connection announces (calls drive tasks).
    assert_eq!(announced_extensions(&fx), json!({TASKS: {}}));
    // The app-only tool stays out of the catalog, as before there were apps.
    let tools = set.tools().await;
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].raw_name(), "forecast");
    assert_eq!(tools[0].ui, None);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

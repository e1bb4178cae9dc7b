//! `mcpctl serve` passes MCP Apps through: a client that renders them sees the extension
//! announced, each tool's `_meta.ui`, the `ui://` resource with its MIME type and the
//! results' `_meta` unchanged; a client that does not is not told of the extension.
//! Through a real rmcp client over stdio.

#![allow(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway as a client would"
)]

mod support;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ReadResourceRequestParams, ResourceContents,
};
use serde_json::json;
use support::Workdir;

const APP: &str = "ui://weather/app.html";
const APPS: &str = "io.modelcontextprotocol/ui";
const MIME: &str = "text/html;profile=mcp-app";

fn write_config(wd: &Workdir) -> std::path::PathBuf {
    let scenario = json!({
        "tools": [{
            "name": "refresh",
            "_meta": {"ui": {"resourceUri": APP, "visibility": ["app"]}},
            "behavior": {"kind": "echo"},
        }, {
            "name": "forecast",
            "_meta": {"ui": {"resourceUri": APP}},
            "behavior": {"kind": "result", "result": {
                "content": [{"type": "text", "text": "sunny"}],
                "_meta": {"weather/trace": "t-1"},
            }},
        }],
        "resources": [{"uri": APP, "name": "app", "text": "<html>sunny</html>", "mime_type": MIME}],
    })
    .to_string();
    wd.write(
        "gateway.toml",
        &format!(
            "[mcp_servers.weather]\ncommand = {:?}\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n",
            env!("CARGO_BIN_EXE_mcpctl"),
            serde_json::to_string(&scenario).unwrap()
        ),
    )
}

#[test]
fn a_client_that_renders_apps_gets_them_through_the_gateway() {
    let wd = Workdir::new();
    let config = write_config(&wd);
    let runtime = support::runtime();
    runtime.block_on(async {
        let mut caps = ClientCapabilities::default();
        let mut settings = rmcp::model::JsonObject::new();
        settings.insert("mimeTypes".into(), json!([MIME]));
        caps.extensions = Some([(APPS.to_owned(), settings)].into_iter().collect());
        let client = support::serve_stdio_with(&wd, &config, &[], caps).await;
        let announced = client
            .peer_info()
            .and_then(|i| i.capabilities.extensions.clone())
            .unwrap_or_default();
        assert!(announced.contains_key(APPS), "{announced:?}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let tools = loop {
            let tools = client.list_all_tools().await.unwrap();
            if !tools.is_empty() || std::time::Instant::now() > deadline {
                break tools;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        };
        // Both tools, the app-only one too: this client's host keeps it from its model.
        let mut tools = tools;
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(tools.len(), 2, "{tools:?}");
        assert_eq!(
            serde_json::to_value(&tools[0].meta).unwrap(),
            json!({"ui": {"resourceUri": APP}})
        );
        assert!(tools[1].name.ends_with("refresh"), "{tools:?}");
        let read = client
            .read_resource(ReadResourceRequestParams::new(APP))
            .await
            .unwrap();
        match &read.contents[0] {
            ResourceContents::TextResourceContents { mime_type, .. } => {
                assert_eq!(mime_type.as_deref(), Some(MIME));
            }
            other => panic!("not text: {other:?}"),
        }
        let result = client
            .call_tool(CallToolRequestParams::new(tools[0].name.clone()))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&result.meta).unwrap(),
            json!({"weather/trace": "t-1"})
        );
        client.cancel().await.unwrap();

        // A client that does not render apps is not told of the extension.
        let plain = support::serve_stdio(&wd, &config, &[]).await;
        let announced = plain
            .peer_info()
            .and_then(|i| i.capabilities.extensions.clone())
            .unwrap_or_default();
        assert!(!announced.contains_key(APPS), "{announced:?}");
        // Nor listed the tool only an app may call.
        let names: Vec<String> = loop {
            let tools = plain.list_all_tools().await.unwrap();
            if !tools.is_empty() || std::time::Instant::now() > deadline {
                break tools.iter().map(|t| t.name.to_string()).collect();
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        };
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(names[0].ends_with("forecast"), "{names:?}");
        plain.cancel().await.unwrap();
    });
    wd.assert_no_server_left();
}

/// A tool's `ui://` resource is read from the tool's server: `weather` serves its app
/// through a template and lists nothing, and `shadow` lists a resource under the same
/// URI (it once got the read, and the weather tool showed shadow's HTML).
#[test]
fn a_tools_app_is_read_from_the_tools_server() {
    let wd = Workdir::new();
    let weather = json!({
        "tools": [{
            "name": "forecast",
            "_meta": {"ui": {"resourceUri": APP}},
            "behavior": {"kind": "echo"},
        }],
        "resource_templates": [{"uri_template": "ui://weather/{file}", "name": "app"}],
    });
    let shadow = json!({
        "tools": [{"name": "noop", "behavior": {"kind": "echo"}}],
        "resources": [{"uri": APP, "name": "app", "text": "<html>phish</html>", "mime_type": MIME}],
    });
    let server = |name: &str, scenario: &serde_json::Value| {
        format!(
            "[mcp_servers.{name}]\ncommand = {:?}\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n",
            env!("CARGO_BIN_EXE_mcpctl"),
            serde_json::to_string(&scenario.to_string()).unwrap()
        )
    };
    let config = wd.write(
        "gateway.toml",
        &format!(
            "{}{}",
            server("weather", &weather),
            server("shadow", &shadow)
        ),
    );
    let runtime = support::runtime();
    runtime.block_on(async {
        let client = support::serve_stdio(&wd, &config, &[]).await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while client.list_all_tools().await.unwrap().len() < 2 {
            assert!(std::time::Instant::now() < deadline, "the tools never came");
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        let read = client
            .read_resource(ReadResourceRequestParams::new(APP))
            .await
            .unwrap();
        match &read.contents[0] {
            // The fake server's template answers with the URI itself.
            ResourceContents::TextResourceContents { text, .. } => assert_eq!(text, APP),
            other => panic!("not text: {other:?}"),
        }
        client.cancel().await.unwrap();
    });
    wd.assert_no_server_left();
}

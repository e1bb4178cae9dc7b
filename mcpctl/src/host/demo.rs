//! The embedded demo: a configuration that starts fake servers from `mcp-testkit`, so a
//! fresh clone shows something useful with no network and no external server.
//!
//! - `notes`: a stdio server (this binary's hidden `fake-server` command);
//! - `weather`: a streamable-HTTP server served in this process on 127.0.0.1;
//! - `broken`: a stdio server that exits at startup, to show how failures look.

use mcp_catalog::{AuthMode, Config, HttpConfig, LoadedConfig, ServerConfig, Transport};
use mcp_key::ServerName;
use mcp_testkit::{
    Behavior, Faults, HttpFakeServer, ResourceSpec, ResourceTemplateSpec, Scenario, ToolSpec,
};
use serde_json::json;

use crate::error::CliError;

/// The origin shown for the demo configuration.
pub(crate) const DEMO_ORIGIN: &str = "<embedded demo>";

/// The stderr line of the server that fails on purpose.
pub(crate) const BROKEN_STDERR: &str = "demo: this server fails on purpose";

/// The running demo: its configuration and the in-process HTTP server it points at.
#[derive(Debug)]
pub(crate) struct Demo {
    pub(crate) loaded: LoadedConfig,
    pub(crate) http: Option<HttpFakeServer>,
}

/// Starts the demo's HTTP server (when `with_http`) and builds the demo configuration.
pub(crate) async fn start(with_http: bool) -> Result<Demo, CliError> {
    let exe = std::env::current_exe().map_err(|e| {
        CliError::failure(format!(
            "cannot find the mcpctl executable for the demo: {e}"
        ))
        .with_hint("pass --config FILE to use a real configuration")
    })?;
    let exe = exe.display().to_string();
    let (http, url) = if with_http {
        let server = HttpFakeServer::start(weather()).await.map_err(|e| {
            CliError::failure(format!(
                "cannot start the demo HTTP server on 127.0.0.1: {e}"
            ))
            .with_hint("pass --config FILE to use a real configuration")
        })?;
        let url = server.url();
        (Some(server), url)
    } else {
        (None, "http://127.0.0.1:9/mcp".to_owned())
    };
    let config = Config::new()
        .with_server(name("notes")?, stdio(&exe, &notes())?)
        // The demo's HTTP server asks for no credentials.
        .with_server(
            name("weather")?,
            ServerConfig::new(Transport::StreamableHttp(
                HttpConfig::new(url).with_auth(AuthMode::None),
            )),
        )
        .with_server(name("broken")?, stdio(&exe, &broken())?);
    Ok(Demo {
        loaded: LoadedConfig::new(DEMO_ORIGIN, config),
        http,
    })
}

fn name(s: &str) -> Result<ServerName, CliError> {
    ServerName::new(s).map_err(|e| CliError::failure(format!("invalid demo server name: {e}")))
}

fn stdio(exe: &str, scenario: &Scenario) -> Result<ServerConfig, CliError> {
    let json = serde_json::to_string(scenario)
        .map_err(|e| CliError::failure(format!("cannot encode a demo scenario: {e}")))?;
    Ok(ServerConfig::stdio(exe).with_args([
        "fake-server".to_owned(),
        "--scenario-json".to_owned(),
        json,
    ]))
}

fn object(properties: serde_json::Value, required: &[&str]) -> serde_json::Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// The stdio notes server.
pub(crate) fn notes() -> Scenario {
    Scenario::new("demo-notes")
        .with_instructions("A small note store. Search before you create.")
        .with_tool(
            ToolSpec::echo("echo")
                .with_description("Echo the arguments back, as text and as structured content.")
                .with_input_schema(object(json!({"text": {"type": "string"}}), &[])),
        )
        .with_tool(
            ToolSpec::new(
                "search_notes",
                Behavior::Structured {
                    value: json!({
                        "query": "milk",
                        "results": [
                            {"id": 7, "title": "Groceries", "snippet": "milk, eggs, bread"},
                            {"id": 12, "title": "Breakfast ideas", "snippet": "porridge with milk"}
                        ]
                    }),
                },
            )
            .with_description("Search the notes; returns structured results.")
            .with_input_schema(object(json!({"query": {"type": "string"}}), &["query"]))
            .with_annotations(json!({"readOnlyHint": true})),
        )
        .with_tool(
            ToolSpec::new("summarize_slowly", Behavior::Sleep { ms: 2000 })
                .with_description("Takes two seconds, then echoes its arguments (try Ctrl-C)."),
        )
        .with_tool(
            ToolSpec::new(
                "delete_note",
                Behavior::Error {
                    message: "note 42 is read-only: it cannot be deleted".to_owned(),
                },
            )
            .with_description("Always fails with a tool error (isError), to show how errors look.")
            .with_input_schema(object(json!({"id": {"type": "integer"}}), &["id"])),
        )
        .with_tool(
            ToolSpec::new(
                "create_note",
                Behavior::ElicitForm {
                    message: "Create a note: confirm its details".to_owned(),
                    schema: object(
                        json!({
                            "title": {"type": "string", "title": "Title", "default": "Untitled"},
                            "priority": {"type": "string", "enum": ["low", "normal", "high"], "default": "normal"},
                            "pinned": {"type": "boolean", "default": false}
                        }),
                        &["title"],
                    ),
                },
            )
            .with_description("Asks you for the note's details (an elicitation), then returns your answer."),
        )
        .with_resource(
            ResourceSpec::new(
                "notes://readme",
                "README",
                "# Notes\n\nThis is the demo note store of mcpctl.\n",
            )
            .with_description("How the note store works.")
            .with_mime_type("text/markdown"),
        )
        .with_resource(
            ResourceSpec::new("notes://todo", "Todo", "- try `mcpctl call mcp__notes__echo '{\"text\": \"hi\"}'`\n")
                .with_mime_type("text/plain"),
        )
}

/// The streamable-HTTP weather server.
pub(crate) fn weather() -> Scenario {
    Scenario::new("demo-weather")
        .with_tool(
            ToolSpec::new(
                "get_forecast",
                Behavior::Structured {
                    value: json!({
                        "city": "Lisbon",
                        "days": [
                            {"day": "Mon", "high_c": 21, "low_c": 14, "sky": "sunny"},
                            {"day": "Tue", "high_c": 19, "low_c": 13, "sky": "cloudy"}
                        ]
                    }),
                },
            )
            .with_description("The two-day forecast for a city.")
            .with_input_schema(object(json!({"city": {"type": "string"}}), &["city"]))
            .with_annotations(json!({"readOnlyHint": true})),
        )
        .with_tool(
            ToolSpec::new("refresh_stations", Behavior::Progress { steps: 3 })
                .with_description("Reports progress three times, then echoes."),
        )
        .with_resource(
            ResourceSpec::new(
                "weather://stations",
                "Stations",
                "{\"stations\": [\"LIS\", \"OPO\", \"FAO\"]}\n",
            )
            .with_description("Weather stations.")
            .with_mime_type("application/json"),
        )
        .with_resource_template(ResourceTemplateSpec::new(
            "weather://forecast/{city}",
            "Forecast",
        ))
}

/// The server that fails on purpose.
pub(crate) fn broken() -> Scenario {
    Scenario::new("demo-broken").with_faults(
        Faults::new()
            .with_stderr(BROKEN_STDERR)
            .with_exit_at_startup(3),
    )
}

//! Talks to one stdio MCP server with `mcp-client` alone: no catalog of many servers, no
//! connection set, no pool. It lists the server's tools (every page), resources and
//! prompts, reads the first resource, gets the first prompt that needs no arguments and,
//! when asked, calls a tool while showing its progress.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_catalog::StdioConfig;
use mcp_client::{
    CallSettings, Client, ClientSettings, DEFAULT_LIST_BYTE_BUDGET, DeclineRequests, Progress,
    Target,
};
use serde_json::{Map, Value};

/// Errors of this example: whatever the client reported, as text.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// How long a request may take.
const TIMEOUT: Duration = Duration::from_secs(20);

/// What one session with the server saw.
#[derive(Debug)]
pub struct Report {
    /// The protocol era the connection spoke.
    pub era: String,
    /// The server's tools, by name, in its order (from every page of the list).
    pub tools: Vec<String>,
    /// The server's resources, by URI, in its order (from every page of the list).
    pub resources: Vec<String>,
    /// The text of the first resource, when there is one.
    pub read: Option<String>,
    /// The server's prompts, by name, in its order.
    pub prompts: Vec<String>,
    /// The text of the first prompt that needs no arguments, when there is one.
    pub prompt: Option<String>,
    /// The text of the call's result, when a tool was called.
    pub called: Option<String>,
    /// The progress the server reported during the call, in order.
    pub progress: Vec<Progress>,
    /// The server's process id while it ran.
    pub pid: Option<u32>,
}

/// Starts `command` with `args`, lists its tools, resources and prompts, reads the first
/// resource, gets the first prompt without arguments and, when `call` names a tool,
/// calls it with `arguments`; then shuts the server down.
///
/// # Errors
/// The startup failure, or the first request's error with what it asked for.
pub async fn run(
    command: &str,
    args: &[String],
    call: Option<(&str, Map<String, Value>)>,
) -> Result<Report, Error> {
    let target = Target::stdio(StdioConfig::new(command).with_args(args.iter().cloned()));
    let client = Client::connect(
        "example".parse()?,
        target,
        ClientSettings::new().with_startup_timeout(TIMEOUT),
        Arc::new(DeclineRequests),
    )
    .await?;
    let report = session(&client, call).await;
    client.shutdown().await;
    report
}

/// Everything [`run`] asks of a connected server.
async fn session(
    client: &Client,
    call: Option<(&str, Map<String, Value>)>,
) -> Result<Report, Error> {
    // `tools()` holds every page the server listed at connect (within the byte budget).
    let tools = client.tools().iter().map(|t| t.name.to_string()).collect();

    let listed = client
        .list_resources(DEFAULT_LIST_BYTE_BUDGET)
        .await
        .map_err(|e| format!("listing resources: {e}"))?;
    let resources: Vec<String> = listed.iter().map(|r| r.uri.clone()).collect();
    let read = match resources.first() {
        Some(uri) => {
            let result = client
                .read_resource(uri)
                .await
                .map_err(|e| format!("reading `{uri}`: {e}"))?;
            // Each content as JSON: its `text` (a binary `blob` has none).
            let texts: Vec<String> = result
                .contents
                .iter()
                .filter_map(|c| serde_json::to_value(c).ok())
                .filter_map(|c| c.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect();
            Some(texts.join("\n"))
        }
        None => None,
    };

    let listed = client
        .list_prompts(DEFAULT_LIST_BYTE_BUDGET)
        .await
        .map_err(|e| format!("listing prompts: {e}"))?;
    let prompts = listed.iter().map(|p| p.name.clone()).collect();
    let plain = listed.iter().find(|p| {
        p.arguments
            .iter()
            .flatten()
            .all(|a| a.required != Some(true))
    });
    let prompt = match plain {
        Some(p) => {
            let got = client
                .get_prompt(&p.name, None)
                .await
                .map_err(|e| format!("getting prompt `{}`: {e}", p.name))?;
            let texts: Vec<String> = got
                .messages
                .iter()
                .filter_map(|m| m.content.as_text().map(|t| t.text.clone()))
                .collect();
            Some(texts.join("\n"))
        }
        None => None,
    };

    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let called = match call {
        Some((tool, arguments)) => {
            let sink = Arc::clone(&seen);
            let settings =
                CallSettings::new(TIMEOUT).with_progress(Some(Arc::new(move |p: Progress| {
                    if let Ok(mut seen) = sink.lock() {
                        seen.push(p);
                    }
                })));
            let result = client
                .call_tool(tool, Some(arguments), settings)
                .await
                .map_err(|e| format!("calling `{tool}`: {e}"))?;
            Some(
                result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        }
        None => None,
    };
    let progress = seen.lock().map(|p| p.clone()).unwrap_or_default();

    Ok(Report {
        era: client.era().to_string(),
        tools,
        resources,
        read,
        prompts,
        prompt,
        called,
        progress,
        pid: client.pid(),
    })
}

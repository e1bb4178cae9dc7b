//! Talks to one stdio MCP server with `mcp-client` alone: no catalog of many servers, no
//! connection set, no pool.

use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::StdioConfig;
use mcp_client::{CallSettings, Client, ClientSettings, DeclineRequests, Target};

/// Errors of this example: whatever the client reported, as text.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// What one session with the server saw.
#[derive(Debug)]
pub struct Report {
    /// The protocol era the connection spoke.
    pub era: String,
    /// The server's tools, by name, in its order.
    pub tools: Vec<String>,
    /// The text of the call's result, when a tool was called.
    pub called: Option<String>,
    /// The server's process id while it ran.
    pub pid: Option<u32>,
}

/// Starts `command` with `args`, lists its tools and, when `call` names one, calls it with
/// `arguments`; then shuts the server down.
///
/// # Errors
/// The startup failure or the call's error, with the server's name in it.
pub async fn run(
    command: &str,
    args: &[String],
    call: Option<(&str, serde_json::Map<String, serde_json::Value>)>,
) -> Result<Report, Error> {
    let target = Target::stdio(StdioConfig::new(command).with_args(args.iter().cloned()));
    let client = Client::connect(
        "example".parse()?,
        target,
        ClientSettings::new().with_startup_timeout(Duration::from_secs(20)),
        Arc::new(DeclineRequests),
    )
    .await?;
    let tools = client.tools().iter().map(|t| t.name.to_string()).collect();
    let called = match call {
        Some((tool, arguments)) => {
            let result = client
                .call_tool(
                    tool,
                    Some(arguments),
                    CallSettings::new(Duration::from_secs(20)),
                )
                .await;
            match result {
                Ok(result) => Some(
                    result
                        .content
                        .iter()
                        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                Err(e) => {
                    client.shutdown().await;
                    return Err(format!("calling `{tool}`: {e}").into());
                }
            }
        }
        None => None,
    };
    let report = Report {
        era: client.era().to_string(),
        tools,
        called,
        pid: client.pid(),
    };
    client.shutdown().await;
    Ok(report)
}

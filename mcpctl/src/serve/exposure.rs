//! `mcpctl serve --tool-exposure search`: instead of every tool of every server, the
//! gateway lists two, one that searches the catalog ([`SEARCH_TOOL`]) and one that calls a
//! tool by its qualified name ([`CALL_TOOL`]). A call through [`CALL_TOOL`] is the call of
//! the named tool: the same approvals, filters and errors as calling it directly.

use std::sync::Arc;

use mcp_connections::ConnectionSet;
use mcp_connections::model::{CallToolResult, ContentBlock, Tool};
use rmcp::model::{CallToolRequestParams, ToolAnnotations};
use serde_json::{Map, Value, json};

/// The search tool's name.
pub(crate) const SEARCH_TOOL: &str = "search_tools";
/// The calling tool's name.
pub(crate) const CALL_TOOL: &str = "call_tool";
/// Results a search returns unless it asks for another number.
pub(crate) const DEFAULT_RESULTS: usize = 8;
/// The most results one search returns.
pub(crate) const MAX_RESULTS: usize = 50;

/// Which tools the gateway lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ToolExposure {
    /// Every tool of every server, under its qualified name.
    #[default]
    All,
    /// Two tools: `search_tools` and `call_tool`.
    Search,
}

fn object(value: Value) -> Arc<Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

/// The two tools listed in search mode.
pub(crate) fn tools() -> Vec<Tool> {
    let search = Tool::new(
        SEARCH_TOOL,
        "Find the tools that can do what you need, among every tool of every MCP server behind \
         this gateway. Describe the task in words (or give a tool's name); the best matches \
         come back with their qualified names, descriptions and input schemas. Then call one \
         with call_tool.",
        object(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in words, or a tool's name."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS,
                          "description": format!("How many tools at most (default {DEFAULT_RESULTS}).")},
            },
            "required": ["query"],
        })),
    )
    .with_annotations(ToolAnnotations::new().read_only(true));
    let call = Tool::new(
        CALL_TOOL,
        "Call a tool that search_tools returned, by its qualified name, with arguments that \
         match its input schema.",
        object(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's qualified name, as search_tools gave it."},
                "arguments": {"type": "object", "description": "The tool's arguments."},
            },
            "required": ["name"],
        })),
    );
    vec![search, call]
}

fn refused(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Runs a `search_tools` call: the matches as structured content (and as JSON text, for
/// clients that read text only), or an error result that says what to do.
pub(crate) fn search(
    set: &ConnectionSet,
    arguments: Option<&Map<String, Value>>,
) -> CallToolResult {
    let query = arguments
        .and_then(|a| a.get("query"))
        .and_then(Value::as_str);
    let Some(query) = query else {
        return refused(format!(
            "{SEARCH_TOOL} needs a `query` string: describe what the tool should do"
        ));
    };
    let limit = match arguments.and_then(|a| a.get("limit")) {
        None | Some(Value::Null) => DEFAULT_RESULTS,
        Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if (1..=MAX_RESULTS).contains(&n) => n,
            _ => {
                return refused(format!(
                    "{SEARCH_TOOL}: `limit` must be a whole number from 1 to {MAX_RESULTS}"
                ));
            }
        },
    };
    let hits = match set.search_tools(query, limit) {
        Ok(hits) => hits,
        Err(e) => return refused(format!("{SEARCH_TOOL}: {e}")),
    };
    let tools: Vec<Value> = hits
        .iter()
        .map(|h| {
            json!({
                "name": h.info.qualified_name,
                "description": h.info.description(),
                "inputSchema": h.info.tool.input_schema.as_ref(),
            })
        })
        .collect();
    let structured = json!({ "tools": tools });
    let mut result = CallToolResult::success(vec![ContentBlock::text(structured.to_string())]);
    result.structured_content = Some(structured);
    result
}

/// The call a `call_tool` request stands for (the named tool with its arguments), or the
/// error result for a request that names none.
pub(crate) fn unwrap_call(
    request: &CallToolRequestParams,
) -> Result<CallToolRequestParams, CallToolResult> {
    let arguments = request.arguments.as_ref();
    let Some(name) = arguments
        .and_then(|a| a.get("name"))
        .and_then(Value::as_str)
    else {
        return Err(refused(format!(
            "{CALL_TOOL} needs the `name` of a tool that {SEARCH_TOOL} returned"
        )));
    };
    if name == CALL_TOOL || name == SEARCH_TOOL {
        return Err(refused(format!(
            "{CALL_TOOL} calls the servers' tools; call {name} directly"
        )));
    }
    let mut inner = request.clone();
    inner.name = name.to_owned().into();
    inner.arguments = match arguments.and_then(|a| a.get("arguments")) {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map.clone()),
        Some(_) => {
            return Err(refused(format!(
                "{CALL_TOOL}: `arguments` must be an object matching the tool's input schema"
            )));
        }
    };
    Ok(inner)
}

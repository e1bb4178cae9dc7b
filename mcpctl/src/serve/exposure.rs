//! `mcpctl serve --tool-exposure search`: instead of every tool of every server, the
//! gateway lists two, one that searches the catalog ([`SEARCH_TOOL`]) and one that calls a
//! tool by its qualified name ([`CALL_TOOL`]). A call through [`CALL_TOOL`] is the call of
//! the named tool: the same approvals, filters and errors as calling it directly.
//! The mode comes from the flag, else the configuration's `tool_exposure`.

use mcp_catalog::ToolExposure;
use mcp_connections::model::{CallToolResult, ContentBlock};
pub(crate) use mcp_connections::{CALL_TOOL, SEARCH_TOOL};
use mcp_connections::{
    ConnectionSet, DEFAULT_SEARCH_RESULTS as DEFAULT_RESULTS, MAX_SEARCH_RESULTS as MAX_RESULTS,
};
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value};

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
    let structured = mcp_connections::search_answer(hits.iter().map(|h| {
        (
            h.info.qualified_name.as_str(),
            h.info.description(),
            h.info.tool.input_schema.as_ref(),
        )
    }));
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

/// The mode the gateway runs in: the command line's, else the configuration's.
pub(crate) fn effective(
    flag: Option<ToolExposure>,
    catalog: &mcp_catalog::ResolvedCatalog,
) -> ToolExposure {
    flag.unwrap_or_else(|| catalog.tool_exposure())
}

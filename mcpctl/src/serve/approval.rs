//! The gateway's approval question: a tool whose approval mode asks is asked through the
//! calling client's elicitation (a request in the 2025 era, an `input_required` round in the
//! 2026 era), and refused unless the answer approves.

use mcp_connections::model::{
    CallToolResult, ElicitRequestParams, ElicitResult, ElicitationAction,
};
use mcp_key::McpServerKey;
use serde_json::{Value, json};

/// The form that asks the user whether `tool` of `server` may run.
pub(crate) fn approval_question(server: &McpServerKey, tool: &str) -> Option<ElicitRequestParams> {
    let schema = json!({
        "type": "object",
        "properties": {"approve": {"type": "boolean", "title": "Run it?"}},
        "required": ["approve"],
    });
    serde_json::from_value::<ElicitRequestParams>(json!({
        "mode": "form",
        "message": format!("Allow the tool `{tool}` of MCP server `{server}` to run?"),
        "requestedSchema": schema,
    }))
    .ok()
}

/// Whether the answer to [`approval_question`] approves.
pub(crate) fn approves(answer: &ElicitResult) -> bool {
    answer.action == ElicitationAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
}

/// The unapproved call's result.
pub(crate) fn not_approved(server: &McpServerKey, tool: &str) -> CallToolResult {
    super::gateway::error_result(format!(
        "the user did not approve running `{tool}` of MCP server `{server}`"
    ))
}

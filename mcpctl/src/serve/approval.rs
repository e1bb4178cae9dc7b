//! The gateway's approval question: a tool whose approval mode asks is asked through the
//! calling client's elicitation (a request in the 2025 era, an `input_required` round in the
//! 2026 era), and refused unless the answer approves.

use mcp_connections::ConnectionSet;
use mcp_connections::model::{
    CallToolResult, ElicitRequestParams, ElicitResult, ElicitationAction,
};
use mcp_key::McpServerKey;
use serde_json::{Value, json};

/// What the approval rule says about a call.
pub(crate) enum Verdict {
    /// Make the call. `fail_fast` when the name resolved to nothing (no server has it, or
    /// its server did not come up): the call then says why without starting the server,
    /// whose tool would otherwise run unasked.
    Call {
        /// See [`Verdict::Call`].
        fail_fast: bool,
    },
    /// The user did not approve: this result instead of the call.
    Refused(CallToolResult),
}

/// The approval rule for calling `name` on `set`, in both eras: the name is resolved with
/// its server brought up first (so a tool whose approval mode asks is never called unasked
/// because its server was starting or restarting); when the mode asks, `ask` puts the
/// question to the client (`None`: it cannot be asked, which refuses). With `remember`, an
/// approval holds for the rest of the set's life (a 2025-era session).
pub(crate) async fn check<F, Fut>(
    set: &ConnectionSet,
    name: &str,
    remember: bool,
    ask: F,
) -> Verdict
where
    F: FnOnce(ElicitRequestParams) -> Fut,
    Fut: std::future::Future<Output = Option<ElicitResult>>,
{
    let Some((server, tool)) = set.resolve_tool_settled(name).await else {
        return Verdict::Call { fail_fast: true };
    };
    if !set.approval(&server, &tool).is_ok_and(|a| a.must_ask()) {
        return Verdict::Call { fail_fast: false };
    }
    let approved = match approval_question(&server, &tool) {
        Some(question) => ask(question).await.is_some_and(|answer| approves(&answer)),
        None => false,
    };
    if !approved {
        return Verdict::Refused(not_approved(&server, &tool));
    }
    if remember {
        let _ = set.remember_approval(&server, &tool);
    }
    Verdict::Call { fail_fast: false }
}

/// The form that asks the user whether `tool` of `server` may run.
fn approval_question(server: &McpServerKey, tool: &str) -> Option<ElicitRequestParams> {
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
fn approves(answer: &ElicitResult) -> bool {
    answer.action == ElicitationAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
}

/// The unapproved call's result.
fn not_approved(server: &McpServerKey, tool: &str) -> CallToolResult {
    super::gateway::error_result(format!(
        "the user did not approve running `{tool}` of MCP server `{server}`"
    ))
}

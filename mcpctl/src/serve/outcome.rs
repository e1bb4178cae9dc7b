//! A call's outcome as the client gets it: a result marked complete, an unknown tool as a
//! protocol error, and any other failure as an error result the model can read, with what
//! to do. A leaf of `serve/`, shared by both eras and the approval rule.

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, ResultType};

/// What the client gets for a call's outcome (both eras): the result marked `complete` (a
/// 2026-era client needs the discriminator, rmcp takes it off again for older clients, and
/// a 2025-era server never sends it); an unknown tool as a protocol error; any other
/// failure as an error result the model can read, with what to do.
pub(crate) fn call_outcome(
    outcome: mcp_connections::Result<CallToolResult>,
) -> Result<CallToolResult, McpError> {
    match outcome {
        Ok(mut result) => {
            result.result_type.get_or_insert(ResultType::COMPLETE);
            Ok(result)
        }
        Err(e) if e.is_unknown() => Err(McpError::invalid_params(mcp_key::error_chain(&e), None)),
        Err(e) => Ok(error_result(explain(&e))),
    }
}

/// An error result the model can read (not a protocol error).
pub(crate) fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The text of a failed call for the model and the person reading it, with what to do.
pub(crate) fn explain(e: &mcp_connections::Error) -> String {
    let text = mcp_key::error_chain(e);
    if e.is_auth_required()
        && let mcp_connections::Error::NotReady { server, .. } = e
    {
        return format!(
            "{text} (run `mcpctl login {server}` where mcpctl serve runs, then call again)"
        );
    }
    text
}

//! What a call goes to once the approval rule let it through: a leaf of `serve/` that
//! the caller's grants ([`super::caller::may_call`]) and the approval rule
//! ([`super::approval`], which makes the call) both name.

use mcp_key::McpServerKey;

/// What a call goes to once the rule let it through.
pub(crate) enum Target {
    /// The tool the name resolved to when the rule looked (and, when it asked, the one
    /// the user approved): called as such, so a tool list that changes in between cannot
    /// redirect the call to another tool.
    Resolved(McpServerKey, String),
    /// The name resolved to nothing (no server has it, or its server did not come up):
    /// the call fails with why, without starting the server, and never reaches a tool,
    /// which would otherwise run unasked (also when its server came up in between).
    Unresolved(String),
}

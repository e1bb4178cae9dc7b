//! Pre-call hooks: a host may inspect a call, rewrite its arguments or deny it, but never
//! move it to another server or environment.

use std::future::Future;
use std::sync::Arc;

use mcp_key::McpServerKey;
use serde_json::Value;

use crate::policy::elicitation::BoxFuture;

/// A tool call as a hook sees it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The server the call goes to. A hook must not change it.
    pub server: McpServerKey,
    /// The raw tool name. A hook must not change it.
    pub tool: String,
    /// The arguments (a JSON object, or `None`). A hook may rewrite them.
    pub arguments: Option<Value>,
}

/// A hook's refusal of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookDenial {
    reason: String,
}

impl HookDenial {
    /// A denial with the reason shown to the caller.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Runs before every tool call of the set, in the order the hooks were added.
pub trait CallHook: Send + Sync {
    /// Returns the call to make (possibly with rewritten arguments), or a denial.
    fn before_call(&self, call: ToolCall) -> BoxFuture<'_, Result<ToolCall, HookDenial>>;
}

/// A [`CallHook`] from a closure, for
/// [`ConnectionSetOptions::with_call_hook`](crate::ConnectionSetOptions::with_call_hook):
/// it gets each call and returns the call to make (the same server and tool, its arguments
/// possibly rewritten) or a denial.
///
/// ```
/// use mcp_connections::{ConnectionSetOptions, HookDenial, call_hook_fn};
///
/// let no_deletes = call_hook_fn(|call| async move {
///     if call.tool.starts_with("delete") {
///         Err(HookDenial::new("deleting is not allowed in this session"))
///     } else {
///         Ok(call)
///     }
/// });
/// let options = ConnectionSetOptions::new().with_call_hook(no_deletes);
/// # drop(options);
/// ```
pub fn call_hook_fn<F, Fut>(f: F) -> Arc<dyn CallHook>
where
    F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolCall, HookDenial>> + Send + 'static,
{
    Arc::new(FnHook(f))
}

struct FnHook<F>(F);

impl<F, Fut> CallHook for FnHook<F>
where
    F: Fn(ToolCall) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ToolCall, HookDenial>> + Send + 'static,
{
    fn before_call(&self, call: ToolCall) -> BoxFuture<'_, Result<ToolCall, HookDenial>> {
        Box::pin((self.0)(call))
    }
}

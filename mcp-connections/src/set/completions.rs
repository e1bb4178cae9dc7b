//! Completions (`completion/complete`): argument values a server suggests for one of its
//! prompts or resource templates.

use std::sync::Arc;

use mcp_key::McpServerKey;
use mcp_pool::deadline_in;
use rmcp::model::{ArgumentInfo, CompletionContext, CompletionInfo, Reference};

use crate::error::{Error, Result};
use crate::set::ConnectionSet;

impl ConnectionSet {
    /// Completions for `argument` of `server`'s prompt or resource template named in
    /// `reference` (the server's own prompt name or URI template, as its listing gives
    /// them), with the values of arguments already chosen in `context`. Waits for a server
    /// that is still starting (and starts a deferred one) like a call does, within the
    /// server's `tool_timeout_sec`.
    ///
    /// # Errors
    /// An unknown server; a server that does not offer completions (the error says so);
    /// the server's own error (an unknown prompt or argument); a timeout.
    ///
    /// # Cancel safety
    /// Cancel-safe (the request is abandoned).
    pub async fn complete(
        &self,
        server: &McpServerKey,
        reference: Reference,
        argument: ArgumentInfo,
        context: Option<CompletionContext>,
    ) -> Result<CompletionInfo> {
        let slot = Arc::clone(self.inner.slot(server)?);
        let timeout = slot.spec.config.tool_timeout();
        let deadline = deadline_in(timeout);
        let live = self.ready_connection(&slot, deadline, false).await?;
        let operation = match &reference {
            Reference::Prompt(p) => format!("completion/complete of prompt {}", p.name),
            Reference::Resource(r) => {
                format!("completion/complete of resource template {}", r.uri)
            }
            _ => "completion/complete".to_owned(),
        };
        let timed_out = || Error::Timeout {
            server: server.clone(),
            tool: operation.clone(),
            after: timeout,
        };
        let Ok(_turn) = tokio::time::timeout_at(deadline, live.turn()).await else {
            return Err(timed_out());
        };
        match tokio::time::timeout_at(deadline, live.complete(reference, argument, context)).await {
            Ok(Ok(info)) => Ok(info),
            Ok(Err(e)) => Err(self.request_error(server, &operation, e)),
            Err(_) => Err(timed_out()),
        }
    }
}

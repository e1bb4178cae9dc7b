//! Prompts: `prompts/list` across the ready servers that offer prompts, and `prompts/get`.

use std::sync::Arc;

use mcp_key::McpServerKey;
use rmcp::model::{GetPromptResult, JsonObject, Prompt};

use crate::error::{Error, Result};
use crate::set::ConnectionSet;
use crate::set::resources::Listing;
use mcp_pool::deadline_in;

impl ConnectionSet {
    /// Every prompt of every ready server that announced the `prompts` capability (all
    /// pages, concurrently). Servers without prompts are left out; a failing or unready one
    /// is reported in `failures`, not as an error of the whole listing. Prompt names are
    /// the servers' own: qualify them per server if you show them together.
    ///
    /// # Cancel safety
    /// Cancel-safe (the listing is abandoned).
    pub async fn list_prompts(&self) -> Listing<Prompt> {
        let budget = self.inner.options.client.list_byte_budget();
        self.list_across(|live| async move { live.list_prompts(budget).await })
            .await
    }

    /// Gets prompt `name` of `server` with `arguments`, within the server's
    /// `tool_timeout_sec`; waits for a server that is still starting (and starts a deferred
    /// one) like a call does.
    ///
    /// # Cancel safety
    /// Cancel-safe (the request is abandoned).
    pub async fn get_prompt(
        &self,
        server: &McpServerKey,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult> {
        let slot = Arc::clone(self.inner.slot(server)?);
        let timeout = slot.spec.config.tool_timeout();
        let deadline = deadline_in(timeout);
        let live = self.ready_connection(&slot, deadline, false).await?;
        let operation = format!("prompts/get {name}");
        let Ok(_turn) = tokio::time::timeout_at(deadline, live.turn()).await else {
            return Err(Error::Timeout {
                server: server.clone(),
                tool: operation,
                after: timeout,
            });
        };
        match tokio::time::timeout_at(deadline, live.get_prompt(name, arguments)).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.request_error(server, &operation, e)),
            Err(_) => Err(Error::Timeout {
                server: server.clone(),
                tool: operation,
                after: timeout,
            }),
        }
    }
}

//! Approvals of a set: whether to ask the user before a call, and what was approved.

use crate::error::Result;
use crate::policy::approvals::{Approval, must_ask};
use crate::set::ConnectionSet;
use crate::set::slot::SlotState;
use mcp_key::McpServerKey;

impl ConnectionSet {
    /// Whether the host must ask the user before calling `tool` on `server`, following the
    /// configured approval mode (the server's, per tool, with the owning environment's
    /// default for environment-scoped servers) and the tool's annotations, unless the user
    /// already approved it for this session. Approvals are per server key: approving a
    /// tool of `github@devbox` does not approve it on `github@local`.
    pub fn approval(&self, server: &McpServerKey, tool: &str) -> Result<Approval> {
        let slot = self.inner.slot(server)?;
        if self.is_remembered(server, tool) {
            return Ok(Approval::Remembered);
        }
        let mode = self
            .inner
            .catalog
            .approval_mode(server, tool)
            .unwrap_or_default();
        let annotations = match slot.current() {
            SlotState::Ready(live) => live
                .tools()
                .iter()
                .find(|t| t.name == tool)
                .and_then(|t| t.annotations.clone()),
            _ => None,
        };
        Ok(if must_ask(mode, annotations.as_ref()) {
            Approval::Ask
        } else {
            Approval::NotNeeded
        })
    }

    /// Remembers the user's approval of `tool` on `server` for the rest of this set's life,
    /// bound to the tool's definition as listed now: if the server changes the tool (its
    /// description, schemas, annotations: [`crate::tool_fingerprint`]), the user is asked
    /// again.
    pub fn remember_approval(&self, server: &McpServerKey, tool: &str) -> Result<()> {
        self.inner.slot(server)?;
        let definition = self.definition_fingerprint(server, tool);
        if let Ok(mut set) = self.inner.approvals.lock() {
            set.insert((server.clone(), tool.to_owned()), definition);
        }
        Ok(())
    }

    /// The fingerprint of `tool` as `server` lists it now, if it is ready and lists it.
    fn definition_fingerprint(
        &self,
        server: &McpServerKey,
        tool: &str,
    ) -> Option<mcp_key::Fingerprint> {
        let slot = self.inner.slot(server).ok()?;
        match slot.current() {
            SlotState::Ready(live) => live
                .tools()
                .iter()
                .find(|t| t.name == tool)
                .map(crate::policy::drift::tool_fingerprint),
            _ => None,
        }
    }

    fn is_remembered(&self, server: &McpServerKey, tool: &str) -> bool {
        let remembered = self
            .inner
            .approvals
            .lock()
            .ok()
            .and_then(|s| s.get(&(server.clone(), tool.to_owned())).copied());
        match remembered {
            None => false,
            // Approved before the definition was known: still this session's yes.
            Some(None) => true,
            Some(Some(approved)) => self.definition_fingerprint(server, tool) == Some(approved),
        }
    }
}

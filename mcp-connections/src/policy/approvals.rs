//! Whether the host must ask the user before a tool call, per server key and tool.

use mcp_catalog::ApprovalMode;
use mcp_key::McpServerKey;
use rmcp::model::ToolAnnotations;

use crate::error::Result;
use crate::set::ConnectionSet;
use crate::slot::SlotState;

/// The answer of [`ConnectionSet::approval`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Run it without asking.
    NotNeeded,
    /// The user already approved this tool of this server for the session.
    Remembered,
    /// Ask the user first.
    Ask,
}

impl Approval {
    /// Whether the host must ask before calling.
    pub fn must_ask(self) -> bool {
        matches!(self, Self::Ask)
    }
}

/// The rule of each approval mode: `approve` never asks; `prompt` always asks; `writes` asks
/// unless the tool is annotated read-only; `auto` asks when the tool is annotated
/// destructive, or when it carries neither a read-only nor a destructive hint.
pub fn must_ask(mode: ApprovalMode, annotations: Option<&ToolAnnotations>) -> bool {
    let read_only = annotations.and_then(|a| a.read_only_hint);
    let destructive = annotations.and_then(|a| a.destructive_hint);
    match mode {
        ApprovalMode::Approve => false,
        ApprovalMode::Prompt => true,
        ApprovalMode::Writes => read_only != Some(true),
        _ => match (read_only, destructive) {
            (_, Some(true)) => true,
            (Some(true), _) | (_, Some(false)) => false,
            (_, None) => true,
        },
    }
}

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
                .map(crate::drift::tool_fingerprint),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(read_only: Option<bool>, destructive: Option<bool>) -> ToolAnnotations {
        let mut a = ToolAnnotations::default();
        a.read_only_hint = read_only;
        a.destructive_hint = destructive;
        a
    }

    #[test]
    fn the_approval_rules_of_each_mode() {
        use ApprovalMode::*;
        let ro = ann(Some(true), None);
        let destructive = ann(None, Some(true));
        let safe_write = ann(Some(false), Some(false));
        let none = ann(None, None);
        let cases = [
            (Approve, Some(&destructive), false),
            (Prompt, Some(&ro), true),
            (Writes, Some(&ro), false),
            (Writes, Some(&safe_write), true),
            (Writes, None, true),
            (Auto, Some(&ro), false),
            (Auto, Some(&destructive), true),
            (Auto, Some(&safe_write), false),
            (Auto, Some(&none), true),
            (Auto, None, true),
        ];
        for (mode, a, expected) in cases {
            assert_eq!(must_ask(mode, a), expected, "{mode:?} {a:?}");
        }
    }
}

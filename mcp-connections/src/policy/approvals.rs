//! Whether the host must ask the user before a tool call, per server key and tool.

use mcp_catalog::ApprovalMode;
use rmcp::model::ToolAnnotations;

/// The answer of [`ConnectionSet::approval`](crate::ConnectionSet::approval).
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

//! The approval question on the terminal (`mcpctl call`): may this tool run with these
//! arguments? Asked only where the tool's approval mode asks; declined when stdin is not
//! a terminal (nobody can answer).

use std::io::IsTerminal;

use mcp_connections::{ApprovalAnswer, ApprovalRequest, Approver, BoxFuture};
use serde_json::Value;

use crate::term::render::terminal_safe;
use crate::term::style::Style;

/// The longest rendering of a description or the arguments in the question, in
/// characters.
const MAX_SHOWN: usize = 600;

/// Asks the person at the terminal; declines when stdin is not a terminal.
#[derive(Debug)]
pub(crate) struct TerminalApprover {
    interactive: bool,
    /// One question at a time.
    lock: tokio::sync::Mutex<()>,
}

impl TerminalApprover {
    pub(crate) fn new() -> Self {
        Self {
            interactive: std::io::stdin().is_terminal(),
            lock: tokio::sync::Mutex::new(()),
        }
    }
}

impl Approver for TerminalApprover {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalAnswer> {
        Box::pin(async move {
            if !self.interactive {
                eprintln!(
                    "mcpctl: declined running tool `{}` of server `{}`: its approval mode asks, and stdin is not a terminal",
                    terminal_safe(request.tool_name()),
                    request.server
                );
                return ApprovalAnswer::Decline;
            }
            let _turn = self.lock.lock().await;
            tokio::task::spawn_blocking(move || crate::term::screen::asking(|| ask(&request)))
                .await
                .unwrap_or(ApprovalAnswer::Decline)
        })
    }
}

fn ask(request: &ApprovalRequest) -> ApprovalAnswer {
    eprintln!();
    eprintln!("{} {}", Style::stderr().cyan_bold("?"), question(request));
    match crate::term::elicit::read_line("  run it? [y]es / [N]o: ") {
        Some(a) if a.eq_ignore_ascii_case("y") || a.eq_ignore_ascii_case("yes") => {
            ApprovalAnswer::Approve
        }
        _ => ApprovalAnswer::Decline,
    }
}

/// The question's lines: the tool and its server, its description, the arguments, and,
/// for a tool that changed since it was approved, what changed. Every text of the server
/// is made safe for the terminal and cut.
fn question(request: &ApprovalRequest) -> String {
    let mut lines = vec![format!(
        "run tool `{}` of server `{}`?",
        terminal_safe(request.tool_name()),
        request.server
    )];
    if let Some(drift) = &request.drift {
        lines.push(format!(
            "  it changed since it was approved: {}; a yes accepts the new definition for later calls too",
            terminal_safe(&cut(&drift.describe()))
        ));
    }
    if let Some(description) = request.tool.description.as_deref() {
        lines.push(format!("  {}", terminal_safe(&cut(description))));
    }
    let arguments = match &request.arguments {
        None | Some(Value::Null) => "none".to_owned(),
        Some(arguments) => terminal_safe(&cut(&arguments.to_string())).into_owned(),
    };
    lines.push(format!("  arguments: {arguments}"));
    lines.join("\n")
}

/// The first [`MAX_SHOWN`] characters of `text`, with `…` when that cut it.
fn cut(text: &str) -> String {
    let mut head: String = text.chars().take(MAX_SHOWN).collect();
    if head.len() < text.len() {
        head.push('…');
    }
    head
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use mcp_connections::model::Tool;
    use serde_json::json;

    fn request(arguments: Option<Value>) -> ApprovalRequest {
        let tool: Tool = serde_json::from_value(json!({
            "name": "drop\u{1b}[2Jtable",
            "description": "Drops a table.",
            "inputSchema": {"type": "object"},
        }))
        .unwrap();
        ApprovalRequest::new("notes".parse().unwrap(), tool, arguments)
    }

    #[test]
    fn the_question_names_the_tool_safely_and_shows_the_arguments_cut() {
        let text = question(&request(Some(json!({"name": "users"}))));
        assert_eq!(
            text,
            "run tool `drop\\e[2Jtable` of server `notes`?\n  Drops a table.\n  arguments: {\"name\":\"users\"}"
        );
        let long = question(&request(Some(json!({"x": "y".repeat(2000)}))));
        let shown = long.lines().last().unwrap();
        assert!(shown.ends_with('…'), "{shown}");
        assert!(shown.chars().count() < MAX_SHOWN + 20, "{shown}");
        let none = question(&request(None));
        assert!(none.ends_with("arguments: none"), "{none}");
    }
}

//! `mcpctl status`: start every server, show progress, then one line per server sorted by
//! key, failure details, and a summary line. Exit code 1 when a required server failed.

use mcp_connections::{ServerState, ServerStatus, StartupSummary};
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::error::{CliError, EXIT_FAILURE, clean_message, not_ready_hint};
use crate::progress::{ProgressMode, plural};
use crate::session::Session;
use crate::style::Style;

/// Runs `status`.
pub(crate) async fn run(session: &mut Session, global: &GlobalArgs) -> Result<u8, CliError> {
    let mut summary = session
        .wait_startup(ProgressMode::choose(global.json, true))
        .await;
    let grouped = session.set.multi_environment();
    if grouped {
        summary
            .servers
            .sort_by_key(|s| super::environment_group(&s.key));
    }
    if global.json {
        super::out_json(&to_json(&session.origin, &summary));
    } else {
        super::out(&human(&session.origin, &summary, grouped, Style::stdout()));
    }
    let required_failed = summary
        .servers
        .iter()
        .any(|s| s.required && !matches!(s.state, ServerState::Ready { .. }));
    Ok(if required_failed { EXIT_FAILURE } else { 0 })
}

fn state_label(state: &ServerState) -> &'static str {
    match state {
        ServerState::Starting => "starting",
        ServerState::Ready { .. } => "ready",
        ServerState::Failed(_) => "failed",
        ServerState::Cancelled => "cancelled",
        _ => "unknown",
    }
}

fn human(origin: &str, summary: &StartupSummary, grouped: bool, s: Style) -> String {
    let mut lines = vec![format!("MCP servers from {origin}:")];
    let rows: Vec<Vec<String>> = summary
        .servers
        .iter()
        .map(|status| {
            let mut detail = match &status.state {
                ServerState::Ready { tools } => plural(*tools, "tool"),
                ServerState::Failed(f) => f.reason().to_string(),
                _ => String::new(),
            };
            if status.required {
                detail.push_str(if detail.is_empty() {
                    "required"
                } else {
                    ", required"
                });
            }
            vec![
                format!("  {}", status.key),
                status.transport.to_owned(),
                state_label(&status.state).to_owned(),
                detail,
            ]
        })
        .collect();
    let table = super::table_painted(&rows, |r, c, cell| match summary.servers.get(r) {
        Some(status) if c == 2 => paint_state(cell, &status.state, s),
        _ => cell.to_owned(),
    });
    let mut current_group: Option<String> = None;
    for (status, line) in summary.servers.iter().zip(table) {
        let group = super::environment_group(&status.key);
        if grouped && current_group.as_ref() != Some(&group) {
            lines.push(s.bold(&format!("environment {group}:")));
            current_group = Some(group);
        }
        lines.push(line);
        if let ServerState::Failed(f) = &status.state {
            lines.extend(failure_details(status, f, s));
        }
    }
    if summary.servers.is_empty() {
        lines.push(format!(
            "  (no enabled servers: add [mcp_servers.NAME] tables with `command` or `url` to {origin})"
        ));
    }
    lines.push(String::new());
    lines.push(summary_line(summary));
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn paint_state(label: &str, state: &ServerState, s: Style) -> String {
    match state {
        ServerState::Ready { .. } => s.green(label),
        ServerState::Failed(_) => s.red_bold(label),
        _ => s.yellow(label),
    }
}

fn failure_details(
    status: &ServerStatus,
    f: &mcp_connections::StartupFailure,
    s: Style,
) -> Vec<String> {
    let indent = "      ";
    let mut out = vec![format!("{indent}{}", clean_message(f.message()))];
    if let Some(tail) = f.stderr_tail() {
        for line in tail.lines() {
            out.push(format!("{indent}{} {line}", s.dim("stderr |")));
        }
    }
    out.push(format!(
        "{indent}{} {}",
        s.cyan_bold("hint:"),
        not_ready_hint(&status.key.to_string(), Some(f.reason()), true)
    ));
    out
}

fn summary_line(summary: &StartupSummary) -> String {
    let mut parts = vec![format!("{} ready", summary.ready())];
    let failed = summary.failed();
    if failed > 0 {
        parts.push(format!("{failed} failed"));
    }
    let other = summary.servers.len() - summary.ready() - failed;
    if other > 0 {
        parts.push(format!("{other} cancelled"));
    }
    format!(
        "{}: {}",
        plural(summary.servers.len(), "server"),
        parts.join(", ")
    )
}

fn to_json(origin: &str, summary: &StartupSummary) -> Value {
    let servers: Vec<Value> = summary
        .servers
        .iter()
        .map(|status| {
            let mut v = json!({
                "server": status.key,
                "environment": status.key.environment(),
                "transport": status.transport,
                "required": status.required,
                "state": state_label(&status.state),
            });
            match &status.state {
                ServerState::Ready { tools } => v["tools"] = json!(tools),
                ServerState::Failed(f) => {
                    v["reason"] = json!(f.reason());
                    v["error"] = json!(clean_message(f.message()));
                    v["stderr_tail"] = json!(f.stderr_tail());
                }
                _ => {}
            }
            v
        })
        .collect();
    let failed = summary.failed();
    json!({
        "config": origin,
        "servers": servers,
        "summary": {
            "total": summary.servers.len(),
            "ready": summary.ready(),
            "failed": failed,
            "cancelled": summary.servers.len() - summary.ready() - failed,
        },
    })
}

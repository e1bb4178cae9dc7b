//! `mcpctl status`: start every server, show progress, then one line per server sorted by
//! key, its warnings (e.g. duplicate tool names), failure details, and a summary line. Exit code 1 when a required server failed.

use std::collections::BTreeMap;

use mcp_auth::AuthStatus;
use mcp_connections::{FailureReason, ServerInfo, ServerState, ServerStatus, StartupSummary};
use mcp_key::McpServerKey;
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::error::{CliError, EXIT_FAILURE, clean_message, not_ready_hint};
use crate::host::session::Session;
use crate::term::progress::{ProgressMode, plural};
use crate::term::style::Style;

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
    super::warn_drift(session, &summary.servers);
    let auth = auth_of(session, &summary).await;
    if global.json {
        let info: BTreeMap<McpServerKey, ServerInfo> = summary
            .servers
            .iter()
            .filter_map(|s| Some((s.key.clone(), session.set.server_info(&s.key)?)))
            .collect();
        crate::term::render::out_json(&to_json(&session.origin, &summary, &auth, &info));
    } else {
        crate::term::render::out(&human(
            &session.origin,
            &summary,
            &auth,
            grouped,
            Style::stdout(),
        ));
    }
    let required_failed = summary
        .servers
        .iter()
        .any(|s| s.required && !matches!(s.state, ServerState::Ready { .. }));
    Ok(if required_failed { EXIT_FAILURE } else { 0 })
}

/// How each server authenticates (its [`AuthStatus`]) and what to do after a 401.
struct ServerAuthInfo {
    status: AuthStatus,
    login_hint: Option<String>,
}

async fn auth_of(
    session: &Session,
    summary: &StartupSummary,
) -> BTreeMap<McpServerKey, ServerAuthInfo> {
    let mut out = BTreeMap::new();
    for status in &summary.servers {
        let Some(config) = session.catalog.get(&status.key) else {
            continue;
        };
        let mut auth = crate::host::auth::status(
            &session.catalog,
            &status.key,
            config,
            session.store.as_ref(),
        )
        .await;
        // Nothing stored, yet the server let us in: it asks for no credentials.
        if auth == AuthStatus::LoginRequired && matches!(status.state, ServerState::Ready { .. }) {
            auth = AuthStatus::Unsupported;
        }
        let info = ServerAuthInfo {
            status: auth,
            login_hint: crate::host::auth::login_hint(&status.key, config),
        };
        out.insert(status.key.clone(), info);
    }
    out
}

fn needs_login(state: &ServerState) -> bool {
    matches!(state, ServerState::Failed(f) if matches!(
        f.reason(),
        FailureReason::LoginRequired
            | FailureReason::ReloginRequired
            | FailureReason::EnterpriseReloginRequired
    ))
}

fn state_label(state: &ServerState) -> &'static str {
    match state {
        ServerState::Starting => "starting",
        ServerState::Ready { .. } => "ready",
        ServerState::Failed(_) => "failed",
        ServerState::Cancelled => "cancelled",
        ServerState::Deferred { .. } => "deferred",
        _ => "unknown",
    }
}

fn human(
    origin: &str,
    summary: &StartupSummary,
    auth: &BTreeMap<McpServerKey, ServerAuthInfo>,
    grouped: bool,
    s: Style,
) -> String {
    let mut lines = vec![format!("MCP servers from {origin}:")];
    let rows: Vec<Vec<String>> = summary
        .servers
        .iter()
        .map(|status| {
            let mut detail = match &status.state {
                ServerState::Ready { tools } => plural(*tools, "tool"),
                ServerState::Deferred { tools, .. } => {
                    format!("{} (cached; starts on first use)", plural(*tools, "tool"))
                }
                // One failure is just a failure; from the second in a row it is a loop.
                ServerState::Failed(f) => match status.crash_loop.filter(|c| c.crashes > 1) {
                    Some(c) => format!(
                        "{} (crash loop: {} in a row, next start in {:.0}s)",
                        f.reason(),
                        c.crashes,
                        c.retry_in.as_secs_f64().ceil()
                    ),
                    None => f.reason().to_string(),
                },
                _ => String::new(),
            };
            // The auth status of servers that use credentials, unless the failure says it.
            if let Some(info) = auth.get(&status.key)
                && info.status != AuthStatus::Unsupported
                && !needs_login(&status.state)
            {
                if !detail.is_empty() {
                    detail.push_str(", ");
                }
                detail.push_str(&format!("auth: {}", info.status));
            }
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
    let table =
        crate::term::render::table_painted(&rows, |r, c, cell| match summary.servers.get(r) {
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
        for warning in &status.warnings {
            lines.push(format!("      {} {warning}", s.yellow("warning:")));
        }
        if let ServerState::Failed(f) = &status.state {
            let login_hint = auth
                .get(&status.key)
                .and_then(|info| info.login_hint.as_deref())
                .filter(|_| needs_login(&status.state));
            lines.extend(failure_details(status, f, login_hint, s));
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
    login_hint: Option<&str>,
    s: Style,
) -> Vec<String> {
    let indent = "      ";
    // The message and the stderr tail are the server's own text.
    let safe = crate::term::render::terminal_safe;
    let mut out = vec![format!("{indent}{}", safe(&clean_message(&f.detail())))];
    if let Some(tail) = f.stderr_tail() {
        for line in tail.lines() {
            out.push(format!("{indent}{} {}", s.dim("stderr |"), safe(line)));
        }
    }
    let hint = login_hint.map_or_else(
        || not_ready_hint(&status.key.to_string(), Some(f.reason()), true),
        ToOwned::to_owned,
    );
    out.push(format!("{indent}{} {hint}", s.cyan_bold("hint:")));
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

fn to_json(
    origin: &str,
    summary: &StartupSummary,
    auth: &BTreeMap<McpServerKey, ServerAuthInfo>,
    info: &BTreeMap<McpServerKey, ServerInfo>,
) -> Value {
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
                "auth": auth.get(&status.key).map(|info| info.status.as_str()),
            });
            if let Some(hint) = auth
                .get(&status.key)
                .and_then(|info| info.login_hint.as_deref())
                .filter(|_| needs_login(&status.state))
            {
                v["hint"] = json!(hint);
            }
            if !status.warnings.is_empty() {
                v["warnings"] = json!(status.warnings);
            }
            if let Some(crash_loop) = status.crash_loop {
                v["crash_loop"] = json!(crash_loop);
            }
            if let Some(plugin) = &status.plugin {
                v["plugin"] = json!(plugin);
            }
            // From the live connection only: absent for servers that are not ready.
            if let Some(info) = info.get(&status.key) {
                v["server_info"] = json!(info);
            }
            match &status.state {
                ServerState::Ready { tools } | ServerState::Deferred { tools, .. } => {
                    v["tools"] = json!(tools);
                }
                ServerState::Failed(f) => {
                    v["reason"] = json!(f.reason());
                    v["error"] = json!(clean_message(&f.detail()));
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

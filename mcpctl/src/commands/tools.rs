//! `mcpctl tools [--server KEY]`: the aggregated catalog with qualified names.

use mcp_connections::ToolInfo;
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::error::{CliError, EXIT_FAILURE};
use crate::progress::{ProgressMode, plural};
use crate::session::Session;
use crate::style::Style;

/// Runs `tools`.
pub(crate) async fn run(
    session: &mut Session,
    global: &GlobalArgs,
    server: Option<&str>,
) -> Result<u8, CliError> {
    let only = server.map(|s| session.server_key(s)).transpose()?;
    let relevant = session
        .wait_servers(ProgressMode::choose(global.json, false), only.as_ref())
        .await;
    let required_failed = super::warn_unready(&relevant);
    let mut tools: Vec<ToolInfo> = session
        .set
        .tools()
        .await
        .into_iter()
        .filter(|t| only.as_ref().is_none_or(|k| *k == t.server))
        .collect();
    let grouped = session.set.multi_environment();
    if grouped {
        tools.sort_by_key(|t| super::environment_group(&t.server));
    }
    if global.json {
        crate::render::out_json(&Value::Array(tools.iter().map(to_json).collect()));
    } else {
        crate::render::out(&human(&tools, grouped, Style::stdout()));
    }
    Ok(if required_failed { EXIT_FAILURE } else { 0 })
}

fn first_line(text: Option<&str>) -> String {
    text.and_then(|t| t.lines().find(|l| !l.trim().is_empty()))
        .map(str::trim)
        .unwrap_or_default()
        .to_owned()
}

fn human(tools: &[ToolInfo], grouped: bool, s: Style) -> String {
    if tools.is_empty() {
        return "no tools\n".to_owned();
    }
    let mut rows = vec![vec![
        "TOOL".to_owned(),
        "SERVER".to_owned(),
        "DESCRIPTION".to_owned(),
    ]];
    rows.extend(tools.iter().map(|t| {
        vec![
            t.qualified_name.clone(),
            t.server.to_string(),
            first_line(t.description()),
        ]
    }));
    let mut lines = crate::render::table_painted(&rows, |r, _, cell| {
        if r == 0 {
            s.bold(cell)
        } else {
            cell.to_owned()
        }
    });
    if grouped {
        let header = lines.remove(0);
        lines = super::with_group_headers(lines, |i| super::environment_group(&tools[i].server), s);
        lines.insert(0, header);
    }
    let servers: std::collections::BTreeSet<_> = tools.iter().map(|t| &t.server).collect();
    lines.push(String::new());
    lines.push(format!(
        "{} from {}",
        plural(tools.len(), "tool"),
        plural(servers.len(), "server")
    ));
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn to_json(tool: &ToolInfo) -> Value {
    let wire = serde_json::to_value(&tool.tool).unwrap_or(Value::Null);
    json!({
        "qualified_name": tool.qualified_name,
        "server": tool.server,
        "environment": tool.server.environment(),
        "name": tool.raw_name(),
        "title": wire.get("title"),
        "description": tool.description(),
        "input_schema": wire.get("inputSchema"),
        "output_schema": wire.get("outputSchema"),
        "annotations": wire.get("annotations"),
    })
}

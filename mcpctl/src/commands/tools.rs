//! `mcpctl tools [--server KEY] [--cached]`: the aggregated catalog with qualified names,
//! live or from the persisted catalog cache.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use mcp_connections::{PluginOrigin, ServerState, ServerStatus, ToolHit, ToolInfo};
use mcp_key::McpServerKey;
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::error::{CliError, EXIT_FAILURE};
use crate::host::session::Session;
use crate::term::progress::plural;
use crate::term::style::Style;

/// Runs `tools`.
pub(crate) async fn run(
    session: &mut Session,
    global: &GlobalArgs,
    server: Option<&str>,
) -> Result<u8, CliError> {
    let (only, relevant, required_failed) = super::wait_relevant(session, global, server).await?;
    super::warn_drift(session, &relevant);
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
    // Tools pinned with `always_load` / `always_load_tools`: listed beside the search
    // tools in search mode, so marked here.
    let pinned: std::collections::BTreeSet<String> = session
        .set
        .always_loaded_tools()
        .into_iter()
        .map(|t| t.qualified_name)
        .collect();
    if global.json {
        crate::term::render::out_json(&Value::Array(
            tools
                .iter()
                .map(|t| {
                    let mut v = to_json(t);
                    if pinned.contains(&t.qualified_name) {
                        v["always_load"] = json!(true);
                    }
                    v
                })
                .collect(),
        ));
    } else {
        crate::term::render::out(&human(&tools, &pinned, grouped, Style::stdout()));
    }
    Ok(if required_failed { EXIT_FAILURE } else { 0 })
}

/// Runs `tools --changes`: every tool held back because it changed since it was pinned,
/// with what changed, its description before and after (escaped) and how to accept; and
/// first every entry `mcpctl add` recorded that no longer runs what was recorded.
pub(crate) async fn run_changes(
    session: &mut Session,
    global: &GlobalArgs,
    server: Option<&str>,
) -> Result<u8, CliError> {
    let (_, relevant, required_failed) = super::wait_relevant(session, global, server).await?;
    // Entries `mcpctl add` wrote from the registry and someone edited since.
    let edited =
        super::add_entry::waiting_entry_changes(&session.set, &session.catalog, &relevant).await;
    let mut entries = Vec::new();
    for status in &relevant {
        for drift in session.set.tool_drift(&status.key) {
            let before = session
                .set
                .pinned_tool(&status.key, &drift.tool)
                .and_then(|t| t.description.map(|d| d.to_string()));
            let after = session
                .set
                .listed_tool(&status.key, &drift.tool)
                .and_then(|t| t.description.map(|d| d.to_string()));
            entries.push((status.key.clone(), drift, before, after));
        }
    }
    if global.json {
        let edited = edited.iter().map(|(server, provenance, change)| {
            json!({
                "server": server,
                "tool": null,
                "changes": super::add_entry::describe_change(change),
                "recorded": provenance.to_json(),
            })
        });
        crate::term::render::out_json(&Value::Array(
            edited
                .chain(entries.iter().map(|(server, drift, before, after)| {
                    json!({
                        "server": server,
                        "tool": drift.tool,
                        "changes": drift.describe(),
                        "description_before": before,
                        "description_after": after,
                    })
                }))
                .collect(),
        ));
    } else if entries.is_empty() && edited.is_empty() {
        crate::term::render::out("no tool changed since it was first seen\n");
    } else {
        let mut text = String::new();
        for (server, provenance, change) in &edited {
            text.push_str(&format!(
                "{server}: {}\n  review: mcpctl add {}@VERSION shows what it would run\n",
                super::add_entry::describe_change(change),
                provenance.name(),
            ));
        }
        for (server, drift, before, after) in &entries {
            text.push_str(&format!(
                "{server} {}: {}\n",
                drift.tool.escape_debug(),
                drift.describe()
            ));
            if before != after {
                text.push_str(&format!(
                    "  - description: {:?}\n  + description: {:?}\n",
                    before.as_deref().unwrap_or_default(),
                    after.as_deref().unwrap_or_default()
                ));
            }
            text.push_str(&format!(
                "  accept: mcpctl accept {server} {}\n",
                drift.tool.escape_debug()
            ));
        }
        crate::term::render::out(&text);
    }
    Ok(if required_failed { EXIT_FAILURE } else { 0 })
}

/// The default number of results of `tools --search`.
pub(crate) const DEFAULT_SEARCH_LIMIT: usize = 8;

/// Runs `tools --search QUERY`: the best matches over every configured server, those with a
/// cached listing searched from the cache without starting them.
pub(crate) async fn run_search(
    session: &mut Session,
    global: &GlobalArgs,
    server: Option<&str>,
    query: &str,
    limit: Option<usize>,
) -> Result<u8, CliError> {
    let limit = limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if limit == 0 {
        return Err(CliError::usage("--limit 0 would show nothing")
            .with_hint("give how many tools to show, e.g. --limit 8"));
    }
    let (only, _, required_failed) = super::wait_relevant(session, global, server).await?;
    // With --server, search that server's tools only: ask for everything (the index caps
    // the limit at its largest), then keep its.
    let asked = if only.is_some() { usize::MAX } else { limit };
    // Weak matches (too little of the query, and not named by it) are left out, as the
    // library's search mode and the gateway leave them out; when none is left, the closest
    // names are offered instead.
    let options = mcp_connections::SearchModeConfig::new().options(asked);
    let found = session.set.find_tools(query, &options).map_err(|e| {
        CliError::usage(format!("--search: {e}"))
            .with_hint("search with words or a tool's name, e.g. --search \"read a file\"")
    })?;
    let of_server = |h: &ToolHit| only.as_ref().is_none_or(|k| *k == h.info.server);
    let hits: Vec<ToolHit> = found
        .hits
        .into_iter()
        .filter(|h| of_server(h))
        .take(limit)
        .collect();
    let did_you_mean: Vec<String> = found
        .did_you_mean
        .iter()
        .filter(|h| of_server(h))
        .map(|h| h.info.qualified_name.clone())
        .collect();
    if global.json {
        crate::term::render::out_json(&Value::Array(
            hits.iter()
                .map(|h| {
                    let mut v = to_json(&h.info);
                    v["score"] = json!(h.score);
                    v
                })
                .collect(),
        ));
    } else if hits.is_empty() && did_you_mean.is_empty() {
        crate::term::render::out(&format!("no tool matches {query:?}\n"));
    } else if hits.is_empty() {
        crate::term::render::out(&format!(
            "no good match for {query:?}; did you mean: {}?\n",
            did_you_mean.join(", ")
        ));
    } else {
        let s = Style::stdout();
        let mut rows = vec![vec![
            "TOOL".to_owned(),
            "SERVER".to_owned(),
            "DESCRIPTION".to_owned(),
        ]];
        rows.extend(hits.iter().map(|h| {
            vec![
                h.info.qualified_name.clone(),
                h.info.server.to_string(),
                first_line(h.info.description()),
            ]
        }));
        let lines = header_table(&rows, s);
        crate::term::render::out(&with_summary(
            lines,
            &format!("{} best matching {query:?}", plural(hits.len(), "tool")),
        ));
    }
    Ok(if required_failed { EXIT_FAILURE } else { 0 })
}

/// Runs `tools --cached`: the tools of every server whose listing is in the persisted
/// catalog cache, with its age; nothing is started.
pub(crate) async fn run_cached(
    session: &mut Session,
    global: &GlobalArgs,
    server: Option<&str>,
) -> Result<u8, CliError> {
    let only = server.map(|s| session.server_key(s)).transpose()?;
    let statuses: Vec<ServerStatus> = session
        .set
        .status()
        .into_iter()
        .filter(|s| only.as_ref().is_none_or(|k| *k == s.key))
        .collect();
    let now = SystemTime::now();
    let ages: BTreeMap<McpServerKey, Duration> = statuses
        .iter()
        .filter_map(|s| match s.state {
            ServerState::Deferred { cached_at, .. } => Some((
                s.key.clone(),
                now.duration_since(cached_at).unwrap_or_default(),
            )),
            _ => None,
        })
        .collect();
    let missing: Vec<&McpServerKey> = statuses
        .iter()
        .map(|s| &s.key)
        .filter(|k| !ages.contains_key(*k))
        .collect();
    let tools: Vec<ToolInfo> = session
        .set
        .tools()
        .await
        .into_iter()
        .filter(|t| only.as_ref().is_none_or(|k| *k == t.server))
        .collect();
    if global.json {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                let mut v = to_json(t);
                v["cached_age_secs"] = json!(ages.get(&t.server).map(Duration::as_secs));
                v
            })
            .collect();
        crate::term::render::out_json(&json!({
            "tools": tools,
            "not_cached": missing.iter().map(ToString::to_string).collect::<Vec<_>>(),
        }));
    } else {
        let s = Style::stdout();
        let mut text = if tools.is_empty() {
            "no cached tools\n".to_owned()
        } else {
            let mut rows = vec![vec![
                "TOOL".to_owned(),
                "SERVER".to_owned(),
                "AGE".to_owned(),
                "DESCRIPTION".to_owned(),
            ]];
            rows.extend(tools.iter().map(|t| {
                vec![
                    t.qualified_name.clone(),
                    t.server.to_string(),
                    ages.get(&t.server).map_or_else(String::new, |a| age(*a)),
                    first_line(t.description()),
                ]
            }));
            let lines = header_table(&rows, s);
            with_summary(
                lines,
                &format!(
                    "{} from {} (cached; nothing was started)",
                    plural(tools.len(), "tool"),
                    plural(ages.len(), "server")
                ),
            )
        };
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(ToString::to_string).collect();
            text.push_str(&format!(
                "not cached: {} (run `mcpctl tools` once to list them)\n",
                names.join(", ")
            ));
        }
        crate::term::render::out(&text);
    }
    Ok(0)
}

/// An age for people: `42s`, `5m`, `3h`, `2d`.
fn age(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

fn first_line(text: Option<&str>) -> String {
    text.and_then(|t| t.lines().find(|l| !l.trim().is_empty()))
        .map(str::trim)
        .unwrap_or_default()
        .to_owned()
}

/// The mark after a pinned tool's name (`always_load`).
const ALWAYS_LOADED: &str = " (always loaded)";

fn human(
    tools: &[ToolInfo],
    pinned: &std::collections::BTreeSet<String>,
    grouped: bool,
    s: Style,
) -> String {
    if tools.is_empty() {
        return "no tools\n".to_owned();
    }
    // A PLUGIN column only when a plugin provided some server.
    let plugins = tools.iter().any(|t| t.plugin.is_some());
    let mut header = vec!["TOOL".to_owned(), "SERVER".to_owned()];
    if plugins {
        header.push("PLUGIN".to_owned());
    }
    header.push("DESCRIPTION".to_owned());
    let mut rows = vec![header];
    rows.extend(tools.iter().map(|t| {
        let mut name = t.qualified_name.clone();
        if pinned.contains(&t.qualified_name) {
            name.push_str(ALWAYS_LOADED);
        }
        let mut row = vec![name, t.server.to_string()];
        if plugins {
            row.push(plugin_label(t.plugin.as_ref()));
        }
        row.push(first_line(t.description()));
        row
    }));
    let mut lines = header_table(&rows, s);
    if grouped {
        let header = lines.remove(0);
        lines = super::with_group_headers(lines, |i| super::environment_group(&tools[i].server), s);
        lines.insert(0, header);
    }
    let servers: std::collections::BTreeSet<_> = tools.iter().map(|t| &t.server).collect();
    let mut summary = format!(
        "{} from {}",
        plural(tools.len(), "tool"),
        plural(servers.len(), "server")
    );
    let marked = tools
        .iter()
        .filter(|t| pinned.contains(&t.qualified_name))
        .count();
    if marked > 0 {
        summary.push_str(&format!(
            "; {marked} always loaded (listed beside the search tools in search mode)"
        ));
    }
    with_summary(lines, &summary)
}

/// A table with a bold header row.
fn header_table(rows: &[Vec<String>], s: Style) -> Vec<String> {
    crate::term::render::table_painted(rows, |r, _, cell| {
        if r == 0 {
            s.bold(cell)
        } else {
            cell.to_owned()
        }
    })
}

/// The table's lines, a blank line and the summary line, as printed text.
fn with_summary(mut lines: Vec<String>, summary: &str) -> String {
    lines.push(String::new());
    lines.push(summary.to_owned());
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// The PLUGIN cell: the plugin's name, `(discovered)` when it was not selected for the
/// session, `-` for servers no plugin provided.
fn plugin_label(plugin: Option<&PluginOrigin>) -> String {
    match plugin {
        Some(p) if p.selected => p.name.clone(),
        Some(p) => format!("{} (discovered)", p.name),
        None => "-".to_owned(),
    }
}

fn to_json(tool: &ToolInfo) -> Value {
    let wire = serde_json::to_value(&tool.tool).unwrap_or(Value::Null);
    let mut v = json!({
        "qualified_name": tool.qualified_name,
        "server": tool.server,
        "environment": tool.server.environment(),
        "name": tool.raw_name(),
        "title": wire.get("title"),
        "description": tool.description(),
        "input_schema": wire.get("inputSchema"),
        "output_schema": wire.get("outputSchema"),
        "annotations": wire.get("annotations"),
    });
    if let Some(plugin) = &tool.plugin {
        v["plugin"] = json!(plugin);
    }
    v
}

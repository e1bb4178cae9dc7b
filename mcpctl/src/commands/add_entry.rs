//! What `mcpctl add` writes: the server's `[mcp_servers.NAME]` table (secrets only as
//! variable names), the table replaced in place of an older one, and where the entry came
//! from, recorded beside the configuration file ([`mcp_catalog::Provenance::record`]).

use std::path::Path;

use mcp_catalog::{EntryCheck, Provenance, ServerConfig};
use mcp_key::ServerName;

/// The `[mcp_servers.NAME]` table of `config` as mcp.toml writes it
/// ([`mcp_catalog::server_toml`]), under a comment naming where it came from.
pub(crate) fn entry_toml(
    name: &ServerName,
    config: &ServerConfig,
    provenance: &Provenance,
) -> String {
    format!(
        "# from the MCP Registry: {provenance}\n{}",
        mcp_catalog::server_toml(name, config)
    )
}

/// `text` with the tables of server `name` (`[mcp_servers.NAME]` or
/// `[mcp_servers."NAME"]`, its sub-tables and the `# from the MCP Registry` comment above
/// it) removed and `entry` appended. A server name needs no escaping (`ServerName`'s
/// characters are a TOML bare key's), so its quoted form is the name in quotes.
pub(crate) fn replace_entry(text: &str, name: &ServerName, entry: &str) -> String {
    let keys = [
        format!("mcp_servers.{name}"),
        format!("mcp_servers.\"{name}\""),
    ];
    let own = |header: &str| {
        let inner = header.trim().trim_start_matches('[').trim_end_matches(']');
        let inner = inner.trim();
        keys.iter()
            .any(|k| inner == k || inner.starts_with(&format!("{k}.")))
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut skipping = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            skipping = own(trimmed);
            if skipping
                && kept
                    .last()
                    .is_some_and(|l| l.starts_with("# from the MCP Registry: "))
            {
                kept.pop();
            }
        }
        if !skipping {
            kept.push(line);
        }
    }
    while kept.last().is_some_and(|l| l.trim().is_empty()) {
        kept.pop();
    }
    let mut out = kept.join("\n");
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(entry);
    out
}

/// How the entry of server `key` differs from what `mcpctl add` recorded beside its file
/// (the version edited by hand, or another package or URL put in its place); `None` when
/// it runs what was recorded, or nothing was recorded for it.
pub(crate) fn entry_change(
    catalog: &mcp_catalog::ResolvedCatalog,
    key: &mcp_key::McpServerKey,
) -> Option<(Provenance, EntryCheck)> {
    let config = catalog.get(key)?;
    let file = catalog.source(key)?.name();
    let provenance = Provenance::recorded(Path::new(file), key.name().as_str())?;
    match provenance.check_entry(config) {
        EntryCheck::Same => None,
        change => Some((provenance, change)),
    }
}

/// The entries of `servers` that no longer run what `mcpctl add` recorded
/// ([`entry_change`]) and whose change is still waiting: a version change the tool pins
/// accepted (`mcpctl accept`, or a `notice` rule that pinned it as it is) is not one. It
/// counts as accepted when a tool of the server is listed under its pins (a version
/// change holds every tool of the server until accepted) and none of its held tools
/// carries the version change; a server not listed (failed, or pins off) is reported.
pub(crate) async fn waiting_entry_changes(
    set: &mcp_connections::ConnectionSet,
    catalog: &mcp_catalog::ResolvedCatalog,
    servers: &[mcp_connections::ServerStatus],
) -> Vec<(mcp_key::McpServerKey, Provenance, EntryCheck)> {
    let changed: Vec<_> = servers
        .iter()
        .filter_map(|status| {
            entry_change(catalog, &status.key).map(|(p, c)| (status.key.clone(), p, c))
        })
        .collect();
    if changed.is_empty() {
        return changed;
    }
    let listed = set.tools().await;
    changed
        .into_iter()
        .filter(|(key, _, _)| {
            let held = set.tool_drift(key).iter().any(|drift| {
                drift
                    .changes
                    .iter()
                    .any(|c| matches!(c, mcp_connections::ToolChange::VersionChanged { .. }))
            });
            let pinned = listed
                .iter()
                .any(|tool| tool.server == *key && set.pinned_tool(key, &tool.tool.name).is_some());
            held || !pinned
        })
        .collect()
}

/// One line for an [`EntryCheck`] that is not [`EntryCheck::Same`].
pub(crate) fn describe_change(change: &EntryCheck) -> String {
    match change {
        EntryCheck::VersionChanged { recorded, now } => {
            format!("version changed since `mcpctl add`: {recorded} -> {now}")
        }
        EntryCheck::Replaced { recorded } => {
            format!("no longer runs what `mcpctl add` recorded: {recorded}")
        }
        _ => "runs what `mcpctl add` recorded".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_replaced_with_its_sub_tables_and_comment() {
        let text = "[mcp_servers.a]\ncommand = \"a\"\n\n# from the MCP Registry: x\n[mcp_servers.b]\ncommand = \"old\"\n[mcp_servers.b.env]\nX = \"1\"\n\n[mcp_servers.c]\ncommand = \"c\"\n";
        let b = ServerName::new("b").unwrap();
        assert_eq!(
            replace_entry(text, &b, "[mcp_servers.b]\ncommand = \"new\"\n"),
            "[mcp_servers.a]\ncommand = \"a\"\n\n[mcp_servers.c]\ncommand = \"c\"\n\n[mcp_servers.b]\ncommand = \"new\"\n"
        );
        assert_eq!(replace_entry("", &b, "E\n"), "E\n");
    }

    /// A hand-written file may quote the name: that table is replaced too, never left
    /// beside the new one (two tables of one server are a file TOML refuses).
    #[test]
    fn a_quoted_table_name_is_replaced_too() {
        let b = ServerName::new("b").unwrap();
        let text = "[mcp_servers.\"b\"]\ncommand = \"old\"\n[mcp_servers.\"b\".env]\nX = \"1\"\n";
        let out = replace_entry(text, &b, "[mcp_servers.b]\ncommand = \"new\"\n");
        assert_eq!(out, "[mcp_servers.b]\ncommand = \"new\"\n");
        // Another server whose name starts the same is kept.
        let text = "[mcp_servers.bb]\ncommand = \"bb\"\n";
        let out = replace_entry(text, &b, "[mcp_servers.b]\ncommand = \"new\"\n");
        assert!(out.starts_with("[mcp_servers.bb]\n"), "{out}");
    }
}

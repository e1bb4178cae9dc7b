//! `mcpctl resources [--server KEY]`: the resources and resource templates of the servers.

use mcp_connections::{Listing, ServerItem};
use mcp_key::McpServerKey;
use serde::Serialize;
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::error::{CliError, EXIT_FAILURE};
use crate::host::session::Session;
use crate::term::progress::plural;
use crate::term::style::Style;

/// Runs `resources`.
pub(crate) async fn run(
    session: &mut Session,
    global: &GlobalArgs,
    server: Option<&str>,
) -> Result<u8, CliError> {
    let (only, relevant, required_failed) = super::wait_relevant(session, global, server).await?;
    // Servers that are not ready were just reported; the listings name them too.
    let unready: Vec<McpServerKey> = relevant
        .iter()
        .filter(|s| !matches!(s.state, mcp_connections::ServerState::Ready { .. }))
        .map(|s| s.key.clone())
        .collect();
    let mut resources = rows(session.set.list_resources().await, only.as_ref(), "uri");
    let mut templates = rows(
        session.set.list_resource_templates().await,
        only.as_ref(),
        "uriTemplate",
    );
    resources.failures.retain(|(k, _)| !unready.contains(k));
    templates.failures.retain(|(k, _)| !unready.contains(k));
    for (server, error) in resources.failures.iter().chain(&templates.failures) {
        crate::term::render::warn(&format!(
            "listing the resources of server `{server}` failed: {error}"
        ));
    }
    if global.json {
        crate::term::render::out_json(&json!({
            "resources": resources.items,
            "templates": templates.items,
            "failures": resources.failures.iter().chain(&templates.failures)
                .map(|(server, error)| json!({"server": server, "error": error}))
                .collect::<Vec<_>>(),
        }));
    } else {
        let s = Style::stdout();
        let mut text = section("RESOURCE", "URI", &resources.items, s);
        if !templates.items.is_empty() {
            text.push('\n');
            text.push_str(&section("TEMPLATE", "URI TEMPLATE", &templates.items, s));
        }
        text.push('\n');
        text.push_str(&format!(
            "{}, {}\n",
            plural(resources.items.len(), "resource"),
            plural(templates.items.len(), "template")
        ));
        crate::term::render::out(&text);
    }
    let failed = !resources.failures.is_empty() || !templates.failures.is_empty();
    Ok(if required_failed || failed {
        EXIT_FAILURE
    } else {
        0
    })
}

struct Rows {
    items: Vec<Value>,
    failures: Vec<(McpServerKey, String)>,
}

/// Flattens a listing to `{server, uri, name, mime_type, description}` objects.
fn rows<T: Serialize>(listing: Listing<T>, only: Option<&McpServerKey>, uri_key: &str) -> Rows {
    let keep = |k: &McpServerKey| only.is_none_or(|o| o == k);
    let items = listing
        .items
        .into_iter()
        .filter(|i: &ServerItem<T>| keep(&i.server))
        .map(|i| {
            let wire = serde_json::to_value(&i.item).unwrap_or(Value::Null);
            json!({
                "server": i.server,
                "uri": wire.get(uri_key),
                "name": wire.get("name"),
                "mime_type": wire.get("mimeType"),
                "description": wire.get("description"),
            })
        })
        .collect();
    let failures = listing
        .failures
        .into_iter()
        .filter(|(k, _)| keep(k))
        .collect();
    Rows { items, failures }
}

fn section(heading: &str, uri_heading: &str, items: &[Value], s: Style) -> String {
    if items.is_empty() {
        return format!("no {}s\n", heading.to_ascii_lowercase());
    }
    let text_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut rows = vec![vec![
        "SERVER".to_owned(),
        uri_heading.to_owned(),
        "NAME".to_owned(),
        "MIME TYPE".to_owned(),
    ]];
    rows.extend(items.iter().map(|v| {
        vec![
            text_of(v, "server"),
            text_of(v, "uri"),
            text_of(v, "name"),
            text_of(v, "mime_type"),
        ]
    }));
    let lines = crate::term::render::table_painted(&rows, |r, _, cell| {
        if r == 0 {
            s.bold(cell)
        } else {
            cell.to_owned()
        }
    });
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

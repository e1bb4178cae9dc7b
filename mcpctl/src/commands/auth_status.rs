//! `mcpctl auth-status`: how each server authenticates, from the configuration and the
//! credential store only (no server is started or contacted).

use std::sync::Arc;

use mcp_auth::{AuthStatus, CredentialStore};
use mcp_catalog::{ResolvedCatalog, ServerConfig};
use mcp_key::McpServerKey;
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::error::CliError;
use crate::host::auth::{self, ServerAuth};
use crate::host::session::Loaded;
use crate::term::style::Style;

/// One server's line.
struct Row {
    key: McpServerKey,
    transport: &'static str,
    enabled: bool,
    status: AuthStatus,
    detail: String,
}

/// Runs `auth-status`.
pub(crate) async fn run(global: &GlobalArgs) -> Result<u8, CliError> {
    let loaded = Loaded::find(global, false, false).await?;
    let catalog = loaded.catalog();
    // `auto` probes the keyring: open the store only when some server may use it.
    let store = if catalog
        .exposed()
        .any(|(_, c)| matches!(ServerAuth::of(c), ServerAuth::OAuth(_) | ServerAuth::Ema))
    {
        Some(auth::open_store(&catalog, loaded.demo)?)
    } else {
        None
    };
    let mut rows = Vec::new();
    for (key, config) in catalog.exposed() {
        rows.push(row(&catalog, key, config, store.as_ref()).await);
    }
    let origin = &loaded.origin();
    let location = store.as_ref().map(|s| s.location());
    if global.json {
        crate::term::render::out_json(&to_json(origin, location.as_deref(), &rows));
    } else {
        crate::term::render::out(&human(origin, location.as_deref(), &rows, Style::stdout()));
    }
    Ok(0)
}

/// The transport label used by `mcpctl status`.
pub(crate) fn transport_label(config: &ServerConfig) -> &'static str {
    config.transport().label()
}

async fn row(
    catalog: &ResolvedCatalog,
    key: &McpServerKey,
    config: &ServerConfig,
    store: Option<&Arc<dyn CredentialStore>>,
) -> Row {
    let status = auth::status(catalog, key, config, store).await;
    let detail = match (ServerAuth::of(config), status) {
        (ServerAuth::NotHttp(_), _) => String::new(),
        (ServerAuth::NoAuth, _) => "auth = \"none\"".to_owned(),
        (ServerAuth::BearerEnv(var), _) => format!("bearer_token_env_var = {var}"),
        (ServerAuth::Header, _) => "Authorization header".to_owned(),
        (ServerAuth::Ema, AuthStatus::OAuth) => {
            "enterprise-managed authorization; signed in to the identity provider".to_owned()
        }
        (ServerAuth::Ema, _) => {
            "enterprise-managed authorization; run `mcpctl login --enterprise`".to_owned()
        }
        (ServerAuth::OAuth(_), AuthStatus::OAuth) => "stored OAuth tokens".to_owned(),
        (ServerAuth::OAuth(_), AuthStatus::LoginRequired) => {
            format!("no stored tokens; run `mcpctl login {key}` if the server asks for a login")
        }
        (ServerAuth::OAuth(_), AuthStatus::ReloginRequired) => {
            format!("stored tokens are no longer usable; run `mcpctl login {key}`")
        }
        (ServerAuth::OAuth(_), _) => "the credential store could not be read".to_owned(),
    };
    Row {
        key: key.clone(),
        transport: transport_label(config),
        enabled: config.enabled(),
        status,
        detail,
    }
}

fn paint(status: AuthStatus, text: &str, s: Style) -> String {
    match status {
        AuthStatus::OAuth | AuthStatus::BearerToken => s.green(text),
        AuthStatus::LoginRequired | AuthStatus::ReloginRequired => s.yellow(text),
        AuthStatus::Unknown => s.red_bold(text),
        _ => text.to_owned(),
    }
}

fn human(origin: &str, location: Option<&str>, rows: &[Row], s: Style) -> String {
    let mut lines = vec![format!("Authentication of MCP servers from {origin}:")];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut detail = r.detail.clone();
            if !r.enabled {
                detail = if detail.is_empty() {
                    "disabled".to_owned()
                } else {
                    format!("{detail} (disabled)")
                };
            }
            vec![
                format!("  {}", r.key),
                r.transport.to_owned(),
                r.status.to_string(),
                detail,
            ]
        })
        .collect();
    lines.extend(crate::term::render::table_painted(
        &cells,
        |r, c, cell| match rows.get(r) {
            Some(row) if c == 2 => paint(row.status, cell, s),
            _ => cell.to_owned(),
        },
    ));
    if rows.is_empty() {
        lines.push(format!("  (no servers configured in {origin})"));
    }
    if let Some(location) = location {
        lines.push(String::new());
        lines.push(format!("credentials: {location}"));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn to_json(origin: &str, location: Option<&str>, rows: &[Row]) -> Value {
    let servers: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "server": r.key,
                "environment": r.key.environment(),
                "transport": r.transport,
                "enabled": r.enabled,
                // `as_str`, not serde: mcp-auth serializes `OAuth` as "o_auth".
                "auth": r.status.as_str(),
                "detail": r.detail,
            })
        })
        .collect();
    json!({
        "config": origin,
        "store": location,
        "servers": servers,
    })
}

//! `mcpctl logout SERVER`: delete the stored OAuth credentials of a streamable HTTP server.
//! Idempotent: says whether something was removed. No server is started or contacted.

use std::sync::Arc;

use mcp_catalog::Transport;
use serde_json::json;

use crate::cli::{GlobalArgs, LogoutArgs};
use crate::error::CliError;
use crate::host::auth;
use crate::host::session::Loaded;

/// Runs `logout`.
pub(crate) async fn run(global: &GlobalArgs, args: &LogoutArgs) -> Result<u8, CliError> {
    let loaded = Loaded::find(global, false, false).await?;
    let catalog = loaded.catalog();
    let Some(server) = args.server.as_deref().filter(|_| !args.enterprise) else {
        let store = auth::open_store(&catalog, loaded.demo)?;
        return super::enterprise::logout(global.json, &catalog, store).await;
    };
    let key = auth::resolve(&catalog, server, &loaded.origin())?;
    let config = catalog
        .get(&key)
        .ok_or_else(|| CliError::usage(format!("unknown MCP server `{key}`")))?;
    let http = match config.transport() {
        Transport::StreamableHttp(http) | Transport::Sse(http) => http,
        other => {
            return Err(CliError::usage(format!(
                "MCP server `{key}` uses {}: it has no stored OAuth credentials",
                other.kind_name()
            ))
            .with_hint("`mcpctl logout` is for HTTP servers; see `mcpctl auth-status`"));
        }
    };
    let store = auth::open_store(&catalog, loaded.demo)?;
    let location = store.location();
    let creds = auth::credentials(&catalog, &key, http, Arc::clone(&store));
    let stored = store.load(creds.store_key()).await.map_err(|e| {
        CliError::failure(format!(
            "cannot read the stored credentials of `{key}` in {location}: {e}"
        ))
        .with_hint(format!(
            "check the credential store (files live in {})",
            auth::DATA_DIR_RULE
        ))
    })?;
    creds
        .logout()
        .await
        .map_err(|e| auth::login_error(&e, &key, true))?;
    let removed = stored.is_some();
    if global.json {
        crate::term::render::out_json(&json!({
            "server": key,
            "removed": removed,
            "store": location,
        }));
    } else if removed {
        crate::term::render::out(&format!(
            "logged out of `{key}` (removed its credentials from {location})\n"
        ));
    } else {
        crate::term::render::out(&format!(
            "no stored credentials for `{key}` in {location}; nothing to remove\n"
        ));
    }
    Ok(0)
}

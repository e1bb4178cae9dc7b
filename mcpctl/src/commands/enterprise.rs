//! `mcpctl login --enterprise` / `logout --enterprise`: the one sign-in to the enterprise
//! identity provider that servers with `auth = "ema"` build on. No MCP server is started.

use std::sync::Arc;

use mcp_auth::{AuthStatus, CredentialStore};
use mcp_catalog::ResolvedCatalog;
use serde_json::json;

use crate::error::CliError;
use crate::host::auth;
use crate::term::style::Style;

/// Signs in to the identity provider through `agent`.
pub(crate) async fn login(
    json_out: bool,
    catalog: &ResolvedCatalog,
    store: Arc<dyn CredentialStore>,
    agent: &dyn mcp_auth::UserAgent,
) -> Result<u8, CliError> {
    let ema = auth::ema_config(catalog)?;
    let location = store.location();
    let idp = auth::idp(catalog, &ema, store)?;
    let failed = |e: mcp_auth::AuthError| {
        CliError::failure(format!(
            "the sign-in to the enterprise identity provider {} failed: {e}",
            ema.issuer()
        ))
        .with_hint(
            "try `mcpctl login --enterprise` again; check the `ema` table's issuer and client_id",
        )
    };
    let pending = idp.begin_login().await.map_err(failed)?;
    agent
        .open(pending.authorization_url())
        .await
        .map_err(failed)?;
    pending.complete().await.map_err(failed)?;
    if json_out {
        crate::term::render::out_json(&json!({
            "enterprise_idp": ema.issuer(),
            "logged_in": true,
            "store": location,
        }));
    } else {
        crate::term::render::out(&format!(
            "{} to the enterprise identity provider {} (credentials stored in {location})\n",
            Style::stdout().green("logged in"),
            ema.issuer()
        ));
    }
    Ok(0)
}

/// Forgets the enterprise sign-in.
pub(crate) async fn logout(
    json_out: bool,
    catalog: &ResolvedCatalog,
    store: Arc<dyn CredentialStore>,
) -> Result<u8, CliError> {
    let ema = auth::ema_config(catalog)?;
    let location = store.location();
    let idp = auth::idp(catalog, &ema, store)?;
    let was = idp.status().await;
    idp.logout()
        .await
        .map_err(|e| CliError::failure(format!("cannot remove the enterprise sign-in: {e}")))?;
    let removed = was != AuthStatus::LoginRequired;
    if json_out {
        crate::term::render::out_json(&json!({
            "enterprise_idp": ema.issuer(),
            "removed": removed,
            "store": location,
        }));
    } else if removed {
        crate::term::render::out(&format!(
            "logged out of the enterprise identity provider {} (removed from {location})\n",
            ema.issuer()
        ));
    } else {
        crate::term::render::out(&format!(
            "no enterprise sign-in for {} in {location}; nothing to remove\n",
            ema.issuer()
        ));
    }
    Ok(0)
}

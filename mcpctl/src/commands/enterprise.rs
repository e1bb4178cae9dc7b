//! `mcpctl login --enterprise` / `logout --enterprise`: the one sign-in to the enterprise
//! identity provider that servers with `auth = "ema"` build on. No MCP server is started.

use std::sync::Arc;

use mcp_auth::{AuthStatus, CredentialStore, EnterpriseIdp};
use mcp_catalog::{AuthMode, EmaConfig, ResolvedCatalog, Transport};
use serde_json::json;

use crate::auth;
use crate::error::CliError;
use crate::style::Style;

/// The identity provider the configuration's EMA servers name (one, or an error).
pub(crate) fn ema_config(catalog: &ResolvedCatalog) -> Result<EmaConfig, CliError> {
    let mut found: Vec<EmaConfig> = Vec::new();
    for (_, config) in catalog.exposed() {
        if let Transport::StreamableHttp(http) = config.transport()
            && http.auth() == AuthMode::Ema
            && let Some(ema) = http.ema()
            && !found.contains(ema)
        {
            found.push(ema.clone());
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(CliError::usage(
            "no MCP server uses enterprise-managed authorization (auth = \"ema\")",
        )
        .with_hint("add `auth = \"ema\"` and an `[mcp_servers.NAME.ema]` table with `issuer` and `client_id`")),
        _ => Err(CliError::usage(
            "the servers name more than one enterprise identity provider (issuer and client_id in their `ema` tables)",
        )
        .with_hint("use one identity provider for all servers with auth = \"ema\"")),
    }
}

/// The enterprise IdP of `ema`, its record in `store`.
pub(crate) fn idp(
    catalog: &ResolvedCatalog,
    ema: &EmaConfig,
    store: Arc<dyn CredentialStore>,
) -> Result<EnterpriseIdp, CliError> {
    let settings = mcp_auth::OAuthSettings::new().with_client_name(auth::CLIENT_NAME);
    let settings = match catalog.oauth_callback_port() {
        Some(port) => settings.with_callback_port(port),
        None => settings,
    };
    EnterpriseIdp::new(ema.issuer(), ema.client_id(), settings, store)
        .map_err(|e| CliError::failure(format!("enterprise identity provider: {e}")))
}

/// Signs in to the identity provider through `agent`.
pub(crate) async fn login(
    json_out: bool,
    catalog: &ResolvedCatalog,
    store: Arc<dyn CredentialStore>,
    agent: &dyn mcp_auth::UserAgent,
) -> Result<u8, CliError> {
    let ema = ema_config(catalog)?;
    let location = store.location();
    let idp = idp(catalog, &ema, store)?;
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
        crate::render::out_json(&json!({
            "enterprise_idp": ema.issuer(),
            "logged_in": true,
            "store": location,
        }));
    } else {
        crate::render::out(&format!(
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
    let ema = ema_config(catalog)?;
    let location = store.location();
    let idp = idp(catalog, &ema, store)?;
    let was = idp.status().await;
    idp.logout()
        .await
        .map_err(|e| CliError::failure(format!("cannot remove the enterprise sign-in: {e}")))?;
    let removed = was != AuthStatus::LoginRequired;
    if json_out {
        crate::render::out_json(&json!({
            "enterprise_idp": ema.issuer(),
            "removed": removed,
            "store": location,
        }));
    } else if removed {
        crate::render::out(&format!(
            "logged out of the enterprise identity provider {} (removed from {location})\n",
            ema.issuer()
        ));
    } else {
        crate::render::out(&format!(
            "no enterprise sign-in for {} in {location}; nothing to remove\n",
            ema.issuer()
        ));
    }
    Ok(0)
}

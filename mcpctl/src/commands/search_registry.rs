//! `mcpctl search-registry QUERY`: servers of the MCP Registry whose name contains the
//! query, their latest version each; deprecated ones marked, deleted ones never shown.

use mcp_registry::{EntryStatus, RegistryClient, RegistryError, RegistryOptions};
use serde_json::json;

use crate::cli::{GlobalArgs, RegistryArg, SearchRegistryArgs};
use crate::error::CliError;
use crate::term::render::terminal_safe;

/// The variable naming the registry when `--registry` is not given.
pub(crate) const REGISTRY_VAR: &str = "MCPCTL_REGISTRY";

/// The registry client for `--registry`, else `$MCPCTL_REGISTRY`, else the official one.
pub(crate) fn client(arg: &RegistryArg) -> Result<RegistryClient, CliError> {
    let url = arg
        .registry
        .clone()
        .or_else(|| std::env::var(REGISTRY_VAR).ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| mcp_registry::DEFAULT_REGISTRY_URL.to_owned());
    RegistryClient::new(RegistryOptions::new(url)).map_err(|e| registry_error(&e))
}

/// A registry error for a person: its sentence, the located problems of a `server.json`
/// one per line, and the exit code of its kind.
pub(crate) fn registry_error(e: &RegistryError) -> CliError {
    let message = e.to_string();
    let error = if e.is_not_found()
        || matches!(
            e,
            RegistryError::InvalidName { .. } | RegistryError::InvalidUrl { .. }
        ) {
        CliError::usage(message)
    } else {
        CliError::failure(message)
    };
    match e.config_errors() {
        Some(errors) => error.with_details(errors.iter().map(ToString::to_string).collect()),
        None => error,
    }
}

/// Runs `search-registry`: exit code 0 (also when nothing matched).
pub(crate) async fn run(global: &GlobalArgs, args: &SearchRegistryArgs) -> Result<u8, CliError> {
    let registry = client(&args.registry)?;
    let found = registry
        .search(&args.query, args.limit)
        .await
        .map_err(|e| registry_error(&e))?;
    if global.json {
        crate::term::render::out_json(&json!(
            found
                .iter()
                .map(|s| json!({
                    "name": s.name,
                    "version": s.version,
                    "title": s.title,
                    "description": s.description,
                    "status": s.status.as_str(),
                    "status_message": s.status_message,
                }))
                .collect::<Vec<_>>()
        ));
        return Ok(0);
    }
    if found.is_empty() {
        crate::term::render::out(&format!(
            "no server in {} has `{}` in its name\n",
            registry.base_url(),
            terminal_safe(&args.query)
        ));
        return Ok(0);
    }
    let mut text = String::new();
    for server in &found {
        let mut line = format!("{}@{}", server.name, server.version);
        if server.status == EntryStatus::Deprecated {
            line.push_str(" [deprecated");
            if let Some(message) = &server.status_message {
                line.push_str(": ");
                line.push_str(message);
            }
            line.push(']');
        }
        if let Some(description) = &server.description {
            line.push_str("  ");
            line.push_str(description);
        }
        text.push_str(&terminal_safe(&line));
        text.push('\n');
    }
    text.push_str("add one with `mcpctl add NAME[@VERSION]`\n");
    crate::term::render::out(&text);
    Ok(0)
}

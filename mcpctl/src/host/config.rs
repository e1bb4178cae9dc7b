//! Finding and loading the configuration: `--config FILE`, else the files of `--from
//! CLIENT`, else the user file ([`user_file`]) below `./mcp.toml` or else `./.mcp.json`,
//! else the embedded demo; messages for what goes wrong.

use std::path::{Path, PathBuf};

use mcp_catalog::{ConfigError, Discovery, LoadedConfig};

use crate::error::CliError;

/// The first line printed when no configuration file is found.
pub(crate) const DEMO_NOTICE: &str = "mcpctl: no config found (--config, ./mcp.toml, ./.mcp.json, ~/.config/mcpctl/mcp.toml); running the embedded demo";

/// mcpctl's user file, read below the project file without trust (the user's own):
/// `$XDG_CONFIG_HOME/mcpctl/mcp.toml`, else `$HOME/.config/mcpctl/mcp.toml`; `None` when
/// neither variable is set. `mcpctl add --scope user` writes it.
pub(crate) fn user_file() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    let config_home = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(config_home.join("mcpctl").join("mcp.toml"))
}

/// Where the configuration is looked for: `--config FILE`, else the files of `--from
/// CLIENT` (its user file under `$HOME`, or Codex's `$CODEX_HOME`, its project file in the working directory), else
/// mcpctl's user file ([`user_file`]) below the project files of the working directory;
/// found, checked against the trust store and loaded by [`mcp_catalog::Discovery::find`].
pub(crate) fn discovery(global: &crate::cli::GlobalArgs) -> Result<Discovery, CliError> {
    let discovery = Discovery::new("").with_explicit_file(global.config.clone());
    let Some(kind) = global.from else {
        return Ok(discovery.with_user_file(user_file()));
    };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            CliError::usage(format!(
                "cannot find the user configuration of {kind}: HOME is not set"
            ))
            .with_hint("set HOME to your home folder")
        })?;
    // The client's own variables (Codex's CODEX_HOME) move its user file as they do there.
    Ok(discovery.with_client_in(kind, home, &mcp_catalog::ProcessEnv))
}

/// The error when `--from CLIENT` found no file: every place looked at.
pub(crate) fn client_not_found(
    global: &crate::cli::GlobalArgs,
    discovery: &Discovery,
) -> Option<CliError> {
    let kind = global.from?;
    let looked: Vec<String> = discovery
        .locations()
        .iter()
        .map(|p| format!("not found: {}", p.display()))
        .collect();
    Some(
        CliError::usage(format!("no MCP configuration of {kind} found"))
            .with_details(looked)
            .with_hint("run mcpctl in the project folder, or check that HOME is your home folder"),
    )
}

/// Loads `path` for review without expanding any variable (see
/// [`mcp_catalog::review_file`]).
pub(crate) fn review(path: &Path) -> Result<(LoadedConfig, mcp_catalog::Review), CliError> {
    mcp_catalog::review_file(path).map_err(|e| match e.config_errors() {
        Some(errors) => invalid(path, errors.errors(), true),
        None => {
            let cause = std::error::Error::source(&e)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            CliError::usage(format!("cannot read `{}`{cause}", path.display()))
        }
    })
}

/// The CLI error for a configuration that could not be read, is invalid, or names a
/// plugin that cannot be loaded. `path` is the file shown when the error names none.
pub(crate) fn load_error(path: &Path, e: &mcp_catalog::Error, checking: bool) -> CliError {
    match e.config_errors() {
        _ if e.is_plugin_entry() || e.is_plugin_folder() => {
            let cause = std::error::Error::source(&e)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            CliError::usage(format!("{e}{cause}")).with_hint(
                "fix the [[plugins]] entry: its folder needs exactly one of .mcp.json or mcp.toml",
            )
        }
        Some(errors) => invalid(path, errors.errors(), checking),
        None if e.is_trust_store() => CliError::usage(e.to_string()),
        None => {
            let cause = std::error::Error::source(&e)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            CliError::usage(format!(
                    "cannot read MCP configuration `{}`{cause}",
                    path.display()
                ))
                .with_hint(
                    "check the path given to --config, or run without --config to use ./mcp.toml, ./.mcp.json or the demo",
                )
        }
    }
}

fn invalid(path: &Path, errors: &[ConfigError], checking: bool) -> CliError {
    let count = match errors.len() {
        1 => "1 error".to_owned(),
        n => format!("{n} errors"),
    };
    CliError::usage(format!(
        "invalid MCP configuration `{}` ({count})",
        path.display()
    ))
    .with_details(errors.iter().map(ToString::to_string).collect())
    .with_hint(if checking {
        "fix the lines above (file:line:column), then run `mcpctl config check` again"
    } else {
        "fix the lines above (file:line:column); `mcpctl config check` validates the file without starting servers"
    })
}

/// Prints the configuration's warnings to stderr. Unless `all`, unknown top-level keys
/// (normal in a coding agent's config file, whose other settings are not about MCP) are
/// summarized in one line.
pub(crate) fn print_warnings(loaded: &LoadedConfig, all: bool) {
    let s = crate::term::style::Style::stderr();
    let mut ignored = Vec::new();
    for w in loaded.warnings() {
        match w.unknown_key_name() {
            Some(key) if !all && w.server().is_none() => ignored.push(key.to_owned()),
            _ => eprintln!("{} {w}", s.yellow("warning:")),
        }
    }
    if !ignored.is_empty() {
        eprintln!(
            "{} {}: ignored settings that are not about MCP servers: {} (`mcpctl config check` shows where)",
            s.dim("note:"),
            loaded.origin(),
            ignored.join(", ")
        );
    }
}

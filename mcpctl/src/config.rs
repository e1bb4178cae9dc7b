//! Finding and loading the configuration: `--config FILE`, else `./mcp.toml`, else
//! `./.mcp.json`, else the embedded demo.

use std::path::{Path, PathBuf};

use mcp_catalog::{ConfigError, LoadedConfig};

use crate::error::CliError;

/// The files looked for in the current directory, in order.
pub(crate) const DEFAULT_FILES: [&str; 2] = mcp_catalog::PROJECT_FILES;

/// The first line printed when no configuration file is found.
pub(crate) const DEMO_NOTICE: &str =
    "mcpctl: no config found (--config, ./mcp.toml, ./.mcp.json); running the embedded demo";

/// Which configuration to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConfigChoice {
    /// A file named with `--config`: the user's explicit choice, trusted.
    File(PathBuf),
    /// A project file found in the working directory: used only once trusted.
    Discovered(PathBuf),
    /// No file: the embedded demo.
    Demo,
}

/// Picks the configuration: the flag, else the first default file that exists.
pub(crate) fn choose(flag: Option<&Path>) -> ConfigChoice {
    if let Some(path) = flag {
        return ConfigChoice::File(path.to_path_buf());
    }
    DEFAULT_FILES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .map_or(ConfigChoice::Demo, ConfigChoice::Discovered)
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

/// Reads and validates one file. Invalid files give one error listing every problem with
/// its line and column.
pub(crate) fn load(path: &Path) -> Result<LoadedConfig, CliError> {
    load_for(path, false)
}

/// [`load`]; `checking` says the command is `config check` (the hint differs).
pub(crate) fn load_for(path: &Path, checking: bool) -> Result<LoadedConfig, CliError> {
    mcp_catalog::load_file(path).map_err(|e| load_error(path, &e, checking))
}

/// The CLI error for a configuration that could not be read or is invalid.
pub(crate) fn load_error(path: &Path, e: &mcp_catalog::Error, checking: bool) -> CliError {
    match e.config_errors() {
        Some(errors) => invalid(path, errors.errors(), checking),
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
    let s = crate::style::Style::stderr();
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

//! Reading a configuration file from disk (the crate's only I/O).

use std::path::Path;

use crate::env::{EnvLookup, ProcessEnv};
use crate::error::Error;
use crate::model::config::{Config, LoadedConfig};
use crate::model::format::ConfigFormat;

/// Reads and validates a configuration file, expanding `.mcp.json` variables from the
/// process environment.
///
/// The format is detected from the file name and content ([`ConfigFormat::detect`]):
/// `.toml` files are TOML, `.yaml` files Goose's; JSON files are Claude Code's `.mcp.json`
/// or another client's file (VS Code, Cursor, Claude Desktop, Gemini CLI, Windsurf, Zed);
/// any other file is JSON when its first non-blank character is `{` (or `/`), TOML
/// otherwise. The path is the origin of every message.
pub fn load_file(path: impl AsRef<Path>) -> Result<LoadedConfig, Error> {
    load_file_with_env(path, &ProcessEnv)
}

/// [`load_file`] with `.mcp.json` variables read through `env`.
pub fn load_file_with_env(
    path: impl AsRef<Path>,
    env: &dyn EnvLookup,
) -> Result<LoadedConfig, Error> {
    load_file_as(path, None, env)
}

/// [`load_file_with_env`] read as `format` when given, else as detected.
pub(crate) fn load_file_as(
    path: impl AsRef<Path>,
    format: Option<ConfigFormat>,
    env: &dyn EnvLookup,
) -> Result<LoadedConfig, Error> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let origin = path.display().to_string();
    let format = format.unwrap_or_else(|| ConfigFormat::detect(path, &text));
    Ok(Config::from_client_str(&text, &origin, format, env)?)
}

//! Reading a configuration file from disk (the crate's only I/O).

use std::path::Path;

use crate::config::{Config, LoadedConfig};
use crate::env::{EnvLookup, ProcessEnv};
use crate::error::Error;

/// Reads and validates a configuration file, expanding `.mcp.json` variables from the
/// process environment.
///
/// `.json` files are read as `.mcp.json`, `.toml` files as TOML; any other file is JSON
/// when its first non-blank character is `{`, TOML otherwise. The path is the origin of
/// every message.
pub fn load_file(path: impl AsRef<Path>) -> Result<LoadedConfig, Error> {
    load_file_with_env(path, &ProcessEnv)
}

/// [`load_file`] with `.mcp.json` variables read through `env`.
pub fn load_file_with_env(
    path: impl AsRef<Path>,
    env: &dyn EnvLookup,
) -> Result<LoadedConfig, Error> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let origin = path.display().to_string();
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let json = match extension.as_deref() {
        Some("json") => true,
        Some("toml") => false,
        _ => text.trim_start().starts_with('{'),
    };
    let loaded = if json {
        Config::from_mcp_json_str(&text, &origin, env)?
    } else {
        Config::from_toml_str(&text, &origin)?
    };
    Ok(loaded)
}

//! The one place that picks a reader for a text: [`Config`]'s constructors from TOML,
//! `.mcp.json` and the files of other clients call the parser of each format.

use crate::diagnostic::ConfigErrors;
use crate::env::EnvLookup;
use crate::model::config::{Config, LoadedConfig};
use crate::model::format::ConfigFormat;

impl Config {
    /// Parses and validates TOML text. `origin` (a path or label) prefixes every message.
    ///
    /// Returns every error at once; unknown keys are warnings in the result. An error inside
    /// one `[mcp_servers.<name>]` entry (with a valid name) fails only that server: it is kept
    /// as a [`Transport::Unusable`](crate::Transport::Unusable) server carrying its errors
    /// ([`LoadedConfig::into_strict`] turns those into errors of the whole text).
    pub fn from_toml_str(text: &str, origin: &str) -> Result<LoadedConfig, ConfigErrors> {
        crate::formats::toml_parse::parse(text, origin)
    }

    /// Parses `.mcp.json` text, expanding `${VAR}` and `${VAR:-default}` in string values
    /// through `env`.
    ///
    /// As for TOML, an invalid entry (e.g. `"type": "websocket"`) fails only that
    /// server ([`Transport::Unusable`](crate::Transport::Unusable)); text that is not JSON fails as a whole.
    pub fn from_mcp_json_str(
        text: &str,
        origin: &str,
        env: &dyn EnvLookup,
    ) -> Result<LoadedConfig, ConfigErrors> {
        crate::formats::json_parse::parse(text, origin, env, ConfigFormat::McpJson)
    }

    /// Parses the JSON configuration of another client (see [`ConfigFormat`]), with its
    /// fields meaning what that client documents, its variables expanded through `env`, and
    /// a field without an equivalent reported as a warning that names it. Use
    /// [`ConfigFormat::detect`] to pick `format` from a file name and content.
    ///
    /// [`ConfigFormat::Toml`] parses TOML (as [`Config::from_toml_str`]),
    /// [`ConfigFormat::Codex`] the same TOML with Codex's defaults, and
    /// [`ConfigFormat::Goose`] YAML.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use mcp_catalog::{Config, ConfigFormat};
    ///
    /// let text = r#"{
    ///   // VS Code: `servers`, inputs, comments
    ///   "servers": {
    ///     "tickets": {"type": "http", "url": "https://t.example/mcp",
    ///                 "headers": {"Authorization": "Bearer ${input:token}"}},
    ///     "legacy": {"type": "sse", "url": "https://l.example/sse"},
    ///     "broken": {"type": "websocket", "url": "wss://b.example/ws"},
    ///   }
    /// }"#;
    /// let env = BTreeMap::from([("MCP_INPUT_TOKEN".to_owned(), "t0k".to_owned())]);
    /// let format = ConfigFormat::detect(".vscode/mcp.json".as_ref(), text);
    /// let loaded = Config::from_client_str(text, ".vscode/mcp.json", format, &env)?;
    /// let unusable: Vec<_> = loaded.config().unusable_servers().map(|(n, _)| n.as_str()).collect();
    /// assert_eq!(unusable, ["broken"]);
    /// let legacy = &loaded.config().servers()[&mcp_key::ServerName::new("legacy").unwrap()];
    /// assert!(legacy.transport().is_sse());
    /// assert_eq!(loaded.config().servers().len(), 3);
    /// # Ok::<(), mcp_catalog::ConfigErrors>(())
    /// ```
    pub fn from_client_str(
        text: &str,
        origin: &str,
        format: ConfigFormat,
        env: &dyn EnvLookup,
    ) -> Result<LoadedConfig, ConfigErrors> {
        match format {
            ConfigFormat::Toml | ConfigFormat::Codex => {
                crate::formats::toml_parse::parse_format(text, origin, format)
            }
            ConfigFormat::Goose => crate::formats::goose::parse(text, origin),
            _ => crate::formats::json_parse::parse(text, origin, env, format),
        }
    }
}

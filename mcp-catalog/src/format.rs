//! Which program's configuration file a text is, detected from its file name and content.

use std::fmt;
use std::path::Path;

use serde_json::Value;

/// The format a configuration file was read as: this crate's TOML or one of the JSON
/// files other MCP clients write, each mapped onto the same model with its fields meaning
/// what that client documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ConfigFormat {
    /// This crate's TOML (a superset of Codex's `config.toml` `[mcp_servers]`).
    Toml,
    /// Claude Code's `.mcp.json`: `mcpServers`, `${VAR}` and `${VAR:-default}` expanded.
    McpJson,
    /// Claude Desktop's `claude_desktop_config.json`: `mcpServers`, no variable expansion.
    ClaudeDesktop,
    /// Cursor's `mcp.json` (`.cursor/mcp.json`): `mcpServers`, `url` is streamable HTTP,
    /// `${env:NAME}`, `${userHome}` and `${workspaceFolder}` expanded.
    Cursor,
    /// VS Code's `.vscode/mcp.json`: `servers` and `inputs`; `${input:id}` is read from the
    /// environment variable `MCP_INPUT_<ID>` (a host may ask for it first: [`declared_inputs`](crate::declared_inputs)); comments allowed.
    VsCode,
    /// Gemini CLI's `settings.json`: `mcpServers` with `httpUrl` (streamable HTTP), `url`
    /// (legacy SSE), `timeout` in milliseconds, tool lists and `trust`; comments allowed.
    Gemini,
    /// Windsurf's `mcp_config.json`: `mcpServers` with `serverUrl` for remote servers.
    Windsurf,
    /// Zed's `settings.json`: `context_servers`; comments and trailing commas allowed.
    Zed,
    /// Goose's `config.yaml`: `extensions` with `cmd`, `envs`, `env_keys`, `uri`, `timeout`
    /// in seconds.
    Goose,
}

impl ConfigFormat {
    /// A short human name, e.g. `VS Code mcp.json`.
    pub fn name(self) -> &'static str {
        match self {
            ConfigFormat::Toml => "TOML",
            ConfigFormat::McpJson => "Claude Code .mcp.json",
            ConfigFormat::ClaudeDesktop => "Claude Desktop config",
            ConfigFormat::Cursor => "Cursor mcp.json",
            ConfigFormat::VsCode => "VS Code mcp.json",
            ConfigFormat::Gemini => "Gemini CLI settings.json",
            ConfigFormat::Windsurf => "Windsurf mcp_config.json",
            ConfigFormat::Zed => "Zed settings.json",
            ConfigFormat::Goose => "Goose config.yaml",
        }
    }

    /// A short id, e.g. `vscode` (as `mcpctl config check` shows it).
    pub fn id(self) -> &'static str {
        match self {
            ConfigFormat::Toml => "toml",
            ConfigFormat::McpJson => "mcp-json",
            ConfigFormat::ClaudeDesktop => "claude-desktop",
            ConfigFormat::Cursor => "cursor",
            ConfigFormat::VsCode => "vscode",
            ConfigFormat::Gemini => "gemini",
            ConfigFormat::Windsurf => "windsurf",
            ConfigFormat::Zed => "zed",
            ConfigFormat::Goose => "goose",
        }
    }

    /// Detects the format of `text` read from `path`.
    ///
    /// The file name decides when it is specific (`claude_desktop_config.json`,
    /// `mcp_config.json`, `.vscode/mcp.json` and VS Code's user `User/mcp.json`,
    /// `.cursor/mcp.json`, `.gemini/settings.json`, `zed/settings.json` and
    /// `.zed/settings.json`, `*.toml`, `*.yaml` for Goose); otherwise the content does: `context_servers` is Zed,
    /// `servers` without `mcpServers` is VS Code, `mcpServers` in a `settings.json` or with an
    /// `httpUrl` is Gemini CLI, with a `serverUrl` Windsurf, else `.mcp.json`. Text that is
    /// not JSON-like (first non-blank character neither `{` nor `/`) in a file without a
    /// `.json` extension is TOML.
    pub fn detect(path: &Path, text: &str) -> Self {
        let lower = |s: Option<&std::ffi::OsStr>| {
            s.and_then(|s| s.to_str())
                .map(str::to_ascii_lowercase)
                .unwrap_or_default()
        };
        let file = lower(path.file_name());
        let folder = lower(path.parent().and_then(Path::file_name));
        let extension = lower(path.extension());
        match (file.as_str(), folder.as_str()) {
            _ if extension == "toml" => return ConfigFormat::Toml,
            _ if extension == "yaml" || extension == "yml" => return ConfigFormat::Goose,
            ("claude_desktop_config.json", _) => return ConfigFormat::ClaudeDesktop,
            ("mcp_config.json", _) => return ConfigFormat::Windsurf,
            ("mcp.json", ".vscode" | "user") => return ConfigFormat::VsCode,
            ("mcp.json", ".cursor") => return ConfigFormat::Cursor,
            ("settings.json", ".gemini") => return ConfigFormat::Gemini,
            ("settings.json", "zed" | ".zed") => return ConfigFormat::Zed,
            _ => {}
        }
        let first = text.trim_start().chars().next();
        if extension != "json" && !matches!(first, Some('{' | '/')) {
            return ConfigFormat::Toml;
        }
        let stripped = crate::jsonc::strip(text);
        let Ok(Value::Object(root)) = serde_json::from_str::<Value>(&stripped) else {
            // Not JSON at all: the `.mcp.json` reader reports where.
            return ConfigFormat::McpJson;
        };
        if root.contains_key("context_servers") {
            return ConfigFormat::Zed;
        }
        let Some(Value::Object(servers)) = root.get("mcpServers") else {
            return if root.contains_key("servers") {
                ConfigFormat::VsCode
            } else {
                ConfigFormat::McpJson
            };
        };
        let any_has = |key: &str| {
            servers
                .values()
                .any(|s| s.as_object().is_some_and(|s| s.contains_key(key)))
        };
        if file == "settings.json" || any_has("httpUrl") {
            ConfigFormat::Gemini
        } else if any_has("serverUrl") {
            ConfigFormat::Windsurf
        } else {
            ConfigFormat::McpJson
        }
    }

    /// The top-level key holding the servers (`mcpServers`, `servers`, `context_servers`).
    pub(crate) fn servers_key(self) -> &'static str {
        match self {
            ConfigFormat::VsCode => "servers",
            ConfigFormat::Zed => "context_servers",
            ConfigFormat::Goose => "extensions",
            ConfigFormat::Toml
            | ConfigFormat::McpJson
            | ConfigFormat::ClaudeDesktop
            | ConfigFormat::Cursor
            | ConfigFormat::Gemini
            | ConfigFormat::Windsurf => "mcpServers",
        }
    }

    /// Whether `//` and `/* */` comments and trailing commas are allowed (JSONC).
    pub(crate) fn allows_comments(self) -> bool {
        matches!(
            self,
            ConfigFormat::VsCode | ConfigFormat::Gemini | ConfigFormat::Zed
        )
    }

    /// Whether `${...}` in string values is expanded.
    pub(crate) fn expands_variables(self) -> bool {
        !matches!(
            self,
            ConfigFormat::ClaudeDesktop | ConfigFormat::Zed | ConfigFormat::Goose
        )
    }
}

impl fmt::Display for ConfigFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_file_name_then_content() {
        let d = |path: &str, text: &str| ConfigFormat::detect(Path::new(path), text);
        assert_eq!(d("a/.vscode/mcp.json", "{}"), ConfigFormat::VsCode);
        assert_eq!(d(".cursor/mcp.json", "{}"), ConfigFormat::Cursor);
        assert_eq!(
            d("x/claude_desktop_config.json", "{}"),
            ConfigFormat::ClaudeDesktop
        );
        assert_eq!(d("mcp_config.json", "{}"), ConfigFormat::Windsurf);
        assert_eq!(d(".gemini/settings.json", "{}"), ConfigFormat::Gemini);
        assert_eq!(d("zed/settings.json", "{}"), ConfigFormat::Zed);
        assert_eq!(d("config.toml", "{"), ConfigFormat::Toml);
        assert_eq!(d(".config/goose/config.yaml", ""), ConfigFormat::Goose);
        assert_eq!(d("mcp", "[mcp_servers.a]"), ConfigFormat::Toml);
        assert_eq!(
            d(".mcp.json", r#"{"mcpServers": {}}"#),
            ConfigFormat::McpJson
        );
        assert_eq!(d("x.json", r#"{"servers": {}}"#), ConfigFormat::VsCode);
        assert_eq!(
            d("x.json", "// zed\n{\"context_servers\": {},}"),
            ConfigFormat::Zed
        );
        let gemini = r#"{"mcpServers": {"a": {"httpUrl": "https://x/mcp"}}}"#;
        assert_eq!(d("x.json", gemini), ConfigFormat::Gemini);
        assert_eq!(
            d("settings.json", r#"{"mcpServers": {}}"#),
            ConfigFormat::Gemini
        );
        let windsurf = r#"{"mcpServers": {"a": {"serverUrl": "https://x/mcp"}}}"#;
        assert_eq!(d("x.json", windsurf), ConfigFormat::Windsurf);
        assert_eq!(d("x.json", "not json"), ConfigFormat::McpJson);
    }
}

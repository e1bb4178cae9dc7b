//! [`ConfigFormat::detect`]: which program's configuration file a text is, from its file
//! name and content.

use std::path::Path;

use serde_json::Value;

use crate::model::format::ConfigFormat;

impl ConfigFormat {
    /// Detects the format of `text` read from `path`.
    ///
    /// The file name decides when it is specific (`claude_desktop_config.json`,
    /// `mcp_config.json`, `.vscode/mcp.json` and VS Code's user `User/mcp.json`,
    /// `.cursor/mcp.json`, `.codex/config.toml` (Codex's), `.gemini/settings.json`, `zed/settings.json` and
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
            ("config.toml", ".codex") => return ConfigFormat::Codex,
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
        let stripped = crate::formats::jsonc::strip(text);
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

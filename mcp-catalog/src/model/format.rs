//! Which program's configuration file a text is ([`ConfigFormat::detect`] finds out).

use std::fmt;

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

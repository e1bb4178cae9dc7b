//! Which program's configuration file a text is ([`ConfigFormat::detect`] finds out).

use std::fmt;

/// Codex's default for `startup_timeout_sec`, used for servers of a [`ConfigFormat::Codex`]
/// file that set none.
pub const CODEX_STARTUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Codex's default for `tool_timeout_sec`, used for servers of a [`ConfigFormat::Codex`]
/// file that set none.
pub const CODEX_TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The format a configuration file was read as: this crate's TOML or one of the JSON
/// files other MCP clients write, each mapped onto the same model with its fields meaning
/// what that client documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ConfigFormat {
    /// This crate's TOML (a superset of Codex's `config.toml` `[mcp_servers]`).
    Toml,
    /// Codex's own `config.toml` (`~/.codex/config.toml`, `$CODEX_HOME/config.toml`, a
    /// project's `.codex/config.toml`): read as this crate's TOML, with Codex's defaults
    /// for what a server leaves out ([`ConfigFormat::default_timeouts`]: startup 10 s, tool
    /// calls 60 s).
    Codex,
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
            ConfigFormat::Codex => "Codex config.toml",
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
            ConfigFormat::Codex => "codex",
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

    /// The startup and per-call timeouts a server of a file in this format gets when it sets
    /// none: Codex's own (10 s and 60 s, as Codex documents `startup_timeout_sec` and
    /// `tool_timeout_sec`) for [`ConfigFormat::Codex`], this crate's
    /// ([`DEFAULT_STARTUP_TIMEOUT`](crate::DEFAULT_STARTUP_TIMEOUT),
    /// [`DEFAULT_TOOL_TIMEOUT`](crate::DEFAULT_TOOL_TIMEOUT)) for every other format.
    pub fn default_timeouts(self) -> (std::time::Duration, std::time::Duration) {
        match self {
            ConfigFormat::Codex => (CODEX_STARTUP_TIMEOUT, CODEX_TOOL_TIMEOUT),
            _ => (
                crate::model::server::DEFAULT_STARTUP_TIMEOUT,
                crate::model::server::DEFAULT_TOOL_TIMEOUT,
            ),
        }
    }

    /// Whether this is one of the TOML formats (this crate's or Codex's).
    pub fn is_toml(self) -> bool {
        matches!(self, ConfigFormat::Toml | ConfigFormat::Codex)
    }

    /// The top-level key holding the servers (`mcpServers`, `servers`, `context_servers`).
    pub(crate) fn servers_key(self) -> &'static str {
        match self {
            ConfigFormat::VsCode => "servers",
            ConfigFormat::Zed => "context_servers",
            ConfigFormat::Goose => "extensions",
            ConfigFormat::Toml
            | ConfigFormat::Codex
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

//! Where other MCP clients keep their configuration: per client, its user file (under the
//! home folder) and its project file (under the project folder), in its precedence.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// An MCP client whose configuration files can be found ([`client_config_paths`]) and read
/// (see [`ConfigFormat`](crate::ConfigFormat)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ClientKind {
    /// OpenAI Codex CLI (`codex`).
    Codex,
    /// Claude Code (`claude`).
    Claude,
    /// Claude Desktop (`claude-desktop`).
    ClaudeDesktop,
    /// Cursor (`cursor`).
    Cursor,
    /// Visual Studio Code (`vscode`).
    VsCode,
    /// Gemini CLI (`gemini`).
    Gemini,
    /// Goose (`goose`).
    Goose,
    /// Zed (`zed`).
    Zed,
    /// Windsurf (`windsurf`).
    Windsurf,
}

impl ClientKind {
    /// Every client, in the order of [`ClientKind::id`]s shown to users.
    pub const ALL: [ClientKind; 9] = [
        ClientKind::Codex,
        ClientKind::Claude,
        ClientKind::ClaudeDesktop,
        ClientKind::Cursor,
        ClientKind::VsCode,
        ClientKind::Gemini,
        ClientKind::Goose,
        ClientKind::Zed,
        ClientKind::Windsurf,
    ];

    /// The client's id on a command line, e.g. `claude-desktop`.
    pub fn id(self) -> &'static str {
        match self {
            ClientKind::Codex => "codex",
            ClientKind::Claude => "claude",
            ClientKind::ClaudeDesktop => "claude-desktop",
            ClientKind::Cursor => "cursor",
            ClientKind::VsCode => "vscode",
            ClientKind::Gemini => "gemini",
            ClientKind::Goose => "goose",
            ClientKind::Zed => "zed",
            ClientKind::Windsurf => "windsurf",
        }
    }
}

impl fmt::Display for ClientKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A client id that is not one of [`ClientKind::ALL`]; its message lists the known ids.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown client `{given}` (known: {})", known_ids())]
pub struct UnknownClient {
    given: String,
}

fn known_ids() -> String {
    ClientKind::ALL.map(ClientKind::id).join(", ")
}

impl FromStr for ClientKind {
    type Err = UnknownClient;

    /// Parses a [`ClientKind::id`] (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ClientKind::ALL
            .into_iter()
            .find(|k| k.id().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownClient {
                given: s.to_owned(),
            })
    }
}

/// Whose file a location is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Scope {
    /// The user's own file under the home folder: trusted as the user's choice.
    User,
    /// A file in the project folder (it may come from a cloned repository): used only
    /// once trusted, like any project file ([`crate::TrustStore`]).
    Project,
}

impl ClientKind {
    /// The format of this client's files when their name does not say it (Codex's
    /// `$CODEX_HOME/config.toml`); `None` when detection by name and content is right.
    pub(crate) fn forced_format(self) -> Option<crate::model::format::ConfigFormat> {
        match self {
            ClientKind::Codex => Some(crate::model::format::ConfigFormat::Codex),
            _ => None,
        }
    }
}

/// The configuration files of `kind`, lowest precedence first (a later file's server wins
/// over an earlier one's of the same name), whether they exist or not. `home` is the
/// user's home folder (`$HOME`), `project_dir` the project (working) folder.
///
/// Where each location comes from (the client's own documentation):
///
/// | client | user | project (wins over user) |
/// |---|---|---|
/// | `codex` | `~/.codex/config.toml`, or `$CODEX_HOME/config.toml` with [`client_config_paths_in`] (Codex "Configuration": `[mcp_servers.*]`) | `.codex/config.toml` (Codex's project configuration, read in trusted projects) |
/// | `claude` | `~/.claude.json` (Claude Code "MCP": user scope, top-level `mcpServers`) | `.mcp.json` (project scope) |
/// | `claude-desktop` | `~/.config/Claude/claude_desktop_config.json` on Linux, `~/Library/Application Support/Claude/claude_desktop_config.json` on macOS (MCP quickstart) | — |
/// | `cursor` | `~/.cursor/mcp.json` (Cursor "MCP": global) | `.cursor/mcp.json` |
/// | `vscode` | `~/.config/Code/User/mcp.json` on Linux, `~/Library/Application Support/Code/User/mcp.json` on macOS (VS Code "MCP servers": user configuration) | `.vscode/mcp.json` (workspace) |
/// | `gemini` | `~/.gemini/settings.json` (Gemini CLI "Configuration": user settings) | `.gemini/settings.json` (project settings) |
/// | `goose` | `~/.config/goose/config.yaml` (Goose "Configuration file") | — |
/// | `zed` | `~/.config/zed/settings.json` (Zed "Configuring Zed"; also on macOS) | `.zed/settings.json` (project settings) |
/// | `windsurf` | `~/.codeium/windsurf/mcp_config.json` (Windsurf "Cascade MCP") | — |
///
/// Codex's files are read as [`ConfigFormat::Codex`](crate::ConfigFormat::Codex): Codex's
/// defaults (startup 10 s, tool calls 60 s) for the servers that set no timeout.
///
/// Not covered: Windows locations (`%APPDATA%`), Claude Code's
/// local-scope servers inside `~/.claude.json` (`projects.<path>.mcpServers`: reading the
/// file names them in one warning; its other keys, Claude Code's state, are not warned
/// about), and VS Code servers declared in its user `settings.json`
/// (`"mcp": {"servers": …}`).
pub fn client_config_paths(
    kind: ClientKind,
    home: &Path,
    project_dir: &Path,
) -> Vec<(Scope, PathBuf)> {
    client_config_paths_in(kind, home, project_dir, &crate::env::EmptyEnv)
}

/// [`client_config_paths`] with the client's own environment variables read through
/// `env`: Codex's `CODEX_HOME` (a non-empty value moves its user file to
/// `$CODEX_HOME/config.toml`, as Codex does).
pub fn client_config_paths_in(
    kind: ClientKind,
    home: &Path,
    project_dir: &Path,
    env: &dyn crate::env::EnvLookup,
) -> Vec<(Scope, PathBuf)> {
    let user = |parts: &[&str]| {
        (
            Scope::User,
            parts.iter().fold(home.to_path_buf(), |p, s| p.join(s)),
        )
    };
    let project = |parts: &[&str]| {
        (
            Scope::Project,
            parts
                .iter()
                .fold(project_dir.to_path_buf(), |p, s| p.join(s)),
        )
    };
    let app_support = |app: &str, parts: &[&str]| {
        let mut all = if cfg!(target_os = "macos") {
            vec!["Library", "Application Support", app]
        } else {
            vec![".config", app]
        };
        all.extend_from_slice(parts);
        user(&all)
    };
    match kind {
        ClientKind::Codex => {
            let user_file = match env.get("CODEX_HOME").filter(|h| !h.is_empty()) {
                Some(codex_home) => (Scope::User, PathBuf::from(codex_home).join("config.toml")),
                None => user(&[".codex", "config.toml"]),
            };
            vec![user_file, project(&[".codex", "config.toml"])]
        }
        ClientKind::Claude => vec![user(&[".claude.json"]), project(&[".mcp.json"])],
        ClientKind::ClaudeDesktop => vec![app_support("Claude", &["claude_desktop_config.json"])],
        ClientKind::Cursor => vec![
            user(&[".cursor", "mcp.json"]),
            project(&[".cursor", "mcp.json"]),
        ],
        ClientKind::VsCode => vec![
            app_support("Code", &["User", "mcp.json"]),
            project(&[".vscode", "mcp.json"]),
        ],
        ClientKind::Gemini => vec![
            user(&[".gemini", "settings.json"]),
            project(&[".gemini", "settings.json"]),
        ],
        ClientKind::Goose => vec![user(&[".config", "goose", "config.yaml"])],
        ClientKind::Zed => vec![
            user(&[".config", "zed", "settings.json"]),
            project(&[".zed", "settings.json"]),
        ],
        ClientKind::Windsurf => vec![user(&[".codeium", "windsurf", "mcp_config.json"])],
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::model::format::ConfigFormat;

    #[test]
    fn ids_round_trip_and_unknown_ids_list_the_known_ones() {
        for kind in ClientKind::ALL {
            assert_eq!(kind.id().parse::<ClientKind>().unwrap(), kind);
        }
        assert_eq!("VSCode".parse::<ClientKind>().unwrap(), ClientKind::VsCode);
        let err = "emacs".parse::<ClientKind>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown client `emacs` (known: codex, claude, claude-desktop, cursor, vscode, gemini, goose, zed, windsurf)"
        );
    }

    /// Codex's user file moves with a non-empty `CODEX_HOME`, and its project file is
    /// `.codex/config.toml`; a Codex file's servers get Codex's defaults for the timeouts
    /// they leave out and keep the ones they set.
    #[test]
    fn codex_home_moves_the_user_file_and_codex_files_get_codex_defaults() {
        use std::collections::BTreeMap;
        use std::time::Duration;

        let paths = |env: &BTreeMap<String, String>| {
            client_config_paths_in(ClientKind::Codex, Path::new("/h"), Path::new("p"), env)
        };
        let moved = BTreeMap::from([("CODEX_HOME".to_owned(), "/c".to_owned())]);
        assert_eq!(
            paths(&moved),
            vec![
                (Scope::User, PathBuf::from("/c/config.toml")),
                (Scope::Project, PathBuf::from("p/.codex/config.toml")),
            ]
        );
        let empty = BTreeMap::from([("CODEX_HOME".to_owned(), String::new())]);
        assert_eq!(paths(&empty)[0].1, PathBuf::from("/h/.codex/config.toml"));

        let text = "[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.b]\ncommand = \"x\"\nstartup_timeout_sec = 3\ntool_timeout_sec = 7\n";
        let timeouts = |format| {
            let loaded =
                crate::Config::from_client_str(text, "c", format, &crate::EmptyEnv).unwrap();
            loaded
                .config()
                .servers()
                .values()
                .map(|s| (s.startup_timeout(), s.tool_timeout()))
                .collect::<Vec<_>>()
        };
        let secs = Duration::from_secs;
        assert_eq!(
            timeouts(ConfigFormat::Codex),
            [(secs(10), secs(60)), (secs(3), secs(7))]
        );
        assert_eq!(
            timeouts(ConfigFormat::Toml),
            [(secs(30), secs(300)), (secs(3), secs(7))]
        );
        assert_eq!(
            ConfigFormat::detect(Path::new("p/.codex/config.toml"), text),
            ConfigFormat::Codex
        );
    }

    /// Every location is read as its client's format, whatever its content.
    #[test]
    fn every_location_is_detected_as_its_clients_format() {
        let expected = |kind| match kind {
            ClientKind::Codex => ConfigFormat::Codex,
            ClientKind::Claude => ConfigFormat::McpJson,
            ClientKind::ClaudeDesktop => ConfigFormat::ClaudeDesktop,
            ClientKind::Cursor => ConfigFormat::Cursor,
            ClientKind::VsCode => ConfigFormat::VsCode,
            ClientKind::Gemini => ConfigFormat::Gemini,
            ClientKind::Goose => ConfigFormat::Goose,
            ClientKind::Zed => ConfigFormat::Zed,
            ClientKind::Windsurf => ConfigFormat::Windsurf,
        };
        for kind in ClientKind::ALL {
            let paths = client_config_paths(kind, Path::new("/home/me"), Path::new("proj"));
            assert!(!paths.is_empty());
            for (scope, path) in paths {
                let under = match scope {
                    Scope::User => "/home/me",
                    Scope::Project => "proj",
                };
                assert!(path.starts_with(under), "{kind}: {}", path.display());
                assert_eq!(
                    ConfigFormat::detect(&path, "{}"),
                    expected(kind),
                    "{kind}: {}",
                    path.display()
                );
            }
        }
    }
}

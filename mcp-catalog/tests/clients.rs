//! Other clients' configuration files, written from each client's documented format,
//! detected by name and content and mapped onto the one model.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use mcp_catalog::{
    Config, ConfigFormat, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, LoadedConfig,
};
use pretty_assertions::assert_eq;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/clients");

fn env() -> BTreeMap<String, String> {
    [
        ("MCP_INPUT_PERPLEXITY_KEY", "pplx-123"),
        ("GITHUB_TOKEN", "ghp-456"),
        ("API_KEY", "k-789"),
        ("HOME", "/home/me"),
        ("MY_SERVICE_TOKEN", "svc"),
        ("DB_CONNECTION_STRING", "postgres://db"),
        ("EXTERNAL_API_KEY", "ext"),
        ("API_TOKEN", "tok"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// Loads `relative` (under the fixtures folder) as a host would: the format is detected
/// from the path and content. The origin is the relative path, for stable snapshots.
fn load(relative: &str) -> LoadedConfig {
    let text = std::fs::read_to_string(Path::new(FIXTURES).join(relative)).unwrap();
    let format = ConfigFormat::detect(Path::new(relative), &text);
    Config::from_client_str(&text, relative, format, &env()).unwrap()
}

/// Every server, warning and per-server error, deterministically.
fn render(loaded: &LoadedConfig) -> String {
    let mut out = String::new();
    let format = loaded.format().map(ConfigFormat::name).unwrap_or("none");
    writeln!(out, "format: {format}").unwrap();
    for (name, server) in loaded.config().servers() {
        writeln!(out, "[{name}]").unwrap();
        let t = server.transport();
        if let Some(stdio) = t.as_stdio() {
            writeln!(out, "  stdio: {} {:?}", stdio.command(), stdio.args()).unwrap();
            for (k, v) in stdio.env() {
                writeln!(out, "  env {k} = {v}").unwrap();
            }
            for name in stdio.env_vars() {
                writeln!(out, "  env from host: {name}").unwrap();
            }
            if let Some(cwd) = stdio.cwd() {
                writeln!(out, "  cwd: {}", cwd.display()).unwrap();
            }
        } else if let Some(http) = t.as_http() {
            writeln!(out, "  {}: {}", t.kind_name(), http.url()).unwrap();
            for (k, v) in http.http_headers() {
                writeln!(out, "  header {k}: {v}").unwrap();
            }
        } else if let Some(unusable) = t.as_unusable() {
            for error in unusable.errors() {
                writeln!(out, "  UNUSABLE {error}").unwrap();
            }
        }
        if server.startup_timeout() != DEFAULT_STARTUP_TIMEOUT {
            writeln!(out, "  startup timeout: {:?}", server.startup_timeout()).unwrap();
        }
        if server.tool_timeout() != DEFAULT_TOOL_TIMEOUT {
            writeln!(out, "  tool timeout: {:?}", server.tool_timeout()).unwrap();
        }
        let filter = server.tool_filter();
        if let Some(enabled) = filter.enabled_tools() {
            writeln!(out, "  enabled tools: {enabled:?}").unwrap();
        }
        if !filter.disabled_tools().is_empty() {
            writeln!(out, "  disabled tools: {:?}", filter.disabled_tools()).unwrap();
        }
        if !server.enabled() {
            writeln!(out, "  disabled").unwrap();
        }
        writeln!(
            out,
            "  approval: {}",
            server.default_approval_mode().as_str()
        )
        .unwrap();
        if let Some(description) = server.description() {
            writeln!(out, "  description: {description}").unwrap();
        }
    }
    for warning in loaded.warnings() {
        writeln!(out, "warning: {warning}").unwrap();
    }
    out
}

#[test]
fn vscode_mcp_json() {
    let loaded = load("vscode/.vscode/mcp.json");
    assert_eq!(loaded.format(), Some(ConfigFormat::VsCode));
    insta::assert_snapshot!(render(&loaded));
}

#[test]
fn cursor_mcp_json() {
    let loaded = load("cursor/.cursor/mcp.json");
    assert_eq!(loaded.format(), Some(ConfigFormat::Cursor));
    insta::assert_snapshot!(render(&loaded));
}

#[test]
fn claude_desktop_config() {
    let loaded = load("claude-desktop/claude_desktop_config.json");
    assert_eq!(loaded.format(), Some(ConfigFormat::ClaudeDesktop));
    insta::assert_snapshot!(render(&loaded));
}

#[test]
fn gemini_settings() {
    let loaded = load("gemini/.gemini/settings.json");
    assert_eq!(loaded.format(), Some(ConfigFormat::Gemini));
    insta::assert_snapshot!(render(&loaded));
}

#[test]
fn windsurf_mcp_config() {
    let loaded = load("windsurf/mcp_config.json");
    assert_eq!(loaded.format(), Some(ConfigFormat::Windsurf));
    insta::assert_snapshot!(render(&loaded));
}

#[test]
fn zed_settings_with_comments_and_trailing_commas() {
    let loaded = load("zed/zed/settings.json");
    assert_eq!(loaded.format(), Some(ConfigFormat::Zed));
    insta::assert_snapshot!(render(&loaded));
}

#[test]
fn goose_config_yaml() {
    let loaded = load("goose/.config/goose/config.yaml");
    assert_eq!(loaded.format(), Some(ConfigFormat::Goose));
    insta::assert_snapshot!(render(&loaded));
}

/// A YAML syntax error fails the whole file, located.
#[test]
fn goose_syntax_error_is_located() {
    let text = "extensions:\n  a:\n    cmd: [x\n";
    let errors =
        Config::from_client_str(text, "config.yaml", ConfigFormat::Goose, &env()).unwrap_err();
    assert_eq!(errors.len(), 1);
    let location = errors.errors()[0].location();
    assert!(location.line().is_some_and(|l| l >= 3), "{errors}");
    assert!(errors.to_string().contains("invalid YAML"), "{errors}");
}

/// Comments are only accepted where the client accepts them, and a syntax error still
/// fails the whole file with its position.
#[test]
fn comments_in_strict_json_are_a_located_syntax_error() {
    let text = "{\n  // no comments in .mcp.json\n  \"mcpServers\": {}\n}\n";
    let errors =
        Config::from_client_str(text, ".mcp.json", ConfigFormat::McpJson, &env()).unwrap_err();
    assert!(
        errors
            .to_string()
            .starts_with(".mcp.json:2:3: invalid JSON"),
        "{errors}"
    );
    let broken = "{\n  \"servers\": {\n    \"a\": {\"command\": \"x\"\n  }\n";
    let errors = Config::from_client_str(broken, ".vscode/mcp.json", ConfigFormat::VsCode, &env())
        .unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(errors.to_string().contains("invalid JSON"), "{errors}");
}

/// With both of a format's URL keys, the documented one for streamable HTTP wins and the
/// other is a warning that names it.
#[test]
fn two_url_keys_use_the_streamable_one() {
    let text = r#"{"mcpServers": {"both": {"httpUrl": "https://a/mcp", "url": "https://a/sse"}}}"#;
    let loaded =
        Config::from_client_str(text, "settings.json", ConfigFormat::Gemini, &env()).unwrap();
    let both = loaded.config().servers().values().next().unwrap();
    assert_eq!(both.transport().as_http().unwrap().url(), "https://a/mcp");
    assert_eq!(loaded.warnings().len(), 1);
    assert_eq!(
        loaded.warnings()[0].to_string(),
        "settings.json:1:54: server `both`: `url` is ignored: `httpUrl` is used (keep only one of them)"
    );
}

/// Claude Code's user file is its state file: only `mcpServers` (user scope) is read, its
/// other keys are no warning each, and local-scope servers under `projects` are named once.
#[test]
fn claude_code_user_state_file() {
    let loaded = load("claude/.claude.json");
    let names: Vec<&str> = loaded
        .config()
        .servers()
        .keys()
        .map(|n| n.as_str())
        .collect();
    assert_eq!(names, ["files", "github"]);
    let warnings: Vec<String> = loaded.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("local-scope servers of 1 project(s)")
            && warnings[0].contains("/home/me/work/api")
            && warnings[0].contains(".mcp.json"),
        "{warnings:#?}"
    );
}

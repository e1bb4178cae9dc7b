//! Parsing never panics, whatever the input.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use mcp_catalog::{Config, ConfigFormat, EmptyEnv};
use proptest::prelude::*;

/// Fragments that steer random text towards the interesting parts of the grammar.
const FRAGMENTS: &[&str] = &[
    "[mcp_servers.a]\n",
    "[mcp_servers.\"b c\"]\n",
    "command = \"x\"\n",
    "url = \"https://h/m\"\n",
    "url = \"\"\n",
    "args = [1, \"a\"]\n",
    "env = { A = 1 }\n",
    "startup_timeout_sec = -1e9\n",
    "tool_timeout_sec = inf\n",
    "environment = \"dev\"\n",
    "[environments.dev]\n",
    "[[plugins]]\n",
    "tools = { t = { approval_mode = \"x\" } }\n",
    "oauth = 3\n",
    "[mcp_servers.a.ema]\n",
    "auth = \"ema\"\n",
    "bearer_token = \"s\"\n",
    "\u{feff}",
    "\"",
    "[",
    "]",
    "=",
    "\n",
    "${",
    "}",
    "{\"mcpServers\": {",
    "\"a\": {\"command\": \"${X:-y}\"}",
    "\"url\": 1",
    "\"servers\": {",
    "\"context_servers\": {",
    "\"httpUrl\": \"https://h/m\"",
    "\"command\": {\"path\": 1}",
    "\"timeout\": -1",
    "\"type\": \"sse\"",
    "${input:a}",
    "$A",
    "//",
    "extensions:\n",
    "  a:\n",
    "    type: stdio\n",
    "    cmd: x\n",
    "    uri: [\n",
    "- ",
    "&a ",
    "*a",
    "? ",
    "---\n",
    "|\n",
    "  ",
    ": ",
    "/*",
    "*/",
    ",",
    "é",
    "\r\n",
    "0x7fffffffffffffff",
    "1979-05-27T07:32:00Z",
];

fn fragments() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..24).prop_map(|parts| parts.concat())
}

fn assert_located(text: &str, errors: &mcp_catalog::ConfigErrors) {
    let max_line = text.split('\n').count();
    for error in errors {
        let line = error.location().line().unwrap_or(0);
        assert!(
            (1..=max_line).contains(&line),
            "{error} is outside the text"
        );
    }
}

fn check(text: &str) {
    match Config::from_toml_str(text, "fuzz.toml") {
        Ok(loaded) => {
            let _ = loaded.warnings().iter().map(ToString::to_string).count();
        }
        Err(errors) => {
            assert!(!errors.is_empty());
            assert_located(text, &errors);
            let _ = errors.to_string();
        }
    }
    for format in CLIENT_FORMATS {
        match Config::from_client_str(text, "fuzz.json", format, &EmptyEnv) {
            Ok(loaded) => {
                let _ = loaded.warnings().iter().map(ToString::to_string).count();
                for (_, unusable) in loaded.config().unusable_servers() {
                    assert_located(text, unusable.errors());
                }
            }
            Err(errors) => {
                assert!(!errors.is_empty());
                assert_located(text, &errors);
                let _ = errors.to_string();
            }
        }
    }
    let _ = ConfigFormat::detect(std::path::Path::new("fuzz"), text);
}

const CLIENT_FORMATS: [ConfigFormat; 8] = [
    ConfigFormat::McpJson,
    ConfigFormat::ClaudeDesktop,
    ConfigFormat::Cursor,
    ConfigFormat::VsCode,
    ConfigFormat::Gemini,
    ConfigFormat::Windsurf,
    ConfigFormat::Zed,
    ConfigFormat::Goose,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_strings(text in any::<String>()) {
        check(&text);
    }

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn grammar_shaped_text(text in fragments()) {
        check(&text);
    }
}

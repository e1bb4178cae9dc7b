//! `export_toml`: every client fixture, read for review (nothing expanded), written as
//! `mcp.toml` and read back, gives the same usable servers; what cannot be carried over is
//! a comment.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use std::path::Path;

use mcp_catalog::{Config, LoadedConfig, ServerConfig, Transport, export_toml, review_file};
use pretty_assertions::assert_eq;

/// Relative to the crate (the working directory of its tests), for stable snapshots.
const FIXTURES: &str = "tests/fixtures/clients";

const FILES: [&str; 7] = [
    "claude-desktop/claude_desktop_config.json",
    "cursor/.cursor/mcp.json",
    "gemini/.gemini/settings.json",
    "goose/.config/goose/config.yaml",
    "vscode/.vscode/mcp.json",
    "windsurf/mcp_config.json",
    "zed/zed/settings.json",
];

/// The usable servers of `loaded`, with `env` entries `K = "${K}"` and `${VAR}` headers
/// written as the variable references `mcp.toml` has for them.
fn usable(loaded: &LoadedConfig) -> Vec<(String, String, ServerConfig)> {
    loaded
        .config()
        .servers()
        .iter()
        .filter(|(_, s)| !matches!(s.transport(), Transport::Unusable(_)))
        .map(|(name, server)| {
            let what = match server.transport() {
                Transport::Stdio(stdio) => format!("{} {:?}", stdio.command(), stdio.args()),
                Transport::StreamableHttp(http) => http.url().to_owned(),
                other => other.kind_name().to_owned(),
            };
            (name.to_string(), what, server.clone())
        })
        .collect()
}

#[test]
fn every_fixture_round_trips_through_mcp_toml() {
    for relative in FILES {
        let (loaded, _) = review_file(Path::new(FIXTURES).join(relative)).unwrap();
        let written = export_toml(std::slice::from_ref(&loaded));
        let back = Config::from_toml_str(&written, "mcp.toml")
            .unwrap_or_else(|e| panic!("{relative}: {e}\n{written}"));
        assert!(
            back.warnings().is_empty(),
            "{relative}: {:?}\n{written}",
            back.warnings()
        );
        let names = |l: &LoadedConfig| -> Vec<(String, String)> {
            usable(l).into_iter().map(|(n, w, _)| (n, w)).collect()
        };
        assert_eq!(names(&back), names(&loaded), "{relative}\n{written}");
        for ((name, _, before), (_, _, after)) in usable(&loaded).into_iter().zip(usable(&back)) {
            assert_eq!(
                before.tool_filter(),
                after.tool_filter(),
                "{relative} {name}"
            );
            assert_eq!(
                before.startup_timeout(),
                after.startup_timeout(),
                "{relative} {name}"
            );
            assert_eq!(
                before.tool_timeout(),
                after.tool_timeout(),
                "{relative} {name}"
            );
            assert_eq!(before.enabled(), after.enabled(), "{relative} {name}");
            assert_eq!(
                before.description(),
                after.description(),
                "{relative} {name}"
            );
        }
        // Written again, the file is the same (apart from its origin line).
        let again = export_toml(std::slice::from_ref(&back));
        let body = |t: &str| t.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
        let comments_free = |t: &str| {
            body(t)
                .into_iter()
                .filter(|l| !l.starts_with('#') && !l.is_empty())
                .collect::<Vec<_>>()
        };
        assert_eq!(comments_free(&again), comments_free(&written), "{relative}");
        // Every reader warning and every unusable server is a comment.
        for warning in loaded.warnings() {
            assert!(
                written.contains(&format!("# not carried over: {warning}")),
                "{relative}: {warning}\n{written}"
            );
        }
        for (name, _) in loaded.config().unusable_servers() {
            assert!(
                written.contains(&format!("# server `{name}` was not imported:")),
                "{relative}: {name}\n{written}"
            );
        }
    }
}

#[test]
fn vscode_inputs_become_variables_and_nothing_is_expanded() {
    let (loaded, _) = review_file(Path::new(FIXTURES).join("vscode/.vscode/mcp.json")).unwrap();
    let written = export_toml(std::slice::from_ref(&loaded));
    insta::assert_snapshot!(written.lines().skip(1).collect::<Vec<_>>().join("\n"));
}

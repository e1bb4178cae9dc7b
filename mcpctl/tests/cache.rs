//! The persisted tool catalog cache through the real binary: `mcpctl tools` fills it in the
//! data directory; `mcpctl tools --cached`, a later process, lists from it with each
//! listing's age and starts nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::Workdir;

#[test]
fn tools_cached_lists_from_the_cache_of_an_earlier_run_without_starting_anything() {
    let wd = Workdir::new();
    let pid_file = wd.path().join("notes.pid");
    let scenario = json!({
        "tools": [{"name": "echo", "description": "Echo the arguments."}],
        "record": {"pid_file": pid_file},
    });
    let scenario = support::toml_str(&scenario.to_string());
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "[mcp_servers.notes]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {scenario}]\n"
        ),
    );

    // Nothing cached yet: nothing listed, nothing started, the server is named.
    let empty = wd.run(&["tools", "--cached"]);
    assert_eq!(empty.code, 0, "{}", empty.stderr);
    assert!(empty.stdout.contains("no cached tools"), "{}", empty.stdout);
    assert!(
        empty.stdout.contains("not cached: notes"),
        "{}",
        empty.stdout
    );
    assert!(!pid_file.exists(), "--cached started the server");

    // A live listing fills the cache (in $MCPCTL_HOME/cache).
    let live = wd.run(&["tools"]);
    assert_eq!(live.code, 0, "{}", live.stderr);
    assert!(pid_file.exists());
    std::fs::remove_file(&pid_file).unwrap();
    assert!(
        wd.path()
            .join("home/cache")
            .join(mcp_connections::TOOL_CACHE_FILE)
            .is_file()
    );

    // A later process lists from the cache, with the listing's age, and starts nothing.
    let cached = wd.run(&["tools", "--cached"]);
    assert_eq!(cached.code, 0, "{}", cached.stderr);
    assert!(
        cached.stdout.contains("mcp__notes__echo"),
        "{}",
        cached.stdout
    );
    assert!(cached.stdout.contains("AGE"), "{}", cached.stdout);
    assert!(
        cached
            .stdout
            .contains("1 tool from 1 server (cached; nothing was started)"),
        "{}",
        cached.stdout
    );
    let json = wd.run(&["tools", "--cached", "--json"]).json();
    assert_eq!(
        json["tools"][0]["qualified_name"],
        json!("mcp__notes__echo")
    );
    assert!(json["tools"][0]["cached_age_secs"].is_u64(), "{json}");
    assert_eq!(json["not_cached"], json!([]));
    // Annotations are not shown from the cache (not trusted until the server confirms).
    assert_eq!(json["tools"][0]["annotations"], json!(null));
    assert!(!pid_file.exists(), "--cached started the server");
}

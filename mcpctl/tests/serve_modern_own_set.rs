//! Over HTTP every 2026-era request gets a gateway of its own (the era has no session),
//! whose own connection set starts only when the request reads it: a `tools/call` runs on
//! a set the hub lends to the call and starts none of its own, a `tools/list` starts one,
//! and a 2025-era session's starts at its `initialize`, as before. A caller with grants is
//! no exception: its grants are checked on the lent set, as strictly as before.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod support;
mod team;

use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::json;
use support::Workdir;
use team::{bearer, post};

/// What the gateway logs (at debug level) when a gateway's own set starts.
const OWN_SET: &str = "a gateway's own connection set started";

/// What the gateway logs (at debug level) when it starts a set for a 2026-era call.
const CALL_SET: &str = "connection set started for a 2026-era call";

/// `notes`, with an `echo` tool, behind a gateway with a static token.
fn config(wd: &Workdir) -> std::path::PathBuf {
    let notes = json!({"tools": [{"name": "echo", "behavior": {"kind": "echo"}}]});
    wd.write(
        "mcp.toml",
        &format!(
            "[mcp_servers.notes]\ncommand = {}\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n",
            support::toml_str(support::MCPCTL),
            support::toml_str(&notes.to_string()),
        ),
    )
}

/// How often each line was logged so far: (own sets, sets of 2026-era calls).
fn started(log: &std::path::Path) -> (usize, usize) {
    let text = std::fs::read_to_string(log).unwrap();
    let count = |what: &str| text.lines().filter(|l| l.contains(what)).count();
    (count(OWN_SET), count(CALL_SET))
}

/// `mcpctl serve --http` on `config` in `wd` with the static token, logging at debug
/// level to `log`: the child and the address it printed.
fn serve(
    wd: &Workdir,
    config: &std::path::Path,
    log: &std::path::Path,
) -> (std::process::Child, String) {
    let child = Command::new(support::MCPCTL)
        .arg("--config")
        .arg(config)
        .args(["serve", "--http", "127.0.0.1:0"])
        .current_dir(wd.path())
        .env("MCPCTL_HOME", wd.path().join("home"))
        .env("MCPCTL_SERVE_TOKEN", team::STATIC_TOKEN)
        .env(
            "RUST_LOG",
            "mcpctl::serve::gateway=debug,mcpctl::serve::modern=debug",
        )
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("start mcpctl serve");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let url = loop {
        let text = std::fs::read_to_string(log).unwrap();
        let url = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("mcpctl serve: listening on "));
        if let Some(url) = url {
            break url.to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "mcpctl serve printed no address:\n{text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    (child, url)
}

#[test]
fn a_2026_era_call_starts_no_set_of_its_own() {
    let wd = Workdir::new();
    let config = config(&wd);
    let log = wd.path().join("serve.log");
    let (mut child, url) = serve(&wd, &config, &log);
    let token = bearer(team::STATIC_TOKEN);
    let runtime = support::runtime();
    runtime.block_on(async {
        // A 2025-era session: its set starts at `initialize`.
        team::open_session(&url, team::STATIC_TOKEN).await;
        assert_eq!(started(&log), (1, 0), "{}", wd.path().display());

        // 2026-era calls, one after another: on one set lent to each in turn (kept
        // between them), none of their gateways' own.
        for _ in 0..5 {
            let call = team::modern_call("mcp__notes__echo", None);
            let answer = post(&url, Some(&token), None, &call).await;
            assert_eq!(answer.status, 200, "{answer:?}");
            let result = &answer.body["result"];
            assert!(result["content"].is_array(), "{answer:?}");
            assert_ne!(result["isError"], json!(true), "{answer:?}");
        }
        assert_eq!(
            started(&log),
            (1, 1),
            "{}",
            std::fs::read_to_string(&log).unwrap()
        );

        // A 2026-era list reads its gateway's set: that one starts.
        let list = team::request("tools/list", json!({"_meta": team::modern_meta()}));
        let answer = post(&url, Some(&token), None, &list).await;
        assert_eq!(team::tool_names(&answer), ["mcp__notes__echo"]);
        assert_eq!(
            started(&log),
            (2, 1),
            "{}",
            std::fs::read_to_string(&log).unwrap()
        );
    });
    let _ = child.kill();
    let _ = child.wait();
    wd.assert_no_server_left();
}

/// Alice (group `readers`) may use `notes`' `echo` and nothing of `files`; `notes`' `ask`
/// asks for approval (a caller it is not granted to is never asked).
const GRANTS: &str = r#"
[[gateway.grants]]
groups = ["readers"]
servers = ["notes"]
tools = ["echo"]

[mcp_servers.notes.tools.ask]
approval_mode = "prompt"
"#;

#[test]
fn a_2026_era_call_of_a_caller_with_grants_starts_no_set_of_its_own() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let config = team::config(&wd, &auth.issuer(), "", GRANTS);
    let log = wd.path().join("serve.log");
    let (mut child, url) = serve(&wd, &config, &log);
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    let log_text = || std::fs::read_to_string(&log).unwrap();
    runtime.block_on(async {
        // A 2025-era session of hers: its set starts at `initialize`, and it calls.
        let session = team::open_session(&url, &alice).await;
        assert_eq!(started(&log), (1, 0), "{}", log_text());
        let call = team::request(
            "tools/call",
            json!({"name": "mcp__notes__echo", "arguments": {"text": "old"}}),
        );
        let answer = post(&url, Some(&bearer(&alice)), Some(&session), &call).await;
        assert_eq!(
            answer.body["result"]["structuredContent"],
            json!({"text": "old"}),
            "{answer:?}"
        );

        // Her 2026-era calls: their grants checked on the set lent to each in turn, none
        // of their gateways' own started.
        let call = |name: &str| {
            let message = team::request(
                "tools/call",
                json!({"name": name, "arguments": {"text": "x"}, "_meta": team::modern_meta()}),
            );
            let (url, token) = (url.clone(), bearer(&alice));
            async move { post(&url, Some(&token), None, &message).await }
        };
        for _ in 0..5 {
            let answer = call("mcp__notes__echo").await;
            assert_eq!(
                answer.body["result"]["structuredContent"],
                json!({"text": "x"}),
                "{answer:?}"
            );
        }
        assert_eq!(started(&log), (1, 1), "{}", log_text());

        // What is not hers is refused as before, like what does not exist, before any
        // approval question, and still starts no set of its request's own.
        for name in [
            "mcp__notes__ask",
            "mcp__files__read_file",
            "mcp__nowhere__nothing",
        ] {
            let refused = call(name).await;
            assert_eq!(
                refused.body["error"]["message"],
                json!(format!(
                    "no tool {name:?} is available to you through this gateway; list the tools to see yours"
                )),
                "{refused:?}"
            );
        }
        assert_eq!(started(&log), (1, 1), "{}", log_text());
        // Nothing refused reached a server: the tools called are her six echoes.
        let called: Vec<String> = ["notes", "files"]
            .into_iter()
            .flat_map(|server| mcp_testkit::RecordedRequest::read_log(team::request_log(&wd, server)))
            .filter(|r| r.method == "tools/call")
            .map(|r| r.params["name"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(called, vec!["echo"; 6]);
    });
    let _ = child.kill();
    let _ = child.wait();
    wd.assert_no_server_left();
}

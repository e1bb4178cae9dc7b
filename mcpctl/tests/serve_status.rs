//! The status page of `mcpctl serve --http` (`/status`, `/status.json`): behind the
//! token; each server's state, era, process id, restarts and tool count, a failing
//! server's reason, calls and errors per server, clients; a hostile server's text shown as
//! text. Real processes: the gateway, fake upstream servers, an rmcp client on loopback.
//! The page in a browser: `serve_status_browser.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway as a client would"
)]

mod status_page;
mod support;
mod team;

use pretty_assertions::assert_eq;
use serde_json::json;
use status_page::{HOSTILE, HOSTILE_SHOWN, HOSTILE_STDERR, base, call, get, server, settled};
use support::{Served, Workdir};

const TOKEN: &str = "status-test-token-0123456789abcdef";

#[test]
fn the_status_page_needs_the_token() {
    let wd = Workdir::new();
    let mut served = Served::start(&wd, &status_page::config(&wd), TOKEN, &[]);
    let base = base(&served.url);
    for path in ["/status", "/status.json"] {
        for token in [None, Some("wrong-token-0123456789abcdef"), Some("")] {
            let reply = get(&base, path, token);
            assert_eq!(reply.status, 401, "{path} with {token:?}: {reply:?}");
            assert!(reply.head.contains("www-authenticate: bearer"), "{reply:?}");
            assert!(!reply.body.contains("echo"), "{reply:?}");
        }
        assert_eq!(get(&base, path, Some(TOKEN)).status, 200, "{path}");
    }
    served.stop();
    wd.assert_no_server_left();
}

#[test]
fn status_json_shows_servers_states_restarts_and_calls() {
    let wd = Workdir::new();
    let mut served = Served::start(&wd, &status_page::config(&wd), TOKEN, &[]);
    let base = base(&served.url);
    let runtime = support::runtime();
    runtime.block_on(async {
        // No client yet: nothing started.
        let idle = status_page::status_json(&base, TOKEN);
        assert_eq!(server(&idle, "echo")["state"], "stopped", "{idle:#}");
        assert_eq!(idle["clients"]["connected"], 0);

        let client = status_page::connect(&served.url, TOKEN).await;
        let status = status_page::wait_for(&base, TOKEN, settled).await;
        let names: Vec<&str> = status["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["server"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["broken", "echo", "hostile", "modern"], "in name order");
        let modern = server(&status, "modern");
        assert_eq!(
            (&modern["era"], &modern["protocol_version"]),
            (&json!("2026-07-28"), &json!("2026-07-28")),
            "{modern:#}"
        );
        assert_eq!(status["version"], 1);
        assert_eq!(status["window"], json!({"secs": 300, "max_calls": 512}));
        assert_eq!(
            status["clients"],
            json!({
                "connected": 1,
                "by_principal": [{"principal": "static-token", "clients": 1, "parked": 0, "tasks": 0}],
                "stateless_calls_in_flight": 0,
            })
        );

        let echo = server(&status, "echo");
        let mut fields: Vec<&str> = echo.as_object().unwrap().keys().map(String::as_str).collect();
        fields.sort_unstable();
        assert_eq!(
            fields,
            [
                "calls",
                "crash_loop",
                "era",
                "error",
                "pid",
                "protocol_version",
                "reason",
                "restarts",
                "server",
                "server_info",
                "state",
                "stderr_tail",
                "tools",
                "transport",
                "warnings",
            ],
            "the documented shape"
        );
        assert_eq!(echo["transport"], "stdio");
        assert_eq!(echo["era"], "2025-11-25");
        assert_eq!(echo["protocol_version"], "2025-11-25");
        assert_eq!(echo["tools"], 3);
        assert_eq!(echo["restarts"], 0);
        let first_pid = u32::try_from(echo["pid"].as_u64().unwrap()).unwrap();
        assert!(mcp_testkit::process_alive(first_pid), "{echo:#}");
        assert_eq!(
            echo["calls"],
            json!({"total": 0, "errors": 0, "window": {"calls": 0, "errors": 0, "p50_ms": null, "p99_ms": null}})
        );

        let broken = server(&status, "broken");
        assert_eq!(broken["reason"]["kind"], "exited", "{broken:#}");
        assert_eq!(broken["reason"]["status"], 3, "{broken:#}");
        assert!(
            broken["stderr_tail"].as_str().unwrap().contains(HOSTILE_STDERR),
            "the server's own text, unchanged: {broken:#}"
        );
        assert!(broken["error"].as_str().unwrap().contains("broken"), "{broken:#}");
        assert_eq!(broken["pid"], json!(null));
        assert_eq!(broken["tools"], json!(null));

        let hostile = server(&status, "hostile");
        assert_eq!(hostile["server_info"]["name"], HOSTILE, "raw in JSON");
        assert!(
            hostile["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains(HOSTILE)),
            "{hostile:#}"
        );

        // Three good calls, a tool error, a call of the failed server's tool.
        for _ in 0..3 {
            assert!(!call(&client, "mcp__echo__echo").await);
        }
        assert!(call(&client, "mcp__echo__fail").await);
        let status = status_page::status_json(&base, TOKEN);
        let calls = &server(&status, "echo")["calls"];
        assert_eq!((&calls["total"], &calls["errors"]), (&json!(4), &json!(1)), "{calls:#}");
        let window = &calls["window"];
        assert_eq!((&window["calls"], &window["errors"]), (&json!(4), &json!(1)), "{calls:#}");
        let (p50, p99) = (window["p50_ms"].as_f64().unwrap(), window["p99_ms"].as_f64().unwrap());
        assert!(0.0 < p50 && p50 <= p99, "{calls:#}");
        assert_eq!(server(&status, "hostile")["calls"]["total"], 0);

        // A crash, then a call that starts the server again: a restart, a new process.
        assert!(call(&client, "mcp__echo__crash").await);
        assert!(!call(&client, "mcp__echo__echo").await);
        let status = status_page::wait_for(&base, TOKEN, |s| server(s, "echo")["state"] == "ready").await;
        let echo = server(&status, "echo");
        assert_eq!(echo["restarts"], 1, "{echo:#}");
        let pid = echo["pid"].as_u64().unwrap();
        assert_ne!(pid, u64::from(first_pid), "a new process");
        assert_eq!((&echo["calls"]["total"], &echo["calls"]["errors"]), (&json!(6), &json!(2)));

        // A name the failed server never listed starts nothing (a made-up name is no
        // reason to spawn): the call fails at once and the server stays as it was.
        let before = server(&status_page::status_json(&base, TOKEN), "broken").clone();
        assert!(call(&client, "mcp__broken__anything").await);
        let status = status_page::status_json(&base, TOKEN);
        let broken = server(&status, "broken");
        assert_eq!(broken["state"], "failed", "{broken:#}");
        assert_eq!(broken["restarts"], before["restarts"], "{broken:#}");
        assert_eq!(broken["crash_loop"], before["crash_loop"], "{broken:#}");
        assert_eq!(broken["pid"], json!(null), "{broken:#}");

        // The client goes: the servers stay up for the keep-alive, as idle.
        client.cancel().await.unwrap();
        let status = status_page::wait_for(&base, TOKEN, |s| {
            server(s, "echo")["state"] == "idle" && s["clients"]["connected"] == 0
        })
        .await;
        let echo = server(&status, "echo");
        assert_eq!(echo["pid"], pid, "{echo:#}");
        assert_eq!(echo["tools"], 3, "{echo:#}");
        assert_eq!(echo["calls"]["total"], 6);
    });
    served.stop();
    wd.assert_no_server_left();
}

#[test]
fn a_hostile_servers_text_is_shown_as_text() {
    let wd = Workdir::new();
    let mut served = Served::start(&wd, &status_page::config(&wd), TOKEN, &[]);
    let base = base(&served.url);
    let runtime = support::runtime();
    runtime.block_on(async {
        let client = status_page::connect(&served.url, TOKEN).await;
        status_page::wait_for(&base, TOKEN, settled).await;
        let page = get(&base, "/status", Some(TOKEN));
        assert_eq!(page.status, 200);
        assert!(
            page.head.contains("content-type: text/html; charset=utf-8"),
            "{}",
            page.head
        );
        assert!(
            page.head
                .contains("content-security-policy: default-src 'none'"),
            "no script runs: {}",
            page.head
        );
        for raw in ["<script", "<img", "<b>", "\u{1b}", "\u{7}"] {
            assert!(
                !page.body.contains(raw),
                "{raw:?} in the page:\n{}",
                page.body
            );
        }
        // The server's name, title and duplicate tool name; the failing server's stderr.
        assert!(
            page.body.matches(HOSTILE_SHOWN).count() >= 3,
            "{}",
            page.body
        );
        assert!(
            page.body.contains("&lt;b&gt;6.6.6&lt;/b&gt;"),
            "{}",
            page.body
        );
        assert!(
            page.body.contains(
                "boom &lt;script&gt;alert(&#39;stderr&#39;)&lt;/script&gt;\\e[1;31mFATAL\\e[0m"
            ),
            "{}",
            page.body
        );
        client.cancel().await.unwrap();
    });
    served.stop();
    wd.assert_no_server_left();
}

/// What a server that fails at startup writes to stderr: a database URL with a password,
/// a token pair, a bearer credential and a JSON secret.
const LEAKY_STDERR: &str = "connecting to postgres://app:pg-pass-123@db:5432/app failed\n\
     retry with token=sk-live-0123456789 Authorization: Bearer bearer-cred-0123456789\n\
     {\"api_key\": \"json-key-0123456789\"}";

/// The secrets in [`LEAKY_STDERR`].
const LEAKED: [&str; 4] = [
    "pg-pass-123",
    "sk-live-0123456789",
    "bearer-cred-0123456789",
    "json-key-0123456789",
];

/// A failed server's error and stderr tail on `/status.json`, and a call of its tool, show
/// its text with the credentials in it redacted (any URL scheme, `token=`, `Bearer`, JSON).
#[test]
fn a_failed_servers_secrets_are_redacted_on_the_status_page_and_in_call_errors() {
    let wd = Workdir::new();
    let scenario = json!({"faults": {"exit_at_startup": 3, "stderr": LEAKY_STDERR}});
    let config = wd.write(
        "gateway.toml",
        &format!(
            "[mcp_servers.leaky]\ncommand = {:?}\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n",
            env!("CARGO_BIN_EXE_mcpctl"),
            support::toml_str(&scenario.to_string())
        ),
    );
    let mut served = Served::start(&wd, &config, TOKEN, &[]);
    let base = base(&served.url);
    let runtime = support::runtime();
    runtime.block_on(async {
        let client = status_page::connect(&served.url, TOKEN).await;
        let status =
            status_page::wait_for(&base, TOKEN, |s| server(s, "leaky")["state"] == "failed").await;
        let leaky = server(&status, "leaky");
        let tail = leaky["stderr_tail"].as_str().unwrap();
        assert!(
            tail.contains("postgres://***@db:5432/app failed") && tail.contains("token=***"),
            "the server's text, its secrets hidden: {leaky:#}"
        );
        let page = get(&base, "/status", Some(TOKEN)).body;
        let params = rmcp::model::CallToolRequestParams::new("mcp__leaky__anything");
        let reply = client.call_tool(params).await;
        let call_error = format!("{reply:?}");
        assert!(call_error.contains("leaky"), "{call_error}");
        for secret in LEAKED {
            for (what, text) in [
                ("status.json", status.to_string()),
                ("the status page", page.clone()),
                ("the call's error", call_error.clone()),
            ] {
                assert!(!text.contains(secret), "{secret} in {what}: {text}");
            }
        }
        client.cancel().await.unwrap();
    });
    served.stop();
    wd.assert_no_server_left();
}

/// Alice (group `readers`) may use `notes`; bob may use `files`, `notes` and `work`.
const GRANTS: &str = r#"
[[gateway.grants]]
groups = ["readers"]
servers = ["notes"]

[[gateway.grants]]
subjects = ["bob"]
servers = ["files", "notes", "work"]
"#;

/// With `[gateway.oauth]` and grants, the page is behind the resource server's guard, and
/// each caller sees the servers it may use and its own clients, no one else's.
#[test]
fn with_grants_each_caller_sees_its_own_servers_and_clients() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let config = team::config(&wd, &auth.issuer(), "", GRANTS);
    let mut served = Served::start(&wd, &config, team::STATIC_TOKEN, &[]);
    let base = base(&served.url);
    let alice = team::token(&auth, &served.url, "alice", &["readers"]);
    let bob = team::token(&auth, &served.url, "bob", &[]);
    runtime.block_on(async {
        team::open_session(&served.url, &alice).await;
        team::open_session(&served.url, &bob).await;
        team::open_session(&served.url, &bob).await;
    });

    for token in [None, Some(team::STATIC_TOKEN)] {
        let reply = get(&base, "/status.json", token);
        assert_eq!(reply.status, 401, "{reply:?}");
        assert!(reply.head.contains("resource_metadata="), "{reply:?}");
    }
    let names = |status: &serde_json::Value| -> Vec<String> {
        status["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["server"].as_str().unwrap().to_owned())
            .collect()
    };
    let seen = status_page::status_json(&base, &alice);
    assert_eq!(names(&seen), ["notes"]);
    assert_eq!(
        (
            &seen["clients"]["connected"],
            &seen["clients"]["by_principal"]
        ),
        (
            &json!(1),
            &json!([{"principal": "sub:alice", "clients": 1, "parked": 0, "tasks": 0}])
        )
    );
    let seen = status_page::status_json(&base, &bob);
    assert_eq!(names(&seen), ["files", "notes", "work"]);
    assert_eq!(
        seen["clients"]["by_principal"],
        json!([{"principal": "sub:bob", "clients": 2, "parked": 0, "tasks": 0}])
    );
    let page = get(&base, "/status", Some(&alice));
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.body.contains("id=\"server-notes\""), "{}", page.body);
    for hidden in ["id=\"server-files\"", "id=\"server-work\"", "sub:bob"] {
        assert!(
            !page.body.contains(hidden),
            "{hidden} shown to alice:\n{}",
            page.body
        );
    }
    served.stop();
    wd.assert_no_server_left();
}

/// Calls waiting for their clients' answers are bounded per caller: alice parks 32 (her
/// approval questions unanswered), her 33rd question is declined, and carol's is still
/// asked (one caller's flood once filled the gateway's one bound, and everyone else's
/// questions were declined as "not approved"). The page shows each caller's parked calls.
#[test]
fn one_callers_flood_of_questions_leaves_another_callers_asked() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let rest = format!("{GRANTS}\n[mcp_servers.notes.tools.echo]\napproval_mode = \"prompt\"\n");
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let mut served = Served::start(&wd, &config, team::STATIC_TOKEN, &[]);
    let base = base(&served.url);
    let alice = team::token(&auth, &served.url, "alice", &["readers"]);
    let carol = team::token(&auth, &served.url, "carol", &["readers"]);
    let url = served.url.clone();
    runtime.block_on(async {
        let call = |token: &str| {
            let (url, token) = (url.clone(), token.to_owned());
            async move {
                let message = team::modern_call("mcp__notes__echo", None);
                team::post(&url, Some(&team::bearer(&token)), None, &message).await
            }
        };
        for n in 0..32 {
            let asked = call(&alice).await;
            assert_eq!(
                asked.body["result"]["resultType"], "input_required",
                "call {n}: {asked:?}"
            );
        }
        let declined = call(&alice).await;
        assert_eq!(
            declined.body["result"]["resultType"], "complete",
            "{declined:?}"
        );
        assert_eq!(declined.body["result"]["isError"], true, "{declined:?}");
        let asked = call(&carol).await;
        assert_eq!(
            asked.body["result"]["resultType"], "input_required",
            "{asked:?}"
        );
    });
    let seen = status_page::status_json(&base, &alice);
    assert_eq!(
        seen["clients"]["by_principal"],
        json!([{"principal": "sub:alice", "clients": 0, "parked": 32, "tasks": 0}])
    );
    let page = get(&base, "/status", Some(&alice));
    assert!(page.body.contains("<th>Parked calls</th>"), "{}", page.body);
    served.stop();
    wd.assert_no_server_left();
}

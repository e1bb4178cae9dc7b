//! Debian's nginx in front of two `mcpctl serve --http` instances with one sealing key,
//! configured by the documented `deploy/nginx/mcpctl.conf` (its addresses and `listen`
//! replaced): a 2026-era call's `input_required` retry that lands on the other instance
//! completes; a 2025-era session stays on its instance; killing one instance fails only
//! the call in flight on it.
//!
//! nginx runs as the test's user on a loopback port with a prefix in the test's
//! directory. Without nginx the test says it was skipped; under `MCP_REQUIRE_NGINX=1`
//! (set by `scripts/test.sh` once it is installed) it fails instead.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateways and nginx"
)]

mod nginx;
mod support;
mod team;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use nginx::{Nginx, UPSTREAM, free_port};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Served, Workdir};
use team::{STATIC_TOKEN, bearer, modern_call, post};

/// The key both instances share.
const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// `new` (MCP 2026-07-28) with `ask`; `old` (2025-11-25) with `meet`, which waits for a
/// second call of it (a call kept in flight), logging its requests.
fn config(wd: &Workdir) -> PathBuf {
    let new = json!({"faults": {"protocol_version": "2026-07-28"}, "tools": [
        {"name": "ask", "behavior": {
            "kind": "elicit_form",
            "message": "who is calling?",
            "schema": {"type": "object", "properties": {"who": {"type": "string"}}},
        }},
    ]});
    let old = json!({
        "record": {"request_log": wd.path().join("old-requests.jsonl")},
        "tools": [
            {"name": "echo", "behavior": {"kind": "echo"}},
            {"name": "meet", "behavior": {"kind": "barrier", "name": "m", "parties": 2}},
        ],
    });
    let server = |name: &str, scenario: &Value, more: &str| {
        format!(
            "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n{more}\n",
            support::toml_str(&scenario.to_string())
        )
    };
    let text = format!(
        "{}{}",
        server("new", &new, "protocol = \"2026-07-28\"\n"),
        server("old", &old, ""),
    );
    wd.write("mcp.toml", &text)
}

/// The `host:port` of a gateway's URL.
fn authority(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

/// Which instance answered, by the header nginx adds (its last address: those before it
/// were tried and could not be reached).
fn served_by(answer: &team::Answer) -> String {
    let tried = answer
        .header(UPSTREAM)
        .unwrap_or_else(|| panic!("no {UPSTREAM}: {answer:?}"));
    tried.rsplit(", ").next().unwrap_or_default().to_owned()
}

#[test]
fn nginx_routes_both_eras_and_survives_an_instance() {
    let Some(binary) = nginx::nginx() else {
        return;
    };
    let wd = Workdir::new();
    let runtime = support::runtime();
    let config = config(&wd);
    let env = [("MCPCTL_SEAL_KEY", KEY)];
    let one = Served::start_with_env(&wd, &config, STATIC_TOKEN, &["--instance-id", "gw-1"], &env);
    let two = Served::start_with_env(&wd, &config, STATIC_TOKEN, &["--instance-id", "gw-2"], &env);
    let (one_at, two_at) = (authority(&one.url), authority(&two.url));
    let port = free_port();
    let nginx = Nginx::start(&binary, wd.path().join("nginx"), &one_at, &two_at, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let auth = bearer(STATIC_TOKEN);
    let mut two = Some(two);
    runtime.block_on(async {
        // 2026: round robin sends the retry to the other instance, which resumes the call.
        let asked = post(&url, Some(&auth), None, &modern_call("mcp__new__ask", None)).await;
        assert_eq!(
            asked.body["result"]["resultType"], "input_required",
            "{asked:?}"
        );
        let state = asked.body["result"]["requestState"]
            .as_str()
            .unwrap()
            .to_owned();
        let answered = post(
            &url,
            Some(&auth),
            None,
            &modern_call("mcp__new__ask", Some((&state, "alice"))),
        )
        .await;
        assert_ne!(
            served_by(&asked),
            served_by(&answered),
            "the retry went to the same instance"
        );
        assert_eq!(
            answered.body["result"]["structuredContent"],
            json!({"action": "accept", "content": {"who": "alice"}}),
            "{answered:?}"
        );

        // 2025: a session opened on each instance stays there, request after request.
        let mut sessions = Vec::new();
        for _ in 0..2 {
            let session = team::open_session(&url, STATIC_TOKEN).await;
            let home = if session.starts_with("gw-1.") {
                &one_at
            } else {
                &two_at
            };
            for _ in 0..3 {
                let listed = post(
                    &url,
                    Some(&auth),
                    Some(&session),
                    &team::request("tools/list", json!({})),
                )
                .await;
                assert_eq!(&served_by(&listed), home, "{session}");
                assert_eq!(
                    team::tool_names(&listed),
                    ["mcp__new__ask", "mcp__old__echo", "mcp__old__meet"]
                );
            }
            sessions.push(session);
        }
        sessions.sort();
        assert!(
            sessions[0].starts_with("gw-1.") && sessions[1].starts_with("gw-2."),
            "{sessions:?}"
        );
        let (on_one, on_two) = (sessions[0].clone(), sessions[1].clone());

        // A call in flight on gw-2, then gw-2 killed: that call fails, nothing else does.
        let in_flight = tokio::spawn({
            let (url, auth, session) = (url.clone(), auth.clone(), on_two.clone());
            async move {
                let call = team::request(
                    "tools/call",
                    json!({"name": "mcp__old__meet", "arguments": {}}),
                );
                let sent = team::http()
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("authorization", auth)
                    .header("mcp-session-id", session)
                    .header("mcp-protocol-version", "2025-11-25")
                    .json(&call)
                    .send()
                    .await;
                match sent {
                    Ok(response) => Ok(team::answer(response).await),
                    Err(e) => Err(e.to_string()),
                }
            }
        });
        let log = wd.path().join("old-requests.jsonl");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !mcp_testkit::RecordedRequest::read_log(&log)
            .iter()
            .any(|r| r.method == "tools/call" && r.params["name"] == "meet")
        {
            assert!(
                Instant::now() < deadline,
                "the call never reached the server"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(two.take());
        match in_flight.await.unwrap() {
            Err(_) => {}
            Ok(answer) => assert!(answer.body["result"].is_null(), "{answer:?}"),
        }
        // gw-1's session goes on; new 2026-era calls all reach gw-1, retries included.
        let echoed = post(
            &url,
            Some(&auth),
            Some(&on_one),
            &team::request(
                "tools/call",
                json!({"name": "mcp__old__echo", "arguments": {"x": 1}}),
            ),
        )
        .await;
        assert_eq!(echoed.body["result"]["isError"], false, "{echoed:?}");
        for who in ["bob", "carol"] {
            let asked = post(&url, Some(&auth), None, &modern_call("mcp__new__ask", None)).await;
            let state = asked.body["result"]["requestState"]
                .as_str()
                .unwrap_or_else(|| panic!("{asked:?}"))
                .to_owned();
            let answered = post(
                &url,
                Some(&auth),
                None,
                &modern_call("mcp__new__ask", Some((&state, who))),
            )
            .await;
            assert_eq!(
                answered.body["result"]["structuredContent"]["content"]["who"], who,
                "{answered:?}"
            );
            assert_eq!(served_by(&answered), one_at);
        }
    });
    nginx.stop();
    drop(one);
    wd.assert_no_server_left();
}

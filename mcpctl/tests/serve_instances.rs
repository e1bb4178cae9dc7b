//! Several `mcpctl serve --http` instances behind one address: with one sealing key, a
//! 2026-era call to a 2026-era upstream server that asked for input is resumed by
//! whichever instance gets the client's retry; an instance with another key, an altered
//! state, another caller's retry (on any instance), and a call kept in one instance's
//! memory (its server is of the 2025 era) are refused with what to do. With
//! `--instance-id`, 2025-era session ids name their instance.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateways as a person would"
)]

mod support;
mod team;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Served, Workdir};
use team::{STATIC_TOKEN, bearer, modern_call, post};

/// The key the instances share (hex of 32 bytes).
const KEY: &str = "8f1c2a7d3e4b5a69788796a5b4c3d2e1f0112233445566778899aabbccddeeff";

/// `new` (MCP 2026-07-28) and `old` (2025-11-25) servers, each with `ask` (asks who is
/// calling).
fn config(wd: &Workdir) -> std::path::PathBuf {
    let ask = json!({"name": "ask", "behavior": {
        "kind": "elicit_form",
        "message": "who is calling?",
        "schema": {"type": "object", "properties": {"who": {"type": "string"}}},
    }});
    let new = json!({"faults": {"protocol_version": "2026-07-28"}, "tools": [ask]});
    let old = json!({"tools": [ask]});
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

/// [`config`] with `[gateway.oauth]` for `issuer`, both instances being one resource.
fn team_config(wd: &Workdir, issuer: &str) -> std::path::PathBuf {
    let path = config(wd);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!(
        "[gateway.oauth]\nissuer = {}\nscopes = [\"{}\"]\nresource = \"{RESOURCE}\"\n",
        support::toml_str(issuer),
        team::SCOPE
    ));
    wd.write("mcp.toml", &text)
}

/// The URL clients know the instances by (the tokens' audience).
const RESOURCE: &str = "http://gateway.test/mcp";

/// An instance with the sealing key `key` (`None`: a key of its own).
fn instance(wd: &Workdir, config: &std::path::Path, key: Option<&str>) -> Served {
    let env: Vec<(&str, &str)> = key.map(|k| ("MCPCTL_SEAL_KEY", k)).into_iter().collect();
    Served::start_with_env(wd, config, STATIC_TOKEN, &[], &env)
}

fn error_of(answer: &team::Answer) -> String {
    answer.body["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {answer:?}"))
        .to_owned()
}

#[test]
fn a_retry_is_resumed_by_another_instance_with_the_same_key() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let config = config(&wd);
    let a = instance(&wd, &config, Some(KEY));
    let b = instance(&wd, &config, Some(KEY));
    let stranger = instance(&wd, &config, None);
    let auth = bearer(STATIC_TOKEN);
    runtime.block_on(async {
        // Asked on a, answered on b: the upstream server's question and state went to the
        // client sealed, and b sends the call again with the answer.
        let asked = post(&a.url, Some(&auth), None, &modern_call("mcp__new__ask", None)).await;
        let result = &asked.body["result"];
        assert_eq!(result["resultType"], "input_required", "{asked:?}");
        assert_eq!(
            result["inputRequests"]["input"]["method"], "elicitation/create",
            "{asked:?}"
        );
        let state = result["requestState"].as_str().unwrap().to_owned();
        assert!(state.starts_with("mcpctl-sealed/1."), "{state}");
        assert!(!state.contains("round-1"), "the upstream state is sealed: {state}");

        // Another key cannot open it; an altered state is refused.
        let other = post(
            &stranger.url,
            Some(&auth),
            None,
            &modern_call("mcp__new__ask", Some((&state, "mallory"))),
        )
        .await;
        assert!(
            error_of(&other).contains("sealed by a gateway with another key"),
            "{other:?}"
        );
        let mut altered = state.clone();
        let last = altered.pop().unwrap();
        altered.push(if last == 'A' { 'B' } else { 'A' });
        let forged = post(
            &b.url,
            Some(&auth),
            None,
            &modern_call("mcp__new__ask", Some((&altered, "mallory"))),
        )
        .await;
        assert!(error_of(&forged).contains("is refused"), "{forged:?}");

        let answered = post(
            &b.url,
            Some(&auth),
            None,
            &modern_call("mcp__new__ask", Some((&state, "alice"))),
        )
        .await;
        let result = &answered.body["result"];
        assert_eq!(result["resultType"], "complete", "{answered:?}");
        assert_eq!(result["isError"], false, "{answered:?}");
        assert_eq!(
            result["structuredContent"],
            json!({"action": "accept", "content": {"who": "alice"}}),
            "{answered:?}"
        );
        // Presented again, the state would send the answered call again: it was spent.
        let replayed = post(
            &b.url,
            Some(&auth),
            None,
            &modern_call("mcp__new__ask", Some((&state, "alice"))),
        )
        .await;
        assert!(
            error_of(&replayed).contains("was used already"),
            "{replayed:?}"
        );

        // A client that cannot elicit is not asked: the gateway declines for it, as it
        // does for a 2025-era server, and the call goes on at once.
        let mut mute = modern_call("mcp__new__ask", None);
        mute["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
        let declined = post(&a.url, Some(&auth), None, &mute).await;
        assert_eq!(
            declined.body["result"]["structuredContent"],
            json!({"action": "decline"}),
            "{declined:?}"
        );

        // A 2025-era server's question is kept by the instance that asked: the other
        // instance says so, and the one that asked still resumes it.
        let asked = post(&a.url, Some(&auth), None, &modern_call("mcp__old__ask", None)).await;
        let state = asked.body["result"]["requestState"]
            .as_str()
            .unwrap_or_else(|| panic!("{asked:?}"))
            .to_owned();
        let elsewhere = post(
            &b.url,
            Some(&auth),
            None,
            &modern_call("mcp__old__ask", Some((&state, "bob"))),
        )
        .await;
        assert_eq!(
            error_of(&elsewhere),
            format!(
                "requestState {state:?} names a call waiting on another instance of this gateway: a call whose answer goes to a 2025-era server, or to the gateway's approval question, is kept by the instance that asked; send the retry there (route by requestState) or call the tool again"
            )
        );
        let answered = post(
            &a.url,
            Some(&auth),
            None,
            &modern_call("mcp__old__ask", Some((&state, "bob"))),
        )
        .await;
        assert!(
            answered.body["result"].to_string().contains("bob"),
            "{answered:?}"
        );
    });
    drop((a, b, stranger));
    wd.assert_no_server_left();
}

#[test]
fn session_ids_name_the_instance_that_holds_them() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let config = config(&wd);
    let one = Served::start(&wd, &config, STATIC_TOKEN, &["--instance-id", "gw-1"]);
    let two = Served::start(&wd, &config, STATIC_TOKEN, &["--instance-id", "gw-2"]);
    let auth = bearer(STATIC_TOKEN);
    runtime.block_on(async {
        for (served, id) in [(&one, "gw-1."), (&two, "gw-2.")] {
            let session = team::open_session(&served.url, STATIC_TOKEN).await;
            assert!(session.starts_with(id), "{session}");
            let listed = post(
                &served.url,
                Some(&auth),
                Some(&session),
                &team::request("tools/list", json!({})),
            )
            .await;
            assert_eq!(
                team::tool_names(&listed),
                ["mcp__new__ask", "mcp__old__ask"],
                "{listed:?}"
            );
        }
    });
    drop((one, two));
    // A bad id is refused before anything starts.
    let config = config.to_str().unwrap();
    let refused = wd.run(&[
        "--config",
        config,
        "serve",
        "--http",
        "127.0.0.1:0",
        "--instance-id",
        "gw.1",
    ]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("--instance-id \"gw.1\" must be 1 to 32 letters, digits, `-` or `_`"),
        "{refused:?}"
    );
    wd.assert_no_server_left();
}

#[test]
fn another_caller_cannot_resume_a_sealed_call_on_any_instance() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let config = team_config(&wd, &auth.issuer());
    let a = instance(&wd, &config, Some(KEY));
    let b = instance(&wd, &config, Some(KEY));
    runtime.block_on(async {
        let alice = bearer(&team::token(&auth, RESOURCE, "alice", &[]));
        let bob = bearer(&team::token(&auth, RESOURCE, "bob", &[]));
        let asked = post(&a.url, Some(&alice), None, &modern_call("mcp__new__ask", None)).await;
        let state = asked.body["result"]["requestState"]
            .as_str()
            .unwrap_or_else(|| panic!("{asked:?}"))
            .to_owned();
        for served in [&a, &b] {
            let stolen = post(
                &served.url,
                Some(&bob),
                None,
                &modern_call("mcp__new__ask", Some((&state, "bob"))),
            )
            .await;
            assert_eq!(
                error_of(&stolen),
                format!(
                    "requestState {state:?} belongs to a call of another caller; only the caller that started it may resume it"
                )
            );
        }
        let answered = post(
            &b.url,
            Some(&alice),
            None,
            &modern_call("mcp__new__ask", Some((&state, "alice"))),
        )
        .await;
        assert_eq!(
            answered.body["result"]["structuredContent"],
            json!({"action": "accept", "content": {"who": "alice"}}),
            "{answered:?}"
        );
    });
    drop((a, b));
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

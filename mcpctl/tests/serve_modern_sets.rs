//! `mcpctl serve --http` keeps the connection sets of 2026-era calls (which have no
//! session) between calls, per caller and client abilities, and lends each to one call at
//! a time: concurrent calls of two callers, and of one caller, each get only their own
//! upstream question and answer, and one caller's later calls start no new set.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod support;
mod team;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::Workdir;
use team::{Answer, bearer, post};

/// What the gateway logs (at debug level) when it starts a set for a 2026-era call.
const STARTED: &str = "connection set started for a 2026-era call";

/// `notes` (a 2025-era server: one set's calls at a time on its one connection) with two
/// tools asking different questions, and `echo`, behind `[gateway.oauth]` for `issuer`.
fn config(wd: &Workdir, issuer: &str) -> std::path::PathBuf {
    let asking = |message: &str| {
        json!({"kind": "elicit_form", "message": message,
            "schema": {"type": "object", "properties": {"who": {"type": "string"}}}})
    };
    let notes = json!({
        "tools": [
            {"name": "echo", "behavior": {"kind": "echo"}},
            {"name": "ask_one", "behavior": asking("question one")},
            {"name": "ask_two", "behavior": asking("question two")},
        ],
    });
    wd.write(
        "mcp.toml",
        &format!(
            "[mcp_servers.notes]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n\n[gateway.oauth]\nissuer = {}\nscopes = [\"{}\"]\n",
            support::toml_str(&notes.to_string()),
            support::toml_str(issuer),
            team::SCOPE,
        ),
    )
}

/// `mcpctl serve --http` whose stderr (the kept sets' debug log) the test reads.
struct Gateway {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Gateway {
    fn start(wd: &Workdir, config: &std::path::Path, extra: &[&str]) -> Self {
        let mut child = Command::new(support::MCPCTL)
            .arg("--config")
            .arg(config)
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(extra)
            .current_dir(wd.path())
            .env("MCPCTL_HOME", wd.path().join("home"))
            .env("MCPCTL_SERVE_TOKEN", team::STATIC_TOKEN)
            .env("RUST_LOG", "mcpctl::serve::modern=debug")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcpctl serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = String::new();
        let url = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("mcpctl serve printed no address:\n{seen}"))
                .unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if let Some(url) = line.trim().strip_prefix("mcpctl serve: listening on ") {
                break url.to_owned();
            }
        };
        let stderr = Arc::new(Mutex::new(seen));
        let kept = Arc::clone(&stderr);
        // Keeps draining stderr so the gateway never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let mut text = kept.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        Self { child, url, stderr }
    }

    /// Waits (bounded) until the sets started for each caller reach the counts given.
    async fn wait_for_sets(&self, counts: &[(&str, usize)]) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while counts.iter().any(|(c, n)| self.sets_started(c) < *n) {
            assert!(
                std::time::Instant::now() < deadline,
                "the calls never reached the gateway:\n{}",
                self.stderr.lock().unwrap()
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// The sets started for 2026-era calls of `caller` (its id) so far.
    fn sets_started(&self, caller: &str) -> usize {
        let caller = format!("caller={caller}");
        self.stderr
            .lock()
            .unwrap()
            .lines()
            .filter(|l| l.contains(STARTED) && l.contains(&caller))
            .count()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A 2026-era `tools/call` of `tool` on `notes` (a retry answering `who` when `state` is
/// given).
fn call(tool: &str, state: Option<(&str, &str)>) -> Value {
    team::modern_call(&format!("mcp__notes__{tool}"), state)
}

/// The question of an `input_required` answer (its one input request's message), and its
/// `requestState`.
fn question(answer: &Answer) -> (String, String) {
    let result = &answer.body["result"];
    assert_eq!(result["resultType"], "input_required", "{answer:?}");
    let requests: Vec<&Value> = result["inputRequests"]
        .as_object()
        .unwrap()
        .values()
        .collect();
    assert_eq!(requests.len(), 1, "{answer:?}");
    (
        requests[0]["params"]["message"]
            .as_str()
            .unwrap()
            .to_owned(),
        result["requestState"].as_str().unwrap().to_owned(),
    )
}

/// The text of a finished call's result: the answer the server got.
fn answered(answer: &Answer) -> String {
    let result = &answer.body["result"];
    assert_ne!(result["isError"], json!(true), "{answer:?}");
    assert!(result["content"].is_array(), "{answer:?}");
    result.to_string()
}

#[test]
fn concurrent_calls_get_only_their_own_questions_and_a_callers_sets_are_kept() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let gateway = Gateway::start(&wd, &config(&wd, &auth.issuer()), &[]);
    let url = gateway.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &[]);
        let bob = team::token(&auth, &url, "bob", &[]);
        let post_as = |token: &str, message: Value| {
            let (url, token) = (url.clone(), bearer(token));
            tokio::spawn(async move { post(&url, Some(&token), None, &message).await })
        };

        // Alice's first call asks her question one and waits for her answer, holding
        // `notes`' turn; her second call and bob's wait for theirs meanwhile.
        let first = post_as(&alice, call("ask_one", None)).await.unwrap();
        let (asked, alice_state) = question(&first);
        assert_eq!(asked, "MCP server `notes` asks: question one");
        let mut waiting = vec![
            (
                "alice",
                post_as(&alice, call("ask_two", None)),
                "question two",
            ),
            ("bob", post_as(&bob, call("ask_one", None)), "question one"),
        ];
        // Both are at the gateway, each on a set of its own, before alice answers.
        gateway
            .wait_for_sets(&[("sub:alice", 2), ("sub:bob", 1)])
            .await;
        let done = post_as(&alice, call("ask_one", Some((&alice_state, "alice-1"))))
            .await
            .unwrap();
        let text = answered(&done);
        assert!(text.contains("alice-1"), "{done:?}");
        assert!(!text.contains("bob"), "{done:?}");

        // Each of the two waiting calls gets its own question when its turn comes (in
        // whichever order they queued), and its own answer back.
        while !waiting.is_empty() {
            let (i, answer) = loop {
                if let Some(i) = waiting.iter().position(|(_, h, _)| h.is_finished()) {
                    let (_, handle, _) = &mut waiting[i];
                    break (i, handle.await.unwrap());
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            };
            let (who, _, expected) = waiting.remove(i);
            let (asked, state) = question(&answer);
            assert_eq!(
                asked,
                format!("MCP server `notes` asks: {expected}"),
                "{who}"
            );
            let token = if who == "alice" { &alice } else { &bob };
            let mine = format!("{who}-own-answer");
            let tool = if who == "alice" { "ask_two" } else { "ask_one" };
            let done = post_as(token, call(tool, Some((&state, &mine))))
                .await
                .unwrap();
            let text = answered(&done);
            assert!(text.contains(&mine), "{who}: {done:?}");
            let other = if who == "alice" { "bob" } else { "alice" };
            assert!(!text.contains(other), "{who}: {done:?}");
        }

        // Two sets for alice (her two calls ran side by side), one for bob; their later
        // calls, one after another, start none.
        let started = || {
            (
                gateway.sets_started("sub:alice"),
                gateway.sets_started("sub:bob"),
            )
        };
        for _ in 0..5 {
            for token in [&alice, &bob] {
                let echoed = post_as(token, call("echo", None)).await.unwrap();
                answered(&echoed);
            }
        }
        assert_eq!(started(), (2, 1), "{}", gateway.stderr.lock().unwrap());
    });
    drop(gateway);
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

/// With `--keep-alive 0` (servers stop with their last client) no set is kept: each call
/// starts one.
#[test]
fn without_a_keep_alive_no_set_is_kept() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let gateway = Gateway::start(&wd, &config(&wd, &auth.issuer()), &["--keep-alive", "0"]);
    let url = gateway.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &[]);
        for _ in 0..3 {
            let echoed = post(&url, Some(&bearer(&alice)), None, &call("echo", None)).await;
            answered(&echoed);
        }
    });
    assert_eq!(
        gateway.sets_started("sub:alice"),
        3,
        "{}",
        gateway.stderr.lock().unwrap()
    );
    drop(gateway);
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

//! Consent through URL elicitation at a real `mcpctl serve --http` with `[gateway.oauth]`,
//! driven by the pinned Python `mcp` SDK client (`gateway/py_consent_client.py`), in both
//! eras: alice's and bob's first call to a `upstream_identity = "caller"` server sends
//! each of them to a sign-in page through a URL elicitation (a 2025-11-25
//! `elicitation/create` with `mode: "url"`; a 2026-era `input_required` round). The
//! client's callback opens the page as a browser would (redirects, a cookie jar), the
//! testkit's authorization server approves, and the call returns the tool's result in
//! the same request; the upstream sees two subjects. A 2025-era client is told the
//! elicitation is complete (`notifications/elicitation/complete` with its id). A client
//! that declines gets a tool error naming the server and the page, and so does one that
//! accepts while nobody signs in, once the gateway's answer deadline passes; a client
//! without an elicitation callback gets the `URLElicitationRequiredError` (-32042) naming
//! the page.
//!
//! The client is installed by `scripts/gateway-clients.sh` into target/gateway-clients;
//! without it each test says so on stderr and does nothing, unless
//! `MCP_REQUIRE_GATEWAY_CLIENTS` is set (then a missing install fails).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod signin;
mod support;
mod team;

use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Served, Workdir};

/// The gateway's `--answer-deadline` here: how long a call waits for a sign-in after its
/// client accepted going to the page.
const ANSWER_DEADLINE_SECS: u64 = 5;

/// Runs the Python client of `era` (`2025`, `2026`) against the gateway at `url` with
/// `token`, with an elicitation callback that follows the URL (`follow`), one that
/// accepts without opening it (`accept`), one that declines (`decline`) or none
/// (`none`): what it printed.
fn python(clients: &Path, era: &str, url: &str, token: &str, mode: &str) -> Value {
    let run = Command::new(clients.join("venv/bin/python"))
        .arg(clients.join("py_consent_client.py"))
        .args([era, url, token, mode])
        .output()
        .unwrap();
    support::client_report(&format!("the {era} Python client ({mode})"), &run)
}

/// The client was sent to a sign-in page starting with `start` and the call ended in the
/// tool error `text` gives for that page.
fn assert_elicited_tool_error(out: &Value, start: &str, text: impl Fn(&str) -> String) {
    let page = out["elicitations"][0]["url"].as_str().unwrap();
    assert!(page.starts_with(start), "{out}");
    assert_eq!(out["result"]["isError"], true, "{out}");
    assert_eq!(out["result"]["content"][0]["text"], text(page), "{out}");
}

/// Alice and bob each sign in through the Python client of `era` and get their call's
/// result in the same request; a client without the callback gets the -32042 error.
fn two_callers_consent_with_the_python_client(era: &str) {
    let Some(clients) = support::gateway_clients(&[(
        "py_consent_client.py",
        include_str!("gateway/py_consent_client.py"),
    )]) else {
        return;
    };
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(signin::tickets_upstream());
    let config = signin::config(&wd, &auth, &tickets);
    // A short answer deadline: it bounds the wait for a sign-in after the client accepted.
    let served = Served::start_with_env(
        &wd,
        &config,
        team::STATIC_TOKEN,
        &["--answer-deadline", &ANSWER_DEADLINE_SECS.to_string()],
        &[],
    );
    let url = served.url.clone();
    let start = format!("{}/connect/start?state=", url.trim_end_matches("/mcp"));
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    let bob = team::token(&auth, &url, "bob", &[]);

    // No elicitation callback (so no elicitation capability): the error names the page.
    let out = python(&clients, era, &url, &alice, "none");
    assert_eq!(out["error"]["code"], -32042, "{out}");
    let page = out["error"]["urls"][0].as_str().unwrap();
    assert!(page.starts_with(&start), "{out}");
    assert_eq!(
        out["error"]["message"],
        format!("open {page} to sign in to tickets, then retry")
    );
    assert_eq!(out["elicitations"], json!([]), "{out}");
    assert!(tickets.subjects().is_empty());

    // Declined: a tool error naming the server and the page; nothing reaches upstream.
    let out = python(&clients, era, &url, &alice, "decline");
    assert_elicited_tool_error(&out, &start, |page| {
        format!(
            "sign-in to tickets was declined: the gateway calls tickets with your own credentials only; open {page} to sign in, then retry"
        )
    });
    assert!(tickets.subjects().is_empty());

    // Accepted, but nobody signs in: the call ends when the answer deadline passes, with a
    // tool error naming the page; nothing reaches upstream.
    let out = python(&clients, era, &url, &alice, "accept");
    assert_elicited_tool_error(&out, &start, |page| {
        format!(
            "no sign-in to tickets finished within {ANSWER_DEADLINE_SECS}s of accepting; open {page} to sign in, then retry"
        )
    });
    assert!(tickets.subjects().is_empty());

    for (token, subject) in [(&alice, "alice-upstream"), (&bob, "bob-upstream")] {
        auth.set_subject(subject, &[]);
        let out = python(&clients, era, &url, token, "follow");
        assert_eq!(
            out["result"]["structuredContent"],
            json!({"text": "hi"}),
            "{out}"
        );
        let elicitations = out["elicitations"].as_array().unwrap();
        assert_eq!(elicitations.len(), 1, "{out}");
        assert_eq!(elicitations[0]["mode"], "url", "{out}");
        assert!(
            elicitations[0]["url"].as_str().unwrap().starts_with(&start),
            "{out}"
        );
        assert!(
            elicitations[0]["message"]
                .as_str()
                .unwrap()
                .contains("tickets"),
            "{out}"
        );
        assert_eq!(out["pages"][0]["status"], 200, "{out}");
        assert!(
            out["pages"][0]["body"]
                .as_str()
                .unwrap()
                .contains("Signed in to tickets"),
            "{out}"
        );
        if era == "2025" {
            let id = elicitations[0]["elicitation_id"].as_str().unwrap();
            assert!(id.starts_with("sign-in-tickets-"), "{out}");
            assert_eq!(out["completed"], json!([id]), "{out}");
        } else {
            assert_eq!(out["protocol_version"], "2026-07-28", "{out}");
            assert_eq!(out["completed"], json!([]), "{out}");
        }
    }
    let mut subjects = tickets.subjects();
    subjects.sort();
    subjects.dedup();
    assert_eq!(subjects, ["alice-upstream", "bob-upstream"]);

    signin::stop(&wd, &runtime, served, auth, vec![tickets]);
}

#[test]
fn two_callers_consent_through_a_url_elicitation_of_a_2025_python_session() {
    two_callers_consent_with_the_python_client("2025");
}

#[test]
fn two_callers_consent_through_an_input_required_round_of_a_2026_python_client() {
    two_callers_consent_with_the_python_client("2026");
}

//! Consent through URL elicitation at a real `mcpctl serve --http` with `[gateway.oauth]`:
//! alice's first call to a `upstream_identity = "caller"` server fails with the URL
//! elicitation error; a browser (reqwest, following each redirect by hand with the
//! consent cookie) opens the page, the testkit's authorization server approves, the
//! gateway stores alice's credentials, and her retried call reaches the upstream as her;
//! bob does the same and the upstream sees two subjects; `mcpctl gateway sign-out` makes
//! alice sign in again.
//!
//! The client here declares no elicitation capability, so it gets the error and retries;
//! a client that takes URL elicitations is sent to the page during the call itself and
//! gets the result in the same request (`serve_consent_python.rs`, with the Python SDK in
//! both eras). The pages themselves are tested on a listener of their own in
//! `mcpctl/src/serve/identity/consent/tests.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod support;
mod team;

use mcp_testkit::{FakeProtectedMcpServer, ProtectedOptions, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::json;
use support::{Served, Workdir};
use team::{STATIC_TOKEN, bearer, post, request};

/// A 2025-era session's call of `tickets`' echo with `token`.
async fn call(url: &str, token: &str, session: &str) -> team::Answer {
    let message = request(
        "tools/call",
        json!({"name": "mcp__tickets__echo", "arguments": {"text": "hi"}}),
    );
    post(url, Some(&bearer(token)), Some(session), &message).await
}

/// The sign-in page of a call that failed for want of credentials.
fn sign_in_url(answer: &team::Answer) -> String {
    assert_eq!(answer.body["error"]["code"], -32042, "{answer:?}");
    let elicitation = &answer.body["error"]["data"]["elicitations"][0];
    assert_eq!(elicitation["mode"], "url", "{answer:?}");
    elicitation["url"].as_str().unwrap().to_owned()
}

/// Opens `url` as a browser would: follows redirects, keeps the cookie; the last page.
async fn browse(url: &str) -> (StatusCode, String) {
    let http = team::http();
    let mut url = url.to_owned();
    let mut cookie: Option<String> = None;
    for _ in 0..5 {
        let mut get = http.get(&url);
        if let Some(cookie) = &cookie {
            get = get.header(reqwest::header::COOKIE, cookie);
        }
        let response = get.send().await.unwrap();
        if let Some(set) = response.headers().get(reqwest::header::SET_COOKIE) {
            cookie = Some(set.to_str().unwrap().split(';').next().unwrap().to_owned());
        }
        if response.status() != StatusCode::FOUND {
            let status = response.status();
            return (status, response.text().await.unwrap());
        }
        url = response.headers()[reqwest::header::LOCATION]
            .to_str()
            .unwrap()
            .to_owned();
    }
    panic!("more than 5 redirects from {url}");
}

#[test]
fn two_callers_consent_through_url_elicitation_and_are_seen_upstream_as_themselves() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(async {
        let auth = team::auth_server().await;
        let tickets = FakeProtectedMcpServer::start(
            Scenario::new("tickets").with_tool(ToolSpec::echo("echo")),
            &auth,
            ProtectedOptions::new(),
        )
        .await
        .unwrap();
        (auth, tickets)
    });
    let rest = format!(
        "[mcp_servers.tickets]\nurl = {}\nupstream_identity = \"caller\"\ndefault_tools_approval_mode = \"approve\"\n",
        support::toml_str(&tickets.url())
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let mut served = Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    let base = url.trim_end_matches("/mcp").to_owned();
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    runtime.block_on(async {
        for (token, upstream_subject) in [
            (&alice, "alice-upstream"),
            (&team::token(&auth, &url, "bob", &[]), "bob-upstream"),
        ] {
            let session = team::open_session(&url, token).await;
            let page = sign_in_url(&call(&url, token, &session).await);
            assert!(
                page.starts_with(&format!("{base}/connect/start?state=")),
                "{page}"
            );
            auth.set_subject(upstream_subject, &[]);
            let (status, body) = browse(&page).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert!(body.contains("Signed in to tickets"), "{body}");
            // The client retries, in a new session: the session that got the error keeps
            // `tickets` failed.
            let session = team::open_session(&url, token).await;
            let answer = call(&url, token, &session).await;
            assert_eq!(
                answer.body["result"]["structuredContent"],
                json!({"text": "hi"}),
                "{answer:?}"
            );
        }
        let mut subjects = tickets.subjects();
        subjects.sort();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream", "bob-upstream"]);
    });

    // Alice signs out of tickets: her next call asks her to sign in again.
    let token_file = wd.path().join("alice.token");
    std::fs::write(&token_file, &alice).unwrap();
    // (Not `wd.run`: it checks that no server is left, and the gateway's still run.)
    let run = std::process::Command::new(support::MCPCTL)
        .args(["gateway", "sign-out", "--server", "tickets", "--url", &base])
        .arg("--token-file")
        .arg(&token_file)
        .env("MCPCTL_HOME", wd.path().join("home"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "signed out of tickets");
    runtime.block_on(async {
        let session = team::open_session(&url, &alice).await;
        sign_in_url(&call(&url, &alice, &session).await);
    });
    served.stop();
    drop(served);
    wd.assert_no_server_left();
    runtime.block_on(async {
        tickets.shutdown().await;
        auth.shutdown().await;
    });
}

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

mod signin;
mod support;
mod team;

use pretty_assertions::assert_eq;
use signin::{assert_echoed, call, sign_in_url};
use support::Workdir;

#[test]
fn two_callers_consent_through_url_elicitation_and_are_seen_upstream_as_themselves() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets, served) = signin::start(&wd, &runtime, &[]);
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
            signin::assert_sign_in_page(&page, &base);
            let body = signin::sign_in_as(&auth, &page, upstream_subject).await;
            assert!(body.contains("Signed in to tickets"), "{body}");
            // The client retries, in a new session: the session that got the error keeps
            // `tickets` failed.
            let session = team::open_session(&url, token).await;
            assert_echoed(&call(&url, token, &session).await);
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
    signin::stop(&wd, &runtime, served, auth, vec![tickets]);
}

//! A caller whose `[[gateway.grants]]` cover a `upstream_identity = "caller"` server it has
//! not signed in to yet is sent to sign in (the `-32042` sign-in page), in both eras,
//! instead of being told the tool does not exist: the server never listed its tools, so
//! the name resolves to nothing until it is up. Once signed in, the tool itself is checked
//! against the grants (a name the server does not list is not available). A caller whose
//! grants do not cover the server is told the name is not available, with no sign-in page.

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
use signin::{assert_echoed, call, call_tool, modern_call, modern_call_tool, sign_in_url};
use support::{Served, Workdir};
use team::STATIC_TOKEN;

/// The group `readers` may use `tickets`' `echo`; nobody else has a grant.
const GRANTS: &str = r#"
[[gateway.grants]]
groups = ["readers"]
servers = ["tickets"]
tools = ["echo"]
"#;

/// Asserts `answer` is the "not available" refusal, with nothing about signing in.
fn assert_not_available(answer: &team::Answer) {
    let message = answer.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("is available to you"), "{answer:?}");
    assert!(
        !answer.body.to_string().contains("/connect/start"),
        "{answer:?}"
    );
}

#[test]
fn a_caller_granted_a_caller_server_is_sent_to_sign_in_in_both_eras() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(signin::tickets_upstream());
    let rest = format!("{}{GRANTS}", signin::caller_server(&tickets.url()));
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let served = Served::start_with_env(&wd, &config, STATIC_TOKEN, &[], &[]);
    let url = served.url.clone();
    let base = url.trim_end_matches("/mcp").to_owned();
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    let bob = team::token(&auth, &url, "bob", &[]);
    runtime.block_on(async {
        // Not signed in: both eras send alice to her sign-in page.
        let session = team::open_session(&url, &alice).await;
        let page = sign_in_url(&call(&url, &alice, &session).await);
        signin::assert_sign_in_page(&page, &base);
        signin::assert_sign_in_page(&sign_in_url(&modern_call(&url, &alice).await), &base);
        // bob's grants do not cover `tickets`: not available, in both eras.
        let bob_session = team::open_session(&url, &bob).await;
        assert_not_available(&call(&url, &bob, &bob_session).await);
        assert_not_available(&modern_call(&url, &bob).await);

        let body = signin::sign_in_as(&auth, &page, "alice-upstream").await;
        assert!(body.contains("Signed in to tickets"), "{body}");
        // Signed in: her calls go through in both eras, in the session that was sent to
        // sign in too.
        assert_echoed(&call(&url, &alice, &session).await);
        assert_echoed(&modern_call(&url, &alice).await);
        // With the server up, a name it does not list is not available to her.
        let made_up = "mcp__tickets__made_up";
        assert_not_available(&call_tool(&url, &alice, &session, made_up).await);
        assert_not_available(&modern_call_tool(&url, &alice, made_up).await);
        // bob is still refused, and never sent to sign in.
        assert_not_available(&modern_call(&url, &bob).await);

        let mut subjects = tickets.subjects();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream"]);
    });
    signin::stop(&wd, &runtime, served, auth, vec![tickets]);
}

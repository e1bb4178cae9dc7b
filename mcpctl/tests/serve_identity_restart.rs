//! A restart of `mcpctl serve --http` with `[gateway.oauth]` keeps each caller's sign-in to
//! an `upstream_identity = "caller"` server: the default credential store is SQLite in
//! the data folder (`gateway/credentials.db`, its key in `gateway/credentials.key`, both
//! 0600), not the gateway's memory. alice and bob sign in through the URL of the -32042
//! error (a browser follows it), call once, the gateway is stopped with SIGTERM and
//! started again on the same data folder, configuration and address, and both call again
//! without signing in: the upstream sees each one's own subject and the authorization
//! server sees no new sign-in. As a control, a restart without `gateway/credentials.db`
//! (what a vault in memory would be) asks alice to sign in again.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod support;
mod team;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use mcp_testkit::{FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario, ToolSpec};
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

/// `token`'s call of `tickets` in a new session succeeds, and the upstream served it as
/// `upstream_subject` alone.
async fn calls_as(
    url: &str,
    token: &str,
    tickets: &FakeProtectedMcpServer,
    upstream_subject: &str,
) {
    let before = tickets.subjects().len();
    let session = team::open_session(url, token).await;
    let answer = call(url, token, &session).await;
    assert_eq!(
        answer.body["result"]["structuredContent"],
        json!({"text": "hi"}),
        "{answer:?}"
    );
    let mut seen = tickets.subjects().split_off(before);
    seen.dedup();
    assert_eq!(seen, [upstream_subject], "who the upstream served");
}

/// The permission bits of `path`, which must exist.
fn mode(path: &Path) -> u32 {
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    meta.permissions().mode() & 0o777
}

/// The `host:port` of a gateway URL `http://host:port/mcp`.
fn address(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

/// The authorization server and the `tickets` upstream it protects.
async fn upstream() -> (FakeAuthServer, FakeProtectedMcpServer) {
    let auth = team::auth_server().await;
    let tickets = FakeProtectedMcpServer::start(
        Scenario::new("tickets").with_tool(ToolSpec::echo("echo")),
        &auth,
        ProtectedOptions::new(),
    )
    .await
    .unwrap();
    (auth, tickets)
}

#[test]
fn a_restarted_gateway_keeps_both_sign_ins_in_sqlite() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(upstream());
    let rest = format!(
        "[mcp_servers.tickets]\nurl = {}\nupstream_identity = \"caller\"\ndefault_tools_approval_mode = \"approve\"\n",
        support::toml_str(&tickets.url())
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let mut served = Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    let bob = team::token(&auth, &url, "bob", &[]);
    let callers = [(&alice, "alice-upstream"), (&bob, "bob-upstream")];
    runtime.block_on(async {
        for (token, upstream_subject) in callers {
            let session = team::open_session(&url, token).await;
            let page = sign_in_url(&call(&url, token, &session).await);
            auth.set_subject(upstream_subject, &[]);
            let (status, body) = browse(&page).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert!(body.contains("Signed in to tickets"), "{body}");
            calls_as(&url, token, &tickets, upstream_subject).await;
        }
    });
    let status = served.stop();
    assert!(
        status.success(),
        "the gateway stops cleanly on SIGTERM: {status}"
    );
    drop(served);
    wd.assert_no_server_left();

    let data = wd.path().join("home").join("gateway");
    assert_eq!(mode(&data.join("credentials.db")), 0o600, "credentials.db");
    assert_eq!(
        mode(&data.join("credentials.key")),
        0o600,
        "credentials.key"
    );

    // A sign-in now would log in someone else: a call served as alice-upstream or
    // bob-upstream can only come from the stored credentials.
    auth.set_subject("nobody", &[]);
    let signed_in = auth.counters();
    let mut served = Served::start_at(&wd, &config, STATIC_TOKEN, &address(&url), &[], &[]);
    assert_eq!(served.url, url, "the same address, so the same tokens");
    runtime.block_on(async {
        for (token, upstream_subject) in callers {
            calls_as(&url, token, &tickets, upstream_subject).await;
        }
    });
    let after = auth.counters();
    assert_eq!(
        (after.authorize, after.authorization_code),
        (signed_in.authorize, signed_in.authorization_code),
        "nobody signed in again"
    );
    served.stop();
    drop(served);
    wd.assert_no_server_left();

    // The control: without the database (a vault in memory keeps nothing past a stop),
    // the same restart asks alice to sign in again and nothing reaches the upstream.
    std::fs::remove_file(data.join("credentials.db")).unwrap();
    for journal in ["credentials.db-wal", "credentials.db-shm"] {
        let _ = std::fs::remove_file(data.join(journal));
    }
    let mut served = Served::start_at(&wd, &config, STATIC_TOKEN, &address(&url), &[], &[]);
    runtime.block_on(async {
        let before = tickets.subjects().len();
        let session = team::open_session(&url, &alice).await;
        sign_in_url(&call(&url, &alice, &session).await);
        assert_eq!(tickets.subjects().len(), before, "nothing went upstream");
    });
    served.stop();
    drop(served);
    wd.assert_no_server_left();
    runtime.block_on(async {
        tickets.shutdown().await;
        auth.shutdown().await;
    });
}

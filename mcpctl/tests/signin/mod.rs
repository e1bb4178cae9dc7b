//! What the tests of signing in to a `upstream_identity = "caller"` server through a real
//! `mcpctl serve --http` with `[gateway.oauth]` share: the testkit's authorization server
//! and the `tickets` upstream it protects, the gateway configuration serving it as each
//! caller, the calls of its echo in both eras, the -32042 sign-in error's page, a
//! browser-like visit of that page (redirects followed by hand, the consent cookie kept),
//! and stopping it all with no process left.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; each test file uses a part"
)]

use std::path::PathBuf;

use mcp_testkit::{FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{self, Served, Workdir};
use crate::team::{self, STATIC_TOKEN, bearer, post, request};

/// The configuration of a gateway with `[gateway.oauth]` at `auth` serving `tickets` as
/// each caller ([`caller_server`]).
pub(crate) fn config(
    wd: &Workdir,
    auth: &FakeAuthServer,
    tickets: &FakeProtectedMcpServer,
) -> PathBuf {
    team::config(wd, &auth.issuer(), "", &caller_server(&tickets.url()))
}

/// Starts [`tickets_upstream`] and a gateway serving it as each caller ([`config`]), with
/// the environment variables `env`.
pub(crate) fn start(
    wd: &Workdir,
    runtime: &tokio::runtime::Runtime,
    env: &[(&str, &str)],
) -> (FakeAuthServer, FakeProtectedMcpServer, Served) {
    let (auth, tickets) = runtime.block_on(tickets_upstream());
    let served = Served::start_with_env(wd, &config(wd, &auth, &tickets), STATIC_TOKEN, &[], env);
    (auth, tickets, served)
}

/// The gateway's credential vault (SQLite in the data directory of `wd`), opened with the
/// 32-byte key `key` as the gateway's `MCPCTL_VAULT_KEY` names it; close it after use.
pub(crate) async fn open_vault(wd: &Workdir, key: &[u8; 32]) -> mcp_auth::CredentialVault {
    let keys = mcp_auth::VaultKeys::new(mcp_auth::VaultKey::from_slice("k1", key).unwrap());
    mcp_auth::CredentialVault::open_sqlite(wd.path().join("home/gateway/credentials.db"), keys)
        .await
        .unwrap()
}

/// The team's authorization server and the `tickets` upstream (one echo tool) it protects.
pub(crate) async fn tickets_upstream() -> (FakeAuthServer, FakeProtectedMcpServer) {
    let auth = team::auth_server().await;
    let tickets = protected(&auth, "tickets").await;
    (auth, tickets)
}

/// An upstream named `name` with one echo tool, protected by `auth`.
pub(crate) async fn protected(auth: &FakeAuthServer, name: &str) -> FakeProtectedMcpServer {
    FakeProtectedMcpServer::start(
        Scenario::new(name).with_tool(ToolSpec::echo("echo")),
        auth,
        ProtectedOptions::new(),
    )
    .await
    .unwrap()
}

/// The `[mcp_servers.tickets]` table of a `upstream_identity = "caller"` server at `url`
/// whose tools need no approval.
pub(crate) fn caller_server(url: &str) -> String {
    format!(
        "[mcp_servers.tickets]\nurl = {}\nupstream_identity = \"caller\"\ndefault_tools_approval_mode = \"approve\"\n",
        support::toml_str(url)
    )
}

/// A 2025-era session's call of the tool `name` with `token`: the answer.
pub(crate) async fn call_tool(url: &str, token: &str, session: &str, name: &str) -> team::Answer {
    let message = request(
        "tools/call",
        json!({"name": name, "arguments": {"text": "hi"}}),
    );
    post(url, Some(&bearer(token)), Some(session), &message).await
}

/// A 2025-era session's call of `tickets`' echo with `token`.
pub(crate) async fn call(url: &str, token: &str, session: &str) -> team::Answer {
    call_tool(url, token, session, "mcp__tickets__echo").await
}

/// A 2026-era `tools/call` of the tool `name` with `token` (no session): the answer.
pub(crate) async fn modern_call_tool(url: &str, token: &str, name: &str) -> team::Answer {
    let message = request(
        "tools/call",
        json!({"name": name, "arguments": {"text": "hi"}, "_meta": team::modern_meta()}),
    );
    post(url, Some(&bearer(token)), None, &message).await
}

/// A 2026-era `tools/call` of `tickets`' echo with `token` (no session).
pub(crate) async fn modern_call(url: &str, token: &str) -> team::Answer {
    modern_call_tool(url, token, "mcp__tickets__echo").await
}

/// Asserts the call went through to the upstream's echo.
pub(crate) fn assert_echoed(answer: &team::Answer) {
    assert_eq!(
        answer.body["result"]["structuredContent"],
        json!({"text": "hi"}),
        "{answer:?}"
    );
}

/// The sign-in page of a call that failed for want of credentials.
pub(crate) fn sign_in_url(answer: &team::Answer) -> String {
    assert_eq!(answer.body["error"]["code"], -32042, "{answer:?}");
    let elicitation = &answer.body["error"]["data"]["elicitations"][0];
    assert_eq!(elicitation["mode"], "url", "{answer:?}");
    elicitation["url"].as_str().unwrap().to_owned()
}

/// Opens `url` as a browser would: follows redirects, keeps the cookie; the last page.
pub(crate) async fn browse(url: &str) -> (StatusCode, String) {
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

/// Asserts `page` is a sign-in page of the gateway at `base` (its `/connect/start`).
pub(crate) fn assert_sign_in_page(page: &str, base: &str) {
    assert!(
        page.starts_with(&format!("{base}/connect/start?state=")),
        "{page}"
    );
}

/// Signs in through `page` as a browser would ([`browse`]), the authorization server
/// logging in `subject`: the last page's body, after asserting it came with 200 OK.
pub(crate) async fn sign_in_as(auth: &FakeAuthServer, page: &str, subject: &str) -> String {
    auth.set_subject(subject, &[]);
    let (status, body) = browse(page).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// The caller of `token` signs out of `tickets` at the gateway at `base`
/// (`DELETE /connect/servers/tickets`): the response, after asserting 200 OK.
pub(crate) async fn sign_out(base: &str, token: &str) -> reqwest::Response {
    let response = team::http()
        .delete(format!("{base}/connect/servers/tickets"))
        .header("authorization", bearer(token))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response
}

/// Stops the gateway (no process left), then the upstreams and the authorization server.
pub(crate) fn stop(
    wd: &Workdir,
    runtime: &tokio::runtime::Runtime,
    mut served: Served,
    auth: FakeAuthServer,
    upstreams: Vec<FakeProtectedMcpServer>,
) {
    served.stop();
    drop(served);
    wd.assert_no_server_left();
    runtime.block_on(async {
        for upstream in upstreams {
            upstream.shutdown().await;
        }
        auth.shutdown().await;
    });
}

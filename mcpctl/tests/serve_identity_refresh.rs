//! A `upstream_identity = "caller"` server at a real `mcpctl serve --http` with
//! `[gateway.oauth]`, after alice signed in through the consent pages (a browser-like
//! client following the redirects with the consent cookie) against the testkit's
//! authorization server:
//!
//! - her upstream access token expires (the authorization server stops accepting it): her
//!   next call in the same 2025-era session succeeds through one `refresh_token` grant,
//!   the upstream still sees her subject, and the vault holds the rotated refresh token;
//!   a second expiry refreshes with that NEW token (the old one is refused after the
//!   rotation, so keeping it would fail); a short-lived token is refreshed before it
//!   expires, without a 401 first;
//! - she signs out (`DELETE /connect/servers/tickets`): her next call in the SAME session
//!   gets the sign-in error, and nothing reaches the upstream with her old token; the same
//!   for her 2026-era calls (the set kept for her), and when the authorization server
//!   refuses her refresh on the open connection;
//! - an administrator revokes her (`DELETE /connect/callers/sub:alice`): the token an
//!   `exchange` server's cache held for her is dropped (her next call exchanges anew),
//!   while bob's stays cached.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod signin;
mod support;
mod team;

use std::time::Duration;

use mcp_testkit::{FakeAuthServer, FakeProtectedMcpServer};
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::json;
use signin::{
    assert_echoed, assert_sign_in_page, call, call_tool, modern_call, sign_in_as, sign_in_url,
    sign_out, stop,
};
use support::{Served, Workdir};
use team::{STATIC_TOKEN, bearer};

/// The gateway's vault key (hex, 32 bytes), so the test can read what it stored.
const VAULT_KEY: [u8; 32] = [0xab; 32];

/// The refresh token the gateway's vault holds for alice's `tickets` credentials.
async fn stored_refresh_token(wd: &Workdir) -> Option<String> {
    let vault = signin::open_vault(wd, &VAULT_KEY).await;
    let stored = vault
        .get("sub:alice", &"tickets".parse().unwrap())
        .await
        .unwrap();
    vault.close().await;
    stored.and_then(|c| c.refresh_token.map(|t| t.expose().to_owned()))
}

/// The one refresh token the authorization server still accepts (rotation removes the
/// used ones).
fn only_valid_refresh_token(auth: &FakeAuthServer) -> String {
    let valid = auth.valid_refresh_tokens();
    assert_eq!(valid.len(), 1, "{valid:?}");
    valid[0].clone()
}

/// The `refresh_token` sent with each `refresh_token` grant, in order.
fn refreshes_presented(auth: &FakeAuthServer) -> Vec<String> {
    auth.token_requests()
        .iter()
        .filter(|r| r["grant_type"] == "refresh_token")
        .map(|r| r["refresh_token"].clone())
        .collect()
}

/// The `refresh_token` sent with the last `refresh_token` grant.
fn last_refresh_presented(auth: &FakeAuthServer) -> String {
    refreshes_presented(auth)
        .pop()
        .expect("a refresh_token grant")
}

/// The authorization server, the `tickets` upstream it protects, and a gateway serving
/// it as a `caller` server with [`VAULT_KEY`].
fn start(
    wd: &Workdir,
    runtime: &tokio::runtime::Runtime,
) -> (FakeAuthServer, FakeProtectedMcpServer, Served) {
    let key: String = VAULT_KEY.iter().map(|b| format!("{b:02x}")).collect();
    signin::start(wd, runtime, &[("MCPCTL_VAULT_KEY", &key)])
}

/// Alice (gateway token `alice`) signs in to `tickets` as `alice-upstream` through the
/// consent pages; the server then logs others in. The session her client goes on with
/// (the one that got the sign-in error keeps `tickets` failed; the client retries in a new
/// one), after a first call went through.
async fn sign_in(auth: &FakeAuthServer, url: &str, alice: &str) -> String {
    let session = team::open_session(url, alice).await;
    let page = sign_in_url(&call(url, alice, &session).await);
    sign_in_as(auth, &page, "alice-upstream").await;
    // Whoever logs in at the authorization server from now on, alice's refreshed tokens
    // stay hers.
    auth.set_subject("someone-else", &[]);
    let session = team::open_session(url, alice).await;
    assert_echoed(&call(url, alice, &session).await);
    session
}

#[test]
fn an_expired_caller_credential_is_refreshed_with_the_rotated_token_and_sign_out_takes_effect_at_once()
 {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets, served) = start(&wd, &runtime);
    let url = served.url.clone();
    let base = url.trim_end_matches("/mcp").to_owned();
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    runtime.block_on(async {
        let session = sign_in(&auth, &url, &alice).await;
        assert_eq!(auth.counters().refresh_token, 0);
        let signed_in = only_valid_refresh_token(&auth);
        assert_eq!(stored_refresh_token(&wd).await.as_ref(), Some(&signed_in));

        // Her access token expires: the next call refreshes once, with the stored
        // refresh token, and the rotated one is stored.
        auth.expire_access_tokens();
        assert_echoed(&call(&url, &alice, &session).await);
        assert_eq!(auth.counters().refresh_token, 1);
        assert_eq!(last_refresh_presented(&auth), signed_in);
        let rotated = only_valid_refresh_token(&auth);
        assert_ne!(rotated, signed_in);
        assert_eq!(stored_refresh_token(&wd).await.as_ref(), Some(&rotated));

        // Again: the refresh goes with the rotated token (the first one is refused now).
        // Tokens issued from now on are short-lived (20 s, inside the 30 s refresh
        // margin).
        auth.set_token_lifetime(Duration::from_secs(20));
        auth.expire_access_tokens();
        assert_echoed(&call(&url, &alice, &session).await);
        assert_eq!(auth.counters().refresh_token, 2);
        assert_eq!(auth.counters().token_errors, 0);
        assert_eq!(last_refresh_presented(&auth), rotated);
        let again = only_valid_refresh_token(&auth);
        assert_eq!(stored_refresh_token(&wd).await.as_ref(), Some(&again));

        // A short-lived token is refreshed before it expires: the next call refreshes
        // with the latest refresh token without sending the old access token first.
        let refused = tickets.counters().unauthorized;
        assert_echoed(&call(&url, &alice, &session).await);
        let presented = refreshes_presented(&auth);
        assert!(presented.len() >= 3, "{presented:?}");
        assert_eq!(presented[2], again);
        assert_eq!(auth.counters().token_errors, 0);
        assert_eq!(tickets.counters().unauthorized, refused);
        let mut subjects = tickets.subjects();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream"]);

        // She signs out: the very next call of the same session asks her to sign in
        // again, and her (still valid) access token never reaches the upstream again.
        let presented = tickets.presented_tokens().len();
        let refreshes = auth.counters().refresh_token;
        let response = sign_out(&base, &alice).await;
        let removed: serde_json::Value = response.json().await.unwrap();
        assert_eq!(removed, json!({"server": "tickets", "removed": true}));
        assert_eq!(stored_refresh_token(&wd).await, None);
        let page = sign_in_url(&call(&url, &alice, &session).await);
        assert_sign_in_page(&page, &base);
        assert_eq!(tickets.presented_tokens().len(), presented);
        assert_eq!(auth.counters().refresh_token, refreshes);

        // She signs in again from that page: the same session's next call goes through
        // with her new credentials.
        sign_in_as(&auth, &page, "alice-upstream").await;
        assert_echoed(&call(&url, &alice, &session).await);
        let mut subjects = tickets.subjects();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream"]);
    });
    stop(&wd, &runtime, served, auth, vec![tickets]);
}

#[test]
fn a_refresh_refused_on_an_open_connection_asks_for_sign_in_at_once() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets, served) = start(&wd, &runtime);
    let url = served.url.clone();
    let base = url.trim_end_matches("/mcp").to_owned();
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    runtime.block_on(async {
        let session = sign_in(&auth, &url, &alice).await;
        // Her access token expires and the authorization server refuses the refresh (her
        // grant revoked there): the same session's next call asks her to sign in, after
        // the one refresh, and the upstream served nobody else.
        auth.expire_access_tokens();
        auth.fail_next_refreshes(1);
        let page = sign_in_url(&call(&url, &alice, &session).await);
        assert_sign_in_page(&page, &base);
        assert_eq!(auth.counters().refresh_token, 1);
        let mut subjects = tickets.subjects();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream"]);
        // Signing in again from that page lets the session's next call through.
        sign_in_as(&auth, &page, "alice-upstream").await;
        assert_echoed(&call(&url, &alice, &session).await);
    });
    stop(&wd, &runtime, served, auth, vec![tickets]);
}

#[test]
fn sign_out_takes_effect_at_once_for_2026_era_calls_too() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets, served) = start(&wd, &runtime);
    let url = served.url.clone();
    let base = url.trim_end_matches("/mcp").to_owned();
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    runtime.block_on(async {
        sign_in(&auth, &url, &alice).await;
        // The set kept for alice's 2026-era calls connects with her credentials.
        assert_echoed(&modern_call(&url, &alice).await);
        assert_echoed(&modern_call(&url, &alice).await);
        let presented = tickets.presented_tokens().len();
        sign_out(&base, &alice).await;
        let page = sign_in_url(&modern_call(&url, &alice).await);
        assert_sign_in_page(&page, &base);
        assert_eq!(tickets.presented_tokens().len(), presented);
        sign_in_as(&auth, &page, "alice-upstream").await;
        assert_echoed(&modern_call(&url, &alice).await);
        let mut subjects = tickets.subjects();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream"]);
    });
    stop(&wd, &runtime, served, auth, vec![tickets]);
}

/// The gateway's client at the token endpoint (for exchanges), its secret's variable, and
/// the admin token.
const GATEWAY_CLIENT: (&str, &str) = ("mcp-gateway", "gateway-exchange-secret");
const SECRET_VAR: &str = "GATEWAY_EXCHANGE_SECRET";
const ADMIN_TOKEN: &str = "admin-token-0123456789abcdef0123456789abcdef";

#[test]
fn an_admin_revocation_drops_the_callers_cached_exchanged_tokens() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, desk) = runtime.block_on(async {
        let auth = team::auth_server().await;
        auth.add_client(mcp_testkit::OAuthClient::confidential(
            GATEWAY_CLIENT.0,
            GATEWAY_CLIENT.1,
        ));
        let desk = signin::protected(&auth, "desk").await;
        (auth, desk)
    });
    let rest = format!(
        "[mcp_servers.desk]\nurl = {}\nupstream_identity = \"exchange\"\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.desk.token_exchange]\ntoken_endpoint = {}\naudience = \"desk\"\nresource = {}\nclient_id = \"{}\"\nclient_secret_env = \"{SECRET_VAR}\"\n",
        support::toml_str(&desk.url()),
        support::toml_str(&auth.token_endpoint()),
        support::toml_str(&desk.url()),
        GATEWAY_CLIENT.0,
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let key: String = VAULT_KEY.iter().map(|b| format!("{b:02x}")).collect();
    // A trailing newline (an env file may leave one) is trimmed by the gateway.
    let admin = format!("{ADMIN_TOKEN}\n");
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[
            (SECRET_VAR, GATEWAY_CLIENT.1),
            ("MCPCTL_VAULT_KEY", &key),
            ("MCPCTL_GATEWAY_ADMIN_TOKEN", &admin),
        ],
    );
    let url = served.url.clone();
    let base = url.trim_end_matches("/mcp").to_owned();
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    let bob = team::token(&auth, &url, "bob", &[]);
    let exchanges_of = |token: &str| {
        auth.token_exchanges()
            .iter()
            .filter(|r| r.subject_token == token)
            .count()
    };
    runtime.block_on(async {
        let call_desk = |token: String, session: String| {
            let url = url.clone();
            async move { call_tool(&url, &token, &session, "mcp__desk__echo").await }
        };
        let alice_session = team::open_session(&url, &alice).await;
        let bob_session = team::open_session(&url, &bob).await;
        // Each caller's token is exchanged once, then the cached exchange is used.
        for _ in 0..2 {
            assert_echoed(&call_desk(alice.clone(), alice_session.clone()).await);
            assert_echoed(&call_desk(bob.clone(), bob_session.clone()).await);
        }
        assert_eq!((exchanges_of(&alice), exchanges_of(&bob)), (1, 1));

        let response = team::http()
            .delete(format!("{base}/connect/callers/sub:alice"))
            .header("authorization", bearer(ADMIN_TOKEN))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        // Alice's next call exchanges anew; bob's cached exchange is untouched.
        assert_echoed(&call_desk(alice.clone(), alice_session.clone()).await);
        assert_echoed(&call_desk(bob.clone(), bob_session.clone()).await);
        assert_eq!((exchanges_of(&alice), exchanges_of(&bob)), (2, 1));
        let mut subjects = desk.subjects();
        subjects.sort();
        subjects.dedup();
        assert_eq!(subjects, ["alice", "bob"]);
    });
    stop(&wd, &runtime, served, auth, vec![desk]);
}

//! `mcpctl serve --http` with `[gateway.oauth]` acting as each caller upstream
//! (`upstream_identity`): an `exchange` server sees each caller's own subject through an
//! RFC 8693 exchange of the caller's token, never the token itself, and a revoked
//! exchanged token is exchanged once more; a `caller` server without the caller's
//! credentials fails naming the server and the sign-in page; a token endpoint that is
//! down fails its server alone, naming it, while the gateway's own servers go on.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod signin;
mod support;
mod team;

use mcp_testkit::{
    FakeAuthServer, FakeProtectedMcpServer, OAuthClient, ProtectedOptions, Scenario, ToolSpec,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use signin::{assert_echoed, call_tool, modern_call_tool, stop};
use support::{Served, Workdir};
use team::{STATIC_TOKEN, bearer, post, request};

/// The gateway's client at the token endpoint, and the variable holding its secret.
const GATEWAY_CLIENT: (&str, &str) = ("mcp-gateway", "gateway-exchange-secret");
const SECRET_VAR: &str = "GATEWAY_EXCHANGE_SECRET";

/// The `[mcp_servers.tickets]` table of an `exchange` server at `url`, exchanging at
/// `token_endpoint`.
fn exchange_server(url: &str, token_endpoint: &str) -> String {
    format!(
        "[mcp_servers.tickets]\nurl = {}\nupstream_identity = \"exchange\"\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.tickets.token_exchange]\ntoken_endpoint = {}\naudience = \"tickets\"\nresource = {}\nclient_id = \"{}\"\nclient_secret_env = \"{SECRET_VAR}\"\n",
        support::toml_str(url),
        support::toml_str(token_endpoint),
        support::toml_str(url),
        GATEWAY_CLIENT.0,
    )
}

/// The team's authorization server (it also does the exchanges) with the gateway's
/// client, and the `tickets` upstream it protects.
async fn upstream() -> (FakeAuthServer, FakeProtectedMcpServer) {
    let auth = team::auth_server().await;
    auth.add_client(OAuthClient::confidential(
        GATEWAY_CLIENT.0,
        GATEWAY_CLIENT.1,
    ));
    let tickets = signin::protected(&auth, "tickets").await;
    (auth, tickets)
}

/// The text of a call's answer: its error message, or its error result's text.
fn error_text(answer: &team::Answer) -> String {
    if let Some(message) = answer.body["error"]["message"].as_str() {
        return message.to_owned();
    }
    assert_eq!(
        answer.body["result"]["isError"], true,
        "not an error: {answer:?}"
    );
    answer.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer:?}"))
        .to_owned()
}

#[test]
fn each_caller_is_seen_upstream_as_itself_and_its_token_never_goes_there() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(upstream());
    let config = team::config(
        &wd,
        &auth.issuer(),
        "",
        &exchange_server(&tickets.url(), &auth.token_endpoint()),
    );
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[(SECRET_VAR, GATEWAY_CLIENT.1)],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let bob = team::token(&auth, &url, "bob", &[]);
        let alice_session = team::open_session(&url, &alice).await;
        let bob_session = team::open_session(&url, &bob).await;
        for (token, session) in [(&alice, &alice_session), (&bob, &bob_session)] {
            let answer = call_tool(&url, token, session, "mcp__tickets__echo").await;
            assert_echoed(&answer);
        }
        // Two subjects upstream, each through its own exchange of its own token.
        let mut subjects = tickets.subjects();
        subjects.sort();
        subjects.dedup();
        assert_eq!(subjects, ["alice", "bob"]);
        let exchanged: Vec<(String, Option<String>)> = auth
            .token_exchanges()
            .into_iter()
            .map(|r| (r.subject_token, r.subject))
            .collect();
        assert!(exchanged.contains(&(alice.clone(), Some("alice".to_owned()))));
        assert!(exchanged.contains(&(bob.clone(), Some("bob".to_owned()))));
        // The callers' gateway tokens never reached the upstream.
        let presented = tickets.presented_tokens();
        assert!(!presented.is_empty());
        assert!(
            !presented.iter().any(|t| *t == alice || *t == bob),
            "a caller's token went upstream"
        );

        // A revoked exchanged token: the upstream answers 401, the gateway exchanges once
        // more and the call goes through.
        let before = auth.counters().token_exchange;
        auth.revoke_exchanged_tokens();
        let answer = call_tool(&url, &alice, &alice_session, "mcp__tickets__echo").await;
        assert_echoed(&answer);
        assert_eq!(
            auth.counters().token_exchange,
            before + 1,
            "one re-exchange"
        );
        assert!(
            tickets.counters().unauthorized > 0,
            "the upstream refused the old token"
        );
        let presented = tickets.presented_tokens();
        assert!(!presented.iter().any(|t| *t == alice || *t == bob));
    });
    stop(&wd, &runtime, served, auth, vec![tickets]);
}

#[test]
fn a_token_endpoint_that_is_down_fails_its_server_alone() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(upstream());
    // A loopback port nothing listens on.
    let down = format!(
        "http://127.0.0.1:{}/token",
        mcp_testkit::free_loopback_port().unwrap()
    );
    let config = team::config(
        &wd,
        &auth.issuer(),
        "",
        &exchange_server(&tickets.url(), &down),
    );
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[(SECRET_VAR, GATEWAY_CLIENT.1)],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let session = team::open_session(&url, &alice).await;
        let failed = call_tool(&url, &alice, &session, "mcp__tickets__echo").await;
        let text = error_text(&failed);
        assert!(text.contains("tickets"), "{text}");
        assert!(text.contains("token exchange"), "{text}");
        assert!(!text.contains(&alice), "the caller's token is never shown");
        // The gateway's own servers go on.
        let echoed = call_tool(&url, &alice, &session, "mcp__notes__echo").await;
        assert_echoed(&echoed);
        assert!(
            tickets.presented_tokens().is_empty(),
            "nothing went upstream"
        );
    });
    stop(&wd, &runtime, served, auth, vec![tickets]);
}

#[test]
fn a_caller_without_credentials_is_told_where_to_sign_in() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(upstream());
    let rest = format!(
        "[gateway]\npublic_url = \"http://127.0.0.1:8931\"\n\n{}",
        signin::caller_server(&tickets.url())
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let mut served = Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let session = team::open_session(&url, &alice).await;
        let failed = call_tool(&url, &alice, &session, "mcp__tickets__echo").await;
        let text = error_text(&failed);
        // The 2025-11-25 URL elicitation error: the page to open, made for alice.
        assert_eq!(failed.body["error"]["code"], -32042, "{failed:?}");
        assert!(
            text.starts_with("open http://127.0.0.1:8931/connect/start?state="),
            "{text}"
        );
        assert!(
            text.ends_with(" to sign in to tickets, then retry"),
            "{text}"
        );
        let elicitation = &failed.body["error"]["data"]["elicitations"][0];
        assert_eq!(elicitation["mode"], "url", "{failed:?}");
        assert!(
            text.contains(elicitation["url"].as_str().unwrap()),
            "{text}"
        );
        // The gateway's own servers go on.
        let echoed = call_tool(&url, &alice, &session, "mcp__notes__echo").await;
        assert_echoed(&echoed);
        assert!(
            tickets.presented_tokens().is_empty(),
            "nothing went upstream"
        );
    });
    served.stop();
    drop(served);
    wd.assert_no_server_left();
    // The vault was made in the data directory, private.
    let db = wd.path().join("home/gateway/credentials.db");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&db).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    runtime.block_on(async {
        tickets.shutdown().await;
        auth.shutdown().await;
    });
}

#[test]
fn a_credential_store_that_cannot_be_reached_fails_the_caller_servers_alone() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(upstream());
    let config = team::config(
        &wd,
        &auth.issuer(),
        "",
        &signin::caller_server(&tickets.url()),
    );
    // A PostgreSQL store on a loopback port nothing listens on.
    let store = format!(
        "postgres://gw@127.0.0.1:{}/vault",
        mcp_testkit::free_loopback_port().unwrap()
    );
    let key = "ab".repeat(32);
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[
            ("MCPCTL_CREDENTIAL_STORE", &store),
            ("MCPCTL_VAULT_KEY", &key),
        ],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let session = team::open_session(&url, &alice).await;
        let failed = call_tool(&url, &alice, &session, "mcp__tickets__echo").await;
        let text = error_text(&failed);
        assert!(text.contains("`tickets`"), "{text}");
        assert!(
            text.contains("the credential store is unavailable"),
            "{text}"
        );
        assert!(!text.contains(&key), "the key is never shown");
        let echoed = call_tool(&url, &alice, &session, "mcp__notes__echo").await;
        assert_echoed(&echoed);
        assert!(
            tickets.presented_tokens().is_empty(),
            "nothing went upstream"
        );
    });
    stop(&wd, &runtime, served, auth, vec![tickets]);
}

/// Stores `token` for `caller` and `tickets` in the gateway's vault (SQLite in its data
/// directory, key `cd…cd`), as a finished sign-in does.
async fn store(wd: &Workdir, caller: &str, token: &str) {
    let vault = signin::open_vault(wd, &[0xcd; 32]).await;
    let mut creds = mcp_auth::StoredCredentials::new("tickets-client");
    creds.access_token = Some(mcp_key::Secret::new(token.to_owned()));
    vault
        .put(caller, &"tickets".parse().unwrap(), &creds)
        .await
        .unwrap();
    vault.close().await;
}

#[test]
fn a_caller_with_stored_credentials_is_seen_upstream_as_itself() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(upstream());
    let rest = format!(
        "[gateway]\npublic_url = \"http://127.0.0.1:8931\"\n\n{}",
        signin::caller_server(&tickets.url())
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    // Alice signed in to tickets before: her credentials are in the gateway's vault.
    let key = "cd".repeat(32);
    auth.set_subject("alice-upstream", &[]);
    let upstream_token = auth.mint_token("tickets-client", &["mcp:read"], Some(&tickets.url()));
    runtime.block_on(store(&wd, "sub:alice", &upstream_token));
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[("MCPCTL_VAULT_KEY", &key)],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let bob = team::token(&auth, &url, "bob", &[]);
        let alice_session = team::open_session(&url, &alice).await;
        let answer = call_tool(&url, &alice, &alice_session, "mcp__tickets__echo").await;
        assert_echoed(&answer);
        // Bob has none of his own, and alice's are no use to him.
        let bob_session = team::open_session(&url, &bob).await;
        let refused = call_tool(&url, &bob, &bob_session, "mcp__tickets__echo").await;
        assert_eq!(refused.body["error"]["code"], -32042, "{refused:?}");
        assert!(error_text(&refused).ends_with(" to sign in to tickets, then retry"));
        let presented = tickets.presented_tokens();
        assert!(
            presented.iter().all(|t| *t == upstream_token),
            "{presented:?}"
        );
        assert!(!presented.is_empty());
        let mut subjects = tickets.subjects();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream"]);

        // Each caller's own view of its sign-ins: never a token, never another's row.
        let base = url.trim_end_matches("/mcp");
        let view = |token: String| {
            let base = base.to_owned();
            async move {
                let response = team::http()
                    .get(format!("{base}/connect/servers"))
                    .header("authorization", bearer(&token))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), 200);
                response.json::<serde_json::Value>().await.unwrap()
            }
        };
        let alices = view(alice.clone()).await;
        assert_eq!(alices["caller"], "sub:alice", "{alices}");
        assert_eq!(alices["servers"][0]["server"], "tickets", "{alices}");
        assert_eq!(alices["servers"][0]["signed_in"], true, "{alices}");
        assert!(
            !alices.to_string().contains(&upstream_token),
            "no token in the view"
        );
        let bobs_view = view(bob.clone()).await;
        assert_eq!(bobs_view["servers"][0]["signed_in"], false, "{bobs_view}");

        // Bob signs in (his credentials land in the vault) and retries in his session.
        auth.set_subject("bob-upstream", &[]);
        let bobs = auth.mint_token("tickets-client", &["mcp:read"], Some(&tickets.url()));
        store(&wd, "sub:bob", &bobs).await;
        // The retry the sign-in error asked for goes through.
        let answer = call_tool(&url, &bob, &bob_session, "mcp__tickets__echo").await;
        assert_echoed(&answer);
        let mut subjects = tickets.subjects();
        subjects.sort();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream", "bob-upstream"]);
    });
    stop(&wd, &runtime, served, auth, vec![tickets]);
}

#[test]
fn a_2026_era_call_acts_as_its_caller_upstream_too() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(upstream());
    let desk = runtime.block_on(signin::protected(&auth, "desk"));
    let rest = format!(
        "{}\n[mcp_servers.desk]\nurl = {}\nupstream_identity = \"caller\"\ndefault_tools_approval_mode = \"approve\"\n",
        exchange_server(&tickets.url(), &auth.token_endpoint()),
        support::toml_str(&desk.url())
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[(SECRET_VAR, GATEWAY_CLIENT.1)],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let bob = team::token(&auth, &url, "bob", &[]);
        // `exchange`: each caller's stateless calls reach the upstream as that caller.
        for token in [&alice, &bob, &alice] {
            let answer = modern_call_tool(&url, token, "mcp__tickets__echo").await;
            assert_echoed(&answer);
        }
        let mut subjects = tickets.subjects();
        subjects.sort();
        subjects.dedup();
        assert_eq!(subjects, ["alice", "bob"]);
        let presented = tickets.presented_tokens();
        assert!(
            !presented.iter().any(|t| *t == alice || *t == bob),
            "a caller's token went upstream"
        );
        // `caller`: no credentials of alice's, so the sign-in error names the page; the
        // gateway's own credentials never stand in for hers.
        let failed = modern_call_tool(&url, &alice, "mcp__desk__echo").await;
        assert_eq!(failed.body["error"]["code"], -32042, "{failed:?}");
        let text = error_text(&failed);
        assert!(text.contains("/connect/start?state="), "{text}");
        assert!(text.ends_with(" to sign in to desk, then retry"), "{text}");
        assert!(desk.presented_tokens().is_empty(), "nothing went upstream");
    });
    stop(&wd, &runtime, served, auth, vec![desk, tickets]);
}

#[test]
fn a_refused_refresh_asks_for_sign_in_and_shows_in_the_callers_view() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(upstream());
    let rest = format!(
        "[gateway]\npublic_url = \"http://127.0.0.1:8931\"\n\n{}",
        signin::caller_server(&tickets.url())
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    // Alice's stored token expired, and the authorization server does not know her
    // refresh token (revoked, or forged into the row): the refresh is refused.
    auth.add_client(OAuthClient::public("tickets-client"));
    runtime.block_on(async {
        let vault = signin::open_vault(&wd, &[0xcd; 32]).await;
        let mut creds = mcp_auth::StoredCredentials::new("tickets-client");
        creds.access_token = Some(mcp_key::Secret::new("expired-token".to_owned()));
        creds.refresh_token = Some(mcp_key::Secret::new("unknown-refresh-token".to_owned()));
        creds.expires_at = Some(1);
        creds.token_endpoint = Some(auth.token_endpoint());
        creds.issuer = Some(auth.issuer());
        vault
            .put("sub:alice", &"tickets".parse().unwrap(), &creds)
            .await
            .unwrap();
        vault.close().await;
    });
    let key = "cd".repeat(32);
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[("MCPCTL_VAULT_KEY", &key)],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let session = team::open_session(&url, &alice).await;
        let refused = call_tool(&url, &alice, &session, "mcp__tickets__echo").await;
        assert_eq!(refused.body["error"]["code"], -32042, "{refused:?}");
        assert!(error_text(&refused).ends_with(" to sign in to tickets, then retry"));
        assert!(
            !tickets
                .presented_tokens()
                .iter()
                .any(|t| t == "expired-token"),
            "the expired token was not sent"
        );
        let response = team::http()
            .get(format!("{}/connect/servers", url.trim_end_matches("/mcp")))
            .header("authorization", bearer(&alice))
            .send()
            .await
            .unwrap();
        let view: serde_json::Value = response.json().await.unwrap();
        let failure = &view["servers"][0]["refresh_failure"];
        assert_eq!(
            failure["reason"], "the authorization server refused the refresh: sign in again",
            "{view}"
        );
        assert!(
            !view.to_string().contains("unknown-refresh-token"),
            "{view}"
        );
    });
    stop(&wd, &runtime, served, auth, vec![tickets]);
}

#[test]
fn the_event_relay_never_reaches_a_caller_server_as_the_gateway() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let desk = runtime
        .block_on(FakeProtectedMcpServer::start(
            Scenario::new("desk")
                .with_tool(ToolSpec::echo("echo"))
                .with_events(
                    mcp_testkit::EventsSpec::new()
                        .with_type(mcp_testkit::EventTypeSpec::new("mail")),
                ),
            &auth,
            ProtectedOptions::new(),
        ))
        .unwrap();
    // The gateway has a token of its own for desk (its bearer variable): good for
    // nothing on a server reached as each caller, and never to be used for a caller.
    auth.set_subject("gateway", &[]);
    let gateway_token = auth.mint_token("desk-client", &["mcp:read"], Some(&desk.url()));
    let rest = format!(
        "[gateway]\npublic_url = \"http://127.0.0.1:8931\"\n\n[mcp_servers.desk]\nurl = {}\nupstream_identity = \"caller\"\nbearer_token_env_var = \"DESK_TOKEN\"\ndefault_tools_approval_mode = \"approve\"\n",
        support::toml_str(&desk.url())
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[("DESK_TOKEN", &gateway_token)],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let ask = |method: &str, params: serde_json::Value| {
            let message = request(method, params);
            let (url, alice) = (url.clone(), alice.clone());
            async move { post(&url, Some(&bearer(&alice)), None, &message).await }
        };
        let listed = ask("events/list", json!({"_meta": team::modern_meta()})).await;
        assert_eq!(listed.body["result"]["events"], json!([]), "{listed:?}");
        let polled = ask(
            "events/poll",
            json!({"name": "mcp__desk__mail", "arguments": {}, "cursor": null, "_meta": team::modern_meta()}),
        )
        .await;
        assert!(polled.body["error"].is_object(), "{polled:?}");
        assert!(
            !desk.presented_tokens().contains(&gateway_token),
            "the relay reached desk with the gateway's own token"
        );
        assert!(desk.subjects().is_empty(), "{:?}", desk.subjects());
    });
    stop(&wd, &runtime, served, auth, vec![desk]);
}

//! [`TokenExchanger`] against the testkit's authorization server (RFC 8693) and a
//! protected MCP server on loopback: one exchange serves many calls, a 401 is answered
//! with one re-exchange, refusals and expiry are handled, and a caller's token goes to
//! the token endpoint and nowhere else.

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

use std::time::Duration;

use mcp_auth::{DEFAULT_UNKNOWN_LIFETIME, TokenExchanger};
use mcp_catalog::TokenExchangeConfig;
use mcp_key::{McpServerKey, Secret};
use mcp_testkit::{
    AuthServerOptions, ExchangeFault, FakeAuthServer, FakeProtectedMcpServer, OAuthClient,
    ProtectedOptions, Scenario, TOKEN_EXCHANGE_GRANT,
};
use pretty_assertions::assert_eq;

const GATEWAY: (&str, &str) = ("mcp-gateway", "gateway-secret");
const SECRET_VAR: &str = "GATEWAY_EXCHANGE_SECRET";
/// Planted by the authorization server in every token and every error description.
const PLANTED: &str = "PLANTED-SECRET";

/// An authorization server, the upstream it protects, and an exchanger for the upstream.
struct Setup {
    auth: FakeAuthServer,
    upstream: FakeProtectedMcpServer,
    exchanger: TokenExchanger,
}

impl Setup {
    async fn start(options: AuthServerOptions) -> Self {
        let auth = FakeAuthServer::start(
            options.with_client(OAuthClient::confidential(GATEWAY.0, GATEWAY.1)),
        )
        .await
        .unwrap();
        let upstream =
            FakeProtectedMcpServer::start(Scenario::new("tickets"), &auth, ProtectedOptions::new())
                .await
                .unwrap();
        let exchanger = exchanger(&auth, &upstream, GATEWAY.1);
        Self {
            auth,
            upstream,
            exchanger,
        }
    }

    /// A caller's token, as the gateway's own authorization server would have issued it.
    fn caller(&self, subject: &str) -> Secret {
        self.auth.set_subject(subject, &[]);
        Secret::new(self.auth.mint_token(
            "gateway-login",
            &["mcp:read"],
            Some("https://gw.example/mcp"),
        ))
    }

    fn exchanges(&self) -> u64 {
        self.auth.counters().token_exchange
    }

    async fn shutdown(self) {
        self.upstream.shutdown().await;
        self.auth.shutdown().await;
    }
}

fn config(auth: &FakeAuthServer, upstream: &FakeProtectedMcpServer) -> TokenExchangeConfig {
    TokenExchangeConfig::new(auth.token_endpoint())
        .with_audience("tickets")
        .with_resource(upstream.url())
        .with_client(GATEWAY.0, Some(SECRET_VAR.to_owned()))
}

fn exchanger(
    auth: &FakeAuthServer,
    upstream: &FakeProtectedMcpServer,
    secret: &str,
) -> TokenExchanger {
    let env = |name: &str| (name == SECRET_VAR).then(|| secret.to_owned());
    TokenExchanger::from_config(server(), &config(auth, upstream), &env).unwrap()
}

fn server() -> McpServerKey {
    "tickets".parse().unwrap()
}

/// The HTTP status the upstream answers an `initialize` with `token` with.
async fn upstream_status(upstream: &FakeProtectedMcpServer, token: &Secret) -> u16 {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}
    });
    reqwest::Client::new()
        .post(upstream.url())
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token.expose())
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn one_exchange_serves_many_calls_and_each_caller_gets_its_own_subject_upstream() {
    let setup = Setup::start(AuthServerOptions::new()).await;
    let alice = setup.caller("alice");
    let bob = setup.caller("bob");

    let first = setup.exchanger.exchange(&alice).await.unwrap();
    for _ in 0..4 {
        assert_eq!(setup.exchanger.exchange(&alice).await.unwrap(), first);
    }
    assert_eq!(setup.exchanges(), 1, "five calls, one exchange");
    // Concurrent first calls of one caller share one exchange.
    let carol = setup.caller("carol");
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (exchanger, carol) = (setup.exchanger.clone(), carol.clone());
        calls.spawn(async move { exchanger.exchange(&carol).await.unwrap() });
    }
    let tokens = calls.join_all().await;
    assert_eq!(tokens.len(), 8);
    assert!(tokens.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(setup.exchanges(), 2);

    let for_bob = setup.exchanger.exchange(&bob).await.unwrap();
    assert_ne!(for_bob, first);
    assert_eq!(setup.exchanges(), 3);

    assert_eq!(upstream_status(&setup.upstream, &first).await, 200);
    assert_eq!(upstream_status(&setup.upstream, &for_bob).await, 200);
    assert_eq!(setup.upstream.subjects(), ["alice", "bob"]);

    // The caller's token went to the token endpoint, as the subject token of exchanges
    // for the upstream, and nowhere else.
    let callers = [&alice, &bob, &carol].map(|t| t.expose().to_owned());
    let presented = setup.upstream.presented_tokens();
    assert_eq!(presented, [first.expose(), for_bob.expose()]);
    assert!(!presented.iter().any(|t| callers.contains(t)));
    for form in setup.auth.token_requests() {
        let carries: Vec<&String> = form
            .iter()
            .filter(|(_, v)| callers.contains(v))
            .map(|(k, _)| k)
            .collect();
        assert_eq!(carries, ["subject_token"], "{:?}", form.keys());
        assert_eq!(form["grant_type"], TOKEN_EXCHANGE_GRANT);
    }
    assert!(setup.auth.authorize_requests().is_empty());
    let records = setup.auth.token_exchanges();
    assert_eq!(records.len(), 3);
    for (record, (caller, subject)) in
        records
            .iter()
            .zip([(&alice, "alice"), (&carol, "carol"), (&bob, "bob")])
    {
        assert_eq!(record.subject_token, caller.expose());
        assert_eq!(record.subject.as_deref(), Some(subject));
        assert_eq!(record.client_id.as_deref(), Some(GATEWAY.0));
        assert_eq!(record.audience.as_deref(), Some("tickets"));
        assert_eq!(
            record.resource.as_deref(),
            Some(setup.upstream.url().as_str())
        );
        assert!(record.outcome.is_ok());
    }
    setup.shutdown().await;
}

#[tokio::test]
async fn a_401_upstream_is_answered_with_one_re_exchange() {
    let setup = Setup::start(AuthServerOptions::new()).await;
    let alice = setup.caller("alice");
    let first = setup.exchanger.exchange(&alice).await.unwrap();
    setup.auth.revoke_exchanged_tokens();
    assert_eq!(upstream_status(&setup.upstream, &first).await, 401);

    let second = setup
        .exchanger
        .after_unauthorized(&alice, &first)
        .await
        .unwrap();
    assert_ne!(second, first);
    assert_eq!(setup.exchanges(), 2);
    assert_eq!(upstream_status(&setup.upstream, &second).await, 200);
    // A late 401 for the old token (another request's) does not exchange again.
    let again = setup
        .exchanger
        .after_unauthorized(&alice, &first)
        .await
        .unwrap();
    assert_eq!(again, second);
    assert_eq!(setup.exchanges(), 2);
    // A caller that signs out is forgotten.
    setup.exchanger.invalidate(&alice);
    let third = setup.exchanger.exchange(&alice).await.unwrap();
    assert_ne!(third, second);
    assert_eq!(setup.exchanges(), 3);
    setup.shutdown().await;
}

#[tokio::test]
async fn a_token_the_server_expires_early_is_replaced_after_the_upstreams_401() {
    let setup = Setup::start(AuthServerOptions::new()).await;
    let alice = setup.caller("alice");
    setup
        .auth
        .set_exchange_fault(Some(ExchangeFault::ExpireEarly));
    let early = setup.exchanger.exchange(&alice).await.unwrap();
    assert_eq!(
        setup.exchanger.exchange(&alice).await.unwrap(),
        early,
        "it claims an hour: reused"
    );
    assert_eq!(upstream_status(&setup.upstream, &early).await, 401);
    setup.auth.set_exchange_fault(None);
    let fresh = setup
        .exchanger
        .after_unauthorized(&alice, &early)
        .await
        .unwrap();
    assert_eq!(upstream_status(&setup.upstream, &fresh).await, 200);
    assert_eq!(setup.exchanges(), 2);
    setup.shutdown().await;
}

#[tokio::test]
async fn a_token_within_the_margin_of_its_expiry_is_not_reused() {
    let setup =
        Setup::start(AuthServerOptions::new().with_token_lifetime(Duration::from_secs(20))).await;
    let alice = setup.caller("alice");
    // 20 s left is within the default 30 s margin: every call exchanges.
    let mut tokens = Vec::new();
    for _ in 0..3 {
        tokens.push(setup.exchanger.exchange(&alice).await.unwrap());
    }
    assert_eq!(setup.exchanges(), 3);
    assert!(tokens[0] != tokens[1] && tokens[1] != tokens[2]);
    // With a 5 s margin the same token is reused.
    let relaxed = setup
        .exchanger
        .clone()
        .with_refresh_margin(Duration::from_secs(5));
    let bob = setup.caller("bob");
    let first = relaxed.exchange(&bob).await.unwrap();
    assert_eq!(relaxed.exchange(&bob).await.unwrap(), first);
    assert_eq!(setup.exchanges(), 4);
    setup.shutdown().await;
}

#[tokio::test]
async fn a_token_without_expires_in_is_reused_for_the_default_lifetime() {
    let setup = Setup::start(AuthServerOptions::new()).await;
    setup
        .auth
        .set_exchange_fault(Some(ExchangeFault::OmitExpiresIn));
    let alice = setup.caller("alice");
    let first = setup.exchanger.exchange(&alice).await.unwrap();
    assert_eq!(setup.exchanger.exchange(&alice).await.unwrap(), first);
    assert_eq!(setup.exchanges(), 1);
    // Taken as DEFAULT_UNKNOWN_LIFETIME: a margin that long leaves nothing to reuse.
    let strict = setup
        .exchanger
        .clone()
        .with_refresh_margin(DEFAULT_UNKNOWN_LIFETIME);
    let bob = setup.caller("bob");
    strict.exchange(&bob).await.unwrap();
    strict.exchange(&bob).await.unwrap();
    assert_eq!(setup.exchanges(), 3);
    let relaxed = setup
        .exchanger
        .clone()
        .with_refresh_margin(DEFAULT_UNKNOWN_LIFETIME - Duration::from_secs(60));
    let carol = setup.caller("carol");
    let for_carol = relaxed.exchange(&carol).await.unwrap();
    assert_eq!(relaxed.exchange(&carol).await.unwrap(), for_carol);
    assert_eq!(setup.exchanges(), 4);
    setup.shutdown().await;
}

#[tokio::test]
async fn refusals_are_clear_errors_and_nothing_is_cached() {
    let setup = Setup::start(AuthServerOptions::new()).await;
    let alice = setup.caller("alice");

    setup.auth.set_exchange_fault(Some(ExchangeFault::Refuse));
    let err = setup.exchanger.exchange(&alice).await.unwrap_err();
    assert!(
        err.is_exchange_refused() && err.is_caller_token_rejected(),
        "{err:?}"
    );
    assert!(!err.is_retryable());
    assert_eq!(
        err.to_string(),
        "MCP server `tickets`: the authorization server refused to exchange the caller's token \
         (invalid_grant); the caller's token is expired, revoked or not trusted there: sign in \
         to the gateway again"
    );
    setup.auth.set_exchange_fault(None);
    assert!(
        setup.exchanger.exchange(&alice).await.is_ok(),
        "nothing was cached"
    );
    assert_eq!(setup.exchanges(), 2);

    let wrong_secret = exchanger(&setup.auth, &setup.upstream, "not-the-secret");
    let err = wrong_secret.exchange(&alice).await.unwrap_err();
    assert!(
        err.is_exchange_refused() && !err.is_caller_token_rejected(),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "MCP server `tickets`: the authorization server refused to exchange the caller's token \
         (invalid_client); check the server's `token_exchange` settings (endpoint, client, \
         audience, scope)"
    );

    // The authorization server down: retryable, named.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/token", closed.local_addr().unwrap());
    drop(closed);
    let down = TokenExchanger::new(
        server(),
        &TokenExchangeConfig::new(endpoint).with_audience("tickets"),
        None,
    )
    .unwrap();
    let err = down.exchange(&alice).await.unwrap_err();
    assert!(err.is_retryable(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "MCP server `tickets`: HTTP request to the token endpoint failed"
    );
    setup.shutdown().await;
}

#[test]
fn unusable_settings_are_refused_before_any_request() {
    let plain = TokenExchangeConfig::new("http://idp.example.com/token").with_audience("t");
    let err = TokenExchanger::new(server(), &plain, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP server `tickets`: the token exchange endpoint `http://idp.example.com/token` must \
         use https (plain http only on loopback)"
    );
    let no_target = TokenExchangeConfig::new("https://idp.example.com/token");
    let err = TokenExchanger::new(server(), &no_target, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("neither an audience nor a resource"),
        "{err}"
    );
    let with_var = TokenExchangeConfig::new("https://idp.example.com/token")
        .with_audience("t")
        .with_client("gw", Some(SECRET_VAR.to_owned()));
    let err = TokenExchanger::from_config(server(), &with_var, &|_: &str| None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP server `tickets`: the token exchange client secret variable \
         `GATEWAY_EXCHANGE_SECRET` is not set; set it in the gateway's environment"
    );
}

#[tokio::test]
async fn tokens_never_reach_debug_display_or_logs() {
    let (capture, _guard) = mcp_testkit::capture_logs();
    let setup = Setup::start(AuthServerOptions::new().with_planted_secret(PLANTED)).await;
    let alice = setup.caller("alice");
    assert!(
        alice.expose().starts_with(PLANTED),
        "the planted token is in use"
    );
    let token = setup.exchanger.exchange(&alice).await.unwrap();
    assert!(token.expose().starts_with(PLANTED));
    setup.auth.set_exchange_fault(Some(ExchangeFault::Refuse));
    let err = setup
        .exchanger
        .after_unauthorized(&alice, &token)
        .await
        .unwrap_err();
    assert_eq!(
        setup.auth.counters().token_errors,
        1,
        "the error was really sent"
    );
    tracing::info!(exchanger = ?setup.exchanger, error = %err, "end of test");

    let logs = capture.text();
    assert!(logs.contains("end of test"), "the capture works");
    for (what, text) in [
        ("tracing output", logs),
        ("exchanger Debug", format!("{:?}", setup.exchanger)),
        ("error Display", err.to_string()),
        ("error Debug", format!("{err:?}")),
    ] {
        assert!(!text.contains(PLANTED), "{what} leaks `{PLANTED}`:\n{text}");
        assert!(
            !text.contains(GATEWAY.1),
            "{what} leaks the client secret:\n{text}"
        );
    }
    setup.shutdown().await;
}

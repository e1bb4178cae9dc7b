//! RFC 8693 token exchange at the fake authorization server, driven with plain `reqwest`:
//! what it accepts, what it issues, what it records and how it misbehaves on request.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod oauth_support;

use mcp_testkit::{
    ACCESS_TOKEN_TYPE, AuthServerOptions, ExchangeFault, FakeAuthServer, JWT_TOKEN_TYPE,
    OAuthClient, TOKEN_EXCHANGE_GRANT, TokenExchangeRecord,
};
use oauth_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const GATEWAY: (&str, &str) = ("gateway", "gateway-secret");
const UPSTREAM: &str = "https://tickets.example.com/mcp";

async fn server(options: AuthServerOptions) -> FakeAuthServer {
    FakeAuthServer::start(options.with_client(OAuthClient::confidential(GATEWAY.0, GATEWAY.1)))
        .await
        .unwrap()
}

/// Exchanges `subject` (of `subject_type`) for a token for [`UPSTREAM`], as the gateway.
async fn exchange(server: &FakeAuthServer, subject: &str, subject_type: &str) -> (u16, Value) {
    token(
        &server.token_endpoint(),
        &[
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("subject_token", subject),
            ("subject_token_type", subject_type),
            ("audience", "tickets"),
            ("resource", UPSTREAM),
        ],
        Some(GATEWAY),
    )
    .await
}

#[tokio::test]
async fn an_issued_token_is_exchanged_for_one_with_the_upstream_audience_and_the_same_subject() {
    let server = server(AuthServerOptions::new().with_subject("alice", ["dev"])).await;
    let (_, doc) = get_json(&server.metadata_url()).await;
    assert!(
        doc["grant_types_supported"]
            .as_array()
            .unwrap()
            .contains(&json!(TOKEN_EXCHANGE_GRANT))
    );
    let caller = server.mint_token("gateway-login", &["mcp:read"], Some("https://gw/mcp"));

    let (status, body) = exchange(&server, &caller, ACCESS_TOKEN_TYPE).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["issued_token_type"], ACCESS_TOKEN_TYPE);
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert!(body.get("refresh_token").is_none(), "{body}");
    let issued = body["access_token"].as_str().unwrap().to_owned();
    assert_ne!(issued, caller);

    let info = server.token_info(&issued).unwrap();
    assert_eq!(info.subject, "alice");
    assert_eq!(info.groups, ["dev"]);
    assert_eq!(info.resource.as_deref(), Some(UPSTREAM));
    assert_eq!(info.client_id, GATEWAY.0);
    assert_eq!(info.grant, "token_exchange");
    assert!(
        server.is_valid_token(&caller),
        "the caller's token stays valid"
    );

    let records: Vec<TokenExchangeRecord> = server.token_exchanges();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.client_id.as_deref(), Some(GATEWAY.0));
    assert_eq!(record.subject_token, caller);
    assert_eq!(
        record.subject_token_type.as_deref(),
        Some(ACCESS_TOKEN_TYPE)
    );
    assert_eq!(record.audience.as_deref(), Some("tickets"));
    assert_eq!(record.resource.as_deref(), Some(UPSTREAM));
    assert_eq!(record.scope, None);
    assert_eq!(record.subject.as_deref(), Some("alice"));
    assert_eq!(record.outcome, Ok(issued));
    assert_eq!(server.counters().token_exchange, 1);
    server.shutdown().await;
}

#[tokio::test]
async fn an_audience_alone_becomes_the_tokens_audience() {
    let server = server(AuthServerOptions::new()).await;
    let caller = server.mint_token("c", &[], None);
    let (status, body) = token(
        &server.token_endpoint(),
        &[
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("subject_token", &caller),
            ("subject_token_type", ACCESS_TOKEN_TYPE),
            ("audience", "tickets"),
            ("scope", "mcp:read"),
        ],
        Some(GATEWAY),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["scope"], "mcp:read");
    let info = server
        .token_info(body["access_token"].as_str().unwrap())
        .unwrap();
    assert_eq!(info.resource.as_deref(), Some("tickets"));
    assert_eq!(info.scopes, ["mcp:read"]);
    server.shutdown().await;
}

#[tokio::test]
async fn a_jwt_of_a_trusted_issuer_is_accepted_and_of_another_refused() {
    let idp = FakeAuthServer::start(
        AuthServerOptions::new()
            .with_jwt_access_tokens()
            .with_subject("bob", ["ops"]),
    )
    .await
    .unwrap();
    let caller = idp.mint_token("gateway-login", &[], Some("https://gw/mcp"));

    let trusting = server(AuthServerOptions::new().with_trusted_subject_issuer(idp.issuer())).await;
    let (status, body) = exchange(&trusting, &caller, JWT_TOKEN_TYPE).await;
    assert_eq!(status, 200, "{body}");
    let info = trusting
        .token_info(body["access_token"].as_str().unwrap())
        .unwrap();
    assert_eq!(info.subject, "bob");
    assert_eq!(info.groups, ["ops"]);

    let other = server(AuthServerOptions::new()).await;
    let (status, body) = exchange(&other, &caller, JWT_TOKEN_TYPE).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "invalid_grant");
    assert_eq!(
        other.token_exchanges()[0].outcome,
        Err("invalid_grant".to_owned())
    );
    for s in [idp, trusting, other] {
        s.shutdown().await;
    }
}

/// A token exchange form for `subject`, for [`UPSTREAM`].
fn base(subject: &str) -> Vec<(&'static str, &str)> {
    vec![
        ("grant_type", TOKEN_EXCHANGE_GRANT),
        ("subject_token", subject),
        ("subject_token_type", ACCESS_TOKEN_TYPE),
        ("resource", UPSTREAM),
    ]
}

#[tokio::test]
async fn bad_requests_are_refused_with_the_oauth_error_and_recorded() {
    let server = server(AuthServerOptions::new()).await;
    let caller = server.mint_token("c", &[], None);
    let endpoint = server.token_endpoint();
    let caller = caller.as_str();

    let (status, body) = token(&endpoint, &base(caller), Some((GATEWAY.0, "wrong"))).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );

    let mut no_type = base(caller);
    no_type.retain(|(k, _)| *k != "subject_token_type");
    let (status, body) = token(&endpoint, &no_type, Some(GATEWAY)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request"))
    );

    let mut no_target = base(caller);
    no_target.retain(|(k, _)| *k != "resource");
    let (status, body) = token(&endpoint, &no_target, Some(GATEWAY)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_target"))
    );

    let (status, body) = token(&endpoint, &base("unknown-token"), Some(GATEWAY)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    server.expire_access_tokens();
    let (status, body) = token(&endpoint, &base(caller), Some(GATEWAY)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    let outcomes: Vec<(Option<String>, Result<String, String>)> = server
        .token_exchanges()
        .into_iter()
        .map(|r| (r.client_id, r.outcome))
        .collect();
    let gw = || Some(GATEWAY.0.to_owned());
    assert_eq!(
        outcomes,
        [
            (None, Err("invalid_client".to_owned())),
            (gw(), Err("invalid_request".to_owned())),
            (gw(), Err("invalid_target".to_owned())),
            (gw(), Err("invalid_grant".to_owned())),
            (gw(), Err("invalid_grant".to_owned())),
        ]
    );
    assert_eq!(server.counters().token_errors, 5);
    server.shutdown().await;
}

#[tokio::test]
async fn faults_refuse_expire_early_omit_the_lifetime_and_revoke() {
    let server = server(AuthServerOptions::new()).await;
    let caller = server.mint_token("c", &[], None);

    server.set_exchange_fault(Some(ExchangeFault::Refuse));
    let (status, body) = exchange(&server, &caller, ACCESS_TOKEN_TYPE).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    server.set_exchange_fault(Some(ExchangeFault::ExpireEarly));
    let (status, body) = exchange(&server, &caller, ACCESS_TOKEN_TYPE).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["expires_in"], 3600, "it claims its usual lifetime");
    let early = body["access_token"].as_str().unwrap().to_owned();
    assert!(!server.is_valid_token(&early), "but is already expired");

    server.set_exchange_fault(Some(ExchangeFault::OmitExpiresIn));
    let (status, body) = exchange(&server, &caller, ACCESS_TOKEN_TYPE).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("expires_in").is_none(), "{body}");
    assert!(server.is_valid_token(body["access_token"].as_str().unwrap()));

    server.set_exchange_fault(None);
    let (_, body) = exchange(&server, &caller, ACCESS_TOKEN_TYPE).await;
    let exchanged = body["access_token"].as_str().unwrap().to_owned();
    assert!(server.is_valid_token(&exchanged));
    server.revoke_exchanged_tokens();
    assert!(!server.is_valid_token(&exchanged));
    assert!(
        server.is_valid_token(&caller),
        "only exchanged tokens are revoked"
    );
    assert_eq!(server.counters().token_exchange, 4);
    server.shutdown().await;
}

//! JWT access tokens of the fake authorization server (RFC 9068): claims, the published key
//! set and its rotation, minted tokens, introspection (RFC 7662) and the JWKS endpoint's
//! faults, driven with plain `reqwest` and checked with `jsonwebtoken`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod oauth_support;

use std::time::Duration;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation};
use mcp_testkit::{
    ACCESS_TOKEN_TYP, AccessTokenClaims, AuthServerOptions, FakeAuthServer, JwksFault, OAuthClient,
};
use oauth_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const RESOURCE: &str = "http://127.0.0.1:1/mcp";

/// `token`'s claims, verified with the server's published key set (`None`: it does not
/// verify with any published key).
async fn verified(server: &FakeAuthServer, token: &str) -> Option<Value> {
    let (status, set) = get_json(&server.jwks_uri()).await;
    assert_eq!(status, 200);
    let set: JwkSet = serde_json::from_value(set).unwrap();
    let header = jsonwebtoken::decode_header(token).ok()?;
    let key = DecodingKey::from_jwk(set.find(header.kid.as_deref()?)?).unwrap();
    let mut validation = Validation::new(header.alg);
    validation.set_audience(&[RESOURCE]);
    validation.set_issuer(&[server.issuer()]);
    jsonwebtoken::decode::<Value>(token, &key, &validation)
        .ok()
        .map(|t| t.claims)
}

#[tokio::test]
async fn a_login_gets_a_signed_jwt_for_the_resource_with_subject_groups_and_scope() {
    let options = AuthServerOptions::new()
        .with_jwt_access_tokens()
        .with_subject("alice", ["platform", "oncall"]);
    let server = FakeAuthServer::start(options).await.unwrap();
    let (_, metadata) = get_json(&server.metadata_url()).await;
    assert_eq!(metadata["jwks_uri"], server.jwks_uri());
    assert_eq!(
        metadata["introspection_endpoint"],
        server.introspection_endpoint()
    );
    let client = register_public(&server).await;
    let body = login(
        &server,
        &client,
        &[("scope", "mcp:read"), ("resource", RESOURCE)],
    )
    .await;
    let token = body["access_token"].as_str().unwrap();
    let header = jsonwebtoken::decode_header(token).unwrap();
    assert_eq!(header.typ.as_deref(), Some(ACCESS_TOKEN_TYP));
    assert_eq!(header.kid, Some(server.signing_key_id()));
    let claims = verified(&server, token).await.unwrap();
    assert_eq!(
        (
            &claims["sub"],
            &claims["aud"],
            &claims["scope"],
            &claims["groups"],
            &claims["client_id"]
        ),
        (
            &json!("alice"),
            &json!(RESOURCE),
            &json!("mcp:read"),
            &json!(["platform", "oncall"]),
            &json!(client)
        )
    );
    assert!(server.is_valid_token(token), "known by its JWT");
    assert_eq!(server.issued_access_tokens(), vec![token.to_owned()]);

    // Another person logs in.
    server.set_subject("bob", &[]);
    let body = login(&server, &client, &[("resource", RESOURCE)]).await;
    let claims = verified(&server, body["access_token"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(claims["sub"], "bob");
    assert!(claims.get("groups").is_none(), "{claims}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_rotated_out_key_is_no_longer_published() {
    let server = FakeAuthServer::start(AuthServerOptions::new().with_jwt_access_tokens())
        .await
        .unwrap();
    let before = server.mint_jwt(&AccessTokenClaims::new("alice").with_audience(RESOURCE));
    assert!(verified(&server, &before).await.is_some());
    let old = server.signing_key_id();
    let new = server.rotate_signing_key();
    assert_ne!(old, new);
    let after = server.mint_jwt(&AccessTokenClaims::new("alice").with_audience(RESOURCE));
    assert_eq!(jsonwebtoken::decode_header(&after).unwrap().kid, Some(new));
    assert!(verified(&server, &after).await.is_some());
    assert_eq!(
        verified(&server, &before).await,
        None,
        "the old key is gone"
    );
    assert_eq!(server.counters().jwks, 3);
    server.shutdown().await;
}

#[tokio::test]
async fn minted_tokens_carry_what_the_test_asks_for() {
    let server = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let expired = server.mint_jwt(
        &AccessTokenClaims::new("alice")
            .with_audience(RESOURCE)
            .with_expires_in(-120),
    );
    assert_eq!(verified(&server, &expired).await, None, "expired");
    assert!(!server.is_valid_token(&expired));
    let elsewhere = server.mint_jwt(
        &AccessTokenClaims::new("alice")
            .with_audience("http://127.0.0.1:2/mcp")
            .with_scopes(["mcp:read", "mcp:write"]),
    );
    assert_eq!(
        verified(&server, &elsewhere).await,
        None,
        "another audience"
    );
    let unsigned = server.mint_jwt(&AccessTokenClaims::new("alice").unsigned());
    assert!(unsigned.ends_with('.'), "{unsigned}");
    let header: Value = serde_json::from_slice(
        &base64::Engine::decode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            unsigned.split('.').next().unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(header["alg"], "none");
    server.shutdown().await;
}

#[tokio::test]
async fn introspection_answers_authenticated_clients_for_live_tokens() {
    let options = AuthServerOptions::new()
        .with_client(OAuthClient::confidential("gateway", "gateway-secret"))
        .with_subject("alice", ["platform"]);
    let server = FakeAuthServer::start(options).await.unwrap();
    let client = register_public(&server).await;
    let body = login(
        &server,
        &client,
        &[("scope", "mcp:read"), ("resource", RESOURCE)],
    )
    .await;
    let opaque = body["access_token"].as_str().unwrap();
    let endpoint = server.introspection_endpoint();
    let (status, answer) = token(
        &endpoint,
        &[("token", opaque)],
        Some(("gateway", "gateway-secret")),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            &answer["active"],
            &answer["sub"],
            &answer["aud"],
            &answer["scope"],
            &answer["groups"],
            &answer["iss"]
        ),
        (
            &json!(true),
            &json!("alice"),
            &json!(RESOURCE),
            &json!("mcp:read"),
            &json!(["platform"]),
            &json!(server.issuer())
        )
    );
    let (_, answer) = token(
        &endpoint,
        &[("token", "made-up")],
        Some(("gateway", "gateway-secret")),
    )
    .await;
    assert_eq!(answer, json!({"active": false}));
    let (status, answer) = token(&endpoint, &[("token", opaque)], Some(("gateway", "wrong"))).await;
    assert_eq!((status, &answer["error"]), (401, &json!("invalid_client")));
    server.expire_access_tokens();
    let (_, answer) = token(
        &endpoint,
        &[("token", opaque)],
        Some(("gateway", "gateway-secret")),
    )
    .await;
    assert_eq!(answer, json!({"active": false}));
    assert_eq!(server.counters().introspections, 4);
    server.shutdown().await;
}

#[tokio::test]
async fn the_key_set_endpoint_hangs_or_answers_garbage_on_demand() {
    let server = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    server.set_jwks_fault(Some(JwksFault::Garbage));
    let response = http().get(server.jwks_uri()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.json::<Value>().await.is_err(), "no JSON");
    server.set_jwks_fault(Some(JwksFault::Oversized(2 * 1024 * 1024)));
    let response = http().get(server.jwks_uri()).send().await.unwrap();
    assert_eq!(response.content_length(), Some(2 * 1024 * 1024));
    drop(response);
    server.set_jwks_fault(Some(JwksFault::Hang));
    let hung = tokio::time::timeout(
        Duration::from_millis(300),
        http().get(server.jwks_uri()).send(),
    )
    .await;
    assert!(hung.is_err(), "no answer");
    server.set_jwks_fault(None);
    let (status, set) = get_json(&server.jwks_uri()).await;
    assert_eq!(
        (status, set["keys"][0]["kid"].clone()),
        (200, json!(server.signing_key_id()))
    );
    server.shutdown().await;
}

//! Helpers shared by the OAuth fake tests (`tests/oauth*.rs`).
#![allow(
    dead_code,
    unreachable_pub,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; each test binary uses a different subset"
)]

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_testkit::FakeAuthServer;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub const REDIRECT: &str = "http://127.0.0.1:9/callback";
pub const VERIFIER: &str = "a-long-enough-code-verifier-with-43-characters-or-more-0123456789";

pub fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub async fn get_json(url: &str) -> (u16, Value) {
    let response = http().get(url).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// POST a token request; returns the status and JSON body.
pub async fn token(
    endpoint: &str,
    form: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> (u16, Value) {
    let mut request = http().post(endpoint).form(form);
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// GET `/authorize` with `params`; returns the status and the redirect's query.
pub async fn authorize(server: &str, params: &[(&str, &str)]) -> (u16, BTreeMap<String, String>) {
    let url = url::Url::parse_with_params(&format!("{server}/authorize"), params).unwrap();
    let response = http().get(url).send().await.unwrap();
    let status = response.status().as_u16();
    let query = response
        .headers()
        .get("location")
        .map(|l| {
            let location = url::Url::parse(l.to_str().unwrap()).unwrap();
            assert_eq!(location.path(), "/callback");
            location.query_pairs().into_owned().collect()
        })
        .unwrap_or_default();
    (status, query)
}

pub fn code_params<'a>(client_id: &'a str, challenge: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("state", "st-1"),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ]
}

pub async fn register_public(server: &FakeAuthServer) -> String {
    let response = http()
        .post(server.registration_endpoint())
        .json(&json!({
            "client_name": "tests",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["token_endpoint_auth_method"], "none");
    assert!(body.get("client_secret").is_none(), "{body}");
    body["client_id"].as_str().unwrap().to_owned()
}

/// A full code flow for a public client; returns the token response.
pub async fn login(server: &FakeAuthServer, client_id: &str, extra: &[(&str, &str)]) -> Value {
    let challenge = challenge(VERIFIER);
    let mut params = code_params(client_id, &challenge);
    params.extend_from_slice(extra);
    let (status, query) = authorize(&server.url(), &params).await;
    assert_eq!(status, 302);
    let code = query["code"].clone();
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("client_id", client_id),
    ];
    form.extend(extra.iter().filter(|(k, _)| *k == "resource").copied());
    let (status, body) = token(&server.token_endpoint(), &form, None).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// Parse a `WWW-Authenticate: Bearer k="v", ...` header.
pub fn challenge_params(header: &str) -> BTreeMap<String, String> {
    header
        .trim_start_matches("Bearer ")
        .split(", ")
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
        .collect()
}

pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

pub async fn post_init(url: &str, token: Option<&str>) -> reqwest::Response {
    let mut request = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INIT);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap()
}

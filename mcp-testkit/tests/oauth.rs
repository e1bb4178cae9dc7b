//! The fake OAuth servers, driven with plain `reqwest` (and an rmcp client for MCP).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_testkit::{
    AuthServerOptions, ClientAuthMethod, FakeAuthServer, FakeIdp, FakeProtectedMcpServer,
    ID_JAG_TOKEN_TYPE, ID_JAG_TYP, ID_TOKEN_TYPE, IdpOptions, IdpRejection, JWT_BEARER_GRANT,
    OAuthClient, ProtectedOptions, Scenario, TEST_EC_PRIVATE_KEY_PEM, TEST_EC_PUBLIC_KEY_PEM,
    TEST_RSA_PRIVATE_KEY_PEM, TEST_RSA_PUBLIC_KEY_PEM, TOKEN_EXCHANGE_GRANT, ToolSpec,
    WRONG_AUDIENCE,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const REDIRECT: &str = "http://127.0.0.1:9/callback";
const VERIFIER: &str = "a-long-enough-code-verifier-with-43-characters-or-more-0123456789";

fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn get_json(url: &str) -> (u16, Value) {
    let response = http().get(url).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// POST a token request; returns the status and JSON body.
async fn token(endpoint: &str, form: &[(&str, &str)], basic: Option<(&str, &str)>) -> (u16, Value) {
    let mut request = http().post(endpoint).form(form);
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// GET `/authorize` with `params`; returns the status and the redirect's query.
async fn authorize(server: &str, params: &[(&str, &str)]) -> (u16, BTreeMap<String, String>) {
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

fn code_params<'a>(client_id: &'a str, challenge: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("state", "st-1"),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ]
}

async fn register_public(server: &FakeAuthServer) -> String {
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
async fn login(server: &FakeAuthServer, client_id: &str, extra: &[(&str, &str)]) -> Value {
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

#[tokio::test]
async fn metadata_documents_describe_the_server() {
    let server = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let base = server.url();
    assert_eq!(server.issuer(), base);
    let (status, doc) = get_json(&server.metadata_url()).await;
    assert_eq!(status, 200);
    assert_eq!(doc["issuer"], base);
    assert_eq!(doc["authorization_endpoint"], format!("{base}/authorize"));
    assert_eq!(doc["token_endpoint"], format!("{base}/token"));
    assert_eq!(doc["registration_endpoint"], format!("{base}/register"));
    assert_eq!(doc["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        doc["scopes_supported"],
        json!(["mcp:read", "mcp:write", "offline_access"])
    );
    assert_eq!(
        doc["token_endpoint_auth_methods_supported"],
        json!([
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt",
            "none"
        ])
    );
    assert!(
        doc["grant_types_supported"]
            .as_array()
            .unwrap()
            .contains(&json!(JWT_BEARER_GRANT))
    );
    let (_, oidc) = get_json(&format!("{base}/.well-known/openid-configuration")).await;
    assert_eq!(oidc, doc);
    assert_eq!(server.counters().metadata, 2);
    server.shutdown().await;

    let options = AuthServerOptions::new()
        .without_registration()
        .without_openid_configuration()
        .with_issuer_override("http://127.0.0.1:1/elsewhere");
    let server = FakeAuthServer::start(options).await.unwrap();
    let (_, doc) = get_json(&server.metadata_url()).await;
    assert_eq!(doc["issuer"], "http://127.0.0.1:1/elsewhere");
    assert!(doc.get("registration_endpoint").is_none(), "{doc}");
    let (status, _) = get_json(&format!(
        "{}/.well-known/openid-configuration",
        server.url()
    ))
    .await;
    assert_eq!(status, 404);
    let response = http()
        .post(server.registration_endpoint())
        .json(&json!({"redirect_uris": [REDIRECT]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    server.shutdown().await;
}

#[tokio::test]
async fn registration_validates_redirect_uris_and_issues_secrets() {
    let server = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let bad = http()
        .post(server.registration_endpoint())
        .json(&json!({"redirect_uris": ["https://example.com/cb"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["error"], "invalid_redirect_uri");

    let confidential = http()
        .post(server.registration_endpoint())
        .json(&json!({"redirect_uris": [REDIRECT], "client_name": "c"}))
        .send()
        .await
        .unwrap();
    assert_eq!(confidential.status(), 201);
    let body: Value = confidential.json().await.unwrap();
    assert_eq!(body["token_endpoint_auth_method"], "client_secret_basic");
    assert_eq!(body["client_name"], "c");
    let id = body["client_id"].as_str().unwrap();
    let client = server.client(id).unwrap();
    assert_eq!(
        client.client_secret.as_deref(),
        body["client_secret"].as_str()
    );
    assert_eq!(client.redirect_uris, vec![REDIRECT.to_owned()]);

    let public = register_public(&server).await;
    assert_eq!(server.counters().registrations, 2);
    assert_eq!(server.clients().len(), 2);
    assert_eq!(
        server.client(&public).unwrap().auth_method,
        ClientAuthMethod::None
    );
    server.shutdown().await;
}

#[tokio::test]
async fn code_flow_with_pkce() {
    let server = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let client_id = register_public(&server).await;
    let challenge = challenge(VERIFIER);
    let mut params = code_params(&client_id, &challenge);
    params.push(("scope", "mcp:read"));
    params.push(("resource", "http://127.0.0.1:1/mcp"));
    let (status, query) = authorize(&server.url(), &params).await;
    assert_eq!(status, 302);
    assert_eq!(query["state"], "st-1");
    assert_eq!(query["iss"], server.issuer());
    assert_eq!(server.last_scope().as_deref(), Some("mcp:read"));
    assert_eq!(
        server.last_resource().as_deref(),
        Some("http://127.0.0.1:1/mcp")
    );

    // A wrong verifier is rejected, and burns the code (one-time use).
    let code = query["code"].as_str();
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", REDIRECT),
        (
            "code_verifier",
            "not-the-verifier-not-the-verifier-not-the-verifier",
        ),
        ("client_id", client_id.as_str()),
    ];
    let (status, body) = token(&server.token_endpoint(), &form, None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    form[3].1 = VERIFIER;
    let (status, body) = token(&server.token_endpoint(), &form, None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    // A fresh code with the right verifier works once.
    let body = login(&server, &client_id, &[("scope", "mcp:read")]).await;
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["scope"], "mcp:read");
    assert_eq!(body["expires_in"], 3600);
    let access = body["access_token"].as_str().unwrap();
    assert!(server.is_valid_token(access));
    assert!(!server.is_valid_token("made-up"));
    let info = server.token_info(access).unwrap();
    assert_eq!(info.client_id, client_id);
    assert_eq!(info.scopes, vec!["mcp:read".to_owned()]);
    assert_eq!(info.grant, "authorization_code");
    assert!(server.is_valid_refresh_token(body["refresh_token"].as_str().unwrap()));

    let counters = server.counters();
    assert_eq!(counters.authorize, 2);
    assert_eq!(counters.authorization_code, 3);
    assert_eq!(counters.token_errors, 2);
    server.shutdown().await;
}

#[tokio::test]
async fn authorize_rejects_bad_requests() {
    let server = FakeAuthServer::start(AuthServerOptions::new().with_client(
        OAuthClient::public("app").with_redirect_uri("http://127.0.0.1:1234/callback"),
    ))
    .await
    .unwrap();
    let url = server.url();
    let challenge = challenge(VERIFIER);
    let base = code_params("app", &challenge);
    let with = |k: &'static str, v: &'static str| {
        let mut p: Vec<(&str, &str)> = base.iter().filter(|(n, _)| *n != k).copied().collect();
        if !v.is_empty() {
            p.push((k, v));
        }
        p
    };

    // The registered loopback URI matches whatever the port.
    let (status, query) = authorize(&url, &base).await;
    assert_eq!(status, 302);
    assert!(query.contains_key("code"));

    let (_, query) = authorize(&url, &with("code_challenge_method", "plain")).await;
    assert_eq!(query["error"], "invalid_request");
    assert_eq!(query["state"], "st-1");
    let (_, query) = authorize(&url, &with("code_challenge_method", "")).await;
    assert_eq!(query["error"], "invalid_request");
    let (_, query) = authorize(&url, &with("code_challenge", "")).await;
    assert_eq!(query["error"], "invalid_request");
    let (_, query) = authorize(&url, &with("response_type", "token")).await;
    assert_eq!(query["error"], "unsupported_response_type");
    let (_, query) = authorize(&url, &with("scope", "admin")).await;
    assert_eq!(query["error"], "invalid_scope");

    // Client and redirect errors are not redirected.
    let (status, query) = authorize(&url, &with("redirect_uri", "https://evil.example/cb")).await;
    assert_eq!((status, query.len()), (400, 0));
    let (status, _) = authorize(&url, &with("redirect_uri", "http://127.0.0.1:1/other")).await;
    assert_eq!(status, 400);
    let (status, _) = authorize(&url, &with("client_id", "nobody")).await;
    assert_eq!(status, 400);

    server.set_deny_authorization(true);
    let (status, query) = authorize(&url, &base).await;
    assert_eq!(status, 302);
    assert_eq!(query["error"], "access_denied");
    assert_eq!(query["iss"], server.issuer());
    assert!(!query.contains_key("code"));
    assert_eq!(server.counters().authorize, 10);
    server.shutdown().await;
}

#[tokio::test]
async fn options_turn_off_iss_and_refresh_tokens() {
    let server = FakeAuthServer::start(
        AuthServerOptions::new()
            .without_iss_parameter()
            .without_refresh_tokens(),
    )
    .await
    .unwrap();
    let (_, doc) = get_json(&server.metadata_url()).await;
    assert_eq!(doc["authorization_response_iss_parameter_supported"], false);
    let client_id = register_public(&server).await;
    let challenge = challenge(VERIFIER);
    let (_, query) = authorize(&server.url(), &code_params(&client_id, &challenge)).await;
    assert!(
        query.contains_key("code") && !query.contains_key("iss"),
        "{query:?}"
    );
    let body = login(&server, &client_id, &[]).await;
    assert!(body.get("refresh_token").is_none(), "{body}");
    server.shutdown().await;
}

#[tokio::test]
async fn refresh_rotates_and_reuse_is_rejected() {
    let server = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let client_id = register_public(&server).await;
    let body = login(&server, &client_id, &[("scope", "mcp:read mcp:write")]).await;
    let first = body["refresh_token"].as_str().unwrap().to_owned();
    let refresh = |rt: String| {
        let endpoint = server.token_endpoint();
        let client_id = client_id.clone();
        async move {
            token(
                &endpoint,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &rt),
                    ("client_id", &client_id),
                ],
                None,
            )
            .await
        }
    };
    let (status, body) = refresh(first.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["scope"], "mcp:read mcp:write");
    let second = body["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(second, first);
    assert!(server.is_valid_token(body["access_token"].as_str().unwrap()));
    assert!(!server.is_valid_refresh_token(&first));

    let (status, body) = refresh(first).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    // Without rotation the same refresh token keeps working.
    server.set_rotation(false);
    for _ in 0..2 {
        let (status, body) = refresh(second.clone()).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.get("refresh_token").is_none(), "{body}");
    }

    // Injected failure: invalid_grant, and the token is gone.
    server.fail_next_refreshes(1);
    let (status, body) = refresh(second.clone()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(!server.is_valid_refresh_token(&second));

    // revoke_all kills access and refresh tokens.
    let body = login(&server, &client_id, &[]).await;
    let access = body["access_token"].as_str().unwrap();
    assert!(server.is_valid_token(access));
    server.revoke_all();
    assert!(!server.is_valid_token(access));
    let (status, _) = refresh(body["refresh_token"].as_str().unwrap().to_owned()).await;
    assert_eq!(status, 400);
    assert_eq!(server.counters().refresh_token, 6);
    server.shutdown().await;
}

fn client_assertion(client_id: &str, audience: &str, alg: jsonwebtoken::Algorithm) -> String {
    let key = match alg {
        jsonwebtoken::Algorithm::ES256 => {
            jsonwebtoken::EncodingKey::from_ec_pem(TEST_EC_PRIVATE_KEY_PEM.as_bytes()).unwrap()
        }
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(TEST_RSA_PRIVATE_KEY_PEM.as_bytes()).unwrap(),
    };
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": now, "exp": now + 300, "jti": format!("jti-{now}-{client_id}"),
    });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(alg), &claims, &key).unwrap()
}

#[tokio::test]
async fn client_credentials_with_secrets_and_private_key_jwt() {
    let options = AuthServerOptions::new()
        .with_client(OAuthClient::confidential("basic", "s1"))
        .with_client(
            OAuthClient::confidential("post", "s2")
                .with_auth_method(ClientAuthMethod::ClientSecretPost),
        )
        .with_client(OAuthClient::private_key_jwt("ec", TEST_EC_PUBLIC_KEY_PEM))
        .with_client(OAuthClient::private_key_jwt("rsa", TEST_RSA_PUBLIC_KEY_PEM))
        .with_client(OAuthClient::public("public"));
    let server = FakeAuthServer::start(options).await.unwrap();
    let endpoint = server.token_endpoint();
    let grant = ("grant_type", "client_credentials");
    let resource = ("resource", "http://127.0.0.1:1/mcp");

    let (status, body) = token(
        &endpoint,
        &[grant, ("scope", "mcp:read"), resource],
        Some(("basic", "s1")),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("refresh_token").is_none());
    let info = server
        .token_info(body["access_token"].as_str().unwrap())
        .unwrap();
    assert_eq!(info.client_id, "basic");
    assert_eq!(info.grant, "client_credentials");
    assert_eq!(info.resource.as_deref(), Some("http://127.0.0.1:1/mcp"));

    let (status, body) = token(
        &endpoint,
        &[grant, ("client_id", "post"), ("client_secret", "s2")],
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");

    let (status, body) = token(&endpoint, &[grant], Some(("basic", "wrong"))).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let (status, body) = token(&endpoint, &[grant, ("client_id", "public")], None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unauthorized_client"))
    );
    let (status, body) = token(&endpoint, &[grant, ("client_id", "basic")], None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );

    let assertion_type = (
        "client_assertion_type",
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
    );
    for (client, alg) in [
        ("ec", jsonwebtoken::Algorithm::ES256),
        ("rsa", jsonwebtoken::Algorithm::RS256),
    ] {
        let jwt = client_assertion(client, &server.issuer(), alg);
        let (status, body) = token(
            &endpoint,
            &[grant, assertion_type, ("client_assertion", &jwt)],
            None,
        )
        .await;
        assert_eq!(status, 200, "{client}: {body}");
        assert_eq!(
            server
                .token_info(body["access_token"].as_str().unwrap())
                .unwrap()
                .client_id,
            client
        );
    }
    // Audience may be the token endpoint too; a wrong audience or key is refused.
    let jwt = client_assertion("ec", &endpoint, jsonwebtoken::Algorithm::ES256);
    let (status, _) = token(
        &endpoint,
        &[grant, assertion_type, ("client_assertion", &jwt)],
        None,
    )
    .await;
    assert_eq!(status, 200);
    let jwt = client_assertion("ec", "http://127.0.0.1:1", jsonwebtoken::Algorithm::ES256);
    let (status, body) = token(
        &endpoint,
        &[grant, assertion_type, ("client_assertion", &jwt)],
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let jwt = client_assertion("rsa", &server.issuer(), jsonwebtoken::Algorithm::ES256);
    let (status, _) = token(
        &endpoint,
        &[grant, assertion_type, ("client_assertion", &jwt)],
        None,
    )
    .await;
    assert_eq!(status, 401);

    let counters = server.counters();
    assert_eq!(
        (counters.client_credentials, counters.token_errors),
        (10, 5)
    );
    server.shutdown().await;
}

/// Parse a `WWW-Authenticate: Bearer k="v", ...` header.
fn challenge_params(header: &str) -> BTreeMap<String, String> {
    header
        .trim_start_matches("Bearer ")
        .split(", ")
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
        .collect()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

async fn post_init(url: &str, token: Option<&str>) -> reqwest::Response {
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

#[tokio::test]
async fn protected_server_discovery_login_and_tools() {
    let auth = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let scenario = Scenario::new("protected")
        .with_tool(ToolSpec::echo("read"))
        .with_tool(ToolSpec::echo("write"));
    let options = ProtectedOptions::new()
        .with_scopes(["mcp:read", "mcp:write"])
        .with_challenge_scope("mcp:read")
        .with_tool_scope("write", "mcp:write");
    let mcp = FakeProtectedMcpServer::start(scenario, &auth, options)
        .await
        .unwrap();

    // 401 -> resource metadata -> authorization server metadata.
    let response = post_init(&mcp.url(), None).await;
    assert_eq!(response.status(), 401);
    let params = challenge_params(response.headers()["www-authenticate"].to_str().unwrap());
    assert_eq!(params["resource_metadata"], mcp.resource_metadata_url());
    assert_eq!(params["scope"], "mcp:read");
    let (_, resource) = get_json(&params["resource_metadata"]).await;
    assert_eq!(
        resource,
        json!({
            "resource": mcp.url(),
            "authorization_servers": [auth.url()],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp:read", "mcp:write"],
        })
    );
    let (_, suffixed) = get_json(&format!("{}/mcp", mcp.resource_metadata_url())).await;
    assert_eq!(suffixed, resource);
    let as_url = resource["authorization_servers"][0].as_str().unwrap();
    let (_, metadata) = get_json(&format!("{as_url}/.well-known/oauth-authorization-server")).await;
    assert_eq!(metadata["issuer"], auth.issuer());

    // Login bound to this resource, then MCP works with the token.
    let client_id = register_public(&auth).await;
    let body = login(
        &auth,
        &client_id,
        &[("scope", "mcp:read"), ("resource", &mcp.url())],
    )
    .await;
    let access = body["access_token"].as_str().unwrap().to_owned();
    assert_eq!(
        auth.token_info(&access).unwrap().resource.as_deref(),
        Some(mcp.url().as_str())
    );
    assert_eq!(post_init(&mcp.url(), Some("bogus")).await.status(), 401);
    assert_eq!(post_init(&mcp.url(), Some(&access)).await.status(), 200);

    let client = common::TestClient::default()
        .serve_http(&mcp.url(), Some(&access))
        .await
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2);
    common::call(&client, "read", json!({"a": 1})).await;
    // `write` needs mcp:write: 403 insufficient_scope.
    let raw = http()
        .post(mcp.url())
        .bearer_auth(&access)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"write","arguments":{}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 403);
    let params = challenge_params(raw.headers()["www-authenticate"].to_str().unwrap());
    assert_eq!(params["error"], "insufficient_scope");
    assert_eq!(params["scope"], "mcp:write");
    client.cancel().await.unwrap();

    // A token for another resource is refused; revocation applies at once.
    let other = auth.mint_token(&client_id, &["mcp:read"], Some("http://127.0.0.1:1/mcp"));
    let response = post_init(&mcp.url(), Some(&other)).await;
    assert_eq!(response.status(), 401);
    let params = challenge_params(response.headers()["www-authenticate"].to_str().unwrap());
    assert_eq!(params["error"], "invalid_token");
    auth.revoke_all();
    assert_eq!(post_init(&mcp.url(), Some(&access)).await.status(), 401);
    let counters = mcp.counters();
    assert_eq!(
        (counters.unauthorized, counters.forbidden, counters.metadata),
        (4, 1, 2)
    );
    assert_eq!(mcp.requests()[0].method, "initialize");
    mcp.shutdown().await;
    auth.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn tokens_expire_on_tokio_time() {
    let auth =
        FakeAuthServer::start(AuthServerOptions::new().with_token_lifetime(Duration::from_secs(2)))
            .await
            .unwrap();
    let mcp = FakeProtectedMcpServer::start(Scenario::new("e"), &auth, ProtectedOptions::new())
        .await
        .unwrap();
    let client_id = register_public(&auth).await;
    let body = login(&auth, &client_id, &[]).await;
    assert_eq!(body["expires_in"], 2);
    let access = body["access_token"].as_str().unwrap().to_owned();
    assert_eq!(post_init(&mcp.url(), Some(&access)).await.status(), 200);
    tokio::time::advance(Duration::from_secs(3)).await;
    assert!(!auth.is_valid_token(&access));
    assert!(auth.token_info(&access).unwrap().is_expired());
    assert_eq!(post_init(&mcp.url(), Some(&access)).await.status(), 401);

    // The refresh token outlives the access token.
    let (status, body) = token(
        &auth.token_endpoint(),
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", body["refresh_token"].as_str().unwrap()),
            ("client_id", &client_id),
        ],
        None,
    )
    .await;
    assert_eq!(status, 200);
    let fresh = body["access_token"].as_str().unwrap().to_owned();
    assert_eq!(post_init(&mcp.url(), Some(&fresh)).await.status(), 200);
    auth.expire_access_tokens();
    assert_eq!(post_init(&mcp.url(), Some(&fresh)).await.status(), 401);
    mcp.shutdown().await;
    auth.shutdown().await;
}

/// The IdP login: returns the token response (ID token, refresh token).
async fn idp_login(idp: &FakeIdp) -> Value {
    let challenge = challenge(VERIFIER);
    let mut params = code_params(mcp_testkit::DEFAULT_IDP_CLIENT_ID, &challenge);
    params.push(("scope", "openid offline_access"));
    params.push(("nonce", "n-1"));
    let (status, query) = authorize(&idp.issuer(), &params).await;
    assert_eq!(status, 302);
    assert_eq!(query["iss"], idp.issuer());
    let (status, body) = token(
        &idp.token_endpoint(),
        &[
            ("grant_type", "authorization_code"),
            ("code", &query["code"]),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ],
        Some((
            mcp_testkit::DEFAULT_IDP_CLIENT_ID,
            mcp_testkit::DEFAULT_IDP_CLIENT_SECRET,
        )),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn exchange(idp: &FakeIdp, id_token: &str, audience: &str, resource: &str) -> (u16, Value) {
    token(
        &idp.token_endpoint(),
        &[
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("requested_token_type", ID_JAG_TOKEN_TYPE),
            ("subject_token_type", ID_TOKEN_TYPE),
            ("subject_token", id_token),
            ("audience", audience),
            ("resource", resource),
            ("scope", "mcp:read"),
        ],
        Some((
            mcp_testkit::DEFAULT_IDP_CLIENT_ID,
            mcp_testkit::DEFAULT_IDP_CLIENT_SECRET,
        )),
    )
    .await
}

#[tokio::test]
async fn enterprise_login_token_exchange_and_jwt_bearer() {
    let idp = FakeIdp::start(IdpOptions::new()).await.unwrap();
    let auth = FakeAuthServer::start(
        AuthServerOptions::new()
            .with_trusted_idp(idp.issuer())
            .with_client(OAuthClient::confidential("mcp-client", "mcp-secret")),
    )
    .await
    .unwrap();
    idp.set_resource_client(auth.issuer(), "mcp-client");
    let mcp = FakeProtectedMcpServer::start(
        Scenario::new("ema").with_tool(ToolSpec::echo("e")),
        &auth,
        ProtectedOptions::new(),
    )
    .await
    .unwrap();

    let (_, oidc) = get_json(&format!(
        "{}/.well-known/openid-configuration",
        idp.issuer()
    ))
    .await;
    assert_eq!(oidc["issuer"], idp.issuer());
    assert_eq!(oidc["jwks_uri"], idp.jwks_uri());
    let (_, jwks) = get_json(&idp.jwks_uri()).await;
    let jwk = &jwks["keys"][0];

    // The ID token verifies with the published JWKS.
    let login = idp_login(&idp).await;
    let id_token = login["id_token"].as_str().unwrap();
    let key = jsonwebtoken::DecodingKey::from_rsa_components(
        jwk["n"].as_str().unwrap(),
        jwk["e"].as_str().unwrap(),
    )
    .unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&[mcp_testkit::DEFAULT_IDP_CLIENT_ID]);
    validation.set_issuer(&[idp.issuer()]);
    let claims = jsonwebtoken::decode::<Value>(id_token, &key, &validation)
        .unwrap()
        .claims;
    assert_eq!(claims["sub"], mcp_testkit::DEFAULT_SUBJECT);
    assert_eq!(claims["nonce"], "n-1");
    assert_eq!(
        jsonwebtoken::decode_header(id_token)
            .unwrap()
            .kid
            .as_deref(),
        Some(jwk["kid"].as_str().unwrap())
    );

    // Token exchange -> ID-JAG.
    let (status, body) = exchange(&idp, id_token, &auth.issuer(), &mcp.url()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["issued_token_type"], ID_JAG_TOKEN_TYPE);
    assert_eq!(body["token_type"], "N_A");
    assert_eq!(body["scope"], "mcp:read");
    let id_jag = body["access_token"].as_str().unwrap().to_owned();
    assert_eq!(
        jsonwebtoken::decode_header(&id_jag).unwrap().typ.as_deref(),
        Some(ID_JAG_TYP)
    );
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&[auth.issuer()]);
    let claims = jsonwebtoken::decode::<Value>(&id_jag, &key, &validation)
        .unwrap()
        .claims;
    assert_eq!(claims["client_id"], "mcp-client");
    assert_eq!(claims["resource"], mcp.url());
    let record = idp.last_exchange().unwrap();
    assert_eq!(record.audience.as_deref(), Some(auth.issuer().as_str()));

    // JWT-bearer grant at the authorization server -> a token the MCP server takes.
    let bearer = |assertion: String| {
        let endpoint = auth.token_endpoint();
        async move {
            token(
                &endpoint,
                &[("grant_type", JWT_BEARER_GRANT), ("assertion", &assertion)],
                Some(("mcp-client", "mcp-secret")),
            )
            .await
        }
    };
    let (status, body) = bearer(id_jag.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("refresh_token").is_none());
    let access = body["access_token"].as_str().unwrap();
    assert_eq!(auth.token_info(access).unwrap().grant, "jwt_bearer");
    assert_eq!(auth.last_resource(), Some(mcp.url()));
    assert_eq!(post_init(&mcp.url(), Some(access)).await.status(), 200);

    // An ID token is not an ID-JAG; wrong audience and invalid_grant modes.
    let (status, body) = bearer(id_token.to_owned()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    idp.set_rejection(Some(IdpRejection::WrongAudience));
    let (status, body) = exchange(&idp, id_token, &auth.issuer(), &mcp.url()).await;
    assert_eq!(status, 200);
    let wrong = body["access_token"].as_str().unwrap().to_owned();
    let claims = jsonwebtoken::dangerous::insecure_decode::<Value>(&wrong)
        .unwrap()
        .claims;
    assert_eq!(claims["aud"], WRONG_AUDIENCE);
    let (status, body) = bearer(wrong).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    idp.set_rejection(Some(IdpRejection::InvalidGrant));
    let (status, body) = exchange(&idp, id_token, &auth.issuer(), &mcp.url()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    idp.set_rejection(None);

    // A refresh token works as the subject, and refreshes give new ID tokens.
    let refresh = login["refresh_token"].as_str().unwrap();
    let (status, body) = token(
        &idp.token_endpoint(),
        &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
        Some((
            mcp_testkit::DEFAULT_IDP_CLIENT_ID,
            mcp_testkit::DEFAULT_IDP_CLIENT_SECRET,
        )),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["id_token"].is_string());

    let counters = idp.counters();
    assert_eq!(
        (
            counters.authorization_code,
            counters.token_exchange,
            counters.refresh_token
        ),
        (1, 3, 1)
    );
    assert_eq!(auth.counters().jwt_bearer, 3);
    mcp.shutdown().await;
    auth.shutdown().await;
    idp.shutdown().await;
}

#[tokio::test]
async fn jwt_bearer_needs_a_trusted_idp() {
    let idp = FakeIdp::start(IdpOptions::new()).await.unwrap();
    let auth =
        FakeAuthServer::start(AuthServerOptions::new().with_client(OAuthClient::public("c")))
            .await
            .unwrap();
    idp.set_resource_client(auth.issuer(), "c");
    let id_token = idp
        .mint_id_token(mcp_testkit::DEFAULT_IDP_CLIENT_ID)
        .unwrap();
    let (status, body) = exchange(&idp, &id_token, &auth.issuer(), "http://127.0.0.1:1/mcp").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = token(
        &auth.token_endpoint(),
        &[
            ("grant_type", JWT_BEARER_GRANT),
            ("assertion", body["access_token"].as_str().unwrap()),
            ("client_id", "c"),
        ],
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    auth.shutdown().await;
    idp.shutdown().await;
}

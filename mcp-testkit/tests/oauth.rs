//! The fake authorization server, driven with plain `reqwest`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod oauth_support;

use mcp_testkit::{
    AuthServerOptions, ClientAuthMethod, FakeAuthServer, JWT_BEARER_GRANT, MetadataFault,
    OAuthClient, TEST_EC_PRIVATE_KEY_PEM, TEST_EC_PUBLIC_KEY_PEM, TEST_RSA_PRIVATE_KEY_PEM,
    TEST_RSA_PUBLIC_KEY_PEM,
};
use oauth_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

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

/// A refreshed token is the login's: alice's refresh token keeps giving alice's tokens
/// after the server switched to bob, through rotations (with a short lifetime, and the
/// refresh logged by grant).
#[tokio::test]
async fn a_refresh_keeps_the_subject_of_the_login_it_came_from() {
    let server = FakeAuthServer::start(
        AuthServerOptions::new()
            .with_subject("alice", ["readers"])
            .with_token_lifetime(std::time::Duration::from_secs(5)),
    )
    .await
    .unwrap();
    let client_id = register_public(&server).await;
    let body = login(&server, &client_id, &[]).await;
    assert_eq!(body["expires_in"], 5, "{body}");
    let mut refresh_token = body["refresh_token"].as_str().unwrap().to_owned();
    server.set_subject("bob", &[]);
    let bob = login(&server, &client_id, &[]).await;
    let bob = server
        .token_info(bob["access_token"].as_str().unwrap())
        .unwrap();
    assert_eq!(bob.subject, "bob");
    for _ in 0..2 {
        let (status, body) = token(
            &server.token_endpoint(),
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh_token),
                ("client_id", &client_id),
            ],
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let info = server
            .token_info(body["access_token"].as_str().unwrap())
            .unwrap();
        assert_eq!(
            (info.subject.as_str(), info.groups.as_slice(), info.grant),
            ("alice", ["readers".to_owned()].as_slice(), "refresh_token")
        );
        let rotated = body["refresh_token"].as_str().unwrap().to_owned();
        assert!(!server.is_valid_refresh_token(&refresh_token));
        refresh_token = rotated;
    }
    let grants: Vec<String> = server
        .token_requests()
        .iter()
        .map(|r| r["grant_type"].clone())
        .collect();
    assert_eq!(
        grants,
        [
            "authorization_code",
            "authorization_code",
            "refresh_token",
            "refresh_token"
        ]
    );
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

#[tokio::test]
async fn injected_authorization_faults_and_request_logs() {
    let server = FakeAuthServer::start(
        AuthServerOptions::new()
            .with_state_override("forged")
            .with_iss_parameter_value("http://127.0.0.1:1/evil")
            .with_code_challenge_methods(["plain"]),
    )
    .await
    .unwrap();
    let (_, doc) = get_json(&server.metadata_url()).await;
    assert_eq!(doc["code_challenge_methods_supported"], json!(["plain"]));
    assert_eq!(doc["issuer"], server.url());

    let client_id = register_public(&server).await;
    let challenge = challenge(VERIFIER);
    let params = code_params(&client_id, &challenge);
    let (_, query) = authorize(&server.url(), &params).await;
    assert_eq!(query["state"], "forged");
    assert_eq!(query["iss"], "http://127.0.0.1:1/evil");
    let body = login(&server, &client_id, &[]).await;

    server.set_authorize_error(Some("temporarily_unavailable"));
    let (_, query) = authorize(&server.url(), &params).await;
    assert_eq!(query["error"], "temporarily_unavailable");
    assert!(!query.contains_key("code"));

    let authorizations = server.authorize_requests();
    assert_eq!(authorizations.len(), 3);
    assert_eq!(authorizations[0]["code_challenge"], challenge);
    assert_eq!(authorizations[0]["state"], "st-1");
    let tokens = server.token_requests();
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0]["code_verifier"], VERIFIER);
    assert_eq!(tokens[0]["grant_type"], "authorization_code");
    assert_eq!(
        server.issued_access_tokens(),
        vec![body["access_token"].as_str().unwrap().to_owned()]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_planted_secret_is_in_tokens_and_error_descriptions_not_in_codes() {
    const PLANTED: &str = "PLANTED-VALUE";
    let server = FakeAuthServer::start(AuthServerOptions::new().with_planted_secret(PLANTED))
        .await
        .unwrap();
    let client_id = register_public(&server).await;
    let challenge = challenge(VERIFIER);
    let (_, query) = authorize(&server.url(), &code_params(&client_id, &challenge)).await;
    assert!(!query["code"].contains(PLANTED), "{query:?}");
    let body = login(&server, &client_id, &[]).await;
    for field in ["access_token", "refresh_token"] {
        let value = body[field].as_str().unwrap();
        assert!(value.starts_with(PLANTED), "{field}: {value}");
    }
    assert!(server.is_valid_token(body["access_token"].as_str().unwrap()));

    // The token endpoint's errors and the authorization errors carry it.
    let (status, error) = token(
        &server.token_endpoint(),
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", "unknown"),
            ("client_id", &client_id),
        ],
        None,
    )
    .await;
    assert_eq!(
        (status, error["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert!(
        error["error_description"]
            .as_str()
            .unwrap()
            .contains(PLANTED),
        "{error}"
    );
    let mut params = code_params(&client_id, &challenge);
    params.push(("scope", "admin"));
    let (_, query) = authorize(&server.url(), &params).await;
    assert_eq!(query["error"], "invalid_scope");
    assert!(query["error_description"].contains(PLANTED), "{query:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn the_advertised_issuer_token_endpoint_and_iss_change_after_start() {
    let server = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let base = server.url();
    let under_a_path = format!("{base}/oauth");
    server.set_issuer_override(Some(&under_a_path));
    server.set_token_endpoint_override(Some("http://token.example/token"));
    assert_eq!(server.issuer(), under_a_path);
    assert_eq!(server.url(), base);
    let (_, doc) = get_json(&server.metadata_url()).await;
    assert_eq!(doc["issuer"], under_a_path);
    assert_eq!(doc["token_endpoint"], "http://token.example/token");
    // The token endpoint itself has not moved.
    assert_eq!(server.token_endpoint(), format!("{base}/token"));
    let client_id = register_public(&server).await;
    let challenge = challenge(VERIFIER);
    let params = code_params(&client_id, &challenge);
    let (_, query) = authorize(&base, &params).await;
    assert_eq!(query["iss"], under_a_path);
    login(&server, &client_id, &[]).await;

    // `iss` on its own; then everything back.
    server.set_iss_parameter_value(Some("http://127.0.0.1:1/evil"));
    let (_, query) = authorize(&base, &params).await;
    assert_eq!(query["iss"], "http://127.0.0.1:1/evil");
    server.set_iss_parameter_value(None);
    server.set_issuer_override(None);
    server.set_token_endpoint_override(None);
    let (_, query) = authorize(&base, &params).await;
    assert_eq!(query["iss"], base);
    let (_, doc) = get_json(&server.metadata_url()).await;
    assert_eq!(
        (doc["issuer"].as_str(), doc["token_endpoint"].as_str()),
        (Some(base.as_str()), Some(server.token_endpoint().as_str()))
    );
    server.shutdown().await;
}

#[tokio::test]
async fn metadata_faults_take_the_documents_place() {
    let target = "http://127.0.0.1:1/.well-known/oauth-authorization-server";
    let server = FakeAuthServer::start(
        AuthServerOptions::new().with_metadata_fault(MetadataFault::Redirect(target.to_owned())),
    )
    .await
    .unwrap();
    let openid = format!("{}/.well-known/openid-configuration", server.url());
    for url in [server.metadata_url(), openid] {
        let response = http().get(&url).send().await.unwrap();
        assert_eq!(response.status(), 307, "{url}");
        assert_eq!(response.headers()["location"], target);
    }
    assert_eq!(server.counters().metadata, 2);
    server.shutdown().await;

    let size = 2 * 1024 * 1024 + 3;
    let server = FakeAuthServer::start(
        AuthServerOptions::new().with_metadata_fault(MetadataFault::Oversized(size)),
    )
    .await
    .unwrap();
    let response = http().get(server.metadata_url()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.content_length(), Some(size as u64));
    let document: Value = response.json().await.unwrap();
    assert_eq!(document["x"].as_str().unwrap().len(), size - 8);
    server.shutdown().await;
}

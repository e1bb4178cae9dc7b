//! Enterprise-managed authorization: the fake IdP's login and token exchange, and the
//! JWT-bearer grant at the fake authorization server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod oauth_support;

use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeIdp, FakeProtectedMcpServer, ID_JAG_TOKEN_TYPE,
    ID_JAG_TYP, ID_TOKEN_TYPE, IdTokenAlg, IdTokenFault, IdpOptions, IdpRejection,
    JWT_BEARER_GRANT, OAuthClient, ProtectedOptions, Scenario, TEST_EC_KEY_ID, TEST_KEY_ID,
    TOKEN_EXCHANGE_GRANT, ToolSpec, WRONG_AUDIENCE,
};
use oauth_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

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

/// A forged ID-JAG (right shape, signed with a key the IdP does not hold) is refused by
/// the authorization server; an ID-JAG for another resource yields a token the MCP server
/// refuses.
#[tokio::test]
async fn forged_and_wrong_resource_id_jags_are_rejected() {
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
    let id_token = idp
        .mint_id_token(mcp_testkit::DEFAULT_IDP_CLIENT_ID)
        .unwrap();

    // The real ID-JAG's claims, signed with another key (ES256, the test EC key).
    let (status, body) = exchange(&idp, &id_token, &auth.issuer(), &mcp.url()).await;
    assert_eq!(status, 200, "{body}");
    let genuine = body["access_token"].as_str().unwrap();
    let claims = jsonwebtoken::dangerous::insecure_decode::<Value>(genuine)
        .unwrap()
        .claims;
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.typ = Some(ID_JAG_TYP.to_owned());
    let forged = jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_ec_pem(mcp_testkit::TEST_EC_PRIVATE_KEY_PEM.as_bytes())
            .unwrap(),
    )
    .unwrap();
    let (status, body) = bearer(forged).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    // The genuine one still works.
    let (status, _) = bearer(genuine.to_owned()).await;
    assert_eq!(status, 200);

    // An ID-JAG for another resource: the authorization server issues a token for that
    // resource, which this MCP server refuses.
    let (status, body) =
        exchange(&idp, &id_token, &auth.issuer(), "http://127.0.0.1:1/other").await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = bearer(body["access_token"].as_str().unwrap().to_owned()).await;
    assert_eq!(status, 200, "{body}");
    let access = body["access_token"].as_str().unwrap();
    assert_eq!(post_init(&mcp.url(), Some(access)).await.status(), 401);
    mcp.shutdown().await;
    auth.shutdown().await;
    idp.shutdown().await;
}

/// The ID token's header and claims, unverified.
fn parts(jwt: &str) -> (jsonwebtoken::Header, Value) {
    let header = jsonwebtoken::decode_header(jwt).unwrap();
    let claims = jsonwebtoken::dangerous::insecure_decode::<Value>(jwt)
        .unwrap()
        .claims;
    (header, claims)
}

/// Verifies `jwt` with the key of the IdP's JWKS its `kid` names.
async fn verify_with_jwks(idp: &FakeIdp, jwt: &str) -> Result<Value, String> {
    let (_, jwks) = get_json(&idp.jwks_uri()).await;
    let set: jsonwebtoken::jwk::JwkSet = serde_json::from_value(jwks).unwrap();
    let header = jsonwebtoken::decode_header(jwt).map_err(|e| e.to_string())?;
    let jwk = header
        .kid
        .as_deref()
        .and_then(|kid| set.find(kid))
        .ok_or("no such key")?;
    let key = jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap();
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_audience(&[mcp_testkit::DEFAULT_IDP_CLIENT_ID]);
    validation.set_issuer(&[idp.issuer()]);
    jsonwebtoken::decode::<Value>(jwt, &key, &validation)
        .map(|data| data.claims)
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn es256_id_tokens_faults_and_key_rotation() {
    let idp = FakeIdp::start(IdpOptions::new().with_id_token_alg(IdTokenAlg::Es256))
        .await
        .unwrap();
    let (_, oidc) = get_json(&format!(
        "{}/.well-known/openid-configuration",
        idp.issuer()
    ))
    .await;
    assert_eq!(
        oidc["id_token_signing_alg_values_supported"],
        json!(["ES256"])
    );
    let login = idp_login(&idp).await;
    let id_token = login["id_token"].as_str().unwrap();
    let (header, _) = parts(id_token);
    assert_eq!(header.alg, jsonwebtoken::Algorithm::ES256);
    assert_eq!(header.kid.as_deref(), Some(TEST_EC_KEY_ID));
    assert_eq!(
        verify_with_jwks(&idp, id_token).await.unwrap()["nonce"],
        "n-1"
    );
    let authorizations = idp.authorize_requests();
    assert_eq!(authorizations.len(), 1);
    assert_eq!(authorizations[0]["scope"], "openid offline_access");
    // The token exchange takes the ES256 ID token.
    let (status, body) = exchange(
        &idp,
        id_token,
        "http://127.0.0.1:1",
        "http://127.0.0.1:1/mcp",
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // Rotation: the JWKS and new tokens name the new key id.
    idp.rotate_key_id("rotated");
    let (_, jwks) = get_json(&idp.jwks_uri()).await;
    assert_eq!(jwks["keys"][0]["kid"], "rotated");
    assert_eq!(jwks["keys"][0]["kty"], "EC");
    let rotated = idp
        .mint_id_token(mcp_testkit::DEFAULT_IDP_CLIENT_ID)
        .unwrap();
    assert_eq!(parts(&rotated).0.kid.as_deref(), Some("rotated"));
    verify_with_jwks(&idp, &rotated).await.unwrap();

    // Faults, each until the next.
    idp.set_id_token_fault(Some(IdTokenFault::BadSignature));
    let bad = idp_login(&idp).await["id_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let error = verify_with_jwks(&idp, &bad).await.unwrap_err();
    assert!(error.contains("Signature"), "{error}");
    let (status, _) = exchange(&idp, &bad, "http://127.0.0.1:1", "http://127.0.0.1:1/mcp").await;
    assert_eq!(status, 400);
    idp.set_id_token_fault(Some(IdTokenFault::UnpublishedKeyId("nowhere".to_owned())));
    let unpublished = idp
        .mint_id_token(mcp_testkit::DEFAULT_IDP_CLIENT_ID)
        .unwrap();
    assert_eq!(parts(&unpublished).0.kid.as_deref(), Some("nowhere"));
    assert_eq!(
        verify_with_jwks(&idp, &unpublished).await.unwrap_err(),
        "no such key"
    );
    let elsewhere = format!("{}/", idp.issuer());
    idp.set_id_token_fault(Some(IdTokenFault::Issuer(elsewhere.clone())));
    let other = idp
        .mint_id_token(mcp_testkit::DEFAULT_IDP_CLIENT_ID)
        .unwrap();
    assert_eq!(parts(&other).1["iss"], elsewhere);
    assert!(verify_with_jwks(&idp, &other).await.is_err());
    idp.set_id_token_fault(None);
    let good = idp
        .mint_id_token(mcp_testkit::DEFAULT_IDP_CLIENT_ID)
        .unwrap();
    verify_with_jwks(&idp, &good).await.unwrap();
    assert_eq!(idp.counters().jwks, 7);
    idp.shutdown().await;
}

#[tokio::test]
async fn unsigned_id_tokens_have_no_key() {
    let idp = FakeIdp::start(IdpOptions::new().with_id_token_alg(IdTokenAlg::None))
        .await
        .unwrap();
    let login = idp_login(&idp).await;
    let id_token = login["id_token"].as_str().unwrap();
    assert!(id_token.ends_with('.'), "{id_token}");
    let header = id_token.split('.').next().unwrap();
    let header: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, header).unwrap(),
    )
    .unwrap();
    assert_eq!(header["alg"], "none");
    let (_, jwks) = get_json(&idp.jwks_uri()).await;
    assert_eq!(jwks, json!({"keys": []}));
    let (status, _) = exchange(
        &idp,
        id_token,
        "http://127.0.0.1:1",
        "http://127.0.0.1:1/mcp",
    )
    .await;
    assert_eq!(status, 400);
    idp.shutdown().await;

    // The default: RS256 under the RSA key's id.
    let idp = FakeIdp::start(IdpOptions::new()).await.unwrap();
    let id_token = idp
        .mint_id_token(mcp_testkit::DEFAULT_IDP_CLIENT_ID)
        .unwrap();
    assert_eq!(parts(&id_token).0.kid.as_deref(), Some(TEST_KEY_ID));
    verify_with_jwks(&idp, &id_token).await.unwrap();
    idp.shutdown().await;
}

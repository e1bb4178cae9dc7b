//! rmcp's own OAuth client against the fake OAuth servers: the interop a client built
//! on rmcp (like mcp-auth) relies on.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use mcp_testkit::{
    AuthServerOptions, DEFAULT_IDP_CLIENT_ID, DEFAULT_IDP_CLIENT_SECRET, FakeAuthServer, FakeIdp,
    FakeProtectedMcpServer, IdpOptions, OAuthClient, ProtectedOptions, Scenario,
    TEST_EC_PRIVATE_KEY_PEM, TEST_EC_PUBLIC_KEY_PEM, ToolSpec,
};
use pretty_assertions::assert_eq;
use rmcp::ServiceExt;
use rmcp::transport::auth::OAuthState;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{
    AuthClient, AuthorizationRequest, ClientCredentialsConfig, JwtSigningAlgorithm,
    StreamableHttpClientTransport,
};
use serde_json::json;

const REDIRECT: &str = "http://127.0.0.1:9/callback";

fn scenario() -> Scenario {
    Scenario::new("protected").with_tool(ToolSpec::echo("echo"))
}

async fn connect_with(manager: rmcp::transport::AuthorizationManager, url: &str) -> common::Client {
    let client = AuthClient::new(reqwest::Client::new(), manager);
    let transport = StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
    );
    common::TestClient::default()
        .serve(transport)
        .await
        .unwrap()
}

#[tokio::test]
async fn rmcp_login_registers_authorizes_and_refreshes_after_expiry() {
    let auth = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let mcp = FakeProtectedMcpServer::start(
        scenario(),
        &auth,
        ProtectedOptions::new().with_scopes(["mcp:read"]),
    )
    .await
    .unwrap();

    let mut state = OAuthState::new(mcp.url(), None).await.unwrap();
    state
        .start_authorization(AuthorizationRequest::new(REDIRECT).with_client_name("tests"))
        .await
        .unwrap();
    let url = state.get_authorization_url().await.unwrap();
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = no_redirects.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 302);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    state.handle_callback_url(&location).await.unwrap();
    let manager = state.into_authorization_manager().unwrap();

    // rmcp registered dynamically, sent PKCE S256 and the resource.
    let counters = auth.counters();
    assert_eq!(
        (
            counters.registrations,
            counters.authorize,
            counters.authorization_code
        ),
        (1, 1, 1)
    );
    assert_eq!(auth.last_resource(), Some(mcp.url()));

    let client = connect_with(manager, &mcp.url()).await;
    common::call(&client, "echo", json!({"n": 1})).await;

    // After expiry, AuthClient refreshes once on the 401 and carries on.
    auth.expire_access_tokens();
    let before = mcp.counters().unauthorized;
    common::call(&client, "echo", json!({"n": 2})).await;
    assert_eq!(auth.counters().refresh_token, 1);
    assert!(mcp.counters().unauthorized > before);
    client.cancel().await.unwrap();
    mcp.shutdown().await;
    auth.shutdown().await;
}

#[tokio::test]
async fn rmcp_client_credentials_with_private_key_jwt() {
    let auth = FakeAuthServer::start(AuthServerOptions::new().with_client(
        OAuthClient::private_key_jwt("robot", TEST_EC_PUBLIC_KEY_PEM),
    ))
    .await
    .unwrap();
    let mcp = FakeProtectedMcpServer::start(scenario(), &auth, ProtectedOptions::new())
        .await
        .unwrap();
    let mut state = OAuthState::new(mcp.url(), None).await.unwrap();
    state
        .authenticate_client_credentials(ClientCredentialsConfig::PrivateKeyJwt {
            client_id: "robot".to_owned(),
            signing_key: TEST_EC_PRIVATE_KEY_PEM.as_bytes().to_vec(),
            signing_algorithm: JwtSigningAlgorithm::ES256,
            token_endpoint_audience: None,
            scopes: vec!["mcp:read".to_owned()],
            resource: Some(mcp.url()),
        })
        .await
        .unwrap();
    assert_eq!(auth.counters().client_credentials, 1);
    let client = connect_with(state.into_authorization_manager().unwrap(), &mcp.url()).await;
    common::call(&client, "echo", json!({})).await;
    client.cancel().await.unwrap();
    mcp.shutdown().await;
    auth.shutdown().await;
}

#[tokio::test]
async fn rmcp_enterprise_exchange_against_the_fake_idp() {
    let idp = FakeIdp::start(IdpOptions::new()).await.unwrap();
    let auth = FakeAuthServer::start(
        AuthServerOptions::new()
            .with_trusted_idp(idp.issuer())
            .with_client(OAuthClient::confidential("mcp-client", "mcp-secret")),
    )
    .await
    .unwrap();
    idp.set_resource_client(auth.issuer(), "mcp-client");
    let mcp = FakeProtectedMcpServer::start(scenario(), &auth, ProtectedOptions::new())
        .await
        .unwrap();

    let id_token = idp.mint_id_token(DEFAULT_IDP_CLIENT_ID).unwrap();
    let http = rmcp::transport::auth::default_oauth_http_client().unwrap();
    let resource = mcp.url();
    let token = EmaExchangeRequest::new_with_id_token(
        EmaAuthorizationServer::new(idp.issuer(), idp.token_endpoint(), DEFAULT_IDP_CLIENT_ID)
            .with_client_authentication(EmaClientAuthentication::ClientSecretBasic(
                oauth2::ClientSecret::new(DEFAULT_IDP_CLIENT_SECRET.to_owned()),
            )),
        EmaAuthorizationServer::new(auth.issuer(), auth.token_endpoint(), "mcp-client")
            .with_client_authentication(EmaClientAuthentication::ClientSecretPost(
                oauth2::ClientSecret::new("mcp-secret".to_owned()),
            )),
        &resource,
        &id_token,
    )
    .with_scopes(["mcp:read"])
    .exchange(&http, &http)
    .await
    .unwrap();
    let access = token.access_token.secret();
    assert!(auth.is_valid_token(access));
    assert_eq!(
        auth.token_info(access).unwrap().scopes,
        vec!["mcp:read".to_owned()]
    );
    assert_eq!(
        (idp.counters().token_exchange, auth.counters().jwt_bearer),
        (1, 1)
    );
    let client = common::TestClient::default()
        .serve_http(&mcp.url(), Some(access))
        .await
        .unwrap();
    common::call(&client, "echo", json!({})).await;
    client.cancel().await.unwrap();
    mcp.shutdown().await;
    auth.shutdown().await;
    idp.shutdown().await;
}

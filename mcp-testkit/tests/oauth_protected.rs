//! The protected MCP server in front of the fake authorization server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;
mod oauth_support;

use std::time::Duration;

use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, MetadataFault, ProtectedOptions,
    Scenario, ToolSpec,
};
use oauth_support::*;
use pretty_assertions::assert_eq;
use serde_json::json;

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

#[tokio::test]
async fn without_resource_metadata_the_challenge_is_bare() {
    let auth = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let mcp = FakeProtectedMcpServer::start(
        Scenario::new("old"),
        &auth,
        ProtectedOptions::new().without_resource_metadata(),
    )
    .await
    .unwrap();
    let response = post_init(&mcp.url(), None).await;
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let (status, _) = get_json(&mcp.resource_metadata_url()).await;
    assert_eq!(status, 404);
    let token = auth.mint_token("anyone", &[], None);
    assert_eq!(post_init(&mcp.url(), Some(&token)).await.status(), 200);
    assert_eq!(mcp.counters().metadata, 0);
    mcp.shutdown().await;
    auth.shutdown().await;
}

#[tokio::test]
async fn the_authorization_server_can_share_the_mcp_servers_origin() {
    let auth = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let own = format!("http://{}", auth.addr());
    let mcp = FakeProtectedMcpServer::start(
        Scenario::new("one-origin").with_tool(ToolSpec::echo("echo")),
        &auth,
        ProtectedOptions::new().with_same_origin_auth_server(),
    )
    .await
    .unwrap();
    let origin = format!("http://{}", mcp.addr());
    assert_eq!(auth.url(), origin);
    assert_eq!(auth.issuer(), origin);
    assert_eq!(auth.token_endpoint(), format!("{origin}/token"));
    assert_eq!(mcp.url(), format!("{origin}/mcp"));

    // Resource metadata and authorization server metadata, both on the MCP origin.
    let (_, resource) = get_json(&mcp.resource_metadata_url()).await;
    assert_eq!(resource["authorization_servers"], json!([origin]));
    let (status, doc) = get_json(&auth.metadata_url()).await;
    assert_eq!(status, 200);
    assert!(auth.metadata_url().starts_with(&origin));
    assert_eq!(doc["issuer"], origin);
    assert_eq!(doc["authorization_endpoint"], format!("{origin}/authorize"));
    assert_eq!(doc["token_endpoint"], format!("{origin}/token"));
    assert_eq!(doc["registration_endpoint"], format!("{origin}/register"));
    // The server's own listener answers too, with the same document.
    let (_, again) = get_json(&format!("{own}/.well-known/oauth-authorization-server")).await;
    assert_eq!(again, doc);

    // A login through the MCP origin gives a token the MCP endpoint takes.
    let client_id = register_public(&auth).await;
    let body = login(&auth, &client_id, &[("resource", &mcp.url())]).await;
    let access = body["access_token"].as_str().unwrap();
    assert_eq!(post_init(&mcp.url(), Some(access)).await.status(), 200);
    assert_eq!(auth.counters().authorization_code, 1);
    mcp.shutdown().await;
    auth.shutdown().await;
}

#[tokio::test]
async fn a_metadata_fault_takes_the_resource_metadatas_place() {
    let auth = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let target = "http://127.0.0.1:1/.well-known/oauth-protected-resource";
    let mcp = FakeProtectedMcpServer::start(
        Scenario::new("redirecting"),
        &auth,
        ProtectedOptions::new().with_metadata_fault(MetadataFault::Redirect(target.to_owned())),
    )
    .await
    .unwrap();
    let suffixed = format!("{}/mcp", mcp.resource_metadata_url());
    for url in [mcp.resource_metadata_url(), suffixed] {
        let response = http().get(&url).send().await.unwrap();
        assert_eq!(response.status(), 307, "{url}");
        assert_eq!(response.headers()["location"], target);
    }
    assert_eq!(mcp.counters().metadata, 2);
    mcp.shutdown().await;
    auth.shutdown().await;
}

//! The enterprise IdP built from configuration (`EnterpriseIdp::from_config`): the one
//! translation every host uses, so the login listens on the catalog's callback port.

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

use std::sync::Arc;

use mcp_auth::{AuthStatus, EnterpriseIdp, HeadlessAgent, MemoryStore, UserAgent};
use mcp_catalog::EmaConfig;
use mcp_testkit::{FakeIdp, IdTokenAlg, IdpOptions, OAuthClient};
use pretty_assertions::assert_eq;

/// A port free a moment ago on loopback.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_idp_login_listens_on_the_configured_callback_port() {
    let fake = FakeIdp::start(
        IdpOptions::new()
            .with_client(OAuthClient::public("idp-client"))
            .with_id_token_alg(IdTokenAlg::Rs256),
    )
    .await
    .unwrap();
    let port = free_port();
    let ema = EmaConfig::new(fake.issuer(), "idp-client");
    let idp =
        EnterpriseIdp::from_config(&ema, Some(port), "host-app", Arc::new(MemoryStore::new()))
            .unwrap();
    assert_eq!(idp.settings().client_name, "host-app");

    let pending = idp.begin_login().await.unwrap();
    let redirect = url::Url::parse(pending.redirect_uri()).unwrap();
    assert_eq!(redirect.port(), Some(port), "{redirect}");
    HeadlessAgent::new()
        .open(pending.authorization_url())
        .await
        .unwrap();
    pending.complete().await.unwrap();
    assert_eq!(idp.status().await, AuthStatus::OAuth);
    let query = fake.authorize_requests()[0].clone();
    assert_eq!(query["redirect_uri"], redirect.as_str());
    assert_eq!(query["client_id"], "idp-client");
}

#[tokio::test]
async fn without_a_configured_port_the_login_picks_one() {
    let fake = FakeIdp::start(IdpOptions::new().with_client(OAuthClient::public("idp-client")))
        .await
        .unwrap();
    let ema = EmaConfig::new(fake.issuer(), "idp-client");
    let idp =
        EnterpriseIdp::from_config(&ema, None, "host-app", Arc::new(MemoryStore::new())).unwrap();
    assert_eq!(idp.settings().callback_port, None);
    let pending = idp.begin_login().await.unwrap();
    let redirect = url::Url::parse(pending.redirect_uri()).unwrap();
    assert!(redirect.port().is_some_and(|p| p != 0), "{redirect}");
}

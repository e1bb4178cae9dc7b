//! The enterprise IdP login of enterprise-managed authorization: OpenID Connect with PKCE,
//! ID token validation, and the grant it yields for MCP servers.

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    AuthError, AuthStatus, CredentialStore, EnterpriseIdp, HeadlessAgent, MemoryStore,
    OAuthSettings, StoreKey, UserAgent,
};
use mcp_testkit::{FakeIdp, IdTokenAlg, IdTokenFault, IdpOptions, OAuthClient};
use pretty_assertions::assert_eq;

/// The testkit's IdP, where this host is the public client `idp-client`.
async fn fake_idp(alg: IdTokenAlg) -> FakeIdp {
    FakeIdp::start(
        IdpOptions::new()
            .with_client(OAuthClient::public("idp-client"))
            .with_id_token_alg(alg),
    )
    .await
    .unwrap()
}

async fn idp(alg: IdTokenAlg) -> (FakeIdp, Arc<MemoryStore>, EnterpriseIdp) {
    let fake = fake_idp(alg).await;
    let store = Arc::new(MemoryStore::new());
    let idp = EnterpriseIdp::new(
        fake.issuer(),
        "idp-client",
        OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
        store.clone(),
    )
    .unwrap();
    (fake, store, idp)
}

async fn log_in(idp: &EnterpriseIdp) -> Result<(), AuthError> {
    let pending = idp.begin_login().await?;
    HeadlessAgent::new()
        .open(pending.authorization_url())
        .await?;
    pending.complete().await
}

#[tokio::test]
async fn the_idp_login_stores_a_validated_id_token_and_yields_grants() {
    let (fake, store, idp) = idp(IdTokenAlg::Rs256).await;
    assert_eq!(idp.status().await, AuthStatus::LoginRequired);
    log_in(&idp).await.unwrap();
    assert_eq!(idp.status().await, AuthStatus::OAuth);
    let query = fake.authorize_requests()[0].clone();
    assert_eq!(query["scope"], "openid offline_access");
    assert_eq!(query["client_id"], "idp-client");
    assert_eq!(query["code_challenge_method"], "S256");

    let key = StoreKey::enterprise_idp(&fake.issuer());
    let record = store.load(&key).await.unwrap().unwrap();
    let grant = idp.grant("mcp-client").await.unwrap();
    assert!(!grant.subject_is_refresh_token);
    assert_eq!(Some(&grant.id_token), record.access_token.as_ref());
    assert_eq!(grant.idp_token_endpoint, fake.token_endpoint());
    assert_eq!(grant.client_id, "mcp-client");

    // Once the ID token is stale, the IdP refresh token becomes the exchange subject.
    let mut stale = record.clone();
    stale.expires_at = Some(1);
    store.save(&key, &stale).await.unwrap();
    let grant = idp.grant("mcp-client").await.unwrap();
    assert!(grant.subject_is_refresh_token);
    assert_eq!(Some(&grant.id_token), record.refresh_token.as_ref());
}

#[tokio::test]
async fn an_unsigned_id_token_is_rejected_and_nothing_is_stored() {
    let (_fake, _store, idp) = idp(IdTokenAlg::None).await;
    let err = log_in(&idp).await.unwrap_err();
    assert!(matches!(err, AuthError::InvalidIdToken { .. }), "{err:?}");
    assert_eq!(idp.status().await, AuthStatus::LoginRequired);
    assert!(
        idp.grant("mcp-client")
            .await
            .unwrap_err()
            .is_login_required()
    );
}

#[tokio::test]
async fn an_id_token_from_another_issuer_is_rejected() {
    let (fake, _store, idp) = idp(IdTokenAlg::Es256).await;
    // The metadata names the real issuer; only the token's `iss` differs.
    fake.set_id_token_fault(Some(IdTokenFault::Issuer(format!("{}/", fake.issuer()))));
    let err = log_in(&idp).await.unwrap_err();
    assert!(
        matches!(err, AuthError::InvalidIdToken { reason, .. } if reason.contains("issuer")),
        "{err:?}"
    );
    assert_eq!(idp.status().await, AuthStatus::LoginRequired);
}

#[tokio::test]
async fn the_id_token_signature_is_checked_against_the_idp_jwks() {
    let (fake, _store, idp) = idp(IdTokenAlg::Es256).await;
    // mcp-auth caches key sets per JWKS URI for the whole process: key ids that no other
    // test uses keep a set cached for a reused port from answering for this IdP.
    fake.rotate_key_id("signature-test-1");
    fake.set_id_token_fault(Some(IdTokenFault::BadSignature));
    let err = log_in(&idp).await.unwrap_err();
    assert!(
        matches!(err, AuthError::InvalidIdToken { reason, .. } if reason.contains("signature")),
        "{err:?}"
    );
    assert_eq!(idp.status().await, AuthStatus::LoginRequired);
    assert_eq!(fake.counters().jwks, 1);

    // A good token: the cached key set does.
    fake.set_id_token_fault(None);
    log_in(&idp).await.unwrap();
    assert_eq!(fake.counters().jwks, 1);

    // The IdP rotates its key id: the unknown `kid` fetches the set once more.
    fake.rotate_key_id("signature-test-2");
    log_in(&idp).await.unwrap();
    assert_eq!(fake.counters().jwks, 2);

    // A key the IdP does not publish at all, so soon after a read for an unknown key:
    // refused without another fetch (made-up key ids cost at most one read per interval).
    fake.set_id_token_fault(Some(IdTokenFault::UnpublishedKeyId(
        "signature-test-3".to_owned(),
    )));
    let err = log_in(&idp).await.unwrap_err();
    assert!(
        matches!(err, AuthError::InvalidIdToken { reason, .. } if reason.contains("JWKS")),
        "{err:?}"
    );
    assert_eq!(fake.counters().jwks, 2);
}

/// `logout --enterprise` in one process stops an enterprise login still waiting for its
/// browser in another: two stores on one credentials file stand for the two processes.
#[tokio::test]
async fn a_logout_elsewhere_stops_a_pending_login_from_storing_anything() {
    let fake = fake_idp(IdTokenAlg::Rs256).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("credentials.json");
    let process = || {
        EnterpriseIdp::new(
            fake.issuer(),
            "idp-client",
            OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
            Arc::new(mcp_auth::FileStore::new(&file)),
        )
        .unwrap()
    };
    let (waiting, other) = (process(), process());
    log_in(&waiting).await.unwrap();

    let pending = waiting.begin_login().await.unwrap();
    other.logout().await.unwrap();
    HeadlessAgent::new()
        .open(pending.authorization_url())
        .await
        .unwrap();
    let err = pending.complete().await.unwrap_err();
    assert!(err.to_string().contains("logout happened"), "{err}");
    assert_eq!(waiting.status().await, AuthStatus::LoginRequired);
    assert_eq!(other.status().await, AuthStatus::LoginRequired);

    // A login begun after the logout is not stopped by it.
    log_in(&waiting).await.unwrap();
    assert_eq!(other.status().await, AuthStatus::OAuth);
}

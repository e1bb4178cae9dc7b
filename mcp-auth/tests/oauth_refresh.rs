//! Refresh: before expiry, single flight, `invalid_grant`, adoption of a token another
//! process refreshed, and rotating refresh tokens under a race between processes.

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    AuthStatus, CredentialStore, FileStore, HeadlessAgent, MemoryStore, OAuthCredentials,
    OAuthSettings, login,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario,
};
use pretty_assertions::assert_eq;

/// The testkit's authorization server and an MCP server behind it, for one test.
struct Fake {
    auth: FakeAuthServer,
    mcp: FakeProtectedMcpServer,
}

impl Fake {
    async fn start(token_lifetime: Duration) -> Self {
        let auth =
            FakeAuthServer::start(AuthServerOptions::new().with_token_lifetime(token_lifetime))
                .await
                .unwrap();
        let mcp =
            FakeProtectedMcpServer::start(Scenario::new("tickets"), &auth, ProtectedOptions::new())
                .await
                .unwrap();
        Self { auth, mcp }
    }
}

const HOUR: Duration = Duration::from_secs(3600);

fn creds(fake: &Fake, store: Arc<dyn CredentialStore>) -> OAuthCredentials {
    OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        fake.mcp.url(),
        OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
        store,
    )
}

/// Logged in with a token that expires in 10 s, inside the refresh margin; later tokens
/// last an hour.
async fn logged_in(store: Arc<dyn CredentialStore>) -> (Fake, OAuthCredentials) {
    let fake = Fake::start(Duration::from_secs(10)).await;
    let creds = creds(&fake, store);
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    fake.auth.set_token_lifetime(HOUR);
    (fake, creds)
}

#[tokio::test]
async fn a_token_about_to_expire_is_refreshed_and_persisted_before_use() {
    let store = Arc::new(MemoryStore::new());
    let (fake, creds) = logged_in(store.clone()).await;
    let first = store.load(creds.store_key()).await.unwrap().unwrap();
    let token = creds.access_token().await.unwrap();
    // The second token the server issued: the refresh's.
    assert_eq!(
        Some(token.expose()),
        fake.auth.issued_access_tokens().get(1).map(String::as_str)
    );
    assert_eq!(fake.auth.counters().refresh_token, 1);
    let record = store.load(creds.store_key()).await.unwrap().unwrap();
    assert_eq!(record.access_token, Some(token));
    let stored = record.refresh_token.as_ref().unwrap().expose().to_owned();
    assert_ne!(
        Some(stored.as_str()),
        first.refresh_token.as_ref().map(|s| s.expose())
    );
    // The rotated-out refresh token is dead at the server; the stored one is alive.
    assert_eq!(fake.auth.valid_refresh_tokens(), vec![stored]);
    assert!(
        !fake
            .auth
            .is_valid_refresh_token(first.refresh_token.unwrap().expose())
    );
}

#[tokio::test]
async fn a_fresh_token_is_used_without_refreshing() {
    let fake = Fake::start(HOUR).await;
    let creds = creds(&fake, Arc::new(MemoryStore::new()));
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    for _ in 0..3 {
        assert_eq!(
            creds.access_token().await.unwrap().expose(),
            fake.auth.issued_access_tokens()[0]
        );
    }
    assert_eq!(fake.auth.issued_access_tokens().len(), 1);
    assert_eq!(fake.auth.counters().refresh_token, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_callers_share_one_refresh() {
    let (fake, creds) = logged_in(Arc::new(MemoryStore::new())).await;
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let c = creds.clone();
            tokio::spawn(async move { c.access_token().await.unwrap() })
        })
        .collect();
    let mut tokens = Vec::new();
    for t in tasks {
        tokens.push(t.await.unwrap().expose().to_owned());
    }
    tokens.dedup();
    assert_eq!(tokens, vec![fake.auth.issued_access_tokens()[1].clone()]);
    assert_eq!(fake.auth.counters().refresh_token, 1);
}

#[tokio::test]
async fn invalid_grant_requires_relogin_and_is_not_retried() {
    let (fake, creds) = logged_in(Arc::new(MemoryStore::new())).await;
    fake.auth.fail_next_refreshes(1);
    let err = creds.access_token().await.unwrap_err();
    assert!(err.is_relogin_required(), "{err:?}");
    assert!(!err.is_retryable());
    assert_eq!(creds.status().await, AuthStatus::ReloginRequired);
    let again = creds.access_token().await.unwrap_err();
    assert!(again.is_relogin_required());
    assert_eq!(
        fake.auth.counters().refresh_token,
        1,
        "no second refresh request"
    );
    // A new login clears it.
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    assert_eq!(creds.status().await, AuthStatus::OAuth);
}

#[tokio::test]
async fn a_401_refreshes_even_an_unexpired_token_once() {
    let fake = Fake::start(HOUR).await;
    let creds = creds(&fake, Arc::new(MemoryStore::new()));
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    let rejected = creds.access_token().await.unwrap();
    let fresh = creds.refresh_after_unauthorized(&rejected).await.unwrap();
    assert_ne!(fresh, rejected);
    // A second 401 report for the same old token adopts the new one.
    let again = creds.refresh_after_unauthorized(&rejected).await.unwrap();
    assert_eq!(again, fresh);
    assert_eq!(fake.auth.counters().refresh_token, 1);
}

#[tokio::test]
async fn a_network_failure_is_retryable_and_keeps_the_record() {
    let store = Arc::new(MemoryStore::new());
    let (fake, creds) = logged_in(store.clone()).await;
    let before = store.load(creds.store_key()).await.unwrap();
    fake.auth.shutdown().await;
    let err = creds.access_token().await.unwrap_err();
    assert!(err.is_retryable(), "{err:?}");
    assert_eq!(store.load(creds.store_key()).await.unwrap(), before);
}

/// Two "processes": separate credential handles over separate `FileStore` instances on one
/// file (each with its own gate, so only the store's file lock coordinates them).
fn two_processes(fake: &Fake, dir: &tempfile::TempDir) -> (OAuthCredentials, OAuthCredentials) {
    let path = dir.path().join("credentials.json");
    (
        creds(fake, Arc::new(FileStore::new(&path))),
        creds(fake, Arc::new(FileStore::new(&path))),
    )
}

#[tokio::test]
async fn a_token_refreshed_by_another_process_is_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::start(HOUR).await;
    let (a, b) = two_processes(&fake, &dir);
    login(&a, &HeadlessAgent::new(), None).await.unwrap();
    let old = b.access_token().await.unwrap();
    let new = a.refresh_after_unauthorized(&old).await.unwrap();
    // b still holds the old token, gets a 401 with it, and adopts a's refresh.
    assert_eq!(b.refresh_after_unauthorized(&old).await.unwrap(), new);
    assert_eq!(fake.auth.counters().refresh_token, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_processes_end_with_one_valid_refresh_token() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::start(Duration::from_secs(10)).await;
    let (a, b) = two_processes(&fake, &dir);
    login(&a, &HeadlessAgent::new(), None).await.unwrap();
    fake.auth.set_token_lifetime(HOUR);
    let (ta, tb) = tokio::join!(
        tokio::spawn({
            let a = a.clone();
            async move { a.access_token().await.unwrap() }
        }),
        tokio::spawn({
            let b = b.clone();
            async move { b.access_token().await.unwrap() }
        })
    );
    assert_eq!(ta.unwrap(), tb.unwrap());
    assert_eq!(fake.auth.counters().refresh_token, 1);
    let path = dir.path().join("credentials.json");
    let record = FileStore::new(&path)
        .load(a.store_key())
        .await
        .unwrap()
        .unwrap();
    let stored_rt = record.refresh_token.unwrap().expose().to_owned();
    assert_eq!(fake.auth.valid_refresh_tokens(), vec![stored_rt]);
}

/// A memory store whose saves fail on demand.
#[derive(Debug, Default)]
struct FlakyStore {
    inner: MemoryStore,
    fail_saves: std::sync::atomic::AtomicBool,
}

impl CredentialStore for FlakyStore {
    fn load<'a>(
        &'a self,
        key: &'a mcp_auth::StoreKey,
    ) -> mcp_auth::BoxFuture<'a, Result<Option<mcp_auth::StoredCredentials>, mcp_auth::StoreError>>
    {
        self.inner.load(key)
    }
    fn save<'a>(
        &'a self,
        key: &'a mcp_auth::StoreKey,
        creds: &'a mcp_auth::StoredCredentials,
    ) -> mcp_auth::BoxFuture<'a, Result<(), mcp_auth::StoreError>> {
        if self.fail_saves.load(std::sync::atomic::Ordering::SeqCst) {
            return Box::pin(async {
                Err(mcp_auth::StoreError::Io {
                    action: "write the credential file",
                    path: "/nowhere".into(),
                    source: std::io::Error::other("disk full"),
                })
            });
        }
        self.inner.save(key, creds)
    }
    fn delete<'a>(
        &'a self,
        key: &'a mcp_auth::StoreKey,
    ) -> mcp_auth::BoxFuture<'a, Result<(), mcp_auth::StoreError>> {
        self.inner.delete(key)
    }
    fn lock<'a>(
        &'a self,
        key: &'a mcp_auth::StoreKey,
    ) -> mcp_auth::BoxFuture<'a, Result<mcp_auth::StoreLock, mcp_auth::StoreError>> {
        self.inner.lock(key)
    }
    fn kind(&self) -> mcp_auth::StoreKind {
        mcp_auth::StoreKind::Custom
    }
}

#[tokio::test]
async fn a_refresh_that_cannot_be_persisted_is_not_used_and_keeps_the_old_record() {
    let store = Arc::new(FlakyStore::default());
    let (_fake, creds) = logged_in(store.clone()).await;
    let before = store.load(creds.store_key()).await.unwrap();
    store
        .fail_saves
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let err = creds.access_token().await.unwrap_err();
    assert!(matches!(err, mcp_auth::AuthError::Store { .. }), "{err:?}");
    assert_eq!(store.load(creds.store_key()).await.unwrap(), before);
}

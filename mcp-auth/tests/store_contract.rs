//! The `CredentialStore` contract, run against every store: round trip, overwrite, delete,
//! missing keys, scoped vs unscoped keys, and key locks (exclusive per key, bounded wait,
//! no deadlock with `save`). The keyring runs for real (kernel keyutils on Linux).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers may panic"
)]

use std::time::Duration;

use mcp_auth::{
    AutoStore, CredentialStore, FileStore, KeyringStore, MemoryStore, StoreError, StoreKey,
    StoreKind, StoredCredentials,
};
use mcp_key::{McpServerKey, Secret};
use pretty_assertions::assert_eq;

const SHORT: Duration = Duration::from_millis(300);

fn key(server: &str, url: &str) -> StoreKey {
    StoreKey::new(&server.parse::<McpServerKey>().unwrap(), url)
}

fn record(tag: &str) -> StoredCredentials {
    StoredCredentials::new(format!("client-{tag}"))
        .with_client_secret(Secret::new(format!("cs-{tag}")))
        .with_access_token(Secret::new(format!("at-{tag}")))
        .with_refresh_token(Secret::new(format!("rt-{tag}")))
        .with_scopes(["read", "write"])
        .with_expires_at(1_900_000_000)
        .with_token_endpoint("https://auth.example/token")
        .with_issuer("https://auth.example")
        .with_token_endpoint_auth_method("none")
        .with_resource("https://tickets.example/mcp")
}

/// A keyring service name no other test run uses.
fn unique_service(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("mcp-auth-test-{test}-{}-{nanos}", std::process::id())
}

/// Every key the contract writes, so keyring tests can clean up even after a failure.
fn contract_keys() -> Vec<StoreKey> {
    vec![
        key("alpha", "https://a.example/mcp"),
        key("beta", "https://b.example/mcp"),
        key("alpha@devbox", "https://a.example/mcp"),
        key("alpha", "https://other.example/mcp"),
    ]
}

async fn contract(store: &dyn CredentialStore) {
    let [a, b, a_devbox, a_other] = <[StoreKey; 4]>::try_from(contract_keys()).unwrap();

    // Missing keys.
    assert_eq!(store.load(&a).await.unwrap(), None);
    store.delete(&a).await.unwrap();

    // Round trip, including every field.
    store.save(&a, &record("a1")).await.unwrap();
    assert_eq!(store.load(&a).await.unwrap(), Some(record("a1")));

    // Other keys are independent, including the same name in an environment or at another
    // URL.
    store.save(&b, &record("b1")).await.unwrap();
    store.save(&a_devbox, &record("a-devbox")).await.unwrap();
    assert_eq!(store.load(&a_other).await.unwrap(), None);
    assert_eq!(store.load(&a).await.unwrap(), Some(record("a1")));
    assert_eq!(
        store.load(&a_devbox).await.unwrap(),
        Some(record("a-devbox"))
    );

    // Overwrite replaces the whole record.
    let minimal = StoredCredentials::new("client-a2");
    store.save(&a, &minimal).await.unwrap();
    assert_eq!(store.load(&a).await.unwrap(), Some(minimal));
    assert_eq!(store.load(&b).await.unwrap(), Some(record("b1")));

    // Delete removes one key only, and twice is fine.
    store.delete(&a).await.unwrap();
    store.delete(&a).await.unwrap();
    assert_eq!(store.load(&a).await.unwrap(), None);
    assert_eq!(store.load(&b).await.unwrap(), Some(record("b1")));

    // Holding a key lock does not block load/save/delete of that key (no deadlock).
    let held = store.lock(&b).await.unwrap();
    store.save(&b, &record("b2")).await.unwrap();
    assert_eq!(store.load(&b).await.unwrap(), Some(record("b2")));
    // Another key's lock is independent.
    drop(store.lock(&a).await.unwrap());
    drop(held);
    // Released on drop.
    drop(store.lock(&b).await.unwrap());

    for k in [&b, &a_devbox] {
        store.delete(k).await.unwrap();
        assert_eq!(store.load(k).await.unwrap(), None);
    }
}

/// A second `lock` of a held key times out after the store's timeout, naming the lock.
async fn lock_is_exclusive(store: &dyn CredentialStore, timeout: Duration) {
    let k = key("gamma", "https://g.example/mcp");
    let held = store.lock(&k).await.unwrap();
    let started = tokio::time::Instant::now();
    let err = store.lock(&k).await.unwrap_err();
    assert!(err.is_lock_timeout(), "{err:?}");
    assert!(err.is_retryable());
    assert!(started.elapsed() >= timeout);
    assert!(err.to_string().contains("gamma|"), "{err}");
    drop(held);
    drop(store.lock(&k).await.unwrap());
}

#[tokio::test]
async fn memory_store() {
    let store = MemoryStore::new();
    contract(&store).await;
    assert_eq!(store.kind(), StoreKind::Memory);
    assert!(store.keys().is_empty());
}

#[tokio::test(start_paused = true)]
async fn memory_store_lock_wait_is_bounded() {
    lock_is_exclusive(&MemoryStore::with_lock_timeout(SHORT), SHORT).await;
    lock_is_exclusive(&MemoryStore::new(), mcp_auth::DEFAULT_LOCK_TIMEOUT).await;
}

#[tokio::test]
async fn file_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path().join("creds.json"));
    contract(&store).await;
    assert_eq!(store.kind(), StoreKind::File);
    assert_eq!(
        store.location(),
        dir.path().join("creds.json").display().to_string()
    );
}

#[tokio::test(start_paused = true)]
async fn file_store_lock_wait_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("creds.json");
    lock_is_exclusive(&FileStore::new(&path).with_lock_timeout(SHORT), SHORT).await;
    // Default timeout, measured on the paused clock.
    lock_is_exclusive(&FileStore::new(&path), mcp_auth::DEFAULT_LOCK_TIMEOUT).await;
}

/// Deletes every contract key from the keyring when dropped, even if the test failed.
#[cfg(feature = "keyring")]
struct KeyringCleanup(KeyringStore);

#[cfg(feature = "keyring")]
impl Drop for KeyringCleanup {
    fn drop(&mut self) {
        let store = self.0.clone();
        // Drop may run inside a runtime: use a throwaway one on its own thread.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            for k in contract_keys() {
                let _ = runtime.block_on(store.delete(&k));
            }
        })
        .join();
    }
}

#[cfg(feature = "keyring")]
#[tokio::test]
async fn keyring_store_for_real() {
    let store = KeyringStore::new(unique_service("contract"));
    let _cleanup = KeyringCleanup(store.clone());
    store
        .probe()
        .expect("the kernel keyring (keyutils) must work on this machine");
    contract(&store).await;
    assert_eq!(store.kind(), StoreKind::Keyring);
}

#[tokio::test(start_paused = true)]
async fn keyring_store_lock_wait_is_bounded() {
    let store = KeyringStore::new(unique_service("lock")).with_lock_timeout(SHORT);
    lock_is_exclusive(&store, SHORT).await;
    let dir = tempfile::tempdir().unwrap();
    let with_files = store.with_lock_dir(dir.path().join("locks"));
    lock_is_exclusive(&with_files, SHORT).await;
    assert!(dir.path().join("locks").is_dir());
}

/// Without the `keyring` feature the keyring store says so, and the auto store pins the
/// file without asking the OS.
#[cfg(not(feature = "keyring"))]
#[tokio::test]
async fn keyring_store_without_the_feature() {
    let store = KeyringStore::new(unique_service("off"));
    let err = store.probe().unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the OS keyring is unavailable (mcp-auth was built without its `keyring` feature); use \
         the file credential store (credentials_store = \"file\") or \"auto\""
    );
    let k = &contract_keys()[0];
    assert!(matches!(
        store.load(k).await,
        Err(StoreError::Unavailable { .. })
    ));
    let dir = tempfile::tempdir().unwrap();
    let auto = AutoStore::new(unique_service("off"), dir.path().join("creds.json"));
    assert_eq!(auto.kind(), StoreKind::File);
    contract(&auto).await;
}

#[tokio::test]
async fn auto_store_on_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = AutoStore::with_probe("unused", dir.path().join("creds.json"), |_| {
        Err(StoreError::Unavailable {
            reason: "test".into(),
        })
    });
    contract(&store).await;
    assert_eq!(store.kind(), StoreKind::File);
}

#[cfg(feature = "keyring")]
#[tokio::test]
async fn auto_store_on_the_keyring() {
    let dir = tempfile::tempdir().unwrap();
    let store = AutoStore::new(unique_service("auto"), dir.path().join("creds.json"));
    let _cleanup = KeyringCleanup(KeyringStore::new(service_of(&store)));
    assert_eq!(
        store.kind(),
        StoreKind::Keyring,
        "{:?}",
        store.fallback_reason()
    );
    contract(&store).await;
    // Nothing went to the file.
    assert!(!dir.path().join("creds.json").exists());
}

#[cfg(feature = "keyring")]
fn service_of(store: &AutoStore) -> String {
    let location = store.location();
    location
        .split('"')
        .nth(1)
        .unwrap_or_else(|| panic!("no service in {location}"))
        .to_owned()
}

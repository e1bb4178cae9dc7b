//! The keyring for real (kernel keyutils on Linux: `add_key` works on these machines, no
//! D-Bus needed), the auto store's fallback to the file, `open_store`, and that no planted
//! secret reaches error messages or logs.
//!
//! Linux only: the raw checks read the kernel user keyring directly.
//!
//! Keyutils entries outlive the test process (they sit in the user keyring until reboot),
//! so every test uses a fresh service name and deletes what it wrote, even on failure.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers may panic"
)]
#![cfg(all(target_os = "linux", feature = "keyring"))]

use std::io::Write;
use std::process::{Command, Stdio};

use linux_keyutils::{KeyRing, KeyRingIdentifier};
use mcp_auth::{
    AutoStore, CredentialStore, KeyringStore, StoreError, StoreKey, StoreKind, StoredCredentials,
    open_store, open_store_for_service,
};
use mcp_catalog::CredentialsStore;
use mcp_key::{McpServerKey, Secret};
use pretty_assertions::assert_eq;

const ROLE: &str = "MCP_AUTH_KEYRING_TEST_ROLE";
const SERVICE: &str = "MCP_AUTH_KEYRING_TEST_SERVICE";

fn key(server: &str) -> StoreKey {
    StoreKey::new(
        &server.parse::<McpServerKey>().unwrap(),
        "https://k.example/mcp",
    )
}

fn unique_service(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("mcp-auth-test-{test}-{}-{nanos}", std::process::id())
}

/// Deletes the listed keyring entries on drop.
struct Cleanup {
    service: String,
    keys: Vec<StoreKey>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for k in &self.keys {
            let store = KeyringStore::new(&self.service);
            let k = k.clone();
            // Runs outside any runtime: drive the future on a throwaway one.
            let _ = std::thread::spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap()
                    .block_on(store.delete(&k))
            })
            .join();
        }
    }
}

/// The raw value in the kernel user keyring, bypassing the store (Linux).
fn raw_get(service: &str, k: &StoreKey) -> Option<Vec<u8>> {
    let ring = KeyRing::from_special_id(KeyRingIdentifier::User, false).unwrap();
    let key = ring
        .search(&format!("keyring-rs:{}@{service}", k.as_str()))
        .ok()?;
    Some(key.read_to_vec().unwrap())
}

fn raw_set(service: &str, k: &StoreKey, value: &str) {
    let ring = KeyRing::from_special_id(KeyRingIdentifier::User, false).unwrap();
    ring.add_key(&format!("keyring-rs:{}@{service}", k.as_str()), value)
        .unwrap();
}

fn planted(tag: &str) -> StoredCredentials {
    StoredCredentials::new("client")
        .with_client_secret(Secret::new(format!("planted-cs-{tag}")))
        .with_access_token(Secret::new(format!("planted-at-{tag}")))
        .with_refresh_token(Secret::new(format!("planted-rt-{tag}")))
}

#[tokio::test]
async fn entries_are_json_records_in_the_real_keyring_seen_by_another_process() {
    let service = unique_service("raw");
    let k = key("tickets@devbox");
    let _cleanup = Cleanup {
        service: service.clone(),
        keys: vec![k.clone()],
    };
    let store = KeyringStore::new(&service);
    store.save(&k, &planted("raw")).await.unwrap();

    // The value sits under service/account = store key text, as the record's JSON.
    let raw = raw_get(&service, &k).expect("the value is in the kernel user keyring");
    let json: serde_json::Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(json["access_token"], "planted-at-raw");

    // Another process (this binary again) reads it from the kernel.
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "keyring_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, "reader")
        .env(SERVICE, &service)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("CLIENT=client;"), "{stdout}");
}

/// The child side of the cross-process test; does nothing in a normal test run.
#[tokio::test]
async fn keyring_child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    assert_eq!(role, "reader");
    let store = KeyringStore::new(std::env::var(SERVICE).unwrap());
    let creds = store.load(&key("tickets@devbox")).await.unwrap().unwrap();
    assert_eq!(creds.access_token, Some(Secret::new("planted-at-raw")));
    let mut out = std::io::stdout();
    writeln!(out, "CLIENT={};", creds.client_id).unwrap();
    out.flush().unwrap();
}

#[tokio::test]
async fn an_unreadable_keyring_entry_is_reported_without_its_content() {
    let service = unique_service("corrupt");
    let k = key("broken");
    let _cleanup = Cleanup {
        service: service.clone(),
        keys: vec![k.clone()],
    };
    raw_set(
        &service,
        &k,
        r#"{"client_id": 5, "access_token": "planted-in-keyring"}"#,
    );
    let err = KeyringStore::new(&service).load(&k).await.unwrap_err();
    assert!(err.is_corrupt(), "{err:?}");
    let text = format!("{err} {err:?}");
    assert!(text.contains("broken|"), "{text}");
    assert!(text.contains(&service), "{text}");
    assert!(!text.contains("planted"), "{text}");
    // A new save repairs it.
    let store = KeyringStore::new(&service);
    store.save(&k, &StoredCredentials::new("c")).await.unwrap();
    assert_eq!(
        store.load(&k).await.unwrap(),
        Some(StoredCredentials::new("c"))
    );
}

#[tokio::test]
async fn keyring_errors_name_service_and_account_only() {
    // keyutils rejects an empty value, which the store never writes; an over-long
    // description (the account) is rejected by the kernel.
    let service = unique_service("err");
    let long_name = "x".repeat(64);
    let long = StoreKey::new(
        &long_name.parse::<McpServerKey>().unwrap(),
        &"u".repeat(5000),
    );
    let store = KeyringStore::new(&service);
    let huge = planted("huge").with_scopes(vec!["s".repeat(40_000)]);
    let _cleanup = Cleanup {
        service: service.clone(),
        keys: vec![long.clone()],
    };
    let err = store.save(&long, &huge).await.unwrap_err();
    assert!(err.is_keyring(), "{err:?}");
    let text = format!("{err} {err:?}");
    assert!(text.contains(&service), "{text}");
    assert!(text.contains("credentials_store = \"file\""), "{text}");
    assert!(!text.contains("planted"), "{text}");
}

#[tokio::test(flavor = "current_thread")]
async fn auto_store_falls_back_to_the_file_once_with_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.json");
    let (logs, _guard) = mcp_testkit::capture_logs();
    let mut probes = 0;
    let store = AutoStore::with_probe(unique_service("fallback"), &path, |_| {
        probes += 1;
        Err(StoreError::Unavailable {
            reason: "no keyring in this test".into(),
        })
    });
    assert_eq!(probes, 1);
    assert_eq!(store.kind(), StoreKind::File);
    assert_eq!(store.location(), path.display().to_string());
    assert!(
        store
            .fallback_reason()
            .unwrap()
            .contains("no keyring in this test")
    );

    // A whole session: save, load, lock, refresh-persist, delete.
    let k = key("tickets");
    store.save(&k, &planted("auto")).await.unwrap();
    assert!(path.exists(), "records go to the file");
    let lock = store.lock(&k).await.unwrap();
    assert!(
        lock.description().contains("credentials.json.locks"),
        "key locks are cross-process file locks: {lock:?}"
    );
    store.save(&k, &planted("auto2")).await.unwrap();
    drop(lock);
    assert_eq!(store.load(&k).await.unwrap(), Some(planted("auto2")));
    store.delete(&k).await.unwrap();
    assert_eq!(store.load(&k).await.unwrap(), None);

    let text = logs.text();
    assert_eq!(
        text.matches("instead of the OS keyring").count(),
        1,
        "{text}"
    );
    assert!(text.contains("WARN mcp_auth::security:"), "{text}");
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(!text.contains("planted"), "{text}");
}

#[tokio::test]
async fn auto_store_pins_the_keyring_and_logout_clears_the_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.json");
    let service = unique_service("pin");
    let k = key("tickets");
    let _cleanup = Cleanup {
        service: service.clone(),
        keys: vec![k.clone()],
    };
    // A record left in the file by an earlier session that had no keyring.
    let earlier = AutoStore::with_probe(&service, &path, |_| {
        Err(StoreError::Unavailable {
            reason: "earlier".into(),
        })
    });
    earlier.save(&k, &planted("old")).await.unwrap();

    let store = AutoStore::new(&service, &path);
    assert_eq!(
        store.kind(),
        StoreKind::Keyring,
        "{:?}",
        store.fallback_reason()
    );
    assert_eq!(store.fallback_reason(), None);
    // The keyring is the store now: the file's record is not used.
    assert_eq!(store.load(&k).await.unwrap(), None);
    store.save(&k, &planted("new")).await.unwrap();
    assert_eq!(store.load(&k).await.unwrap(), Some(planted("new")));
    assert_eq!(earlier.load(&k).await.unwrap(), Some(planted("old")));
    // Key locks are file locks beside the file even on the keyring.
    let lock = store.lock(&k).await.unwrap();
    assert!(
        lock.description().contains("credentials.json.locks"),
        "{lock:?}"
    );
    drop(lock);

    // Logout deletes the record everywhere it may live.
    store.delete(&k).await.unwrap();
    assert_eq!(store.load(&k).await.unwrap(), None);
    assert_eq!(earlier.load(&k).await.unwrap(), None);
}

#[tokio::test]
async fn open_store_honours_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        open_store(CredentialsStore::File, dir.path()).kind(),
        StoreKind::File
    );
    assert_eq!(
        open_store(CredentialsStore::Keyring, dir.path()).kind(),
        StoreKind::Keyring
    );
    // The kernel keyring works here, so auto picks it.
    let service = unique_service("open");
    let auto = open_store_for_service(CredentialsStore::Auto, dir.path(), &service);
    assert_eq!(auto.kind(), StoreKind::Keyring);
    assert!(auto.location().contains(&service));
    // Keyring mode serializes refreshes across processes with files in the data dir.
    let keyring = open_store_for_service(CredentialsStore::Keyring, dir.path(), &service);
    let lock = keyring.lock(&key("a")).await.unwrap();
    assert!(
        lock.description()
            .contains(&dir.path().display().to_string())
    );
    let file = open_store(CredentialsStore::File, dir.path());
    assert_eq!(
        file.location(),
        dir.path().join("credentials.json").display().to_string()
    );
    assert_eq!(CredentialsStore::default(), CredentialsStore::Auto);
}

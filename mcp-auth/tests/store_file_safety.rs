//! What `FileStore` refuses on a real file system, as ssh does with `~/.ssh`: a symlinked
//! credential file, lock directory or lock file (nothing is read, changed or created where
//! the link points) and a credential file or lock directory open to other users (refused
//! with a message naming the path and the fix, never chmod-ed). The owner check needs a
//! second user and is unit-tested in `src/store/fs_private.rs`.

#![allow(clippy::unwrap_used, reason = "test helpers may panic")]
#![cfg(unix)]

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::time::Duration;

use mcp_auth::{CredentialStore, FileStore, StoreError, StoreKey, StoredCredentials};
use mcp_key::{McpServerKey, Secret};
use pretty_assertions::assert_eq;
use serde_json::json;

fn key(server: &str) -> StoreKey {
    StoreKey::new(
        &server.parse::<McpServerKey>().unwrap(),
        "https://x.example/mcp",
    )
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A credential document holding `token` for key `a`.
fn document_with(token: &str) -> String {
    json!({"version": 1, "credentials": {key("a").as_str(): {"client_id": "c", "access_token": token}}})
        .to_string()
}

/// One test at a time: two tests capture logs with a thread-local subscriber, and `tracing`
/// may cache "nobody listens" for a call site that another thread registers at the same
/// moment (the warning is then lost and the test flakes).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Sorted names in `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Asserts an insecure-path refusal that names `path` and says `fix`.
fn assert_refused(err: &StoreError, path: &Path, fix: &str) {
    assert!(err.is_insecure(), "{err:?}");
    assert!(!err.is_retryable(), "{err:?}");
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains(fix), "{text}");
}

#[tokio::test]
async fn a_symlinked_credential_file_is_refused_and_its_target_untouched() {
    let _serial = SERIAL.lock().await;
    let root = tempfile::tempdir().unwrap();
    let target = root.path().join("elsewhere.json");
    let planted = "planted-secret-symlink";
    std::fs::write(&target, document_with(planted)).unwrap();
    set_mode(&target, 0o644);
    let dir = root.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    set_mode(&dir, 0o700);
    let path = dir.join("credentials.json");
    symlink(&target, &path).unwrap();

    let store = FileStore::new(&path);
    let load = store.load(&key("a")).await.unwrap_err();
    let save = store
        .save(&key("b"), &StoredCredentials::new("c"))
        .await
        .unwrap_err();
    let delete = store.delete(&key("a")).await.unwrap_err();
    for err in [&load, &save, &delete] {
        assert_refused(err, &path, "remove the symlink");
        assert!(!format!("{err} {err:?}").contains(planted));
    }
    assert_eq!(
        load.to_string(),
        format!(
            "refusing to use the credential file {}: it is a symbolic link; remove the \
             symlink (credentials and locks are never read or written through one)",
            path.display()
        )
    );
    // Neither the target nor the link changed.
    assert_eq!(mode(&target), 0o644);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        document_with(planted)
    );
    assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());

    // A dangling link is refused too, and nothing is created where it points.
    std::fs::remove_file(&target).unwrap();
    let err = store
        .save(&key("b"), &StoredCredentials::new("c"))
        .await
        .unwrap_err();
    assert_refused(&err, &path, "remove the symlink");
    let err = store.delete(&key("a")).await.unwrap_err();
    assert_refused(&err, &path, "remove the symlink");
    assert!(!target.exists());
}

#[tokio::test]
async fn a_symlinked_lock_directory_is_refused_and_nothing_is_created_there() {
    let _serial = SERIAL.lock().await;
    let root = tempfile::tempdir().unwrap();
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    set_mode(&elsewhere, 0o700);
    let path = root.path().join("credentials.json");
    let store = FileStore::new(&path);
    symlink(&elsewhere, store.lock_dir()).unwrap();

    let save = store
        .save(&key("a"), &StoredCredentials::new("c"))
        .await
        .unwrap_err();
    let lock = store.lock(&key("a")).await.unwrap_err();
    for err in [&save, &lock] {
        assert_refused(err, store.lock_dir(), "remove the symlink");
        assert!(
            err.to_string().contains("the credential lock directory"),
            "{err}"
        );
    }
    assert_eq!(names(&elsewhere), Vec::<String>::new());
    assert!(!path.exists(), "a refused save writes nothing");
}

#[tokio::test]
async fn a_dangling_lock_file_symlink_is_refused_and_nothing_is_created_at_its_target() {
    let _serial = SERIAL.lock().await;
    let root = tempfile::tempdir().unwrap();
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let path = root.path().join("data/credentials.json");
    let store = FileStore::new(&path);
    // A first save creates the real lock directory, the document lock and a key lock.
    store
        .save(&key("a"), &StoredCredentials::new("c"))
        .await
        .unwrap();
    drop(store.lock(&key("a")).await.unwrap());
    let locks = store.lock_dir().to_owned();
    let before = std::fs::read(&path).unwrap();

    // Every lock file becomes a dangling link into `elsewhere`.
    let lock_names = names(&locks);
    assert_eq!(lock_names.len(), 2, "{lock_names:?}");
    for name in &lock_names {
        let lock = locks.join(name);
        std::fs::remove_file(&lock).unwrap();
        symlink(elsewhere.join(name), &lock).unwrap();
    }

    let document_lock = locks.join("document.lock");
    let save = store
        .save(&key("b"), &StoredCredentials::new("c"))
        .await
        .unwrap_err();
    assert_refused(&save, &document_lock, "remove the symlink");
    let key_lock = store.lock(&key("a")).await.unwrap_err();
    assert!(key_lock.is_insecure(), "{key_lock:?}");
    assert!(
        key_lock.to_string().contains(&locks.display().to_string()),
        "{key_lock}"
    );
    assert_eq!(names(&elsewhere), Vec::<String>::new());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[tokio::test(flavor = "current_thread")]
async fn a_credential_file_readable_by_others_is_refused_not_chmod_ed() {
    let _serial = SERIAL.lock().await;
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("credentials.json");
    let planted = "planted-secret-0644";
    std::fs::write(&path, document_with(planted)).unwrap();
    set_mode(&path, 0o644);

    let (logs, _guard) = mcp_testkit::capture_logs();
    let store = FileStore::new(&path);
    let load = store.load(&key("a")).await.unwrap_err();
    let save = store
        .save(&key("b"), &StoredCredentials::new("c"))
        .await
        .unwrap_err();
    for err in [&load, &save] {
        assert_refused(err, &path, &format!("chmod 600 {}", path.display()));
        assert!(!format!("{err} {err:?}").contains(planted));
    }
    assert_eq!(
        load.to_string(),
        format!(
            "refusing to use the credential file {0}: its mode 644 lets other users read or \
             change it; run `chmod 600 {0}` (and consider its tokens leaked: log out and log \
             in again)",
            path.display()
        )
    );
    assert_eq!(mode(&path), 0o644, "the mode is reported, not changed");
    // Every call fails; the store's first refusal is also a security warning, once.
    let text = logs.text();
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("WARN mcp_auth::security:"))
        .collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(warnings[0].ends_with(&load.to_string()), "{text}");
    assert!(!text.contains(planted), "{text}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        document_with(planted)
    );

    // Group-writable alone is refused as well; after the fix suggested, it works.
    set_mode(&path, 0o620);
    assert!(store.load(&key("a")).await.unwrap_err().is_insecure());
    set_mode(&path, 0o600);
    let loaded = store.load(&key("a")).await.unwrap().unwrap();
    assert_eq!(loaded.access_token, Some(Secret::new(planted)));
}

#[tokio::test]
async fn a_fifo_in_place_of_the_credential_file_is_refused_without_blocking() {
    let _serial = SERIAL.lock().await;
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("credentials.json");
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let store = FileStore::new(&path);
    // Without O_NONBLOCK the open would wait for a writer forever.
    let load = match tokio::time::timeout(Duration::from_secs(10), store.load(&key("a"))).await {
        Ok(load) => load,
        Err(_) => {
            // Open the write end so the stuck open returns and the runtime can shut down.
            let _ = std::fs::OpenOptions::new().write(true).open(&path);
            panic!("opening a FIFO in place of the credential file blocked");
        }
    };
    assert_refused(&load.unwrap_err(), &path, "remove it");
}

#[tokio::test]
async fn a_lock_directory_writable_by_others_is_refused() {
    let _serial = SERIAL.lock().await;
    let root = tempfile::tempdir().unwrap();
    let store = FileStore::new(root.path().join("credentials.json"));
    std::fs::create_dir(store.lock_dir()).unwrap();
    set_mode(store.lock_dir(), 0o777);
    let err = store.lock(&key("a")).await.unwrap_err();
    assert_refused(
        &err,
        store.lock_dir(),
        &format!("chmod 700 {}", store.lock_dir().display()),
    );
    assert_eq!(mode(store.lock_dir()), 0o777);
    assert_eq!(names(store.lock_dir()), Vec::<String>::new());
}

#[tokio::test(flavor = "current_thread")]
async fn a_loose_or_symlinked_data_directory_is_the_hosts_and_only_warned_about() {
    let _serial = SERIAL.lock().await;
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real");
    std::fs::create_dir(&real).unwrap();
    set_mode(&real, 0o777);
    let linked = root.path().join("linked");
    symlink(&real, &linked).unwrap();

    let (logs, _guard) = mcp_testkit::capture_logs();
    let store = FileStore::new(linked.join("credentials.json"));
    store
        .save(&key("a"), &StoredCredentials::new("c"))
        .await
        .unwrap();
    assert_eq!(
        store.load(&key("a")).await.unwrap().map(|c| c.client_id),
        Some("c".to_owned())
    );
    assert_eq!(mode(&real), 0o777, "the host's directory is not changed");
    assert_eq!(mode(&real.join("credentials.json")), 0o600);
    let text = logs.text();
    assert!(
        text.contains("WARN mcp_auth::security: the credential directory"),
        "{text}"
    );
    assert!(
        text.contains("mode 777) is writable by other users"),
        "{text}"
    );
    assert!(text.contains("chmod 700"), "{text}");
    assert!(text.contains(&linked.display().to_string()), "{text}");
}

//! `FileStore` on a real file system: permissions, corrupt files, preservation of other
//! entries, atomic replacement, and two OS processes writing and locking at once. What it
//! refuses (symlinks, loose modes) is in `store_file_safety.rs`.
//!
//! The cross-process tests re-run this test binary as the child, selecting the
//! `child_process` test and passing the role in environment variables.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers may panic"
)]
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_auth::{CredentialStore, FileStore, StoreKey, StoredCredentials};
use mcp_key::{McpServerKey, Secret};
use pretty_assertions::assert_eq;
use serde_json::json;

const ROLE: &str = "MCP_AUTH_STORE_TEST_ROLE";
const PATH: &str = "MCP_AUTH_STORE_TEST_PATH";
const PREFIX: &str = "MCP_AUTH_STORE_TEST_PREFIX";
const WRITES_PER_CHILD: usize = 40;

fn key(server: &str) -> StoreKey {
    StoreKey::new(
        &server.parse::<McpServerKey>().unwrap(),
        "https://x.example/mcp",
    )
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Writes a file as the store would find it: owner-only (anything looser is refused).
fn write_private(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::write(path, bytes).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

fn document(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[tokio::test]
async fn creates_owner_only_directory_file_and_locks() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data/nested");
    let path = dir.join("credentials.json");
    let store = FileStore::new(&path);
    assert_eq!(store.load(&key("a")).await.unwrap(), None);
    assert!(!dir.exists(), "load creates nothing");

    store
        .save(&key("a"), &StoredCredentials::new("c"))
        .await
        .unwrap();
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&root.path().join("data")), 0o700);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(store.lock_dir()), 0o700);
    let _held = store.lock(&key("a")).await.unwrap();
    for entry in std::fs::read_dir(store.lock_dir()).unwrap() {
        let entry = entry.unwrap().path();
        assert_eq!(mode(&entry), 0o600, "{}", entry.display());
    }
    // Only the data file and the lock directory: no temporary files left behind.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["credentials.json", "credentials.json.locks"]);
}

#[tokio::test]
async fn corrupt_file_is_reported_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.json");
    let planted = "planted-secret-corrupt";
    let cases = [
        // Truncated JSON that still holds another server's tokens.
        format!(
            r#"{{"version": 1, "credentials": {{"other|1234abcd": {{"client_id": "c", "access_token": "{planted}"}}"#
        ),
        // Wrong type where serde would quote the value in its message.
        format!(r#"{{"version": "{planted}", "credentials": {{}}}}"#),
        // Written by a newer program.
        r#"{"version": 2, "credentials": {}}"#.to_owned(),
        "not json at all".to_owned(),
    ];
    let store = FileStore::new(&path);
    for bytes in cases {
        write_private(&path, &bytes);
        let save = store
            .save(&key("a"), &StoredCredentials::new("new"))
            .await
            .unwrap_err();
        let load = store.load(&key("a")).await.unwrap_err();
        let delete = store.delete(&key("a")).await.unwrap_err();
        for err in [&save, &load, &delete] {
            assert!(err.is_corrupt(), "{err:?}");
            let text = format!("{err} {err:?}");
            assert!(text.contains(&path.display().to_string()), "{text}");
            assert!(text.contains("delete it"), "{text}");
            assert!(!text.contains(planted), "{text}");
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), bytes);
    }
    syntax_error_message(&path).await;
}

/// The exact message for a syntax error, which users see.
async fn syntax_error_message(path: &Path) {
    write_private(path, "{\n  \"version\": 1,\n  oops\n}");
    let err = FileStore::new(path).load(&key("a")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "credential file {} is corrupt (invalid JSON at line 3 column 3); fix it or delete \
             it and log in again (it was not modified)",
            path.display()
        )
    );
}

#[tokio::test]
async fn other_entries_survive_even_when_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.json");
    let planted = "planted-secret-entry";
    let original = json!({
        "version": 1,
        "credentials": {
            key("good").as_str(): {"client_id": "g", "refresh_token": "rt-good", "future_field": [1, 2]},
            key("weird").as_str(): {"client_id": 7, "access_token": planted},
        },
        "written_by": "a newer program",
    });
    write_private(&path, original.to_string());
    let store = FileStore::new(&path);

    // An unreadable entry is an error for that key only, without its content.
    let err = store.load(&key("weird")).await.unwrap_err();
    assert!(err.is_corrupt(), "{err:?}");
    let text = format!("{err} {err:?}");
    assert!(text.contains(key("weird").as_str()), "{text}");
    assert!(!text.contains(planted), "{text}");
    let good = store.load(&key("good")).await.unwrap().unwrap();
    assert_eq!(good.refresh_token, Some(Secret::new("rt-good")));

    // Saving and deleting other keys carries every other entry over verbatim, including
    // fields and entries this version does not understand.
    store
        .save(&key("new"), &StoredCredentials::new("n"))
        .await
        .unwrap();
    store.delete(&key("missing")).await.unwrap();
    let mut expected = original.clone();
    expected["credentials"][key("new").as_str()] = json!({"client_id": "n"});
    assert_eq!(document(&path), expected);

    // Saving the unreadable key replaces it (that is how a new login repairs it).
    store
        .save(&key("weird"), &StoredCredentials::new("w"))
        .await
        .unwrap();
    assert_eq!(
        store.load(&key("weird")).await.unwrap(),
        Some(StoredCredentials::new("w"))
    );
}

#[tokio::test]
async fn empty_file_is_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.json");
    write_private(&path, "\n");
    let store = FileStore::new(&path);
    assert_eq!(store.load(&key("a")).await.unwrap(), None);
    store
        .save(&key("a"), &StoredCredentials::new("c"))
        .await
        .unwrap();
    assert_eq!(
        document(&path),
        json!({"version": 1, "credentials": {key("a").as_str(): {"client_id": "c"}}})
    );
}

#[tokio::test(start_paused = true)]
async fn a_save_that_cannot_get_the_document_lock_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.json");
    let store = FileStore::new(&path);
    store
        .save(&key("a"), &StoredCredentials::new("c"))
        .await
        .unwrap();
    let before = std::fs::read(&path).unwrap();

    // Someone else (here: a raw flock on the document lock) holds the document.
    let lock_file = std::fs::File::open(store.lock_dir().join("document.lock")).unwrap();
    let held = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive).unwrap();
    let started = tokio::time::Instant::now();
    let err = store
        .save(&key("b"), &StoredCredentials::new("c"))
        .await
        .unwrap_err();
    assert!(err.is_lock_timeout(), "{err:?}");
    assert_eq!(started.elapsed(), mcp_auth::DEFAULT_LOCK_TIMEOUT);
    assert!(err.to_string().contains("document.lock"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Loads need no lock.
    assert!(store.load(&key("a")).await.unwrap().is_some());
    drop(held);
    store
        .save(&key("b"), &StoredCredentials::new("c"))
        .await
        .unwrap();
}

// ---- Two OS processes ---------------------------------------------------------------

/// Kills and reaps a child on drop, so a failing test leaves no process behind.
struct Reaped(Child);

impl Reaped {
    /// Waits for the exit, for at most a minute (a watchdog, not synchronization).
    fn wait_success(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                let mut err = String::new();
                if let Some(stderr) = self.0.stderr.as_mut() {
                    let _ = stderr.read_to_string(&mut err);
                }
                assert!(status.success(), "child failed: {status}\n{err}");
                // Reaped: no process is left behind.
                let proc_dir = PathBuf::from(format!("/proc/{}", self.0.id()));
                assert!(!Path::new("/proc/self").exists() || !proc_dir.exists());
                return;
            }
            assert!(Instant::now() < deadline, "child did not finish in 60 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn spawn_child(role: &str, path: &Path, prefix: &str) -> Reaped {
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(PATH, path)
        .env(PREFIX, prefix)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Reaped(child)
}

/// The child side of the cross-process tests; does nothing in a normal test run.
#[tokio::test]
async fn child_process() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let path = PathBuf::from(std::env::var(PATH).unwrap());
    let prefix = std::env::var(PREFIX).unwrap();
    let store = FileStore::new(&path);
    match role.as_str() {
        "writer" => {
            for i in 0..WRITES_PER_CHILD {
                let creds = StoredCredentials::new(format!("{prefix}-{i}"))
                    .with_access_token(Secret::new(format!("at-{prefix}-{i}")));
                store
                    .save(&key(&format!("{prefix}-{i}")), &creds)
                    .await
                    .unwrap();
                // Both writers also fight over one shared key.
                store.save(&key("shared"), &creds).await.unwrap();
            }
        }
        "holder" => {
            let held = store.lock(&key(&prefix)).await.unwrap();
            let mut out = std::io::stdout();
            writeln!(out, "LOCKED").unwrap();
            out.flush().unwrap();
            // Hold the lock until the parent closes our stdin.
            let mut rest = Vec::new();
            std::io::stdin().read_to_end(&mut rest).unwrap();
            drop(held);
        }
        other => panic!("unknown role {other}"),
    }
}

#[tokio::test]
async fn two_processes_writing_at_once_lose_no_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.json");
    let mut first = spawn_child("writer", &path, "p1");
    let mut second = spawn_child("writer", &path, "p2");
    first.wait_success();
    second.wait_success();

    let store = FileStore::new(&path);
    for prefix in ["p1", "p2"] {
        for i in 0..WRITES_PER_CHILD {
            let name = format!("{prefix}-{i}");
            let creds = store.load(&key(&name)).await.unwrap();
            assert_eq!(creds.map(|c| c.client_id), Some(name));
        }
    }
    let shared = store.load(&key("shared")).await.unwrap().unwrap();
    assert!(
        shared
            .client_id
            .ends_with(&format!("-{}", WRITES_PER_CHILD - 1))
    );
    let entries = document(&path)["credentials"].as_object().unwrap().len();
    assert_eq!(entries, 2 * WRITES_PER_CHILD + 1);
    assert_eq!(mode(&path), 0o600);
}

#[tokio::test]
async fn a_key_lock_held_by_another_process_times_out_then_frees() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.json");
    let mut holder = spawn_child("holder", &path, "busy");
    let stdout = holder.0.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let reading = tokio::task::spawn_blocking(move || {
        // libtest may print "test child_process ... " on the same line first.
        let found = lines.find(|l| l.as_deref().is_ok_and(|l| l.ends_with("LOCKED")));
        (found, lines)
    });
    // Watchdog: on timeout the test fails and `Reaped` kills the child, ending the read.
    let (locked, mut lines) = tokio::time::timeout(Duration::from_secs(60), reading)
        .await
        .expect("the child did not report the lock within 60 s")
        .unwrap();
    assert!(locked.is_some(), "the child never took the lock");

    let store = FileStore::new(&path).with_lock_timeout(Duration::from_millis(200));
    let err = store.lock(&key("busy")).await.unwrap_err();
    assert!(err.is_lock_timeout(), "{err:?}");
    assert!(
        err.to_string()
            .contains(&store.lock_dir().display().to_string())
    );
    // Another key and the document stay usable meanwhile.
    drop(store.lock(&key("idle")).await.unwrap());
    store
        .save(&key("busy"), &StoredCredentials::new("c"))
        .await
        .unwrap();

    // Closing stdin makes the child release the lock and exit.
    drop(holder.0.stdin.take());
    // Read the child's remaining output so it can exit without a broken pipe.
    tokio::task::spawn_blocking(move || lines.by_ref().for_each(drop))
        .await
        .unwrap();
    holder.wait_success();
    let patient = FileStore::new(&path);
    drop(patient.lock(&key("busy")).await.unwrap());
}

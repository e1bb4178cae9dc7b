//! The gateway's credential vault on both backends: SQLite in a temporary folder, and a
//! real PostgreSQL (mcp-testkit's fixture, on loopback; "not run" without it, a failure
//! without it when `MCP_REQUIRE_POSTGRES` is set). Every scenario runs on each backend.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail fast"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use mcp_auth::{
    AuthError, CredentialVault, StoredCredentials, VaultKey, VaultKeys, VaultLocation, VaultOptions,
};
use mcp_key::{Fingerprint, McpServerKey, Secret};
use mcp_testkit::postgres::PostgresFixture;
use pretty_assertions::assert_eq;

const ALICE_TOKEN: &str = "alice-access-token-4f1c";
const BOB_TOKEN: &str = "bob-access-token-9d2e";

/// One backend: its location, and raw access to its rows (what an attacker with the
/// database file or a database login sees).
enum Backend {
    Sqlite {
        dir: tempfile::TempDir,
    },
    Postgres {
        fixture: PostgresFixture,
        pids: Vec<u32>,
    },
}

/// A row as stored: key id, nonce, ciphertext.
type RawRow = (String, Vec<u8>, Vec<u8>);

impl Backend {
    fn sqlite() -> Self {
        Self::Sqlite {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn postgres(test: &str) -> Option<Self> {
        let fixture = PostgresFixture::start_or_skip(test)?;
        let pids = fixture.pids();
        Some(Self::Postgres { fixture, pids })
    }

    fn sqlite_path(&self) -> PathBuf {
        match self {
            Self::Sqlite { dir } => dir.path().join("gateway").join("credentials.db"),
            Self::Postgres { .. } => unreachable!("a PostgreSQL backend"),
        }
    }

    fn location(&self) -> VaultLocation {
        match self {
            Self::Sqlite { .. } => VaultLocation::Sqlite(self.sqlite_path()),
            Self::Postgres { fixture, .. } => VaultLocation::Postgres(fixture.url()),
        }
    }

    async fn open(&self, keys: VaultKeys) -> CredentialVault {
        CredentialVault::open(
            self.location(),
            keys,
            VaultOptions::new().acquire_timeout(Duration::from_secs(3)),
        )
        .await
        .unwrap()
    }

    async fn raw_row(&self, caller: &str, server: &str, environment: &str) -> Option<RawRow> {
        const SQL: &str = "SELECT key_id, nonce, ciphertext FROM mcp_vault_credentials \
             WHERE caller = $1 AND server = $2 AND environment = $3";
        match self {
            Self::Sqlite { .. } => {
                let pool = sqlx::SqlitePool::connect(&format!(
                    "sqlite://{}",
                    self.sqlite_path().display()
                ))
                .await
                .unwrap();
                let row = sqlx::query_as(SQL)
                    .bind(caller)
                    .bind(server)
                    .bind(environment)
                    .fetch_optional(&pool)
                    .await
                    .unwrap();
                pool.close().await;
                row
            }
            Self::Postgres { fixture, .. } => {
                let pool = sqlx::PgPool::connect(&fixture.url()).await.unwrap();
                let row = sqlx::query_as(SQL)
                    .bind(caller)
                    .bind(server)
                    .bind(environment)
                    .fetch_optional(&pool)
                    .await
                    .unwrap();
                pool.close().await;
                row
            }
        }
    }

    /// Overwrite one row's sealed columns, as someone with write access to the database
    /// could.
    async fn write_raw_row(&self, caller: &str, server: &str, environment: &str, raw: &RawRow) {
        const SQL: &str = "UPDATE mcp_vault_credentials \
             SET key_id = $4, nonce = $5, ciphertext = $6 \
             WHERE caller = $1 AND server = $2 AND environment = $3";
        let affected = match self {
            Self::Sqlite { .. } => {
                let pool = sqlx::SqlitePool::connect(&format!(
                    "sqlite://{}",
                    self.sqlite_path().display()
                ))
                .await
                .unwrap();
                let done = sqlx::query(SQL)
                    .bind(caller)
                    .bind(server)
                    .bind(environment)
                    .bind(&raw.0)
                    .bind(&raw.1)
                    .bind(&raw.2)
                    .execute(&pool)
                    .await
                    .unwrap()
                    .rows_affected();
                pool.close().await;
                done
            }
            Self::Postgres { fixture, .. } => {
                let pool = sqlx::PgPool::connect(&fixture.url()).await.unwrap();
                let done = sqlx::query(SQL)
                    .bind(caller)
                    .bind(server)
                    .bind(environment)
                    .bind(&raw.0)
                    .bind(&raw.1)
                    .bind(&raw.2)
                    .execute(&pool)
                    .await
                    .unwrap()
                    .rows_affected();
                pool.close().await;
                done
            }
        };
        assert_eq!(affected, 1, "the row to overwrite exists");
    }

    /// Stop the database server (PostgreSQL) and check no process of it is left.
    fn stop(&mut self) {
        if let Self::Postgres { fixture, pids } = self {
            // The workers of the start, and the backends of connections still open.
            pids.extend(fixture.pids());
            fixture.stop();
            let left: Vec<u32> = pids
                .iter()
                .copied()
                .filter(|pid| mcp_testkit::process_alive(*pid))
                .collect();
            assert!(left.is_empty(), "PostgreSQL processes left: {left:?}");
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.stop();
        }
    }
}

fn key(id: &str, byte: u8) -> VaultKey {
    VaultKey::new(id, [byte; 32]).unwrap()
}

fn keys(id: &str, byte: u8) -> VaultKeys {
    VaultKeys::new(key(id, byte))
}

fn server(text: &str) -> McpServerKey {
    text.parse().unwrap()
}

fn creds(token: &str, expires_at: Option<u64>) -> StoredCredentials {
    let mut creds = StoredCredentials::new("gateway-client");
    creds.access_token = Some(Secret::new(token));
    creds.refresh_token = Some(Secret::new(format!("{token}-refresh")));
    creds.scopes = vec!["repo".into()];
    creds.expires_at = expires_at;
    creds.token_endpoint = Some("https://auth.example/token".into());
    creds
}

/// Each scenario as one test per backend.
macro_rules! on_both_backends {
    ($($scenario:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    super::$scenario(super::Backend::sqlite()).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    let Some(backend) = super::Backend::postgres(concat!(
                        "vault postgres ",
                        stringify!($scenario)
                    )) else {
                        return;
                    };
                    super::$scenario(backend).await;
                }
            )*
        }
    };
}

on_both_backends!(
    round_trip,
    ciphertext_at_rest_is_not_the_token,
    moved_ciphertext_is_refused,
    key_rotation,
    callers_are_isolated,
    delete_one_and_delete_all,
    corrupt_row_is_named,
    store_unreachable,
    approvals_are_per_caller,
    accepted_drift_is_shared,
);

async fn round_trip(backend: Backend) {
    let vault = backend.open(keys("k1", 1)).await;
    let github = server("github");
    assert_eq!(vault.get("alice", &github).await.unwrap(), None);
    let first = creds(ALICE_TOKEN, Some(2_000_000_000));
    vault.put("alice", &github, &first).await.unwrap();
    assert_eq!(vault.get("alice", &github).await.unwrap(), Some(first));
    // A write replaces.
    let second = creds("alice-second-token", Some(2_000_000_100));
    vault.put("alice", &github, &second).await.unwrap();
    assert_eq!(vault.get("alice", &github).await.unwrap(), Some(second));

    // The status page's view: server, expiry, refresh failure; never a token.
    assert!(
        vault
            .record_refresh_failure("alice", &github, "invalid_grant")
            .await
            .unwrap()
    );
    assert!(
        !vault
            .record_refresh_failure("alice", &server("jira"), "invalid_grant")
            .await
            .unwrap(),
        "nothing stored for jira"
    );
    let entries = vault.list("alice").await.unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].server, github);
    assert_eq!(entries[0].expires_at, Some(2_000_000_100));
    assert!(entries[0].updated_at_ms > 0);
    let failure = entries[0].refresh_failure.as_ref().unwrap();
    assert_eq!(failure.reason, "invalid_grant");
    assert!(failure.at_ms >= entries[0].updated_at_ms);
    let shown = format!("{entries:?}");
    assert!(!shown.contains("token"), "{shown}");
    // The next write (a refresh that worked) clears the failure.
    vault
        .put("alice", &github, &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    let entries = vault.list("alice").await.unwrap();
    assert_eq!(entries[0].refresh_failure, None);
    assert_eq!(entries[0].expires_at, None);

    // The same rows after a reopen (a restart of the gateway).
    vault.close().await;
    let vault = backend.open(keys("k1", 1)).await;
    assert_eq!(
        vault.get("alice", &github).await.unwrap(),
        Some(creds(ALICE_TOKEN, None))
    );
    vault.close().await;
}

async fn ciphertext_at_rest_is_not_the_token(backend: Backend) {
    let vault = backend.open(keys("k1", 1)).await;
    let github = server("github");
    vault
        .put("alice", &github, &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    let (key_id, nonce, ciphertext) = backend.raw_row("alice", "github", "").await.unwrap();
    assert_eq!(key_id, "k1");
    assert_eq!(nonce.len(), 12);
    let contains = |haystack: &[u8], needle: &str| {
        haystack
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    };
    assert!(!contains(&ciphertext, ALICE_TOKEN));
    assert!(
        !contains(&ciphertext, "gateway-client"),
        "the whole record is sealed"
    );
    // A fresh nonce per write: the same record seals differently.
    vault
        .put("alice", &github, &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    let (_, nonce2, ciphertext2) = backend.raw_row("alice", "github", "").await.unwrap();
    assert_ne!(nonce, nonce2);
    assert_ne!(ciphertext, ciphertext2);
    if let Backend::Sqlite { .. } = backend {
        // Nowhere in the file either (nor in its write-ahead log).
        vault.close().await;
        for suffix in ["", "-wal"] {
            let mut path = backend.sqlite_path().into_os_string();
            path.push(suffix);
            if let Ok(bytes) = std::fs::read(&path) {
                assert!(!contains(&bytes, ALICE_TOKEN), "{path:?} holds the token");
            }
        }
    } else {
        vault.close().await;
    }
}

async fn moved_ciphertext_is_refused(backend: Backend) {
    let vault = backend.open(keys("k1", 1)).await;
    let github = server("github");
    let jira = server("jira");
    let scoped = server("github@devbox");
    vault
        .put("alice", &github, &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    vault
        .put("bob", &github, &creds(BOB_TOKEN, None))
        .await
        .unwrap();
    vault
        .put("alice", &jira, &creds("alice-jira", None))
        .await
        .unwrap();
    vault
        .put("alice", &scoped, &creds("alice-devbox", None))
        .await
        .unwrap();
    let alice_row = backend.raw_row("alice", "github", "").await.unwrap();

    // Alice's sealed credentials copied into bob's row do not open as bob's.
    backend.write_raw_row("bob", "github", "", &alice_row).await;
    let err = vault.get("bob", &github).await.unwrap_err();
    assert!(err.is_wrong_key(), "{err}");
    assert!(!err.is_corrupt());
    let auth = AuthError::Vault {
        server: github.clone(),
        source: Box::new(vault.get("bob", &github).await.unwrap_err()),
    };
    assert!(auth.is_store_wrong_key() && !auth.is_store_unreachable() && !auth.is_retryable());
    let text = err.to_string();
    assert!(
        text.contains("`bob`") && text.contains("`github`"),
        "{text}"
    );
    assert!(!text.contains(ALICE_TOKEN));
    // Nor into another server's row of hers, nor another environment's.
    backend.write_raw_row("alice", "jira", "", &alice_row).await;
    assert!(vault.get("alice", &jira).await.unwrap_err().is_wrong_key());
    backend
        .write_raw_row("alice", "github", "devbox", &alice_row)
        .await;
    let err = vault.get("alice", &scoped).await.unwrap_err();
    assert!(err.is_wrong_key());
    assert!(err.to_string().contains("github@devbox"), "{err}");
    // Her own row still opens.
    assert_eq!(
        vault.get("alice", &github).await.unwrap(),
        Some(creds(ALICE_TOKEN, None))
    );
    vault.close().await;
}

async fn key_rotation(backend: Backend) {
    let github = server("github");
    let jira = server("jira");
    let old = backend.open(keys("k1", 1)).await;
    old.put("alice", &github, &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    old.put("bob", &jira, &creds(BOB_TOKEN, None))
        .await
        .unwrap();
    old.close().await;

    // The new key is current, the old one still opens its rows.
    let rotated = VaultKeys::new(key("k2", 2))
        .with_previous(key("k1", 1))
        .unwrap();
    let vault = backend.open(rotated.clone()).await;
    assert_eq!(
        vault.get("alice", &github).await.unwrap(),
        Some(creds(ALICE_TOKEN, None))
    );
    assert_eq!(
        backend.raw_row("alice", "github", "").await.unwrap().0,
        "k1"
    );
    // A write re-seals under the current key.
    vault
        .put("alice", &github, &creds("alice-refreshed", None))
        .await
        .unwrap();
    assert_eq!(
        backend.raw_row("alice", "github", "").await.unwrap().0,
        "k2"
    );
    // The rest is re-sealed at once.
    assert_eq!(vault.reseal().await.unwrap(), 1);
    assert_eq!(backend.raw_row("bob", "jira", "").await.unwrap().0, "k2");
    assert_eq!(vault.reseal().await.unwrap(), 0);
    vault.close().await;

    // Without k1 everything still opens.
    let only_new = backend.open(keys("k2", 2)).await;
    assert_eq!(
        only_new.get("bob", &jira).await.unwrap(),
        Some(creds(BOB_TOKEN, None))
    );
    only_new.close().await;

    // A key id the gateway lacks is named.
    let stranger = backend.open(keys("k3", 3)).await;
    let err = stranger.get("bob", &jira).await.unwrap_err();
    assert!(err.is_wrong_key(), "{err}");
    assert!(err.to_string().contains("key `k2`"), "{err}");
    stranger.close().await;
    // Another key under the right id does not open the rows.
    let impostor = backend.open(keys("k2", 9)).await;
    let err = impostor.get("bob", &jira).await.unwrap_err();
    assert!(err.is_wrong_key(), "{err}");
    impostor.close().await;
}

async fn callers_are_isolated(backend: Backend) {
    let vault = backend.open(keys("k1", 1)).await;
    let github = server("github");
    let scoped = server("github@devbox");
    vault
        .put("alice", &github, &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    // Bob has nothing: never alice's.
    assert_eq!(vault.get("bob", &github).await.unwrap(), None);
    assert_eq!(vault.list("bob").await.unwrap(), vec![]);
    assert!(!vault.delete("bob", &github).await.unwrap());
    assert!(
        !vault
            .record_refresh_failure("bob", &github, "x")
            .await
            .unwrap()
    );
    // Callers that differ only by case or a prefix are other callers.
    assert_eq!(vault.get("Alice", &github).await.unwrap(), None);
    assert_eq!(vault.get("alic", &github).await.unwrap(), None);
    vault
        .put("bob", &github, &creds(BOB_TOKEN, None))
        .await
        .unwrap();
    assert_eq!(
        vault.get("bob", &github).await.unwrap(),
        Some(creds(BOB_TOKEN, None))
    );
    assert_eq!(
        vault.get("alice", &github).await.unwrap(),
        Some(creds(ALICE_TOKEN, None))
    );
    // A server in an environment is another row than the host-wide one.
    assert_eq!(vault.get("alice", &scoped).await.unwrap(), None);
    vault
        .put("alice", &scoped, &creds("alice-devbox", None))
        .await
        .unwrap();
    let servers: Vec<McpServerKey> = vault
        .list("alice")
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.server)
        .collect();
    assert_eq!(servers, vec![github.clone(), scoped]);
    let servers: Vec<McpServerKey> = vault
        .list("bob")
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.server)
        .collect();
    assert_eq!(servers, vec![github]);
    // An unusable caller is refused, not matched against anything.
    assert!(vault.list("").await.is_err());
    vault.close().await;
}

async fn delete_one_and_delete_all(backend: Backend) {
    let vault = backend.open(keys("k1", 1)).await;
    let github = server("github");
    let jira = server("jira");
    for caller in ["alice", "bob"] {
        for s in [&github, &jira] {
            vault
                .put(caller, s, &creds(&format!("{caller}-{s}"), None))
                .await
                .unwrap();
        }
    }
    // Sign-out of one server.
    assert!(vault.delete("alice", &github).await.unwrap());
    assert!(!vault.delete("alice", &github).await.unwrap());
    assert_eq!(vault.get("alice", &github).await.unwrap(), None);
    assert!(vault.get("alice", &jira).await.unwrap().is_some());
    assert!(vault.get("bob", &github).await.unwrap().is_some());
    // An administrator revokes everything of bob's.
    assert_eq!(vault.delete_caller("bob").await.unwrap(), 2);
    assert_eq!(vault.list("bob").await.unwrap(), vec![]);
    assert_eq!(vault.get("bob", &jira).await.unwrap(), None);
    assert_eq!(vault.delete_caller("bob").await.unwrap(), 0);
    assert_eq!(
        vault.get("alice", &jira).await.unwrap(),
        Some(creds("alice-jira", None))
    );
    assert!(backend.raw_row("bob", "jira", "").await.is_none());
    vault.close().await;
}

async fn corrupt_row_is_named(backend: Backend) {
    let vault = backend.open(keys("k1", 1)).await;
    let github = server("github");
    vault
        .put("alice", &github, &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    let (key_id, _, ciphertext) = backend.raw_row("alice", "github", "").await.unwrap();
    backend
        .write_raw_row("alice", "github", "", &(key_id, vec![0; 5], ciphertext))
        .await;
    let err = vault.get("alice", &github).await.unwrap_err();
    assert!(err.is_corrupt(), "{err}");
    let auth = AuthError::Vault {
        server: github.clone(),
        source: Box::new(vault.get("alice", &github).await.unwrap_err()),
    };
    assert!(auth.is_store_corrupt() && !auth.is_store_wrong_key());
    assert!(!err.is_wrong_key());
    let text = err.to_string();
    assert!(text.contains("`alice`") && text.contains("nonce"), "{text}");
    // Signing out removes it; a new sign-in works.
    assert!(vault.delete("alice", &github).await.unwrap());
    vault
        .put("alice", &github, &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    assert!(vault.get("alice", &github).await.unwrap().is_some());
    vault.close().await;
}

async fn store_unreachable(mut backend: Backend) {
    let github = server("github");
    match backend {
        Backend::Sqlite { .. } => {
            // A file that cannot be created (its folder is a file) cannot be opened.
            let blocker = backend.sqlite_path();
            std::fs::create_dir_all(blocker.parent().unwrap().parent().unwrap()).unwrap();
            std::fs::write(blocker.parent().unwrap(), b"not a folder").unwrap();
            let err = CredentialVault::open(backend.location(), keys("k1", 1), VaultOptions::new())
                .await
                .unwrap_err();
            assert!(err.to_string().contains("credentials.db"), "{err}");
        }
        Backend::Postgres { .. } => {
            let vault = backend.open(keys("k1", 1)).await;
            vault
                .put("alice", &github, &creds(ALICE_TOKEN, None))
                .await
                .unwrap();
            backend.stop();
            let err = vault.get("alice", &github).await.unwrap_err();
            assert!(err.is_unreachable(), "{err:?}");
            assert!(err.is_retryable());
            assert!(err.to_string().contains("unreachable"), "{err}");
            // As the OAuth side reports it for the server.
            let auth = AuthError::Vault {
                server: github.clone(),
                source: Box::new(err),
            };
            assert!(auth.is_store_unreachable() && auth.is_retryable());
            assert!(!auth.is_store_wrong_key() && !auth.is_store_corrupt());
            assert_eq!(auth.server(), Some(&github));
            assert!(auth.to_string().contains("`github`"), "{auth}");
            assert!(
                vault
                    .put("bob", &github, &creds(BOB_TOKEN, None))
                    .await
                    .unwrap_err()
                    .is_unreachable()
            );
            assert!(vault.list("alice").await.unwrap_err().is_unreachable());
            vault.close().await;
            // Opening fails the same way, naming the database without a password.
            let err = CredentialVault::open(
                backend.location(),
                keys("k1", 1),
                VaultOptions::new().acquire_timeout(Duration::from_secs(2)),
            )
            .await
            .unwrap_err();
            assert!(err.is_unreachable(), "{err:?}");
            assert!(err.to_string().contains("127.0.0.1"), "{err}");
        }
    }
}

async fn approvals_are_per_caller(backend: Backend) {
    let vault = backend.open(keys("k1", 1)).await;
    let github = server("github");
    let scoped = server("github@devbox");
    let v1 = Fingerprint::builder("tool")
        .str("description", "v1")
        .finish();
    let v2 = Fingerprint::builder("tool")
        .str("description", "v2")
        .finish();
    assert_eq!(
        vault
            .remembered_approval("alice", &github, "create_issue")
            .await
            .unwrap(),
        None
    );
    vault
        .remember_approval("alice", &github, "create_issue", Some(&v1))
        .await
        .unwrap();
    let approval = vault
        .remembered_approval("alice", &github, "create_issue")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(approval.definition, Some(v1));
    assert!(approval.approved_at_ms > 0);
    assert!(approval.covers(Some(&v1)));
    // The tool changed: asked again.
    assert!(!approval.covers(Some(&v2)));
    // Another instance (another connection to the same store) sees it.
    let other_instance = backend.open(keys("k1", 1)).await;
    assert_eq!(
        other_instance
            .remembered_approval("alice", &github, "create_issue")
            .await
            .unwrap(),
        Some(approval)
    );
    other_instance.close().await;
    // Bob's, another tool's, another environment's: none.
    for (caller, s, tool) in [
        ("bob", &github, "create_issue"),
        ("alice", &github, "delete_repo"),
        ("alice", &scoped, "create_issue"),
    ] {
        assert_eq!(
            vault.remembered_approval(caller, s, tool).await.unwrap(),
            None,
            "{caller} {s} {tool}"
        );
    }
    // Approved again (without a definition): replaces.
    vault
        .remember_approval("alice", &github, "create_issue", None)
        .await
        .unwrap();
    let approval = vault
        .remembered_approval("alice", &github, "create_issue")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(approval.definition, None);
    assert!(approval.covers(Some(&v2)));
    vault
        .remember_approval("bob", &github, "create_issue", Some(&v2))
        .await
        .unwrap();
    assert_eq!(vault.forget_approvals("alice").await.unwrap(), 1);
    assert_eq!(
        vault
            .remembered_approval("alice", &github, "create_issue")
            .await
            .unwrap(),
        None
    );
    assert!(
        vault
            .remembered_approval("bob", &github, "create_issue")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        vault
            .remember_approval("alice", &github, "", None)
            .await
            .is_err()
    );
    vault.close().await;
}

/// An accepted tool change, seen by another instance on the same store, for that very
/// definition only, per server and environment.
async fn accepted_drift_is_shared(backend: Backend) {
    let vault = backend.open(keys("k1", 1)).await;
    let github = server("github");
    let scoped = server("github@devbox");
    let v2 = Fingerprint::builder("tool")
        .str("description", "v2")
        .finish();
    let v3 = Fingerprint::builder("tool")
        .str("description", "v3")
        .finish();
    assert_eq!(vault.accepted_drift(&github, "search").await.unwrap(), None);
    vault
        .accept_drift(&github, "search", Some(&v2), "sub:alice")
        .await
        .unwrap();
    let other_instance = backend.open(keys("k1", 1)).await;
    let accepted = other_instance
        .accepted_drift(&github, "search")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(accepted.definition, Some(v2));
    assert_eq!(accepted.accepted_by, "sub:alice");
    assert!(accepted.accepted_at_ms > 0);
    assert!(accepted.covers(Some(&v2)));
    // A later change is not covered.
    assert!(!accepted.covers(Some(&v3)));
    // Another tool, another environment: nothing accepted.
    assert_eq!(
        other_instance
            .accepted_drift(&github, "other")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        other_instance
            .accepted_drift(&scoped, "search")
            .await
            .unwrap(),
        None
    );
    // Accepted again (the removal, by bob): replaces.
    other_instance
        .accept_drift(&github, "search", None, "sub:bob")
        .await
        .unwrap();
    let accepted = vault
        .accepted_drift(&github, "search")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(accepted.definition, None);
    assert_eq!(accepted.accepted_by, "sub:bob");
    assert!(accepted.covers(None));
    assert!(!accepted.covers(Some(&v2)));
    other_instance.close().await;
    assert!(
        vault
            .accept_drift(&github, "", None, "sub:alice")
            .await
            .is_err()
    );
    assert!(
        vault
            .accept_drift(&github, "search", None, "")
            .await
            .is_err()
    );
    vault.close().await;
}

#[tokio::test]
async fn sqlite_file_is_private() {
    let backend = Backend::sqlite();
    let path = backend.sqlite_path();
    let vault = backend.open(keys("k1", 1)).await;
    vault
        .put("alice", &server("github"), &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700, "the folder it created");
    let mut wal = path.clone().into_os_string();
    wal.push("-wal");
    let wal = PathBuf::from(wal);
    assert!(wal.exists(), "write-ahead log");
    assert_eq!(mode(&wal), 0o600);
    vault.close().await;

    // A file other users may read is refused, and left as it is.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = CredentialVault::open_sqlite(&path, keys("k1", 1))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("chmod 600") && err.to_string().contains("644"),
        "{err}"
    );
    assert_eq!(mode(&path), 0o644);
    // So is a symbolic link to it.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = path.with_file_name("link.db");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    let err = CredentialVault::open_sqlite(&link, keys("k1", 1))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
}

#[test]
fn keys_and_locations_never_show_secrets() {
    let keys = VaultKeys::new(key("k2", 0xAB))
        .with_previous(key("k1", 0xCD))
        .unwrap();
    let shown = format!("{keys:?}");
    assert!(shown.contains("k2") && shown.contains("k1"), "{shown}");
    assert!(!shown.contains("171") && !shown.contains("205"), "{shown}");
    let location = VaultLocation::Postgres("postgres://gw:hunter2@db.internal/gw".into());
    assert!(!format!("{location:?}").contains("hunter2"));
    assert!(!location.label().contains("hunter2"));
    assert!(VaultKey::from_slice("k", &[1; 31]).is_err());
    assert!(VaultKey::new("", [1; 32]).is_err());
    assert_ne!(
        VaultKey::generate("a").unwrap().expose_bytes(),
        VaultKey::generate("b").unwrap().expose_bytes()
    );
}

/// Several gateway instances starting at once against one fresh PostgreSQL: the schema is
/// migrated once (under sqlx's lock), and what one instance stores another reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_instances_open_at_once_and_share_rows() {
    let Some(backend) = Backend::postgres("vault postgres instances at once") else {
        return;
    };
    let (one, two, three) = tokio::join!(
        backend.open(keys("k1", 1)),
        backend.open(keys("k1", 1)),
        backend.open(keys("k1", 1)),
    );
    let github = server("github");
    one.put("alice", &github, &creds(ALICE_TOKEN, None))
        .await
        .unwrap();
    assert_eq!(
        three.get("alice", &github).await.unwrap(),
        Some(creds(ALICE_TOKEN, None))
    );
    assert!(two.delete("alice", &github).await.unwrap());
    assert_eq!(one.get("alice", &github).await.unwrap(), None);
    for vault in [one, two, three] {
        vault.close().await;
    }
}

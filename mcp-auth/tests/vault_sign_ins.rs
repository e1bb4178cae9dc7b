//! Sign-ins in progress on the vault, as two gateway instances share them: two vaults
//! opened on one store (a SQLite file; a real PostgreSQL from mcp-testkit's fixture on
//! loopback, "not run" without it, a failure without it when `MCP_REQUIRE_POSTGRES` is
//! set). A state sealed by one opens on the other; a sign-in started on one cannot be
//! started again on the other; callbacks racing on both take it exactly once.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail fast"
)]

use mcp_auth::{CredentialVault, VaultError, VaultKey, VaultKeys, VaultLocation, VaultOptions};
use mcp_testkit::postgres::PostgresFixture;
use pretty_assertions::assert_eq;

/// How many sign-ins race, each finished by both instances at once.
const RACES: usize = 20;

fn keys() -> VaultKeys {
    VaultKeys::new(VaultKey::new("k1", [7; 32]).unwrap())
}

fn in_ten_minutes() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600
}

async fn two_instances(location: &VaultLocation) -> (CredentialVault, CredentialVault) {
    let open = || CredentialVault::open(location.clone(), keys(), VaultOptions::new());
    (open().await.unwrap(), open().await.unwrap())
}

async fn shared_by_two_instances(location: VaultLocation) {
    let (a, b) = two_instances(&location).await;
    // A state sealed by A opens on B; one sealed under other keys does not.
    let state = a.seal_sign_in_state(b"{\"caller\":\"alice\"}").unwrap();
    assert_eq!(
        b.open_sign_in_state(&state).unwrap(),
        b"{\"caller\":\"alice\"}"
    );
    let dir = tempfile::tempdir().unwrap();
    let stranger = CredentialVault::open_sqlite(
        dir.path().join("other.db"),
        VaultKeys::new(VaultKey::new("k1", [8; 32]).unwrap()),
    )
    .await
    .unwrap();
    assert!(matches!(
        stranger.open_sign_in_state(&state),
        Err(VaultError::Invalid { .. })
    ));
    stranger.close().await;

    // Started on A: B cannot start it again, B finishes it, nobody again.
    let expires = in_ten_minutes();
    assert!(
        a.start_sign_in("s-1", expires, b"verifier-1")
            .await
            .unwrap()
    );
    assert!(!b.start_sign_in("s-1", expires, b"mallory").await.unwrap());
    assert_eq!(b.open_sign_ins().await.unwrap(), 1);
    assert_eq!(
        b.finish_sign_in("s-1").await.unwrap().as_deref(),
        Some(&b"verifier-1"[..])
    );
    assert_eq!(a.finish_sign_in("s-1").await.unwrap(), None);
    assert_eq!(b.finish_sign_in("s-1").await.unwrap(), None);

    // Callbacks racing on both instances: each sign-in is taken exactly once.
    for n in 0..RACES {
        let id = format!("race-{n}");
        assert!(a.start_sign_in(&id, expires, id.as_bytes()).await.unwrap());
        let (on_a, on_b) = tokio::join!(
            tokio::spawn({
                let (a, id) = (a.clone(), id.clone());
                async move { a.finish_sign_in(&id).await.unwrap() }
            }),
            tokio::spawn({
                let (b, id) = (b.clone(), id.clone());
                async move { b.finish_sign_in(&id).await.unwrap() }
            }),
        );
        let taken: Vec<Vec<u8>> = [on_a.unwrap(), on_b.unwrap()]
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(taken, [id.into_bytes()], "sign-in {n}");
    }
    assert_eq!(a.open_sign_ins().await.unwrap(), 0);
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sign_ins_are_shared_by_two_instances() {
    let dir = tempfile::tempdir().unwrap();
    shared_by_two_instances(VaultLocation::Sqlite(dir.path().join("v.db"))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_sign_ins_are_shared_by_two_instances() {
    let Some(mut fixture) =
        PostgresFixture::start_or_skip("postgres_sign_ins_are_shared_by_two_instances")
    else {
        return;
    };
    let mut pids = fixture.pids();
    shared_by_two_instances(VaultLocation::Postgres(fixture.url())).await;
    pids.extend(fixture.pids());
    fixture.stop();
    let left: Vec<u32> = pids
        .into_iter()
        .filter(|pid| mcp_testkit::process_alive(*pid))
        .collect();
    assert!(left.is_empty(), "PostgreSQL processes left: {left:?}");
}

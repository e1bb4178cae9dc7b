//! [`VaultAuth`]: a `caller` server's `Authorization` for one set: the caller's own
//! credentials for that server from the hub's vault, refreshed (and stored again) through
//! mcp-auth's OAuth client when they expire. With none, the server fails for that caller
//! with a sign-in error naming the server; the caller's call of it gets the consent page
//! ([`super::sign_in_required`]).

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, Weak};

use mcp_auth::{
    CredentialStore, CredentialVault, OAuthCredentials, OAuthSettings, StoreError, StoreKey,
    StoreKind, StoreLock, StoredCredentials,
};
use mcp_connections::{AuthHeaderProvider, BoxFuture, CredentialsError};
use mcp_key::{McpServerKey, Secret};

use super::consent::Consent;
use super::vault::HubVault;
use super::{CallerSource, SIGN_IN_NEEDED, Tokens, unavailable};

/// The caller's own credentials for one `caller` server, from the vault.
pub(crate) struct VaultAuth {
    /// The server's URL (the `resource` its tokens are for).
    url: String,
    vault: HubVault,
    consent: Result<Arc<Consent>, String>,
    caller: CallerSource,
    tokens: Arc<Tokens>,
    /// The hub's refresh locks: one refresh at a time per (caller, server), whichever
    /// set (session, or 2026-era set kept for the caller) makes it.
    locks: Arc<RefreshLocks>,
}

impl VaultAuth {
    /// The credentials of the caller `caller` names for the server at `url`, in `vault`;
    /// `consent` makes the sign-in page URL when there are none.
    pub(crate) fn new(
        url: String,
        vault: HubVault,
        consent: Result<Arc<Consent>, String>,
        caller: CallerSource,
        tokens: Arc<Tokens>,
        locks: Arc<RefreshLocks>,
    ) -> Self {
        Self {
            url,
            vault,
            consent,
            caller,
            tokens,
            locks,
        }
    }

    /// The caller's OAuth credentials for `server`, kept in the vault; `None` when the
    /// vault holds nothing usable for them.
    ///
    /// With `reuse`, the OAuth client's first load is the row read here, so a request
    /// whose token is still good reads the vault once. Without it (a refresh after a
    /// 401, whose first load comes after the refresh lock), every load reads the vault,
    /// so a refresh another set made while this one waited for the lock is seen.
    async fn credentials(
        &self,
        server: &McpServerKey,
        reuse: bool,
    ) -> Result<Option<Refreshable>, CredentialsError> {
        let caller = self.caller.caller(&self.tokens, server).await?;
        let vault = self
            .vault
            .require()
            .map_err(|why| unavailable(server, format!("{why}; fix it and restart the gateway")))?;
        let stored = vault.get(caller.id(), server).await.map_err(|e| {
            unavailable(
                server,
                format!(
                    "the caller's credentials cannot be read from the credential store ({}); retry when it is back",
                    mcp_key::error_chain(&e)
                ),
            )
        })?;
        let usable = stored
            .as_ref()
            .is_some_and(|c| c.access_token.is_some() || c.refresh_token.is_some());
        if !usable {
            return Ok(None);
        }
        let store = Arc::new(CallerStore {
            vault: Arc::clone(vault),
            caller: caller.id().to_owned(),
            server: server.clone(),
            lock: self.locks.of(caller.id(), server),
            read: std::sync::Mutex::new(stored.filter(|_| reuse)),
        });
        let credentials = OAuthCredentials::new(
            server.clone(),
            &self.url,
            OAuthSettings::new(),
            Arc::clone(&store) as Arc<dyn CredentialStore>,
        );
        Ok(Some(Refreshable { credentials, store }))
    }

    /// The error of a caller without (usable) credentials for `server`. It names no
    /// sign-in page: the gateway makes one for the caller's call
    /// ([`super::sign_in_required`]), since what a connection reports is logged.
    fn sign_in_needed(&self, server: &McpServerKey) -> CredentialsError {
        let detail = match &self.consent {
            Ok(_) => format!(
                "{SIGN_IN_NEEDED}: the caller has no credentials for {server} here yet; call a tool of it through the gateway to get the sign-in page"
            ),
            Err(why) => format!("{SIGN_IN_NEEDED}, but no sign-in page can be made: {why}"),
        };
        unavailable(server, detail)
    }
}

impl AuthHeaderProvider for VaultAuth {
    fn authorization<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            let credentials = self.credentials(server, true).await?;
            let Some(Refreshable { credentials, store }) = credentials else {
                return Err(self.sign_in_needed(server));
            };
            match credentials.access_token().await {
                Ok(token) => Ok(Some(token)),
                Err(e) if e.is_auth_required() => {
                    store.refresh_failed(REFUSED).await;
                    Err(self.sign_in_needed(server))
                }
                Err(e) => {
                    store.refresh_failed(FAILED).await;
                    Err(CredentialsError::Unavailable {
                        server: server.clone(),
                        detail: "the caller's credentials cannot be refreshed; retry later"
                            .to_owned(),
                        source: Some(Arc::new(e)),
                    })
                }
            }
        })
    }

    fn refresh_after_unauthorized<'a>(
        &'a self,
        server: &'a McpServerKey,
        rejected: Option<&'a Secret>,
        _challenge: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            let credentials = self.credentials(server, false).await?;
            let (Some(Refreshable { credentials, store }), Some(rejected)) =
                (credentials, rejected)
            else {
                return Err(self.sign_in_needed(server));
            };
            match credentials.refresh_after_unauthorized(rejected).await {
                Ok(token) => Ok(Some(token)),
                Err(e) => {
                    store
                        .refresh_failed(if e.is_auth_required() {
                            REFUSED
                        } else {
                            FAILED
                        })
                        .await;
                    Err(self.sign_in_needed(server))
                }
            }
        })
    }
}

/// The refresh failure recorded when the authorization server refuses (the caller signs
/// in again).
const REFUSED: &str = "the authorization server refused the refresh: sign in again";
/// The refresh failure recorded when the refresh could not be made (the server down).
const FAILED: &str = "the refresh could not be made (authorization server unreachable or failing)";

/// The lock of one (caller, server)'s refreshes.
type RefreshLock = tokio::sync::Mutex<()>;

/// One lock per (caller, server) for the whole gateway, so two sets of one caller never
/// refresh the same credentials at once (with a rotating refresh token the second
/// refresh would be refused, and the caller asked to sign in again for nothing).
#[derive(Default)]
pub(crate) struct RefreshLocks {
    held: std::sync::Mutex<HashMap<(String, McpServerKey), Weak<RefreshLock>>>,
}

impl RefreshLocks {
    /// The lock of `caller`'s credentials for `server` (made when nobody holds it).
    fn of(&self, caller: &str, server: &McpServerKey) -> Arc<RefreshLock> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (caller.to_owned(), server.clone());
        if let Some(lock) = held.get(&key).and_then(Weak::upgrade) {
            return lock;
        }
        // Locks nobody holds any more go before a new one comes in.
        held.retain(|_, lock| lock.strong_count() > 0);
        let lock = Arc::default();
        held.insert(key, Arc::downgrade(&lock));
        lock
    }
}

/// The OAuth client of one (caller, server), with the vault row it refreshes.
struct Refreshable {
    credentials: OAuthCredentials,
    store: Arc<CallerStore>,
}

/// The vault's row of one (caller, server) as mcp-auth's [`CredentialStore`], so the
/// OAuth client refreshes and stores those credentials as it does one user's.
#[derive(Debug)]
struct CallerStore {
    vault: Arc<CredentialVault>,
    caller: String,
    server: McpServerKey,
    lock: Arc<tokio::sync::Mutex<()>>,
    /// The row [`VaultAuth::credentials`] just read, given to the first load instead of
    /// reading it again (taken then, so every later load reads the vault).
    read: std::sync::Mutex<Option<StoredCredentials>>,
}

impl CallerStore {
    /// Records a failed refresh for the caller's view of its sign-ins (best effort: a
    /// store that cannot take it is logged).
    async fn refresh_failed(&self, reason: &str) {
        if let Err(e) = self
            .vault
            .record_refresh_failure(&self.caller, &self.server, reason)
            .await
        {
            tracing::warn!(server = %self.server, "the refresh failure was not recorded: {e}");
        }
    }

    fn failed(&self, action: &'static str, e: &mcp_auth::VaultError) -> StoreError {
        StoreError::Io {
            action,
            path: self.vault.location().into(),
            source: std::io::Error::other(mcp_key::error_chain(e)),
        }
    }
}

impl CredentialStore for CallerStore {
    fn load<'a>(
        &'a self,
        _key: &'a StoreKey,
    ) -> BoxFuture<'a, Result<Option<StoredCredentials>, StoreError>> {
        Box::pin(async move {
            let read = self
                .read
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(read) = read {
                return Ok(Some(read));
            }
            self.vault
                .get(&self.caller, &self.server)
                .await
                .map_err(|e| self.failed("read credentials from", &e))
        })
    }

    fn save<'a>(
        &'a self,
        _key: &'a StoreKey,
        creds: &'a StoredCredentials,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.vault
                .put(&self.caller, &self.server, creds)
                .await
                .map_err(|e| self.failed("store credentials in", &e))
        })
    }

    fn delete<'a>(&'a self, _key: &'a StoreKey) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.vault
                .delete(&self.caller, &self.server)
                .await
                .map(|_| ())
                .map_err(|e| self.failed("delete credentials in", &e))
        })
    }

    fn lock<'a>(&'a self, _key: &'a StoreKey) -> BoxFuture<'a, Result<StoreLock, StoreError>> {
        Box::pin(async move {
            let guard = Arc::clone(&self.lock).lock_owned().await;
            Ok(StoreLock::new(
                guard,
                "the gateway's refresh of one caller's credentials",
            ))
        })
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Custom
    }

    fn location(&self) -> String {
        self.vault.location().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_row_just_read_is_the_first_load_only() {
        let dir = tempfile::tempdir().unwrap();
        let keys = mcp_auth::VaultKeys::new(mcp_auth::VaultKey::new("k1", [7; 32]).unwrap());
        let vault = Arc::new(
            CredentialVault::open_sqlite(dir.path().join("v.db"), keys)
                .await
                .unwrap(),
        );
        let server: McpServerKey = "tickets".parse().unwrap();
        let stored = StoredCredentials::new("c").with_access_token(Secret::new("in-vault"));
        vault.put("sub:alice", &server, &stored).await.unwrap();
        let read = StoredCredentials::new("c").with_access_token(Secret::new("read-before"));
        let store = CallerStore {
            vault,
            caller: "sub:alice".to_owned(),
            server: server.clone(),
            lock: Arc::default(),
            read: std::sync::Mutex::new(Some(read.clone())),
        };
        let key = StoreKey::new(&server, "http://127.0.0.1:1/mcp");
        assert_eq!(store.load(&key).await.unwrap(), Some(read));
        // Every later load (a refresh's, under the lock) reads the vault again.
        assert_eq!(store.load(&key).await.unwrap(), Some(stored.clone()));
        assert_eq!(store.load(&key).await.unwrap(), Some(stored));
    }

    #[test]
    fn one_refresh_lock_per_caller_and_server_across_sets() {
        let locks = RefreshLocks::default();
        let tickets: McpServerKey = "tickets".parse().unwrap();
        let desk: McpServerKey = "desk".parse().unwrap();
        let alice = locks.of("sub:alice", &tickets);
        // Another set of alice's gets the same lock: held, it is held for both.
        let again = locks.of("sub:alice", &tickets);
        assert!(Arc::ptr_eq(&alice, &again));
        let guard = alice.try_lock().unwrap();
        assert!(again.try_lock().is_err());
        drop(guard);
        // Another caller, or another server: a lock of its own.
        assert!(!Arc::ptr_eq(&alice, &locks.of("sub:bob", &tickets)));
        assert!(!Arc::ptr_eq(&alice, &locks.of("sub:alice", &desk)));
        // Once nobody holds it, it is forgotten.
        drop((alice, again));
        let _fresh = locks.of("sub:carol", &desk);
        let held = locks.held.lock().unwrap();
        assert!(!held.contains_key(&("sub:alice".to_owned(), tickets)));
    }
}

//! [`VaultAuth`]: a `caller` server's `Authorization` for one set: the caller's own
//! credentials for that server from the hub's vault, refreshed (and stored again) through
//! mcp-auth's OAuth client when they expire. With none, the server fails for that caller
//! with a sign-in error naming the server; the caller's call of it gets the consent page
//! ([`super::sign_in_required`]).

use std::sync::Arc;

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
    /// Serializes this set's refreshes of the credentials.
    refreshing: Arc<tokio::sync::Mutex<()>>,
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
    ) -> Self {
        Self {
            url,
            vault,
            consent,
            caller,
            tokens,
            refreshing: Arc::default(),
        }
    }

    /// The caller's OAuth credentials for `server`, kept in the vault; `None` when the
    /// vault holds nothing usable for them.
    async fn credentials(
        &self,
        server: &McpServerKey,
    ) -> Result<Option<OAuthCredentials>, CredentialsError> {
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
        let store = CallerStore {
            vault: Arc::clone(vault),
            caller: caller.id().to_owned(),
            server: server.clone(),
            lock: Arc::clone(&self.refreshing),
        };
        let credentials = OAuthCredentials::new(
            server.clone(),
            &self.url,
            OAuthSettings::new(),
            Arc::new(store),
        );
        Ok(Some(credentials))
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
            let credentials = self.credentials(server).await?;
            let Some(credentials) = credentials else {
                return Err(self.sign_in_needed(server));
            };
            match credentials.access_token().await {
                Ok(token) => Ok(Some(token)),
                Err(e) if e.is_auth_required() => Err(self.sign_in_needed(server)),
                Err(e) => Err(CredentialsError::Unavailable {
                    server: server.clone(),
                    detail: "the caller's credentials cannot be refreshed; retry later".to_owned(),
                    source: Some(Arc::new(e)),
                }),
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
            let credentials = self.credentials(server).await?;
            let (Some(credentials), Some(rejected)) = (credentials, rejected) else {
                return Err(self.sign_in_needed(server));
            };
            match credentials.refresh_after_unauthorized(rejected).await {
                Ok(token) => Ok(Some(token)),
                Err(_) => Err(self.sign_in_needed(server)),
            }
        })
    }
}

/// The vault's row of one (caller, server) as mcp-auth's [`CredentialStore`], so the
/// OAuth client refreshes and stores those credentials as it does one user's.
#[derive(Debug)]
struct CallerStore {
    vault: Arc<CredentialVault>,
    caller: String,
    server: McpServerKey,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl CallerStore {
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

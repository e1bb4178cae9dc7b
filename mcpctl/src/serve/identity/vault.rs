//! Opening the gateway's [`CredentialVault`]: where each caller's upstream credentials are
//! kept, sealed with AES-256-GCM.
//!
//! - `$MCPCTL_CREDENTIAL_STORE` set to a `postgres://` URL: PostgreSQL, shared by several
//!   instances; the key then comes from `$MCPCTL_VAULT_KEY` (64 hex digits, the same on
//!   every instance) with its id in `$MCPCTL_VAULT_KEY_ID` (default `k1`).
//! - Otherwise SQLite at `gateway/credentials.db` in the data directory (mode 0600), with
//!   the key from `$MCPCTL_VAULT_KEY`, else from `gateway/credentials.key` beside it,
//!   generated once (mode 0600) as `<id> <64 hex digits>`.
//!
//! The vault is opened only over HTTP, when a server's `upstream_identity` is `caller` or
//! `exchange` or when `$MCPCTL_CREDENTIAL_STORE` names a shared store: the instances'
//! shared state, which also keeps each caller's remembered approvals and the accepted tool
//! changes (see `serve::approval`). When it cannot be opened the gateway still starts: it
//! says why, only the servers that need the vault fail, and approvals are remembered per
//! session as without a store.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_auth::{CredentialVault, VaultKey, VaultKeys, VaultLocation, VaultOptions};
use mcp_catalog::ResolvedCatalog;

/// The variable naming a PostgreSQL store (`postgres://user:password@host:port/db`).
pub(crate) const STORE_VAR: &str = "MCPCTL_CREDENTIAL_STORE";
/// The variable holding the vault key as 64 hex digits.
pub(crate) const KEY_VAR: &str = "MCPCTL_VAULT_KEY";
/// The variable holding the vault key's id (default [`DEFAULT_KEY_ID`]).
pub(crate) const KEY_ID_VAR: &str = "MCPCTL_VAULT_KEY_ID";
/// The id of a key given without one, and of a generated key.
pub(crate) const DEFAULT_KEY_ID: &str = "k1";
/// The SQLite file, under the data directory.
const SQLITE_FILE: &str = "gateway/credentials.db";
/// The generated key's file, under the data directory.
const KEY_FILE: &str = "gateway/credentials.key";

/// The vault as the hub holds it: open, or why not (said once at start, and in each
/// error of a server that needs it).
#[derive(Debug, Clone)]
pub(crate) enum HubVault {
    /// No server needs it (or not over HTTP).
    NotNeeded,
    /// Open.
    Open(Arc<CredentialVault>),
    /// It could not be opened: why, for messages.
    Unavailable(String),
}

impl HubVault {
    /// The open vault, or why there is none (a sentence for an error message).
    pub(crate) fn require(&self) -> Result<&Arc<CredentialVault>, String> {
        match self {
            Self::Open(vault) => Ok(vault),
            Self::NotNeeded => Err("the gateway has no credential store".to_owned()),
            Self::Unavailable(why) => Err(format!("the credential store is unavailable: {why}")),
        }
    }
}

/// Whether a server of `catalog` acts as each caller (`caller` or `exchange`).
pub(crate) fn any_per_caller(catalog: &ResolvedCatalog) -> bool {
    catalog.servers().any(|(_, config)| {
        config
            .transport()
            .as_http()
            .is_some_and(|http| http.upstream_identity().is_per_caller())
    })
}

/// Whether the vault is opened: over HTTP (`over_http`), when a server of `catalog` acts as
/// each caller or `var` (the environment) names a shared store.
pub(crate) fn needed(
    catalog: &ResolvedCatalog,
    over_http: bool,
    var: impl Fn(&str) -> Option<String>,
) -> bool {
    over_http && (any_per_caller(catalog) || var(STORE_VAR).is_some())
}

/// Opens the vault when it is [`needed`]; a failure is said on stderr and kept as
/// [`HubVault::Unavailable`].
pub(crate) async fn open_for(catalog: &ResolvedCatalog, over_http: bool) -> HubVault {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if !needed(catalog, over_http, env) {
        return HubVault::NotNeeded;
    }
    match open(env, crate::host::auth::data_dir()).await {
        Ok(vault) => HubVault::Open(Arc::new(vault)),
        Err(why) => {
            eprintln!(
                "mcpctl serve: warning: {why}; servers with upstream_identity \"caller\" or \"exchange\" fail until it is fixed, the others go on"
            );
            HubVault::Unavailable(why)
        }
    }
}

/// Opens the vault where `var` (the environment) and `data_dir` say.
pub(crate) async fn open(
    var: impl Fn(&str) -> Option<String>,
    data_dir: Option<PathBuf>,
) -> Result<CredentialVault, String> {
    let (location, keys) = match var(STORE_VAR) {
        Some(url) => {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                return Err(format!(
                    "${STORE_VAR} is not a postgres:// URL; unset it to keep credentials in SQLite in the data directory"
                ));
            }
            let keys = key_from_env(&var)?.ok_or_else(|| {
                format!(
                    "${STORE_VAR} names a shared store but ${KEY_VAR} is not set: give every instance the same 64-hex-digit key, e.g. `openssl rand -hex 32`"
                )
            })?;
            (VaultLocation::Postgres(url), keys)
        }
        None => {
            let dir = data_dir.ok_or_else(|| {
                format!(
                    "no data directory for the credential store ({})",
                    crate::host::auth::DATA_DIR_RULE
                )
            })?;
            let keys = match key_from_env(&var)? {
                Some(keys) => keys,
                None => key_from_file(&dir.join(KEY_FILE))?,
            };
            (VaultLocation::Sqlite(dir.join(SQLITE_FILE)), keys)
        }
    };
    let label = location.label();
    CredentialVault::open(location, keys, VaultOptions::new())
        .await
        .map_err(|e| {
            format!(
                "the credential store {label} cannot be opened: {}",
                mcp_key::error_chain(&e)
            )
        })
}

/// The key of `$MCPCTL_VAULT_KEY` (and `$MCPCTL_VAULT_KEY_ID`), if set.
fn key_from_env(var: &impl Fn(&str) -> Option<String>) -> Result<Option<VaultKeys>, String> {
    let Some(hex) = var(KEY_VAR) else {
        return Ok(None);
    };
    let id = var(KEY_ID_VAR).unwrap_or_else(|| DEFAULT_KEY_ID.to_owned());
    let bytes = mcp_key::hex_decode(hex.trim()).ok_or_else(|| {
        format!("${KEY_VAR} is not 64 hex digits (32 bytes); make one with `openssl rand -hex 32`")
    })?;
    VaultKey::from_slice(id, &bytes)
        .map(|key| Some(VaultKeys::new(key)))
        .map_err(|e| format!("${KEY_VAR}: {e}"))
}

/// The key kept in `path` (`<id> <hex>`), generated and written (0600) when missing.
fn key_from_file(path: &Path) -> Result<VaultKeys, String> {
    let shown = path.display();
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let mode = std::fs::metadata(path)
                .map_err(|e| format!("the vault key {shown} cannot be read: {e}"))?
                .permissions()
                .mode();
            if mode & 0o077 != 0 {
                return Err(format!(
                    "the vault key {shown} may be read by others (mode {:o}); run `chmod 600 {shown}`",
                    mode & 0o777
                ));
            }
            let (id, hex) = text
                .trim()
                .split_once(' ')
                .ok_or_else(|| format!("the vault key {shown} is not `<id> <64 hex digits>`"))?;
            let bytes = mcp_key::hex_decode(hex.trim())
                .ok_or_else(|| format!("the vault key {shown} is not `<id> <64 hex digits>`"))?;
            VaultKey::from_slice(id, &bytes)
                .map(VaultKeys::new)
                .map_err(|e| format!("the vault key {shown}: {e}"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = VaultKey::generate(DEFAULT_KEY_ID)
                .map_err(|e| format!("a vault key cannot be generated: {e}"))?;
            write_key(path, &key)
                .map_err(|e| format!("the vault key {shown} cannot be written: {e}"))?;
            Ok(VaultKeys::new(key))
        }
        Err(e) => Err(format!("the vault key {shown} cannot be read: {e}")),
    }
}

/// Writes `key` to a new file at `path`, mode 0600 (its folder 0700 when made).
fn write_key(path: &Path, key: &VaultKey) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    let hex = mcp_key::hex_encode(key.expose_bytes());
    writeln!(file, "{} {hex}", key.id())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[tokio::test]
    async fn a_generated_key_is_kept_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let none = |_: &str| None;
        let vault = open(none, Some(dir.path().to_owned())).await.unwrap();
        let key_file = dir.path().join(KEY_FILE);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&key_file), 0o600);
        assert_eq!(mode(&dir.path().join(SQLITE_FILE)), 0o600);
        let first = std::fs::read_to_string(&key_file).unwrap();
        let server = "github".parse().unwrap();
        let mut creds = mcp_auth::StoredCredentials::new("client");
        creds.access_token = Some(mcp_key::Secret::new("alice-upstream"));
        vault.put("sub:alice", &server, &creds).await.unwrap();
        vault.close().await;
        // Reopened: the same key opens the row.
        let again = open(none, Some(dir.path().to_owned())).await.unwrap();
        assert_eq!(std::fs::read_to_string(&key_file).unwrap(), first);
        assert_eq!(again.get("sub:alice", &server).await.unwrap(), Some(creds));
        again.close().await;
        // A key others may read is refused.
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = open(none, Some(dir.path().to_owned())).await.unwrap_err();
        assert!(err.contains("chmod 600"), "{err}");
    }

    #[tokio::test]
    async fn a_key_from_the_environment_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let bad = |name: &str| (name == KEY_VAR).then(|| "abc".to_owned());
        let err = open(bad, Some(dir.path().to_owned())).await.unwrap_err();
        assert!(err.contains("64 hex digits"), "{err}");
        let good = |name: &str| (name == KEY_VAR).then(|| "ab".repeat(32));
        let vault = open(good, Some(dir.path().to_owned())).await.unwrap();
        assert_eq!(vault.keys().current_id(), DEFAULT_KEY_ID);
        assert!(!dir.path().join(KEY_FILE).exists(), "no key file written");
        vault.close().await;
        let shared =
            |name: &str| (name == STORE_VAR).then(|| "postgres://127.0.0.1:1/x".to_owned());
        let err = open(shared, None).await.unwrap_err();
        assert!(err.contains(KEY_VAR), "{err}");
    }
}

//! [`CredentialVault`]: the gateway's per-user upstream credentials, encrypted at rest, in
//! SQLite (one instance) or PostgreSQL (several).
//!
//! Rows are keyed by (caller, server name, environment). Each holds a
//! [`StoredCredentials`] record as JSON sealed with AES-256-GCM under the gateway's current
//! [`VaultKey`], a random 96-bit nonce per write, and the key's id beside it; the
//! associated data binds the key id and the row's key, so a ciphertext copied into another
//! caller's or server's row does not decrypt. Expiry and the last refresh failure are kept
//! in the clear beside it, for a status page ([`CredentialVault::list`]), and never hold a
//! token.
//!
//! Migrations (`migrations/sqlite`, `migrations/postgres` in this crate) run at open.

mod approvals;
mod drift;
mod error;
mod keys;
mod sign_ins;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_key::{EnvironmentId, McpServerKey, ServerName};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{Row, SqlSafeStr};

use crate::StoredCredentials;

pub use approvals::RememberedApproval;
pub use drift::AcceptedDrift;
pub use error::VaultError;
pub use keys::{MAX_KEY_ID_LEN, VAULT_KEY_LEN, VAULT_NONCE_LEN, VaultKey, VaultKeys};
use keys::{RowKey, Sealed};

/// Longest caller subject, in bytes.
pub const MAX_CALLER_LEN: usize = 512;

/// Longest refresh failure text kept for a status page, in characters (longer text is cut).
pub const MAX_REFRESH_FAILURE_LEN: usize = 200;

/// How long an operation waits for a database connection before reporting the store
/// unreachable, unless [`VaultOptions::acquire_timeout`] says otherwise.
pub const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The table sqlx records applied migrations in (not sqlx's default, so the gateway can
/// share a PostgreSQL database with an application that uses sqlx too).
pub const MIGRATIONS_TABLE: &str = "mcp_vault_migrations";

/// Where the vault keeps its rows.
#[derive(Clone)]
#[non_exhaustive]
pub enum VaultLocation {
    /// A SQLite file, created (mode 0600, folders 0700) when missing: one gateway
    /// instance, nothing else to run.
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://user:password@host:port/db`): several gateway
    /// instances share the rows.
    Postgres(String),
}

impl std::fmt::Debug for VaultLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

impl VaultLocation {
    /// The location as messages show it: the file path, or the URL without its password.
    pub fn label(&self) -> String {
        match self {
            Self::Sqlite(path) => format!("sqlite:{}", path.display()),
            Self::Postgres(url) => mcp_key::redact_url(url).into_owned(),
        }
    }
}

/// How [`CredentialVault::open`] connects.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct VaultOptions {
    /// How long an operation waits for a connection before the store is reported
    /// unreachable ([`DEFAULT_ACQUIRE_TIMEOUT`]).
    pub acquire_timeout: Duration,
    /// Most connections kept open (PostgreSQL: 8; SQLite: 4).
    pub max_connections: Option<u32>,
}

impl Default for VaultOptions {
    fn default() -> Self {
        Self {
            acquire_timeout: DEFAULT_ACQUIRE_TIMEOUT,
            max_connections: None,
        }
    }
}

impl VaultOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set [`VaultOptions::acquire_timeout`].
    #[must_use]
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = timeout;
        self
    }
}

/// What a status page shows of one stored credential: never a token.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct VaultEntry {
    /// The server (and environment) the credentials are for.
    pub server: McpServerKey,
    /// When the access token expires (unix seconds), if known.
    pub expires_at: Option<u64>,
    /// When the row was last written (unix milliseconds).
    pub updated_at_ms: u64,
    /// The last refresh failure since the last write, if any.
    pub refresh_failure: Option<RefreshFailure>,
}

/// A refresh that failed, as recorded by [`CredentialVault::record_refresh_failure`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RefreshFailure {
    /// What failed (an OAuth error code or a short reason; never a token).
    pub reason: String,
    /// When (unix milliseconds).
    pub at_ms: u64,
}

#[derive(Clone, Debug)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Run one expression against whichever pool the vault has (`$pool` names it).
macro_rules! on_pool_impl {
    ($vault:expr, $pool:ident => $body:expr) => {
        match &$vault.pool {
            $crate::vault::Pool::Sqlite($pool) => $body,
            $crate::vault::Pool::Postgres($pool) => $body,
        }
    };
}
use on_pool_impl as on_pool;

/// The gateway's encrypted store of per-user upstream credentials.
///
/// Cheap to clone (the connection pool is shared). `Debug` shows the location (without
/// password) and the key ids.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_auth::{CredentialVault, StoredCredentials, VaultKey, VaultKeys};
///
/// let dir = tempfile::tempdir()?;
/// let keys = VaultKeys::new(VaultKey::generate("k1")?);
/// let vault = CredentialVault::open_sqlite(dir.path().join("vault.db"), keys).await?;
/// let github = "github".parse()?;
///
/// let mut creds = StoredCredentials::new("client-1");
/// creds.access_token = Some(mcp_key::Secret::new("alice-token"));
/// vault.put("alice", &github, &creds).await?;
/// assert_eq!(vault.get("alice", &github).await?, Some(creds));
/// // Another caller sees nothing.
/// assert_eq!(vault.get("bob", &github).await?, None);
/// assert!(vault.delete("alice", &github).await?);
/// assert_eq!(vault.get("alice", &github).await?, None);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct CredentialVault {
    pool: Pool,
    keys: VaultKeys,
    location: String,
}

impl std::fmt::Debug for CredentialVault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialVault")
            .field("location", &self.location)
            .field("keys", &self.keys.ids().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl CredentialVault {
    /// Open (creating when missing) a SQLite vault with the default options.
    ///
    /// # Errors
    /// See [`CredentialVault::open`].
    pub async fn open_sqlite(
        path: impl Into<PathBuf>,
        keys: VaultKeys,
    ) -> Result<Self, VaultError> {
        Self::open(
            VaultLocation::Sqlite(path.into()),
            keys,
            VaultOptions::new(),
        )
        .await
    }

    /// Open a PostgreSQL vault with the default options.
    ///
    /// # Errors
    /// See [`CredentialVault::open`].
    pub async fn open_postgres(url: &str, keys: VaultKeys) -> Result<Self, VaultError> {
        Self::open(
            VaultLocation::Postgres(url.to_owned()),
            keys,
            VaultOptions::new(),
        )
        .await
    }

    /// Open the vault at `location` and bring its schema up to date (several instances
    /// may do this at once on PostgreSQL: the migration takes a lock).
    ///
    /// A SQLite file is created with mode 0600 (its missing folders 0700); an existing
    /// one that other users may read or write, or that is a symbolic link, is refused.
    ///
    /// # Errors
    /// [`VaultError::Unreachable`] when the database cannot be reached;
    /// [`VaultError::Io`] or [`VaultError::Insecure`] for the SQLite file;
    /// [`VaultError::Migrate`] when the schema cannot be migrated.
    pub async fn open(
        location: VaultLocation,
        keys: VaultKeys,
        options: VaultOptions,
    ) -> Result<Self, VaultError> {
        let label = location.label();
        let unreachable = |source| VaultError::Unreachable {
            location: label.clone(),
            doing: "opening the store",
            source,
        };
        let pool = match &location {
            VaultLocation::Sqlite(path) => {
                prepare_sqlite_file(path)?;
                let connect = SqliteConnectOptions::new()
                    .filename(path)
                    .create_if_missing(false)
                    .journal_mode(SqliteJournalMode::Wal)
                    .busy_timeout(options.acquire_timeout);
                let pool = SqlitePoolOptions::new()
                    .max_connections(options.max_connections.unwrap_or(4))
                    .acquire_timeout(options.acquire_timeout)
                    .connect_with(connect)
                    .await
                    .map_err(unreachable)?;
                Pool::Sqlite(pool)
            }
            VaultLocation::Postgres(url) => {
                let pool = PgPoolOptions::new()
                    .max_connections(options.max_connections.unwrap_or(8))
                    .acquire_timeout(options.acquire_timeout)
                    .connect(url)
                    .await
                    .map_err(unreachable)?;
                Pool::Postgres(pool)
            }
        };
        let vault = Self {
            pool,
            keys,
            location: label,
        };
        vault.migrate().await?;
        Ok(vault)
    }

    async fn migrate(&self) -> Result<(), VaultError> {
        let migrate = |source| VaultError::Migrate {
            location: self.location.clone(),
            source,
        };
        let migration = |version, description: &'static str, sql: &'static str| {
            Migration::new(
                version,
                description.into(),
                MigrationType::Simple,
                sql.into_sql_str(),
                false,
            )
        };
        let migrations = match self.pool {
            Pool::Sqlite(_) => vec![
                migration(
                    1,
                    "credentials",
                    include_str!("../../migrations/sqlite/0001_credentials.sql"),
                ),
                migration(
                    2,
                    "approvals",
                    include_str!("../../migrations/sqlite/0002_approvals.sql"),
                ),
                migration(
                    3,
                    "sign-ins",
                    include_str!("../../migrations/sqlite/0003_sign_ins.sql"),
                ),
                migration(
                    4,
                    "accepted drift",
                    include_str!("../../migrations/sqlite/0004_accepted_drift.sql"),
                ),
            ],
            Pool::Postgres(_) => vec![
                migration(
                    1,
                    "credentials",
                    include_str!("../../migrations/postgres/0001_credentials.sql"),
                ),
                migration(
                    2,
                    "approvals",
                    include_str!("../../migrations/postgres/0002_approvals.sql"),
                ),
                migration(
                    3,
                    "sign-ins",
                    include_str!("../../migrations/postgres/0003_sign_ins.sql"),
                ),
                migration(
                    4,
                    "accepted drift",
                    include_str!("../../migrations/postgres/0004_accepted_drift.sql"),
                ),
            ],
        };
        let mut migrator = Migrator::with_migrations(migrations);
        migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
        on_pool!(self, pool => migrator.run(pool).await.map_err(migrate))
    }

    /// Where the rows are (file path, or URL without password).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The vault's keys.
    pub fn keys(&self) -> &VaultKeys {
        &self.keys
    }

    /// Store `credentials` for `caller` and `server`, sealed under the current key with
    /// a fresh nonce, replacing what was there and clearing its refresh failure.
    ///
    /// # Errors
    /// [`VaultError::Invalid`] for an unusable caller; [`VaultError::Unreachable`] or
    /// [`VaultError::Database`] when the write fails.
    pub async fn put(
        &self,
        caller: &str,
        server: &McpServerKey,
        credentials: &StoredCredentials,
    ) -> Result<(), VaultError> {
        check_caller(caller)?;
        let row = row_key(caller, server);
        let json = serde_json::to_vec(credentials)
            .map_err(|e| row.corrupt(format!("the record cannot be serialized: {e}")))?;
        let sealed = self.keys.seal(row, &json)?;
        let expires_at = credentials
            .expires_at
            .map(|t| i64::try_from(t).unwrap_or(i64::MAX));
        const SQL: &str = "INSERT INTO mcp_vault_credentials \
             (caller, server, environment, key_id, nonce, ciphertext, expires_at, \
              updated_at_ms, refresh_failure, refresh_failed_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, NULL) \
             ON CONFLICT (caller, server, environment) DO UPDATE SET \
             key_id = excluded.key_id, nonce = excluded.nonce, \
             ciphertext = excluded.ciphertext, expires_at = excluded.expires_at, \
             updated_at_ms = excluded.updated_at_ms, refresh_failure = NULL, \
             refresh_failed_at_ms = NULL";
        on_pool!(self, pool => sqlx::query(SQL)
            .bind(row.caller)
            .bind(row.server)
            .bind(row.environment)
            .bind(&sealed.key_id)
            .bind(&sealed.nonce)
            .bind(&sealed.ciphertext)
            .bind(expires_at)
            .bind(now_ms())
            .execute(pool)
            .await
            .map_err(|e| self.db_error("storing credentials", e))
            .map(|_| ()))?;
        Ok(())
    }

    /// The credentials of `caller` for `server`, opened with the key their row names;
    /// `None` when none are stored. Never another caller's.
    ///
    /// # Errors
    /// [`VaultError::UnknownKey`] when the row's key id is not among the vault's keys;
    /// [`VaultError::Decrypt`] when the key does not open it (wrong key, altered or moved
    /// row); [`VaultError::Corrupt`] when it is not a record; [`VaultError::Unreachable`]
    /// or [`VaultError::Database`] when the read fails.
    pub async fn get(
        &self,
        caller: &str,
        server: &McpServerKey,
    ) -> Result<Option<StoredCredentials>, VaultError> {
        check_caller(caller)?;
        let row = row_key(caller, server);
        let Some(sealed) = self.read_sealed(row).await? else {
            return Ok(None);
        };
        self.open_record(row, &sealed).map(Some)
    }

    async fn read_sealed(&self, row: RowKey<'_>) -> Result<Option<Sealed>, VaultError> {
        const SQL: &str = "SELECT key_id, nonce, ciphertext FROM mcp_vault_credentials \
             WHERE caller = $1 AND server = $2 AND environment = $3";
        let found = on_pool!(self, pool => {
            let found = sqlx::query(SQL)
                .bind(row.caller)
                .bind(row.server)
                .bind(row.environment)
                .fetch_optional(pool)
                .await
                .map_err(|e| self.db_error("reading credentials", e))?;
            found
                .map(|r| -> Result<Sealed, sqlx::Error> {
                    Ok(Sealed {
                        key_id: r.try_get("key_id")?,
                        nonce: r.try_get("nonce")?,
                        ciphertext: r.try_get("ciphertext")?,
                    })
                })
                .transpose()
        });
        found.map_err(|e| row.corrupt(format!("a column is unreadable: {e}")))
    }

    fn open_record(
        &self,
        row: RowKey<'_>,
        sealed: &Sealed,
    ) -> Result<StoredCredentials, VaultError> {
        let json = self.keys.open(row, sealed)?;
        serde_json::from_slice(&json).map_err(|e| {
            row.corrupt(format!(
                "the decrypted record is not credentials (line {}, column {})",
                e.line(),
                e.column()
            ))
        })
    }

    /// Remove `caller`'s credentials for `server` (signing out of one server). True when
    /// something was removed.
    ///
    /// # Errors
    /// [`VaultError::Unreachable`] or [`VaultError::Database`] when the write fails.
    pub async fn delete(&self, caller: &str, server: &McpServerKey) -> Result<bool, VaultError> {
        check_caller(caller)?;
        let row = row_key(caller, server);
        const SQL: &str = "DELETE FROM mcp_vault_credentials \
             WHERE caller = $1 AND server = $2 AND environment = $3";
        let done = on_pool!(self, pool => sqlx::query(SQL)
            .bind(row.caller)
            .bind(row.server)
            .bind(row.environment)
            .execute(pool)
            .await
            .map_err(|e| self.db_error("deleting credentials", e))?
            .rows_affected());
        Ok(done > 0)
    }

    /// Remove every credential of `caller` (an administrator's revocation). Returns how
    /// many rows went.
    ///
    /// # Errors
    /// [`VaultError::Unreachable`] or [`VaultError::Database`] when the write fails.
    pub async fn delete_caller(&self, caller: &str) -> Result<u64, VaultError> {
        check_caller(caller)?;
        const SQL: &str = "DELETE FROM mcp_vault_credentials WHERE caller = $1";
        Ok(on_pool!(self, pool => sqlx::query(SQL)
            .bind(caller)
            .execute(pool)
            .await
            .map_err(|e| self.db_error("revoking a caller's credentials", e))?
            .rows_affected()))
    }

    /// What `caller` has stored, by server then environment: the server, expiry, when
    /// written, the last refresh failure. Nothing is decrypted; no token is returned.
    ///
    /// # Errors
    /// [`VaultError::Corrupt`] for a row whose server is not a valid key;
    /// [`VaultError::Unreachable`] or [`VaultError::Database`] when the read fails.
    pub async fn list(&self, caller: &str) -> Result<Vec<VaultEntry>, VaultError> {
        check_caller(caller)?;
        const SQL: &str = "SELECT server, environment, expires_at, updated_at_ms, \
             refresh_failure, refresh_failed_at_ms FROM mcp_vault_credentials \
             WHERE caller = $1 ORDER BY server, environment";
        type Columns = (
            String,
            String,
            Option<i64>,
            i64,
            Option<String>,
            Option<i64>,
        );
        let rows: Vec<Columns> = on_pool!(self, pool => sqlx::query_as(SQL)
            .bind(caller)
            .fetch_all(pool)
            .await
            .map_err(|e| self.db_error("listing credentials", e))?);
        rows.into_iter()
            .map(
                |(server, environment, expires_at, updated, reason, failed_at)| {
                    let row = RowKey {
                        caller,
                        server: &server,
                        environment: &environment,
                    };
                    let key = server_key(&server, &environment)
                        .map_err(|e| row.corrupt(format!("its server is not valid: {e}")))?;
                    Ok(VaultEntry {
                        server: key,
                        expires_at: expires_at.and_then(|t| u64::try_from(t).ok()),
                        updated_at_ms: u64::try_from(updated).unwrap_or_default(),
                        refresh_failure: reason.map(|reason| RefreshFailure {
                            reason,
                            at_ms: failed_at
                                .and_then(|t| u64::try_from(t).ok())
                                .unwrap_or_default(),
                        }),
                    })
                },
            )
            .collect()
    }

    /// Note that refreshing `caller`'s credentials for `server` failed, for the status
    /// page (cleared by the next [`CredentialVault::put`]). `reason` is an OAuth error code
    /// or a short reason, never a token; it is cut at [`MAX_REFRESH_FAILURE_LEN`]
    /// characters. False when nothing is stored for them.
    ///
    /// # Errors
    /// [`VaultError::Unreachable`] or [`VaultError::Database`] when the write fails.
    pub async fn record_refresh_failure(
        &self,
        caller: &str,
        server: &McpServerKey,
        reason: &str,
    ) -> Result<bool, VaultError> {
        check_caller(caller)?;
        let row = row_key(caller, server);
        let reason: String = reason.chars().take(MAX_REFRESH_FAILURE_LEN).collect();
        const SQL: &str = "UPDATE mcp_vault_credentials \
             SET refresh_failure = $4, refresh_failed_at_ms = $5 \
             WHERE caller = $1 AND server = $2 AND environment = $3";
        let done = on_pool!(self, pool => sqlx::query(SQL)
            .bind(row.caller)
            .bind(row.server)
            .bind(row.environment)
            .bind(&reason)
            .bind(now_ms())
            .execute(pool)
            .await
            .map_err(|e| self.db_error("recording a refresh failure", e))?
            .rows_affected());
        Ok(done > 0)
    }

    /// Re-seal every row not sealed under the current key (after a rotation), so the
    /// previous keys can be retired. Returns how many rows were re-sealed. A row changed
    /// by someone else meanwhile is left as that write made it.
    ///
    /// # Errors
    /// The first row that does not open ([`VaultError::UnknownKey`],
    /// [`VaultError::Decrypt`], [`VaultError::Corrupt`]) stops it (rows before it stay
    /// re-sealed); [`VaultError::Unreachable`] or [`VaultError::Database`] when a read or
    /// write fails.
    pub async fn reseal(&self) -> Result<u64, VaultError> {
        const SELECT: &str = "SELECT caller, server, environment, key_id, nonce, ciphertext \
             FROM mcp_vault_credentials WHERE key_id <> $1";
        const UPDATE: &str = "UPDATE mcp_vault_credentials \
             SET key_id = $4, nonce = $5, ciphertext = $6 \
             WHERE caller = $1 AND server = $2 AND environment = $3 AND key_id = $7 \
             AND nonce = $8";
        type Columns = (String, String, String, String, Vec<u8>, Vec<u8>);
        let current = self.keys.current_id();
        let rows: Vec<Columns> = on_pool!(self, pool => sqlx::query_as(SELECT)
            .bind(current)
            .fetch_all(pool)
            .await
            .map_err(|e| self.db_error("reading credentials to re-seal", e))?);
        let mut done = 0;
        for (caller, server, environment, key_id, nonce, ciphertext) in rows {
            let row = RowKey {
                caller: &caller,
                server: &server,
                environment: &environment,
            };
            let old = Sealed {
                key_id,
                nonce,
                ciphertext,
            };
            let plaintext = self.keys.open(row, &old)?;
            let new = self.keys.seal(row, &plaintext)?;
            done += on_pool!(self, pool => sqlx::query(UPDATE)
                .bind(row.caller)
                .bind(row.server)
                .bind(row.environment)
                .bind(&new.key_id)
                .bind(&new.nonce)
                .bind(&new.ciphertext)
                .bind(&old.key_id)
                .bind(&old.nonce)
                .execute(pool)
                .await
                .map_err(|e| self.db_error("re-sealing credentials", e))?
                .rows_affected());
        }
        Ok(done)
    }

    /// Close the connections (waits for operations in flight).
    pub async fn close(&self) {
        on_pool!(self, pool => pool.close().await);
    }

    fn db_error(&self, doing: &'static str, source: sqlx::Error) -> VaultError {
        let location = self.location.clone();
        if is_connection_error(&source) {
            VaultError::Unreachable {
                location,
                doing,
                source,
            }
        } else {
            VaultError::Database {
                location,
                doing,
                source,
            }
        }
    }
}

/// Lost or refused connections, pool timeouts, and PostgreSQL's connection exceptions
/// (class 08) and operator interventions (class 57: shutdown, crash).
fn is_connection_error(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Protocol(_) => true,
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57")),
        _ => false,
    }
}

fn row_key<'a>(caller: &'a str, server: &'a McpServerKey) -> RowKey<'a> {
    RowKey {
        caller,
        server: server.name().as_str(),
        environment: server.environment().map_or("", EnvironmentId::as_str),
    }
}

fn server_key(server: &str, environment: &str) -> Result<McpServerKey, mcp_key::KeyError> {
    let name = ServerName::new(server)?;
    if environment.is_empty() {
        Ok(McpServerKey::unscoped(name))
    } else {
        Ok(McpServerKey::in_environment(
            EnvironmentId::new(environment)?,
            name,
        ))
    }
}

/// Refuses an empty tool name of `what` (an approval, an accepted tool change).
fn check_tool(tool: &str, what: &str) -> Result<(), VaultError> {
    if tool.is_empty() {
        return Err(VaultError::Invalid {
            detail: format!("the tool name of {what} is empty"),
        });
    }
    Ok(())
}

fn check_caller(caller: &str) -> Result<(), VaultError> {
    if caller.is_empty() || caller.len() > MAX_CALLER_LEN || caller.chars().any(char::is_control) {
        return Err(VaultError::Invalid {
            detail: format!(
                "the caller subject must be 1 to {MAX_CALLER_LEN} bytes without control \
                 characters (got {} bytes)",
                caller.len()
            ),
        });
    }
    Ok(())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

/// Create the SQLite file 0600 (folders 0700) when missing; refuse one that is a
/// symbolic link, not a regular file, or open to other users.
fn prepare_sqlite_file(path: &Path) -> Result<(), VaultError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| VaultError::Io {
            action,
            path,
            source,
        }
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(io("create the folder of", path))?;
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(io("create the credential database", path))?;
            Ok(())
        }
        Err(e) => Err(io("inspect the credential database", path)(e)),
        Ok(meta) => {
            let insecure = |problem: String, fix| VaultError::Insecure {
                path: path.to_path_buf(),
                problem,
                fix,
            };
            if meta.file_type().is_symlink() {
                return Err(insecure(
                    "it is a symbolic link".to_owned(),
                    "point the gateway at the file itself",
                ));
            }
            if !meta.is_file() {
                return Err(insecure(
                    "it is not a regular file".to_owned(),
                    "choose a file path",
                ));
            }
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(insecure(
                    format!("other users may access it (mode {mode:o})"),
                    "run `chmod 600` on it",
                ));
            }
            Ok(())
        }
    }
}

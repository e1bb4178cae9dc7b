//! The tool catalog cache: each server's last tool list, keyed by its connection
//! fingerprint, optionally persisted so a new process can show tools before servers connect.

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_key::{Fingerprint, McpServerKey};
use moka::Expiry;
use moka::ops::compute::{CompResult, Op};
use rmcp::model::{Skill, Tool};
use serde::{Deserialize, Serialize};

/// Default number of (server, fingerprint) entries kept: 32.
pub const DEFAULT_TOOL_CACHE_CAPACITY: u64 = 32;
/// Default time an entry stays usable when its server declares none: 30 minutes.
pub const DEFAULT_TOOL_CACHE_TTL: Duration = Duration::from_secs(30 * 60);
/// Name of the persisted file inside the cache directory given to [`ToolCache::persisted`].
pub const TOOL_CACHE_FILE: &str = "tool-catalog-v1.json";

/// Name of the file beside [`TOOL_CACHE_FILE`] that holds the key its fingerprints are
/// hashed with (32 random bytes, hex, 0600).
pub const TOOL_CACHE_KEY_FILE: &str = "tool-catalog-v1.key";
/// The domain of the keyed digests written in place of connection fingerprints.
const KEYED_DOMAIN: &str = "mcp-connections/tool-cache/keyed-fingerprint/v1";

/// The `format` tag of the persisted file; a file with another tag is not ours.
const FORMAT: &str = "mcp-connections/tool-cache";
/// The file version written; newer versions are ignored with a warning.
const VERSION: u64 = 1;
/// Longest TTL kept (a year): larger declared TTLs are cut to it.
const MAX_TTL: Duration = Duration::from_secs(365 * 24 * 60 * 60);

type Key = (McpServerKey, Fingerprint);

/// A cache of each server's last tool list, keyed by server and connection fingerprint.
///
/// A listing is stored by [`ToolCache::insert`] after a live `tools/list`, and read back by
/// [`ToolCache::get`] with every tool's annotations cleared: annotations are not trusted until
/// the live server confirms them. Entries expire after the server-declared TTL (e.g. a
/// `ttlMs` hint) or the cache's; the least useful entries are evicted beyond the capacity.
/// A fetch that started earlier never overwrites a newer one.
///
/// A persisted cache ([`ToolCache::persisted`]) reads its file once when built and writes it
/// on [`ToolCache::persist`] (atomically: a temporary file renamed over the old one). A file
/// that cannot be used is reported ([`ToolCache::load_problem`]) and ignored.
///
/// Cloning is cheap; clones share the entries.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use mcp_connections::ToolCache;
/// use mcp_connections::model::{Tool, ToolAnnotations};
/// use mcp_key::{Fingerprint, McpServerKey, ServerName};
///
/// let dir = std::env::temp_dir().join(format!("tool-cache-doc-{}", std::process::id()));
/// let cache = ToolCache::persisted(&dir, 32, Duration::from_secs(1800));
/// let files = McpServerKey::unscoped(ServerName::new("files")?);
/// let fingerprint = Fingerprint::builder("example").str("command", "npx").finish();
/// let tool = Tool::new("read_file", "Reads a file", serde_json::Map::new())
///     .with_annotations(ToolAnnotations::new().read_only(true));
///
/// assert!(cache.insert(&files, &fingerprint, vec![tool], SystemTime::now(), None));
/// cache.persist()?;
///
/// // A new process reads the file: the tools are there, their annotations are not.
/// let next = ToolCache::persisted(&dir, 32, Duration::from_secs(1800));
/// let cached = next.get(&files, &fingerprint).expect("persisted above");
/// assert_eq!(cached.tools[0].name, "read_file");
/// assert_eq!(cached.tools[0].annotations, None);
/// assert_eq!(next.load_problem(), None);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ToolCache {
    inner: Arc<Inner>,
}

struct Inner {
    /// Keyed by server and the keyed digest of the connection fingerprint
    /// ([`Inner::digest`]).
    entries: moka::sync::Cache<Key, Arc<Stored>>,
    /// A persisted cache's key: connection fingerprints hash the values of the tokens and
    /// variables a connection uses, so the file holds only a keyed digest of each (the
    /// key is in its own 0600 file): the cache file alone gives nothing to guess a token
    /// against. `None` for an in-memory cache (nothing is written).
    key: Option<[u8; 32]>,
    ttl: Duration,
    path: Option<PathBuf>,
    load_problem: Option<String>,
    /// Counts the changes made to `entries`; `saved` is its value at the last write.
    changes: std::sync::atomic::AtomicU64,
    saved: std::sync::atomic::AtomicU64,
    /// Held from the snapshot of the entries to the rename of the file, so the writes of
    /// one cache land in the order of their snapshots: a slow write of an older snapshot
    /// can never replace a newer one after the newer one's write said it was saved.
    writing: std::sync::Mutex<()>,
}

/// One stored listing.
#[derive(Debug)]
struct Stored {
    tools: Vec<Tool>,
    /// When the `tools/list` that produced it began.
    fetched_at: SystemTime,
    ttl: Duration,
    /// The protocol version the server spoke when it was listed (its era), if recorded.
    protocol_version: Option<String>,
    /// Only the era is known: the listing was not cached (see
    /// [`ToolCache::remember_protocol`]); `tools` is empty and not served.
    era_only: bool,
    /// The server's skill entries (no file), when a set listed them on this connection
    /// ([`ToolCache::remember_skills`]); they live as long as the listing.
    skills: Option<Vec<Skill>>,
}

impl Stored {
    /// Time left before the entry expires, measured on the wall clock so that entries read
    /// from a file keep the age they had.
    fn remaining(&self) -> Duration {
        self.ttl.saturating_sub(age_of(self.fetched_at))
    }
}

/// Expires each entry `ttl` after its fetch began, whatever TTL it was stored with.
struct PerEntryTtl;

impl Expiry<Key, Arc<Stored>> for PerEntryTtl {
    fn expire_after_create(
        &self,
        _key: &Key,
        value: &Arc<Stored>,
        _created_at: Instant,
    ) -> Option<Duration> {
        Some(value.remaining())
    }

    fn expire_after_update(
        &self,
        _key: &Key,
        value: &Arc<Stored>,
        _updated_at: Instant,
        _duration_until_expiry: Option<Duration>,
    ) -> Option<Duration> {
        Some(value.remaining())
    }
}

/// A server's cached tools, as returned by [`ToolCache::get`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CachedTools {
    /// The tools, with every tool's `annotations` cleared (`None`).
    pub tools: Vec<Tool>,
    /// When the `tools/list` that produced them began.
    pub fetched_at: SystemTime,
    /// The server's skill entries (the Skills extension; no file), if a set listed them
    /// while the tools were cached.
    pub skills: Option<Vec<Skill>>,
}

impl CachedTools {
    /// How long ago the listing was fetched (zero if `fetched_at` is in the future).
    pub fn age(&self) -> Duration {
        age_of(self.fetched_at)
    }
}

/// One live entry of the cache, as listed by [`ToolCache::entries`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CacheEntry {
    /// The server.
    pub server: McpServerKey,
    /// What the cache keeps for the connection fingerprint the listing was fetched
    /// through: the fingerprint itself in an in-memory cache, a keyed digest of it in a
    /// persisted one (see [`ToolCache::persisted`]). For telling entries apart.
    pub fingerprint: Fingerprint,
    /// The tools as stored (annotations included: this is a display of the cache, not a
    /// source of trusted tools).
    pub tools: Vec<Tool>,
    /// When the `tools/list` that produced them began.
    pub fetched_at: SystemTime,
}

impl Inner {
    /// What `fingerprint` is stored under.
    fn digest(&self, fingerprint: &Fingerprint) -> Fingerprint {
        match &self.key {
            None => *fingerprint,
            Some(key) => Fingerprint::builder(KEYED_DOMAIN)
                .str("key", &hex(key))
                .str("fingerprint", &fingerprint.to_hex())
                .finish(),
        }
    }

    fn slot(&self, server: &McpServerKey, fingerprint: &Fingerprint) -> Key {
        (server.clone(), self.digest(fingerprint))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The key in `path`, if the file holds one.
fn read_key(path: &Path) -> Option<[u8; 32]> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(key)
}

/// The key of the cache in `dir` (and whether it existed before), made and written
/// (0600, in a 0700 folder) when there is none. Two processes starting at once agree: the
/// file is created whole and only once (a hard link of a complete temporary file), and the
/// loser reads the winner's. `None` when the system has no randomness to give.
fn cache_key(dir: &Path) -> Option<([u8; 32], bool)> {
    let path = dir.join(TOOL_CACHE_KEY_FILE);
    if let Some(key) = read_key(&path) {
        return Some((key, true));
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).ok()?;
    let made = (|| {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)?;
        let temp = dir.join(format!(".{TOOL_CACHE_KEY_FILE}.{}.tmp", std::process::id()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options
            .open(&temp)
            .and_then(|mut f| f.write_all((hex(&key) + "\n").as_bytes()))
            .and_then(|()| fs::hard_link(&temp, &path));
        let _ = fs::remove_file(&temp);
        written
    })();
    match made {
        Ok(()) => Some((key, false)),
        // Another process made it first (or a broken file is in the way: then this
        // process keeps its key in memory and its entries are found by nobody else).
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            Some(read_key(&path).map_or((key, false), |theirs| (theirs, false)))
        }
        Err(e) => {
            tracing::warn!(
                "tool catalog cache key {} cannot be written ({e}); listings cached now are not found by the next process",
                path.display()
            );
            Some((key, false))
        }
    }
}

impl ToolCache {
    /// A cache that lives only in this process: `capacity` entries (each a server and
    /// fingerprint), each usable for `ttl` unless its server declares another TTL. TTLs
    /// longer than a year are cut to a year.
    pub fn in_memory(capacity: u64, ttl: Duration) -> Self {
        Self::build(capacity, ttl, None, None, None)
    }

    /// A cache persisted in `dir/`[`TOOL_CACHE_FILE`]. Loads the file now; a missing file is
    /// fine; a corrupt, truncated, foreign (other `format`) or newer-version file is
    /// reported once with `tracing::warn!` and through [`ToolCache::load_problem`], and
    /// ignored (never an error, never a panic). Expired entries are dropped on load; an
    /// entry that cannot be read (its key, fingerprint or tools) is skipped, with one
    /// warning for all such entries.
    ///
    /// The file holds no connection fingerprint, only a digest of each keyed with the
    /// random key in `dir/`[`TOOL_CACHE_KEY_FILE`] (made on first use): fingerprints hash
    /// the tokens a connection sends, and the cache file alone must give nothing to test
    /// a guess against. A cache without randomness from the system is not persisted.
    pub fn persisted(dir: impl Into<PathBuf>, capacity: u64, ttl: Duration) -> Self {
        let dir = dir.into();
        let Some((key, key_existed)) = cache_key(&dir) else {
            let message =
                "tool catalog cache not persisted: the system gave no random key".to_owned();
            tracing::warn!("{message}");
            return Self::build(capacity, ttl, None, Some(message), None);
        };
        let path = dir.join(TOOL_CACHE_FILE);
        let (loaded, problem) = match fs::read(&path) {
            Ok(bytes) => match parse_file(&bytes) {
                Ok(loaded) => (loaded, None),
                Err(problem) => (Vec::new(), Some(problem)),
            },
            Err(err) if err.kind() == io::ErrorKind::NotFound => (Vec::new(), None),
            Err(err) => (Vec::new(), Some(format!("cannot be read: {err}"))),
        };
        let problem = problem.map(|problem| {
            let message = format!("tool catalog cache {} ignored: {problem}", path.display());
            tracing::warn!("{message}");
            message
        });
        let cache = Self::build(capacity, ttl, Some(path), problem, Some(key));
        // Entries written under another key (or none: an older file) match nothing.
        let loaded = if key_existed { loaded } else { Vec::new() };
        for (key, stored) in loaded {
            cache.inner.entries.insert(key, Arc::new(stored));
        }
        cache
    }

    fn build(
        capacity: u64,
        ttl: Duration,
        path: Option<PathBuf>,
        load_problem: Option<String>,
        key: Option<[u8; 32]>,
    ) -> Self {
        let ttl = ttl.min(MAX_TTL);
        let entries = moka::sync::Cache::builder()
            .max_capacity(capacity)
            .expire_after(PerEntryTtl)
            .build();
        Self {
            inner: Arc::new(Inner {
                entries,
                key,
                ttl,
                path,
                load_problem,
                changes: std::sync::atomic::AtomicU64::new(0),
                // Never written: the first `persist` writes.
                saved: std::sync::atomic::AtomicU64::new(u64::MAX),
                writing: std::sync::Mutex::new(()),
            }),
        }
    }

    /// Why the persisted file was ignored when this cache was built, if it was.
    pub fn load_problem(&self) -> Option<String> {
        self.inner.load_problem.clone()
    }

    /// The persisted file (`None` for an in-memory cache).
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Cached tools of `server` for this connection fingerprint, if present and not
    /// expired. Annotations of every tool are cleared (`None`): they are not trusted until
    /// the live server confirms them.
    pub fn get(&self, server: &McpServerKey, fingerprint: &Fingerprint) -> Option<CachedTools> {
        let stored = self
            .inner
            .entries
            .get(&self.inner.slot(server, fingerprint))
            .filter(|stored| !stored.remaining().is_zero() && !stored.era_only)?;
        let tools = stored
            .tools
            .iter()
            .cloned()
            .map(|mut tool| {
                tool.annotations = None;
                tool
            })
            .collect();
        Some(CachedTools {
            tools,
            fetched_at: stored.fetched_at,
            skills: stored.skills.clone(),
        })
    }

    /// Stores a listing fetched from a live server. `fetch_started` is when the
    /// `tools/list` began; an insert whose fetch started before the stored entry's fetch is
    /// ignored (returns `false`): an older fetch never overwrites a newer one. `ttl` is a
    /// server-declared TTL (e.g. from `ttlMs`), else the cache's applies.
    pub fn insert(
        &self,
        server: &McpServerKey,
        fingerprint: &Fingerprint,
        tools: Vec<Tool>,
        fetch_started: SystemTime,
        ttl: Option<Duration>,
    ) -> bool {
        let ttl = ttl.unwrap_or(self.inner.ttl).min(MAX_TTL);
        let result = self
            .inner
            .entries
            .entry(self.inner.slot(server, fingerprint))
            .and_compute_with(|current| match current {
                Some(current)
                    if !current.value().remaining().is_zero()
                        && !current.value().era_only
                        && fetch_started < current.value().fetched_at =>
                {
                    Op::Nop
                }
                // The same listing again (another set attaching to the connection that
                // listed it) changes nothing.
                Some(current)
                    if !current.value().era_only
                        && fetch_started == current.value().fetched_at
                        && ttl == current.value().ttl
                        && tools == current.value().tools =>
                {
                    Op::Nop
                }
                current => {
                    // A new listing of the same connection keeps its recorded era and
                    // skills (skills change with the resources, not the tools).
                    let current = current.map(|c| Arc::clone(c.value()));
                    Op::Put(Arc::new(Stored {
                        tools,
                        fetched_at: fetch_started,
                        ttl,
                        protocol_version: current.as_ref().and_then(|c| c.protocol_version.clone()),
                        era_only: false,
                        skills: current
                            .filter(|c| !c.era_only)
                            .and_then(|c| c.skills.clone()),
                    }))
                }
            });
        let changed = matches!(
            result,
            CompResult::Inserted(_) | CompResult::ReplacedWith(_)
        );
        if changed {
            self.changed();
        }
        changed
    }

    fn changed(&self) {
        self.inner
            .changes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Forgets the listing of `server` for this fingerprint (e.g. on `list_changed`).
    pub fn invalidate(&self, server: &McpServerKey, fingerprint: &Fingerprint) {
        if self
            .inner
            .entries
            .remove(&self.inner.slot(server, fingerprint))
            .is_some()
        {
            self.changed();
        }
    }

    /// Drops the listing stored for `server` and `fingerprint` but keeps its era, for a
    /// listing that may not be kept: one private to an authorization the fingerprint
    /// does not name, or one whose server gave it no time to live (`ttlMs: 0`, what rmcp's
    /// 2026-era servers send by default). Changes nothing when no listing is stored, so
    /// sets attaching one after another to such a connection do not rewrite the file.
    pub(crate) fn forget_listing(&self, server: &McpServerKey, fingerprint: &Fingerprint) {
        let ttl = self.inner.ttl;
        let result = self
            .inner
            .entries
            .entry(self.inner.slot(server, fingerprint))
            .and_compute_with(|current| match current {
                None => Op::Nop,
                Some(current) if current.value().era_only => Op::Nop,
                Some(current) => match current.value().protocol_version.clone() {
                    Some(version) => Op::Put(Arc::new(Stored {
                        tools: Vec::new(),
                        fetched_at: SystemTime::now(),
                        ttl,
                        protocol_version: Some(version),
                        era_only: true,
                        skills: None,
                    })),
                    None => Op::Remove,
                },
            });
        if matches!(result, CompResult::ReplacedWith(_) | CompResult::Removed(_)) {
            self.changed();
        }
    }

    /// Every live entry, sorted by server key then fingerprint, for displays
    /// (`mcpctl tools --cached`).
    pub fn entries(&self) -> Vec<CacheEntry> {
        let mut out: Vec<CacheEntry> = self
            .live()
            .into_iter()
            .filter(|(_, stored)| !stored.era_only)
            .map(|((server, fingerprint), stored)| CacheEntry {
                server,
                fingerprint,
                tools: stored.tools.clone(),
                fetched_at: stored.fetched_at,
            })
            .collect();
        out.sort_by(|a, b| (&a.server, &a.fingerprint).cmp(&(&b.server, &b.fingerprint)));
        out
    }

    /// Records the protocol version `server` spoke with this connection fingerprint (its
    /// era), so the next process can skip the era probe. With a live entry (the listing)
    /// the era joins it and lives as long; without one (a listing not cached: private to a
    /// login, or declared stale at once with `ttlMs: 0`) the era is kept alone for the
    /// cache's TTL, and [`ToolCache::get`] still finds no tools.
    pub fn remember_protocol(
        &self,
        server: &McpServerKey,
        fingerprint: &Fingerprint,
        version: &str,
    ) {
        let key = self.inner.slot(server, fingerprint);
        let live = self
            .inner
            .entries
            .get(&key)
            .filter(|stored| !stored.remaining().is_zero());
        let stored = match live {
            Some(stored) if stored.protocol_version.as_deref() == Some(version) => return,
            Some(stored) => Stored {
                tools: stored.tools.clone(),
                fetched_at: stored.fetched_at,
                ttl: stored.ttl,
                protocol_version: Some(version.to_owned()),
                era_only: stored.era_only,
                skills: stored.skills.clone(),
            },
            None => Stored {
                tools: Vec::new(),
                fetched_at: SystemTime::now(),
                ttl: self.inner.ttl,
                protocol_version: Some(version.to_owned()),
                era_only: true,
                skills: None,
            },
        };
        self.inner.entries.insert(key, Arc::new(stored));
        self.changed();
    }

    /// Keeps `skills` (the entries `server` lists on this connection; no file) with its
    /// live cached listing, so a deferred server's skills are known without starting it.
    /// No-op without a live listing: the skills live as long as it.
    pub fn remember_skills(
        &self,
        server: &McpServerKey,
        fingerprint: &Fingerprint,
        skills: Vec<Skill>,
    ) {
        let key = self.inner.slot(server, fingerprint);
        let Some(stored) = self
            .inner
            .entries
            .get(&key)
            .filter(|stored| !stored.remaining().is_zero() && !stored.era_only)
        else {
            return;
        };
        if stored.skills.as_ref() == Some(&skills) {
            return;
        }
        let updated = Stored {
            tools: stored.tools.clone(),
            fetched_at: stored.fetched_at,
            ttl: stored.ttl,
            protocol_version: stored.protocol_version.clone(),
            era_only: false,
            skills: Some(skills),
        };
        self.inner.entries.insert(key, Arc::new(updated));
        self.changed();
    }

    /// The protocol version recorded with the live entry of `server` and `fingerprint`.
    pub fn protocol(&self, server: &McpServerKey, fingerprint: &Fingerprint) -> Option<String> {
        let stored = self
            .inner
            .entries
            .get(&self.inner.slot(server, fingerprint))?;
        if stored.remaining().is_zero() {
            return None;
        }
        stored.protocol_version.clone()
    }

    /// Writes the persisted file atomically (a temporary file in the same directory, then a
    /// rename; the directory is created) when anything changed since this cache last wrote
    /// it (the first call always writes). No-op for an in-memory cache.
    ///
    /// Two caches persisting to the same directory never leave a torn file: the last
    /// rename wins.
    pub fn persist(&self) -> io::Result<()> {
        use std::sync::atomic::Ordering;
        let Some(path) = self.path() else {
            return Ok(());
        };
        let _writing = self
            .inner
            .writing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changes = self.inner.changes.load(Ordering::SeqCst);
        if self.inner.saved.load(Ordering::SeqCst) == changes {
            return Ok(());
        }
        let mut live = self.live();
        live.sort_by(|(a, _), (b, _)| a.cmp(b));
        let entries = live
            .into_iter()
            .map(|((server, fingerprint), stored)| {
                Ok(FileEntry {
                    server: server.to_string(),
                    fingerprint: fingerprint.to_hex(),
                    fetched_at_ms: unix_ms(stored.fetched_at),
                    ttl_ms: u64::try_from(stored.ttl.as_millis()).unwrap_or(u64::MAX),
                    tools: serde_json::to_value(&stored.tools)?,
                    protocol_version: stored.protocol_version.clone(),
                    era_only: stored.era_only,
                    skills: stored
                        .skills
                        .as_ref()
                        .map(serde_json::to_value)
                        .transpose()?,
                })
            })
            .collect::<serde_json::Result<Vec<_>>>()?;
        let file = FileOut {
            format: FORMAT,
            version: VERSION,
            entries,
        };
        let bytes = serde_json::to_vec_pretty(&file)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        // The listings name every server and tool: the owner's alone (0700/0600).
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)?;
        write_atomically(dir, path, &bytes)?;
        self.inner.saved.store(changes, Ordering::SeqCst);
        Ok(())
    }

    /// Live entries, unordered.
    fn live(&self) -> Vec<(Key, Arc<Stored>)> {
        self.inner
            .entries
            .iter()
            .filter(|(_, stored)| !stored.remaining().is_zero())
            .map(|(key, stored)| ((*key).clone(), stored))
            .collect()
    }
}

impl fmt::Debug for ToolCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCache")
            .field("path", &self.inner.path)
            .field("entries", &self.inner.entries.entry_count())
            .field("ttl", &self.inner.ttl)
            .field("load_problem", &self.inner.load_problem)
            .finish()
    }
}

/// The file as written.
#[derive(Serialize)]
struct FileOut {
    format: &'static str,
    version: u64,
    entries: Vec<FileEntry>,
}

/// The header read first, before any entry: tells whether the file is ours and readable.
#[derive(Deserialize)]
struct FileIn {
    format: Option<String>,
    version: Option<u64>,
    #[serde(default)]
    entries: Vec<serde_json::Value>,
}

/// One persisted entry (tools as raw JSON, parsed per entry on load).
#[derive(Serialize, Deserialize)]
struct FileEntry {
    server: String,
    fingerprint: String,
    fetched_at_ms: u64,
    ttl_ms: u64,
    tools: serde_json::Value,
    /// Added within version 1: files without it read as "not recorded".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    protocol_version: Option<String>,
    /// Added within version 1: an entry that records only the era (`tools` is empty).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    era_only: bool,
    /// Added within version 1: the server's skill entries, when they were listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skills: Option<serde_json::Value>,
}

/// The live entries of a persisted file, or why the whole file is ignored.
fn parse_file(bytes: &[u8]) -> Result<Vec<(Key, Stored)>, String> {
    let file: FileIn = serde_json::from_slice(bytes).map_err(|err| {
        if err.is_eof() {
            format!("the file is truncated ({err})")
        } else {
            format!("the file is not a tool catalog cache ({err})")
        }
    })?;
    match file.format.as_deref() {
        Some(FORMAT) => {}
        Some(other) => return Err(format!("its format is `{other}`, not `{FORMAT}`")),
        None => return Err(format!("it has no `format` (expected `{FORMAT}`)")),
    }
    match file.version {
        Some(VERSION) => {}
        Some(v) if v > VERSION => {
            return Err(format!(
                "it was written by a newer version (file version {v}, this one reads {VERSION})"
            ));
        }
        Some(v) => return Err(format!("unsupported file version {v}")),
        None => return Err("it has no `version`".to_owned()),
    }
    let mut out = Vec::new();
    let mut skipped = 0usize;
    for raw in file.entries {
        match read_entry(raw) {
            Some(Some(entry)) => out.push(entry),
            Some(None) => {} // expired
            None => skipped += 1,
        }
    }
    if skipped > 0 {
        tracing::warn!(
            skipped,
            "tool catalog cache: skipped {skipped} entries that could not be read"
        );
    }
    Ok(out)
}

/// `None`: unreadable; `Some(None)`: expired; otherwise the entry.
fn read_entry(raw: serde_json::Value) -> Option<Option<(Key, Stored)>> {
    let entry: FileEntry = serde_json::from_value(raw).ok()?;
    let server: McpServerKey = entry.server.parse().ok()?;
    let fingerprint = Fingerprint::from_hex(&entry.fingerprint)?;
    let tools: Vec<Tool> = serde_json::from_value(entry.tools).ok()?;
    let stored = Stored {
        tools,
        fetched_at: UNIX_EPOCH.checked_add(Duration::from_millis(entry.fetched_at_ms))?,
        ttl: Duration::from_millis(entry.ttl_ms).min(MAX_TTL),
        protocol_version: entry.protocol_version,
        era_only: entry.era_only,
        skills: match entry.skills {
            Some(skills) => Some(serde_json::from_value(skills).ok()?),
            None => None,
        },
    };
    if stored.remaining().is_zero() {
        return Some(None);
    }
    Some(Some(((server, fingerprint), stored)))
}

/// Writes `bytes` to a fresh temporary file (0600) in `dir`, then renames it over `path`
/// (the tool cache's file, and the tool pins').
pub(crate) fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map_or_else(
        || TOOL_CACHE_FILE.into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        // Best effort: the temporary file is ours and useless now.
        let _ = fs::remove_file(&temp);
    }
    result
}

fn age_of(time: SystemTime) -> Duration {
    SystemTime::now().duration_since(time).unwrap_or_default()
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;

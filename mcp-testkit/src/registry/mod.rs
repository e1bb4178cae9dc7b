//! [`FakeRegistry`]: an MCP Registry on loopback, for clients that search, list versions
//! and fetch `server.json` documents. It speaks the registry's REST shape (OpenAPI
//! `2025-12-01`, paths under [`REGISTRY_API_PREFIX`]):
//!
//! - `GET /v0.1/servers?search=&cursor=&limit=&version=&include_deleted=`: a page of
//!   `{"servers": [ServerResponse…], "metadata": {"nextCursor", "count"}}`, sorted by name
//!   then publication; `search` is a case-insensitive substring of the name, `version` is
//!   `latest` or an exact version, deleted entries only with `include_deleted=true`;
//!   `nextCursor` is absent on the last page; a `limit` outside 1..=[`MAX_REGISTRY_LIMIT`]
//!   or a cursor this registry did not give is `400 {"error"}`.
//! - `GET /v0.1/servers/{name}/versions`: every version of one server, newest first;
//!   `404 {"error": "Server not found"}` for a name without one.
//! - `GET /v0.1/servers/{name}/versions/{version}`: one `ServerResponse` (`latest`: the
//!   newest version not deleted); `404` when there is none.
//! - `GET /files/{name}`: bytes added with [`FakeRegistry::add_file`] (an `mcpb` bundle's
//!   download, [`FakeRegistry::file_url`]).
//!
//! The `{name}` in a path is URL-encoded (`io.github.user%2Fweather`), as the registry wants.
//! A `ServerResponse` is `{"server": <server.json>, "_meta":
//! {"io.modelcontextprotocol.registry/official": {"status", "statusMessage"?, "publishedAt",
//! "updatedAt", "isLatest"}}}`.
//!
//! [`RegistryContents::examples`] seeds it with the registry's public example documents
//! (copied into `src/registry/examples/` from the registry's documentation), older,
//! deprecated and deleted versions, and malformed documents.
//!
//! ```
//! use mcp_testkit::{FakeRegistry, RegistryContents};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let registry = FakeRegistry::start(RegistryContents::examples()).await.unwrap();
//! let url = format!("{}/v0.1/servers?search=brave&version=latest", registry.url());
//! let page: serde_json::Value = reqwest::get(url).await.unwrap().json().await.unwrap();
//! assert_eq!(page["servers"][0]["server"]["version"], "1.0.2");
//! assert_eq!(registry.requests(), ["/v0.1/servers?search=brave&version=latest"]);
//! registry.shutdown().await;
//! # }
//! ```

pub(crate) mod contents;
mod routes;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::record::lock;
use crate::serve::Running;

use contents::Store;
pub use contents::{
    BROKEN_JSON_SERVER, DEFAULT_REGISTRY_PAGE_SIZE, MAX_REGISTRY_LIMIT, REGISTRY_API_PREFIX,
    REGISTRY_OFFICIAL_META, RegistryContents, RegistryEntry, RegistryStatus,
};

/// A fake MCP Registry on `127.0.0.1:0`. Entries can be published, deprecated and deleted
/// while it runs; every request's path and query is recorded.
#[derive(Debug)]
pub struct FakeRegistry {
    store: Arc<Store>,
    running: Running,
}

impl FakeRegistry {
    /// Starts serving `contents` on `127.0.0.1:0`.
    ///
    /// # Errors
    /// [`Error::Io`] when binding fails.
    ///
    /// # Cancel safety
    /// Cancel-safe: a registry that was bound stops when dropped with the future.
    pub async fn start(contents: RegistryContents) -> Result<Self, Error> {
        let store = Arc::new(Store {
            entries: Mutex::new(contents.entries),
            page_size: contents.page_size,
            files: Mutex::default(),
            requests: Mutex::default(),
            delay: Mutex::default(),
            fail_next: Mutex::default(),
        });
        let state = Arc::clone(&store);
        let running = Running::start(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            CancellationToken::new(),
            "binding the fake registry",
            move |_| routes::router(state),
        )
        .await?;
        Ok(Self { store, running })
    }

    /// The base URL, `http://127.0.0.1:<port>` (the API is under [`REGISTRY_API_PREFIX`]).
    pub fn url(&self) -> String {
        format!("http://{}", self.running.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.running.addr
    }

    /// Publishes `entry` as the newest version of its server (it becomes `isLatest` unless
    /// it is deleted).
    pub fn publish(&self, entry: RegistryEntry) {
        lock(&self.store.entries).push(entry);
    }

    /// Sets the status (and its message) of `name`'s `version`; false when there is no
    /// such entry.
    pub fn set_status(
        &self,
        name: &str,
        version: &str,
        status: RegistryStatus,
        message: Option<&str>,
    ) -> bool {
        let mut entries = lock(&self.store.entries);
        let Some(entry) = entries
            .iter_mut()
            .find(|e| e.name == name && e.version == version)
        else {
            return false;
        };
        entry.status = status;
        entry.status_message = message.map(str::to_owned);
        true
    }

    /// Serves `bytes` at `/files/{name}` ([`FakeRegistry::file_url`]).
    pub fn add_file(&self, name: &str, bytes: impl Into<Vec<u8>>) {
        lock(&self.store.files).insert(name.to_owned(), bytes.into());
    }

    /// The URL of a file added with [`FakeRegistry::add_file`].
    pub fn file_url(&self, name: &str) -> String {
        format!("{}/files/{name}", self.url())
    }

    /// Delays every answer by `delay` (for clients' timeouts); zero (the default) answers
    /// at once.
    pub fn set_delay(&self, delay: Duration) {
        *lock(&self.store.delay) = delay;
    }

    /// Answers the next request with `status` and `{"error": "injected failure"}`; calls
    /// queue up, one per request.
    pub fn fail_next(&self, status: u16) {
        lock(&self.store.fail_next).push(status);
    }

    /// Every request's path and query as sent (`/v0.1/servers?search=x`), in arrival
    /// order.
    pub fn requests(&self) -> Vec<String> {
        lock(&self.store.requests).clone()
    }

    /// The `server.json` of `name`'s `version` as served (`None` for an unknown entry or a
    /// raw one).
    pub fn document(&self, name: &str, version: &str) -> Option<Value> {
        lock(&self.store.entries)
            .iter()
            .find(|e| e.name == name && e.version == version)
            .and_then(|e| e.document.clone())
    }

    /// Stops serving and waits up to [`crate::SHUTDOWN_GRACE`] for the server task.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future (or the registry) still stops the server.
    pub async fn shutdown(mut self) {
        self.running.shutdown().await;
    }
}

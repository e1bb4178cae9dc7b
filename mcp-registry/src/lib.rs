//! A client of the [MCP Registry](https://registry.modelcontextprotocol.io): search
//! servers, list a server's versions, fetch one version's `server.json` (validated by
//! `mcp-catalog`, ready to become a pinned configuration) and download `mcpb` bundles
//! checked against their `fileSha256`, from a configurable base URL (organisations run
//! subregistries).
//!
//! ```no_run
//! use mcp_catalog::{InputValues, PackageType};
//! use mcp_registry::{RegistryClient, RegistryOptions};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = RegistryClient::new(RegistryOptions::default())?;
//! for found in registry.search("weather", 10).await? {
//!     println!("{} {} ({})", found.name, found.version, found.status);
//! }
//! let fetched = registry.fetch("io.github.example/weather-mcp", None).await?;
//! let target = fetched.server.package_target(PackageType::Pypi).ok_or("no PyPI package")?;
//! let plan = fetched.server.install_plan(target, &InputValues::new())?;
//! println!("would run: {:?}", plan.command_line());
//! # Ok(()) }
//! ```
//!
//! What it does on the wire (the registry's API `v0.1`):
//! - [`RegistryClient::search`]: `GET /v0.1/servers?search=…&version=latest&limit=…`,
//!   following `metadata.nextCursor` (at most [`MAX_SEARCH_PAGES`] pages);
//! - [`RegistryClient::versions`]: `GET /v0.1/servers/{name}/versions`;
//! - [`RegistryClient::fetch`]: `GET /v0.1/servers/{name}/versions/{version|latest}`;
//! - [`RegistryClient::download_bundle`]: `GET` of the bundle's URL, bytes checked.
//!
//! Names are URL-encoded in paths. Deleted versions are never offered; deprecated ones are
//! returned marked ([`EntryStatus::Deprecated`]). Answers are cached per URL for
//! [`DEFAULT_CACHE_TTL`] (concurrent requests for one URL make one request; failures are
//! not kept); each request has a timeout ([`DEFAULT_TIMEOUT`]) and a size bound
//! ([`MAX_ANSWER_BYTES`]). Only `https://` registries (or `http://` on loopback) are used:
//! what they answer decides what runs.
//!
//! Nothing here runs or writes anything: turning a document into a configuration is
//! `mcp-catalog`'s ([`mcp_catalog::RegistryServer::install_plan`]), asking the user and
//! writing the file is the host's.

mod answer;
mod cache;
mod client;
mod error;

pub use answer::{EntryStatus, OFFICIAL_META, ServerSummary};
pub use client::{
    DEFAULT_CACHE_TTL, DEFAULT_REGISTRY_URL, DEFAULT_TIMEOUT, FetchedServer, MAX_ANSWER_BYTES,
    MAX_BUNDLE_BYTES, MAX_PAGE_LIMIT, MAX_SEARCH_PAGES, RegistryClient, RegistryOptions,
};
pub use error::RegistryError;

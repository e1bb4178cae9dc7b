//! What a [`FakeRegistry`](crate::FakeRegistry) serves: entries (a `server.json` and its
//! registry status) in publication order, the seeded examples, and the running store.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

/// The path prefix of the registry's API version served.
pub const REGISTRY_API_PREFIX: &str = "/v0.1";
/// The `_meta` key of the registry's own metadata in a `ServerResponse`.
pub const REGISTRY_OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";
/// The page size when a request gives no `limit` (the official registry's default).
pub const DEFAULT_REGISTRY_PAGE_SIZE: usize = 30;
/// The largest `limit` accepted (the official registry's maximum).
pub const MAX_REGISTRY_LIMIT: usize = 100;

/// What a running registry holds: its entries and files, the requests seen, the faults set.
#[derive(Debug)]
pub(crate) struct Store {
    pub(crate) entries: Mutex<Vec<RegistryEntry>>,
    pub(crate) page_size: usize,
    pub(crate) files: Mutex<BTreeMap<String, Vec<u8>>>,
    pub(crate) requests: Mutex<Vec<String>>,
    pub(crate) delay: Mutex<Duration>,
    pub(crate) fail_next: Mutex<Vec<u16>>,
}

/// A registry entry's lifecycle status (`_meta["io.modelcontextprotocol.registry/official"].status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RegistryStatus {
    /// Offered.
    Active,
    /// Still served, marked as deprecated (usually with a message saying what to use).
    Deprecated,
    /// Served only to requests with `include_deleted=true`.
    Deleted,
}

impl RegistryStatus {
    /// The status as the registry writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RegistryStatus::Active => "active",
            RegistryStatus::Deprecated => "deprecated",
            RegistryStatus::Deleted => "deleted",
        }
    }
}

impl fmt::Display for RegistryStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One version of one server in the registry.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RegistryEntry {
    /// The server's name (`io.github.user/weather`).
    pub name: String,
    /// The version.
    pub version: String,
    /// The `server.json` served under `server`; `None` for a raw entry.
    pub document: Option<Value>,
    /// A raw entry's body: served verbatim as the answer for this version (lists show a
    /// stub with its name and version).
    pub raw: Option<String>,
    /// Its status.
    pub status: RegistryStatus,
    /// Its `statusMessage`, if any.
    pub status_message: Option<String>,
}

impl RegistryEntry {
    /// An active entry serving `document`; its name and version are read from it (empty
    /// when missing: a malformed document is served as it is).
    pub fn new(document: Value) -> Self {
        let text = |key: &str| {
            document
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Self {
            name: text("name"),
            version: text("version"),
            document: Some(document),
            raw: None,
            status: RegistryStatus::Active,
            status_message: None,
        }
    }

    /// An entry parsed from `text`, a `server.json` (`None` when it is not JSON).
    pub fn from_json_str(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok().map(Self::new)
    }

    /// An entry whose answer is `body` verbatim (for instance, text that is not JSON).
    pub fn raw(name: &str, version: &str, body: &str) -> Self {
        Self {
            name: name.to_owned(),
            version: version.to_owned(),
            document: None,
            raw: Some(body.to_owned()),
            status: RegistryStatus::Active,
            status_message: None,
        }
    }

    /// With `status`.
    #[must_use]
    pub fn with_status(mut self, status: RegistryStatus) -> Self {
        self.status = status;
        self
    }

    /// With a `statusMessage`.
    #[must_use]
    pub fn with_status_message(mut self, message: &str) -> Self {
        self.status_message = Some(message.to_owned());
        self
    }

    /// The same document as another version: `version` replaces the server's version and
    /// every package's `version` (and an OCI image's tag) equal to the old one.
    #[must_use]
    pub fn as_version(mut self, version: &str) -> Self {
        let old = std::mem::replace(&mut self.version, version.to_owned());
        if let Some(document) = &mut self.document {
            document["version"] = json!(version);
            if let Some(packages) = document.get_mut("packages").and_then(Value::as_array_mut) {
                for package in packages {
                    if package.get("version").and_then(Value::as_str) == Some(&old) {
                        package["version"] = json!(version);
                    }
                    let identifier = package.get("identifier").and_then(Value::as_str);
                    if let Some(image) = identifier.and_then(|i| i.strip_suffix(&format!(":{old}")))
                    {
                        package["identifier"] = json!(format!("{image}:{version}"));
                    }
                }
            }
        }
        self
    }
}

/// The registry's contents at start: entries in publication order and the page size.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RegistryContents {
    /// The entries, oldest first.
    pub entries: Vec<RegistryEntry>,
    /// Servers per page when a request gives no `limit`, and the most a page holds
    /// whatever the `limit`.
    pub page_size: usize,
}

impl Default for RegistryContents {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            page_size: DEFAULT_REGISTRY_PAGE_SIZE,
        }
    }
}

/// The registry's public example documents, by file name.
pub(crate) const EXAMPLES: &[(&str, &str)] = &[
    ("filesystem.json", include_str!("examples/filesystem.json")),
    ("hybrid.json", include_str!("examples/hybrid.json")),
    (
        "mcpb-text-editor.json",
        include_str!("examples/mcpb-text-editor.json"),
    ),
    (
        "npm-brave-search.json",
        include_str!("examples/npm-brave-search.json"),
    ),
    (
        "nuget-knapcode.json",
        include_str!("examples/nuget-knapcode.json"),
    ),
    (
        "oci-database-manager.json",
        include_str!("examples/oci-database-manager.json"),
    ),
    (
        "package-version-latest.json",
        include_str!("examples/package-version-latest.json"),
    ),
    (
        "pypi-weather.json",
        include_str!("examples/pypi-weather.json"),
    ),
    (
        "remote-url-template.json",
        include_str!("examples/remote-url-template.json"),
    ),
    (
        "with-package.json",
        include_str!("examples/with-package.json"),
    ),
];

/// The name of the seeded entry whose answer is not JSON.
pub const BROKEN_JSON_SERVER: &str = "io.github.example/broken-json";

impl RegistryContents {
    /// No entries.
    pub fn new() -> Self {
        Self::default()
    }

    /// The registry's public example documents, each active and latest, and around them:
    /// - `io.modelcontextprotocol.anonymous/brave-search` 1.0.0 (deleted), 1.0.1
    ///   (deprecated, "upgrade to 1.0.2") and 1.0.2 (the example, latest);
    /// - `io.github.example/weather-mcp` 0.4.0 (active) before 0.5.0;
    /// - `io.github.user/bad-version` (the example pinning `latest`: valid JSON, an invalid
    ///   `server.json`);
    /// - [`BROKEN_JSON_SERVER`] 1.0.0, whose answer is cut-off JSON.
    pub fn examples() -> Self {
        let example = |file: &str| {
            EXAMPLES
                .iter()
                .find(|(name, _)| *name == file)
                .and_then(|(_, text)| RegistryEntry::from_json_str(text))
        };
        let mut entries = Vec::new();
        if let Some(brave) = example("npm-brave-search.json") {
            entries.push(
                brave
                    .clone()
                    .as_version("1.0.0")
                    .with_status(RegistryStatus::Deleted)
                    .with_status_message("withdrawn: it leaked queries"),
            );
            entries.push(
                brave
                    .clone()
                    .as_version("1.0.1")
                    .with_status(RegistryStatus::Deprecated)
                    .with_status_message("upgrade to 1.0.2"),
            );
        }
        if let Some(weather) = example("pypi-weather.json") {
            entries.push(weather.as_version("0.4.0"));
        }
        entries.extend(
            EXAMPLES
                .iter()
                .filter_map(|(_, text)| RegistryEntry::from_json_str(text)),
        );
        entries.push(RegistryEntry::raw(
            BROKEN_JSON_SERVER,
            "1.0.0",
            "{\"server\": {\"name\": \"io.github.example/broken-json\", \"version\": ",
        ));
        Self {
            entries,
            ..Self::default()
        }
    }

    /// With `entry` published after the others.
    #[must_use]
    pub fn with_entry(mut self, entry: RegistryEntry) -> Self {
        self.entries.push(entry);
        self
    }

    /// With at most `page_size` servers per page.
    #[must_use]
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }
}

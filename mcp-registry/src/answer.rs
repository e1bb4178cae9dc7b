//! The registry's answers read into what a host shows: one line per server version.

use std::fmt;

use serde_json::Value;

/// The `_meta` key of the registry's own metadata in an answer.
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";

/// A version's lifecycle status in the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum EntryStatus {
    /// Offered (also what an answer without the registry's metadata means).
    Active,
    /// Still offered, marked as deprecated: show it as such.
    Deprecated,
    /// Withdrawn: never offered.
    Deleted,
}

impl EntryStatus {
    /// The status as the registry writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryStatus::Active => "active",
            EntryStatus::Deprecated => "deprecated",
            EntryStatus::Deleted => "deleted",
        }
    }

    fn parse(text: Option<&str>) -> Self {
        match text {
            Some("deprecated") => EntryStatus::Deprecated,
            Some("deleted") => EntryStatus::Deleted,
            _ => EntryStatus::Active,
        }
    }
}

impl fmt::Display for EntryStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One server version as a search or a version list shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerSummary {
    /// The server's name (`io.github.user/weather`).
    pub name: String,
    /// The version.
    pub version: String,
    /// Its `title`, if any.
    pub title: Option<String>,
    /// Its `description`, if any.
    pub description: Option<String>,
    /// Its status.
    pub status: EntryStatus,
    /// The status's message (what to use instead of a deprecated version), if any.
    pub status_message: Option<String>,
    /// Whether the registry marks it as the server's latest version.
    pub is_latest: bool,
    /// When it was published (RFC 3339), if the registry says.
    pub published_at: Option<String>,
}

impl ServerSummary {
    /// Reads a `ServerResponse` (`{"server": …, "_meta": …}`); `None` when it has no
    /// server name and version.
    pub(crate) fn from_response(response: &Value) -> Option<Self> {
        let server = response.get("server")?;
        let text =
            |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let official = response.get("_meta").and_then(|m| m.get(OFFICIAL_META));
        let meta = |key: &str| official.and_then(|o| text(o, key));
        Some(Self {
            name: text(server, "name")?,
            version: text(server, "version")?,
            title: text(server, "title"),
            description: text(server, "description"),
            status: EntryStatus::parse(meta("status").as_deref()),
            status_message: meta("statusMessage"),
            is_latest: official
                .and_then(|o| o.get("isLatest"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            published_at: meta("publishedAt"),
        })
    }
}

//! The lists of one connection: the server's tool listing as the connection keeps it (the
//! tools, one per raw name, what was wrong with the server's list, and how fresh it is;
//! listed again after each `tools/list_changed`, debounced), and the bounded pagination
//! that every listing goes through ([`paginate`]: pages, items and bytes within budgets).

pub(crate) mod paginate;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use mcp_key::McpServerKey;
use rmcp::RoleClient;
use rmcp::model::Tool;
use rmcp::service::Peer;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::state::ConnectionShared;
use paginate::Listed;

/// A server's current tool listing, shared by every set using the connection.
pub(crate) struct Listing {
    /// The server's tools, one per raw name (see [`unique_tools`]).
    tools: RwLock<Arc<Vec<Tool>>>,
    /// What was wrong with the server's last tool list (duplicate or empty names).
    warnings: RwLock<Arc<Vec<String>>>,
    /// Bumped on every new listing.
    revision: watch::Sender<Stamp>,
    /// Bumped on every `tools/list_changed`, before the new listing is fetched.
    announced: watch::Sender<u64>,
}

/// Which listing a connection has, and how fresh it is.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Stamp {
    /// Counts listings: 0 for the first.
    pub number: u64,
    /// When the fetch of this listing began.
    pub fetched: SystemTime,
    /// How long the server says it stays fresh (`ttlMs`), if it said.
    pub ttl: Option<Duration>,
    /// The server said `cacheScope: "private"`.
    pub private: bool,
}

impl Listing {
    pub(crate) fn new(key: &McpServerKey, listed: Listed, fetched: SystemTime) -> Self {
        let (tools, warnings) = unique_tools(key, listed.tools);
        for warning in &warnings {
            tracing::warn!(server = %key, "{warning}");
        }
        Self {
            tools: RwLock::new(Arc::new(tools)),
            warnings: RwLock::new(Arc::new(warnings)),
            revision: watch::channel(Stamp {
                number: 0,
                fetched,
                ttl: listed.ttl,
                private: listed.private,
            })
            .0,
            announced: watch::channel(0).0,
        }
    }

    fn read<T>(lock: &RwLock<Arc<T>>) -> Arc<T> {
        match lock.read() {
            Ok(v) => Arc::clone(&v),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    fn write<T>(lock: &RwLock<Arc<T>>, value: T) {
        match lock.write() {
            Ok(mut v) => *v = Arc::new(value),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(value),
        }
    }

    pub(crate) fn tools(&self) -> Arc<Vec<Tool>> {
        Self::read(&self.tools)
    }

    pub(crate) fn warnings(&self) -> Arc<Vec<String>> {
        Self::read(&self.warnings)
    }

    pub(crate) fn revisions(&self) -> watch::Receiver<Stamp> {
        self.revision.subscribe()
    }

    pub(crate) fn stamp(&self) -> Stamp {
        *self.revision.borrow()
    }

    pub(crate) fn announcements(&self) -> watch::Receiver<u64> {
        self.announced.subscribe()
    }

    /// Replaces the tools with a new listing whose fetch began at `fetched`; logs the
    /// warnings the previous listing did not already have.
    fn set(&self, key: &McpServerKey, listed: Listed, fetched: SystemTime) {
        let (tools, warnings) = unique_tools(key, listed.tools);
        let previous = Self::read(&self.warnings);
        for warning in warnings.iter().filter(|w| !previous.contains(w)) {
            tracing::warn!(server = %key, "{warning}");
        }
        Self::write(&self.warnings, warnings);
        Self::write(&self.tools, tools);
        self.revision.send_modify(|stamp| {
            *stamp = Stamp {
                number: stamp.number + 1,
                fetched,
                ttl: listed.ttl,
                private: listed.private,
            };
        });
    }
}

/// How the connection's `tools/list_changed` refresh lists.
pub(crate) struct RefreshSettings {
    pub(crate) debounce: Duration,
    pub(crate) timeout: Duration,
    pub(crate) byte_budget: usize,
}

/// Lists the tools again after `tools/list_changed` (debounced), for every set using the
/// connection at once.
pub(crate) async fn refresh_on_list_changed(
    peer: Peer<RoleClient>,
    shared: Arc<ConnectionShared>,
    listing: Arc<Listing>,
    cancel: CancellationToken,
    settings: RefreshSettings,
) {
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = shared.tools_changed.notified() => {}
        }
        listing.announced.send_modify(|n| *n += 1);
        // Debounce: let a burst of notifications collapse into one refresh.
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(settings.debounce) => {}
        }
        let fetched = SystemTime::now();
        let protocol = peer
            .peer_info()
            .map(|i| i.protocol_version.as_str().to_owned());
        let instruments = &shared.instruments;
        let span = instruments.span(&shared.key, protocol.as_deref(), "tools/list", None);
        let began = crate::telemetry::Began::now();
        let listed = tokio::select! {
            () = cancel.cancelled() => return,
            // Boxed: the listing's future is large, and inline it would stay in this task's
            // (one per connection) for the connection's whole life.
            r = Box::pin(tokio::time::timeout(settings.timeout, tracing::Instrument::instrument(
                paginate::all_tools(&peer, settings.byte_budget),
                span.clone(),
            ))) => r,
        };
        let error = match &listed {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(paginate::page_error_kind(e)),
            Err(_) => Some(("timeout".into(), None)),
        };
        if let Some((kind, code)) = &error {
            crate::telemetry::record_ended(&span, kind, *code);
        }
        let error = error.as_ref().map(|(kind, code)| (kind.as_ref(), *code));
        instruments.ended(began, "tools/list", None, protocol.as_deref(), error);
        match listed {
            Ok(Ok(tools)) => listing.set(&shared.key, tools, fetched),
            Ok(Err(e)) => {
                tracing::warn!(server = %shared.key, "refreshing tools after list_changed failed: {e}");
            }
            Err(_) => {
                tracing::warn!(server = %shared.key, "refreshing tools after list_changed timed out");
            }
        }
    }
}

/// A server's tool list made fit for the catalog: one tool per raw name (the first one
/// listed wins) and no tool with an empty name (no model-visible name can be made from
/// it). Returns the kept tools in list order, and one warning per problem, naming the
/// server.
pub(crate) fn unique_tools(key: &McpServerKey, tools: Vec<Tool>) -> (Vec<Tool>, Vec<String>) {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut kept = Vec::with_capacity(tools.len());
    for tool in tools {
        let count = counts.entry(tool.name.to_string()).or_insert(0);
        *count += 1;
        if *count == 1 && !tool.name.is_empty() {
            kept.push(tool);
        }
    }
    let warnings = counts
        .into_iter()
        .filter_map(|(name, count)| {
            if name.is_empty() {
                let times = if count == 1 {
                    String::new()
                } else {
                    format!(" ({count} times)")
                };
                Some(format!(
                    "MCP server `{key}` lists a tool with an empty name{times}; it is left out (the server must give every tool a name)"
                ))
            } else if count > 1 {
                Some(format!(
                    "MCP server `{key}` lists tool `{name}` {count} times; only the first is offered (the server must give each tool a unique name)"
                ))
            } else {
                None
            }
        })
        .collect();
    (kept, warnings)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn named(name: &str, description: &str) -> Tool {
        Tool::new(
            name.to_owned(),
            description.to_owned(),
            Arc::new(serde_json::Map::new()),
        )
    }

    #[test]
    fn the_first_of_duplicate_names_wins_and_empty_names_are_left_out() {
        let key: McpServerKey = "h".parse().unwrap();
        let (kept, warnings) = unique_tools(
            &key,
            vec![
                named("b", "first b"),
                named("", "nameless"),
                named("a", "only a"),
                named("b", "second b"),
                named("b", "third b"),
                named("", "nameless again"),
            ],
        );
        let kept: Vec<(&str, Option<&str>)> = kept
            .iter()
            .map(|t| (t.name.as_ref(), t.description.as_deref()))
            .collect();
        assert_eq!(kept, [("b", Some("first b")), ("a", Some("only a"))]);
        assert_eq!(
            warnings,
            [
                "MCP server `h` lists a tool with an empty name (2 times); it is left out (the server must give every tool a name)",
                "MCP server `h` lists tool `b` 3 times; only the first is offered (the server must give each tool a unique name)",
            ]
        );
        let (kept, warnings) = unique_tools(&key, vec![named("a", ""), named("b", "")]);
        assert_eq!(kept.len(), 2);
        assert!(warnings.is_empty());
    }
}

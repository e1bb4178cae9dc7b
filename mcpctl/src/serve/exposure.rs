//! `mcpctl serve --tool-exposure search`: instead of every tool of every server, the
//! gateway lists two, one that searches the catalog ([`SEARCH_TOOL`]) and one that calls a
//! tool by its qualified name ([`CALL_TOOL`]). A call through [`CALL_TOOL`] is the call of
//! the named tool: the same approvals, filters and errors as calling it directly.
//! The mode comes from the flag, else the configuration's `tool_exposure`.
//!
//! The tools a 2025-era client's searches returned are listed too, after the two (the
//! latest [`MAX_REVEALED`]), and the client is told with `notifications/tools/list_changed`:
//! a client that honours it can then call them directly. A 2026-era client has no
//! session to remember them by, so it gets the two only.

use mcp_connections::model::{CallToolResult, ContentBlock, Tool};
pub(crate) use mcp_connections::{CALL_TOOL, SEARCH_TOOL};
use mcp_connections::{CatalogHit, ConnectionSet, SearchModeCall, SearchModeConfig, ToolInfo};
use mcp_key::McpServerKey;
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value};

fn refused(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The most tools a client's searches reveal at once (the latest kept).
pub(crate) const MAX_REVEALED: usize = 32;

/// The qualified names of the tools a client's searches returned, oldest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Revealed(Vec<String>);

impl Revealed {
    /// Adds `found` (a search's results, each moved to the newest place); true when one
    /// of them was not revealed yet (only then can the oldest drop out).
    pub(crate) fn add(&mut self, found: Vec<String>) -> bool {
        let mut changed = false;
        for name in found {
            match self.0.iter().position(|n| *n == name) {
                Some(i) => drop(self.0.remove(i)),
                None => changed = true,
            }
            self.0.push(name);
        }
        let over = self.0.len().saturating_sub(MAX_REVEALED);
        self.0.drain(..over);
        changed
    }

    /// Whether no search revealed anything yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The revealed tools among `catalog` (tools gone since are left out), under their
    /// qualified names, in catalog order.
    pub(crate) fn listed(&self, catalog: &[ToolInfo]) -> Vec<Tool> {
        catalog
            .iter()
            .filter(|info| self.0.contains(&info.qualified_name))
            .map(as_listed)
            .collect()
    }
}

/// A tool as the gateway lists it: under its qualified name.
pub(crate) fn as_listed(info: &ToolInfo) -> Tool {
    let mut tool = info.tool.clone();
    tool.name = info.qualified_name.clone().into();
    tool
}

/// What a caller may find: the tools it may call, and the skills of the servers it may
/// use.
pub(crate) struct SearchGrants<'a> {
    /// Whether the caller may call this tool.
    pub(crate) tool: &'a (dyn Fn(&ToolInfo) -> bool + Sync),
    /// Whether the caller may use this server (its skills).
    pub(crate) server: &'a (dyn Fn(&McpServerKey) -> bool + Sync),
}

impl SearchGrants<'_> {
    fn allow(&self, hit: &CatalogHit) -> bool {
        match hit {
            CatalogHit::Tool(hit) => (self.tool)(&hit.info),
            CatalogHit::Skill(hit) => (self.server)(&hit.info.server),
            _ => false,
        }
    }
}

/// Runs a `search_tools` call as the library's search mode answers it
/// ([`ConnectionSet::answer_search_mode_for`]), over what the caller may use (`grants`):
/// tools and skills ranked together, weak matches left out, and when nothing the caller
/// may use matches well, the "no good match" answer with the closest names it may use.
/// Structured content, and the same JSON as text for clients that read text only; an
/// error result says what to do. Also returns the qualified names of the tools found
/// (skills are loaded, not called, so they are not revealed).
pub(crate) async fn search(
    set: &ConnectionSet,
    arguments: Option<&Map<String, Value>>,
    grants: &SearchGrants<'_>,
) -> (CallToolResult, Vec<String>) {
    let config = SearchModeConfig::new();
    let (query, limit) = match SearchModeCall::parse_for(SEARCH_TOOL, arguments, &config) {
        Some(Ok(SearchModeCall::Search { query, limit })) => (query, limit),
        Some(Err(text)) => return (refused(text), Vec::new()),
        _ => {
            return (
                refused(format!("{SEARCH_TOOL} needs a `query` string")),
                Vec::new(),
            );
        }
    };
    // The skills join the index when listed (a server's listing is reused until it
    // changes).
    set.skills().await;
    // The best matches among what the caller may use: the search ranks everything, so
    // ask for as many as it gives (the index caps it) and keep the first `limit` allowed.
    let found = match set.find_tools_and_skills(&query, &config.options(usize::MAX)) {
        Ok(found) => found,
        Err(e) => return (refused(format!("{SEARCH_TOOL}: {e}")), Vec::new()),
    };
    let mut hits: Vec<CatalogHit> = found.hits.into_iter().filter(|h| grants.allow(h)).collect();
    hits.truncate(limit);
    let answer = if hits.is_empty() {
        let closest: Vec<&CatalogHit> = found
            .did_you_mean
            .iter()
            .filter(|h| grants.allow(h))
            .collect();
        mcp_connections::no_match_answer(&query, closest.iter().map(|h| h.qualified_name()))
    } else {
        mcp_connections::catalog_search_answer(&hits)
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(answer.to_string())]);
    result.structured_content = Some(answer);
    let names = hits
        .into_iter()
        .filter_map(|hit| match hit {
            CatalogHit::Tool(hit) => Some(hit.info.qualified_name),
            _ => None,
        })
        .collect();
    (result, names)
}

/// The call a `call_tool` request stands for (the named tool with its arguments), or the
/// error result for a request that names none.
pub(crate) fn unwrap_call(
    request: &CallToolRequestParams,
) -> Result<CallToolRequestParams, CallToolResult> {
    match SearchModeCall::parse(CALL_TOOL, request.arguments.as_ref()) {
        Some(Ok(SearchModeCall::Call { name, arguments })) => {
            let mut inner = request.clone();
            inner.name = name.into();
            inner.arguments = arguments;
            Ok(inner)
        }
        Some(Err(text)) => Err(refused(text)),
        _ => Err(refused(format!(
            "{CALL_TOOL} needs the `name` of a tool that {SEARCH_TOOL} returned"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn revealing_says_when_the_listing_changes_and_keeps_the_latest() {
        let mut revealed = Revealed::default();
        assert!(revealed.is_empty());
        assert!(revealed.add(names(&["a", "b"])));
        assert!(
            !revealed.add(names(&["b", "a"])),
            "the same tools again change nothing"
        );
        assert!(!revealed.add(Vec::new()));
        let many: Vec<String> = (0..MAX_REVEALED).map(|i| format!("t{i}")).collect();
        assert!(revealed.add(many.clone()));
        assert_eq!(revealed.0, many, "the oldest go first");
    }
}

//! [`ConnectionSet::search_tools`]: the set's tool search over every tool it can name.

use crate::catalog::search::ToolHit;
use crate::catalog::tool_info::ToolInfo;
use crate::error::Result;
use crate::set::ConnectionSet;
use mcp_key::McpServerKey;
use std::collections::BTreeMap;
use std::sync::PoisonError;

impl ConnectionSet {
    /// The tools that best match `query`, best first, at most `limit`: over every tool the
    /// set can name now ([`ConnectionSet::tools`] without its wait: ready servers, and
    /// deferred servers' cached listings), with the ranking of [`mcp_search::ToolIndex`]
    /// (a tool's raw or qualified name in the query ranks it first; ties ordered by name).
    /// Searching starts nothing and waits for nothing. The index follows the catalog: after
    /// a server's listing changes only that server is indexed again.
    ///
    /// Errors: [`Error::Search`](crate::Error::Search) for a query or limit the index
    /// refuses (empty or control characters only, over 4,096 characters, a limit of 0).
    pub fn search_tools(&self, query: &str, limit: usize) -> Result<Vec<ToolHit>> {
        let catalog = self.catalog();
        let mut state = self
            .inner
            .search
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.follow(catalog.revision, &catalog.tools)?;
        let hits = state.index.search(query, limit)?;
        drop(state);
        let by_name: BTreeMap<(&McpServerKey, &str), &ToolInfo> = catalog
            .tools
            .iter()
            .map(|i| ((&i.server, i.tool.name.as_ref()), i))
            .collect();
        Ok(hits
            .into_iter()
            .filter_map(|hit| {
                by_name
                    .get(&(hit.server(), hit.tool()))
                    .map(|info| ToolHit {
                        info: (*info).clone(),
                        score: hit.score(),
                    })
            })
            .collect())
    }
}

//! [`ConnectionSet::search_tools`]: the set's tool search over every tool it can name.

use crate::catalog::search::ToolHit;
use crate::catalog::tool_info::ToolInfo;
use crate::error::Result;
use crate::set::ConnectionSet;
use mcp_key::McpServerKey;
use std::collections::BTreeMap;
use std::sync::PoisonError;

impl ConnectionSet {
    /// Answers a model's call of one of the two search-mode tools
    /// ([`search_mode_tools`](crate::search_mode_tools)), as `mcpctl serve --tool-exposure
    /// search` does: a [`SEARCH_TOOL`](crate::SEARCH_TOOL) call gets the best matches
    /// ([`search_answer`](crate::search_answer), as structured content and as JSON text); a
    /// [`CALL_TOOL`](crate::CALL_TOOL) call is the call of the tool it names
    /// ([`Self::call_qualified`] with `options`: the same errors as a direct call, and, like
    /// it, no approval asked; a host that enforces approvals reads the call with
    /// [`SearchModeCall::parse`](crate::SearchModeCall::parse) and makes it with
    /// [`Self::call_approved`], as `examples/host_full.rs` does). Wrong
    /// arguments get an error result telling the model what to fix. `None` when `tool` is
    /// neither of the two (call it directly).
    ///
    /// # Cancel safety
    /// As [`Self::call_qualified`].
    pub async fn answer_search_mode(
        &self,
        tool: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
        options: crate::CallOptions,
    ) -> Option<Result<rmcp::model::CallToolResult>> {
        use crate::catalog::search_mode::SearchModeCall;
        use rmcp::model::{CallToolResult, ContentBlock};
        let refused = |text: String| Ok(CallToolResult::error(vec![ContentBlock::text(text)]));
        Some(match SearchModeCall::parse(tool, arguments)? {
            Err(text) => refused(text),
            Ok(SearchModeCall::Search { query, limit }) => match self.search_tools(&query, limit) {
                Ok(hits) => {
                    let answer = crate::catalog::search_mode::search_answer(&hits);
                    let mut result =
                        CallToolResult::success(vec![ContentBlock::text(answer.to_string())]);
                    result.structured_content = Some(answer);
                    Ok(result)
                }
                Err(e) => refused(format!("{}: {e}", crate::SEARCH_TOOL)),
            },
            Ok(SearchModeCall::Call { name, arguments }) => {
                self.call_qualified(&name, arguments.map(serde_json::Value::Object), options)
                    .await
            }
        })
    }

    /// The tools that best match `query`, best first, at most `limit`: over every tool the
    /// set can name now ([`ConnectionSet::tools`] without its wait: ready servers, and
    /// deferred servers' cached listings), with the ranking of [`mcp_search::ToolIndex`]
    /// (a tool's raw or qualified name in the query ranks it first; ties ordered by name).
    /// Searching starts nothing and waits for nothing. The index follows the catalog: after
    /// a server's listing changes only that server is indexed again.
    ///
    /// Errors: [`Error::Search`](crate::Error::Search) for a query or limit the index
    /// refuses (empty or control characters only, over 4,096 characters, a limit of 0). A
    /// limit above the index's largest ([`mcp_search::MAX_LIMIT`]) is clamped, so
    /// `usize::MAX` asks for every match.
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

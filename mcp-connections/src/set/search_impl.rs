//! [`ConnectionSet::search_tools`]: the set's tool search over every tool it can name; the
//! search mode's answers and listing.

use crate::catalog::search::{CatalogHit, CatalogSearch, SkillHit, ToolHit, ToolSearch};
use crate::catalog::search_mode::SearchModeConfig;
use crate::catalog::skills::SkillInfo;
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
    /// neither of the two (call it directly). With the default [`SearchModeConfig`]: see
    /// [`Self::answer_search_mode_for`].
    ///
    /// # Cancel safety
    /// As [`Self::call_qualified`].
    pub async fn answer_search_mode(
        &self,
        tool: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
        options: crate::CallOptions,
    ) -> Option<Result<rmcp::model::CallToolResult>> {
        self.answer_search_mode_for(tool, arguments, options, &SearchModeConfig::new())
            .await
    }

    /// [`Self::answer_search_mode`] with `config`: a search's `limit` defaults to and is
    /// bounded by the config's. A search finds skills too: the servers' skills are listed
    /// first ([`Self::skills`]: a server's listing is reused until it changes), and a
    /// skill that matches is ranked among the tools and answered as a skill
    /// ([`catalog_search_answer`](crate::catalog_search_answer): `"kind": "skill"`, its
    /// qualified name, description and `SKILL.md` URI; the host loads it with
    /// [`Self::load_skill`], not through [`CALL_TOOL`](crate::CALL_TOOL)). When nothing has
    /// the config's
    /// [`min_coverage`](SearchModeConfig::min_coverage) of the query the answer is "no good
    /// match" ([`no_match_answer`](crate::no_match_answer): no tools, a sentence, the
    /// closest names as `did_you_mean`), not an error.
    ///
    /// # Cancel safety
    /// As [`Self::call_qualified`].
    pub async fn answer_search_mode_for(
        &self,
        tool: &str,
        arguments: Option<&serde_json::Map<String, serde_json::Value>>,
        options: crate::CallOptions,
        config: &SearchModeConfig,
    ) -> Option<Result<rmcp::model::CallToolResult>> {
        use crate::catalog::search_mode::SearchModeCall;
        use rmcp::model::{CallToolResult, ContentBlock};
        let refused = |text: String| Ok(CallToolResult::error(vec![ContentBlock::text(text)]));
        Some(match SearchModeCall::parse_for(tool, arguments, config)? {
            Err(text) => refused(text),
            Ok(SearchModeCall::Search { query, limit }) => {
                // Lists the skills (reused when unchanged) and keeps them for the index.
                self.skills().await;
                match self.find_tools_and_skills(&query, &config.options(limit)) {
                    Ok(found) => {
                        let answer = if found.is_no_match() {
                            crate::catalog::search_mode::no_match_answer(
                                &query,
                                found.did_you_mean.iter().map(CatalogHit::qualified_name),
                            )
                        } else {
                            crate::catalog::search_mode::catalog_search_answer(&found.hits)
                        };
                        let mut result =
                            CallToolResult::success(vec![ContentBlock::text(answer.to_string())]);
                        result.structured_content = Some(answer);
                        Ok(result)
                    }
                    Err(e) => refused(format!("{}: {e}", crate::SEARCH_TOOL)),
                }
            }
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
    /// a server's listing changes only that server is indexed again. Every tool that
    /// matches a word comes back; [`Self::find_tools`] leaves weak matches out.
    ///
    /// Errors: [`Error::Search`](crate::Error::Search) for a query or limit the index
    /// refuses (empty or control characters only, over 4,096 characters, a limit of 0). A
    /// limit above the index's largest ([`mcp_search::MAX_LIMIT`]) is clamped, so
    /// `usize::MAX` asks for every match.
    pub fn search_tools(&self, query: &str, limit: usize) -> Result<Vec<ToolHit>> {
        let options = mcp_search::SearchOptions::new(limit).with_min_coverage(0.0);
        Ok(self.find_tools(query, &options)?.hits)
    }

    /// As [`Self::search_tools`], with `options`' minimum coverage: tools that have less
    /// of the query (and that it does not name) are left out, and when none is left the
    /// closest tools come back as [`ToolSearch::did_you_mean`] (see
    /// [`mcp_search::ToolIndex::search_with`]).
    ///
    /// Errors: as [`Self::search_tools`].
    pub fn find_tools(
        &self,
        query: &str,
        options: &mcp_search::SearchOptions,
    ) -> Result<ToolSearch> {
        let options = options.only(mcp_search::EntryKind::Tool);
        let found = self.find_tools_and_skills(query, &options)?;
        let tools = |list: Vec<CatalogHit>| -> Vec<ToolHit> {
            list.into_iter()
                .filter_map(|hit| match hit {
                    CatalogHit::Tool(hit) => Some(hit),
                    _ => None,
                })
                .collect()
        };
        Ok(ToolSearch {
            hits: tools(found.hits),
            did_you_mean: tools(found.did_you_mean),
        })
    }

    /// As [`Self::find_tools`], with the servers' skills ranked among the tools: each
    /// indexed by its name and the description of its `SKILL.md` frontmatter, found as a
    /// [`CatalogHit::Skill`] under its qualified name (what [`Self::load_skill`] takes).
    /// The skills are those the last [`Self::skills`] listed, held-back ones left out
    /// (this call lists nothing: call [`Self::skills`] first for the current ones, as
    /// search mode does). `options` may ask for one kind only
    /// ([`mcp_search::SearchOptions::only`]).
    ///
    /// Errors: as [`Self::search_tools`].
    pub fn find_tools_and_skills(
        &self,
        query: &str,
        options: &mcp_search::SearchOptions,
    ) -> Result<CatalogSearch> {
        let catalog = self.catalog();
        let mut state = self
            .inner
            .search
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.follow(catalog.revision, &catalog.tools)?;
        let found = state.index.search_with(query, options)?;
        let skills: BTreeMap<(&McpServerKey, &str), SkillInfo> = state
            .skills
            .values()
            .flatten()
            .map(|s| ((&s.server, s.name()), s.clone()))
            .collect();
        let by_name: BTreeMap<(&McpServerKey, &str), &ToolInfo> = catalog
            .tools
            .iter()
            .map(|i| ((&i.server, i.tool.name.as_ref()), i))
            .collect();
        let hits = |list: Vec<mcp_search::Hit>| -> Vec<CatalogHit> {
            list.into_iter()
                .filter_map(|hit| {
                    let name = (hit.server(), hit.name());
                    if hit.is_skill() {
                        skills.get(&name).map(|info| {
                            CatalogHit::Skill(SkillHit {
                                info: info.clone(),
                                score: hit.score(),
                            })
                        })
                    } else {
                        by_name.get(&name).map(|info| {
                            CatalogHit::Tool(ToolHit {
                                info: (*info).clone(),
                                score: hit.score(),
                            })
                        })
                    }
                })
                .collect()
        };
        let result = CatalogSearch {
            hits: hits(found.hits),
            did_you_mean: hits(found.did_you_mean),
        };
        drop(state);
        Ok(result)
    }

    /// The tools the catalog pins for search mode, in catalog order: those of servers
    /// with `always_load = true` and those `always_load_tools` names
    /// ([`mcp_catalog::ServerConfig::always_loads`]), among the tools the set can name
    /// now and a model may see.
    pub fn always_loaded_tools(&self) -> Vec<ToolInfo> {
        let catalog = self.catalog();
        catalog
            .tools
            .iter()
            .filter(|info| info.visible_to_model())
            .filter(|info| {
                self.inner
                    .catalog
                    .get(&info.server)
                    .is_some_and(|server| server.always_loads(&info.tool.name))
            })
            .cloned()
            .collect()
    }

    /// What a model sees in search mode: the two search tools
    /// ([`search_mode_tools_for`](crate::search_mode_tools_for) `config`), then the
    /// [always-loaded tools](Self::always_loaded_tools) under their qualified names, so
    /// the model can call those directly without searching.
    pub fn search_mode_listing(&self, config: &SearchModeConfig) -> Vec<rmcp::model::Tool> {
        let mut tools = crate::catalog::search_mode::search_mode_tools_for(config);
        tools.extend(self.always_loaded_tools().into_iter().map(|info| {
            let mut tool = info.tool;
            tool.name = info.qualified_name.into();
            tool
        }));
        tools
    }
}

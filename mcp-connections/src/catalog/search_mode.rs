//! The two tools a host offers a model instead of a whole catalog: [`SEARCH_TOOL`], which
//! searches every tool the set can name ([`ConnectionSet::search_tools`](crate::ConnectionSet::search_tools)), and
//! [`CALL_TOOL`], which calls one by its qualified name. `mcpctl serve --tool-exposure
//! search` lists exactly these; a host that talks to a model itself can offer the same.
//!
//! What a call of [`CALL_TOOL`] stands for is the call of the tool it names, with the same
//! approvals, filters and errors: the host unwraps it and calls as for a direct call.
//!
//! [`SearchModeConfig`] bounds how many tools one search answers and how weak a match it
//! shows (below that: "no good match", with the closest names). Tools a server pins with
//! `always_load` or `always_load_tools` are listed beside the two
//! ([`ConnectionSet::search_mode_listing`](crate::ConnectionSet::search_mode_listing)).
//!
//! [`ConnectionSet::search_tools`]: crate::ConnectionSet::search_tools

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::catalog::search::{CatalogHit, ToolHit};

/// The search tool's name.
pub const SEARCH_TOOL: &str = "search_tools";
/// The calling tool's name.
pub const CALL_TOOL: &str = "call_tool";
/// Results a search returns unless it asks for another number.
pub const DEFAULT_SEARCH_RESULTS: usize = 8;
/// The most results one search returns.
pub const MAX_SEARCH_RESULTS: usize = 50;

/// How a host's search mode answers: how many tools a search returns unless it asks
/// (`default_results`), the most it may ask for (`max_results`), and the least share of a
/// query a tool must have to be shown (`min_coverage`, see [`mcp_search::Hit::coverage`];
/// below it the answer is "no good match" with the closest names).
///
/// ```
/// use mcp_connections::{SearchModeConfig, DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS};
/// let config = SearchModeConfig::new();
/// assert_eq!((config.default_results(), config.max_results()), (DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS));
/// let small = SearchModeConfig::new().with_results(3, 5);
/// assert_eq!((small.default_results(), small.max_results()), (3, 5));
/// // The default never exceeds the maximum, and the maximum is at least 1.
/// assert_eq!(SearchModeConfig::new().with_results(9, 0).default_results(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SearchModeConfig {
    default_results: usize,
    max_results: usize,
    min_coverage: f64,
}

impl Default for SearchModeConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl SearchModeConfig {
    /// [`DEFAULT_SEARCH_RESULTS`], [`MAX_SEARCH_RESULTS`] and
    /// [`mcp_search::DEFAULT_MIN_COVERAGE`].
    pub fn new() -> Self {
        Self {
            default_results: DEFAULT_SEARCH_RESULTS,
            max_results: MAX_SEARCH_RESULTS,
            min_coverage: mcp_search::DEFAULT_MIN_COVERAGE,
        }
    }

    /// Results per search: `default` when the call gives no `limit`, at most `max` when it
    /// does (`max` clamped to 1..=[`mcp_search::MAX_LIMIT`], `default` to 1..=`max`).
    #[must_use]
    pub fn with_results(mut self, default: usize, max: usize) -> Self {
        self.max_results = max.clamp(1, mcp_search::MAX_LIMIT);
        self.default_results = default.clamp(1, self.max_results);
        self
    }

    /// The least coverage a shown tool needs (0 shows every tool that matches a word; 1
    /// only tools that have every word or that the query names).
    #[must_use]
    pub fn with_min_coverage(mut self, min_coverage: f64) -> Self {
        self.min_coverage = mcp_search::SearchOptions::new(1)
            .with_min_coverage(min_coverage)
            .min_coverage();
        self
    }

    /// Results when a call gives no `limit`.
    pub fn default_results(&self) -> usize {
        self.default_results
    }

    /// The most results a call may ask for.
    pub fn max_results(&self) -> usize {
        self.max_results
    }

    /// The least coverage a shown tool needs.
    pub fn min_coverage(&self) -> f64 {
        self.min_coverage
    }

    /// The search options of one call asking for `limit` tools.
    pub fn options(&self, limit: usize) -> mcp_search::SearchOptions {
        mcp_search::SearchOptions::new(limit).with_min_coverage(self.min_coverage)
    }
}

fn object(value: Value) -> Arc<Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

/// The two tools, [`SEARCH_TOOL`] then [`CALL_TOOL`], with their input schemas (for the
/// default [`SearchModeConfig`]).
pub fn search_mode_tools() -> Vec<Tool> {
    search_mode_tools_for(&SearchModeConfig::new())
}

/// [`search_mode_tools`] with `config`'s bounds in the search tool's schema.
pub fn search_mode_tools_for(config: &SearchModeConfig) -> Vec<Tool> {
    let (default, max) = (config.default_results(), config.max_results());
    let search = Tool::new(
        SEARCH_TOOL,
        "Find the tools that can do what you need, among the tools of every connected MCP \
         server. Describe the task in words (or give a tool's name); the best matches \
         come back with their qualified names, descriptions and input schemas. Then call one \
         with call_tool.",
        object(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in words, or a tool's name."},
                "limit": {"type": "integer", "minimum": 1, "maximum": max,
                          "description": format!("How many tools at most (default {default}).")},
            },
            "required": ["query"],
        })),
    )
    .with_annotations(ToolAnnotations::new().read_only(true));
    let call = Tool::new(
        CALL_TOOL,
        "Call a tool that search_tools returned, by its qualified name, with arguments that \
         match its input schema.",
        object(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's qualified name, as search_tools gave it."},
                "arguments": {"type": "object", "description": "The tool's arguments."},
            },
            "required": ["name"],
        })),
    );
    vec![search, call]
}

/// What a search answers: `{"tools": [{"name", "description", "inputSchema"}, ...]}`, the
/// hits in the order given (best first, as
/// [`ConnectionSet::search_tools`](crate::ConnectionSet::search_tools) returns them), each
/// under its qualified name, its description `null` when it has none.
pub fn search_answer(hits: &[ToolHit]) -> Value {
    search_answer_from(hits.iter().map(|h| {
        (
            h.info.qualified_name.as_str(),
            h.info.description(),
            h.info.tool.input_schema.as_ref(),
        )
    }))
}

/// What a search answers when it found tools and skills
/// ([`ConnectionSet::find_tools_and_skills`](crate::ConnectionSet::find_tools_and_skills)),
/// in the order given: a tool as in [`search_answer`]; a skill as
/// `{"name", "kind": "skill", "description", "uri"}` (its qualified name, the description
/// of its `SKILL.md` frontmatter, the URI of its `SKILL.md`), no input schema: a skill is
/// loaded by the host, not called.
pub fn catalog_search_answer(hits: &[CatalogHit]) -> Value {
    let tools: Vec<Value> = hits
        .iter()
        .map(|hit| match hit {
            CatalogHit::Tool(h) => json!({
                "name": h.info.qualified_name,
                "description": h.info.description(),
                "inputSchema": h.info.tool.input_schema.as_ref(),
            }),
            CatalogHit::Skill(h) => json!({
                "name": h.info.qualified_name,
                "kind": "skill",
                "description": h.info.description(),
                "uri": h.info.skill.uri,
            }),
        })
        .collect();
    json!({ "tools": tools })
}

/// [`search_answer`] from the parts of each tool (qualified name, description, input
/// schema), for hits that are not the set's (a bare [`mcp_search::ToolIndex`]'s).
pub fn search_answer_from<'a>(
    found: impl IntoIterator<Item = (&'a str, Option<&'a str>, &'a Map<String, Value>)>,
) -> Value {
    let tools: Vec<Value> = found
        .into_iter()
        .map(|(name, description, schema)| {
            json!({"name": name, "description": description, "inputSchema": schema})
        })
        .collect();
    json!({ "tools": tools })
}

/// What a search answers when no tool matches well enough: no tools, a sentence saying
/// so, and the closest tools' qualified names as `did_you_mean` (possibly empty):
/// `{"tools": [], "no_match": "...", "did_you_mean": ["mcp__files__read_file"]}`.
pub fn no_match_answer<'a>(query: &str, did_you_mean: impl IntoIterator<Item = &'a str>) -> Value {
    let names: Vec<&str> = did_you_mean.into_iter().collect();
    let text = if names.is_empty() {
        format!(
            "No tool matches {query:?} well: describe the task in other words, or give a \
             tool's name."
        )
    } else {
        format!(
            "No tool matches {query:?} well. The closest: {}. Search again in other words, \
             or call one of these if it fits.",
            names.join(", ")
        )
    };
    json!({"tools": [], "no_match": text, "did_you_mean": names})
}

/// A model's call of one of the two search-mode tools, read from its name and arguments
/// ([`SearchModeCall::parse`]); [`ConnectionSet::answer_search_mode`](crate::ConnectionSet::answer_search_mode)
/// answers it whole.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SearchModeCall {
    /// [`SEARCH_TOOL`]: find tools.
    Search {
        /// What the tool should do, in words, or a tool's name.
        query: String,
        /// How many tools at most (1 to the config's
        /// [`max_results`](SearchModeConfig::max_results), [`MAX_SEARCH_RESULTS`] by
        /// default; its [`default_results`](SearchModeConfig::default_results) when the call
        /// gives none).
        limit: usize,
    },
    /// [`CALL_TOOL`]: the call of the tool it names.
    Call {
        /// The tool's qualified name.
        name: String,
        /// The tool's arguments.
        arguments: Option<Map<String, Value>>,
    },
}

impl SearchModeCall {
    /// Reads a call of `tool` with `arguments`: `None` when `tool` is neither
    /// [`SEARCH_TOOL`] nor [`CALL_TOOL`] (a direct call of a server's tool); `Some(Err)`
    /// with the text to answer the model with (as an error result) when the arguments are
    /// wrong: a missing `query` or `name`, a `limit` out of range, `arguments` that are not
    /// an object, or [`CALL_TOOL`] naming one of the two.
    pub fn parse(
        tool: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Option<Result<Self, String>> {
        Self::parse_for(tool, arguments, &SearchModeConfig::new())
    }

    /// [`parse`](Self::parse) with `config`'s default and largest `limit`.
    pub fn parse_for(
        tool: &str,
        arguments: Option<&Map<String, Value>>,
        config: &SearchModeConfig,
    ) -> Option<Result<Self, String>> {
        let get = |key: &str| arguments.and_then(|a| a.get(key));
        match tool {
            SEARCH_TOOL => Some(Self::parse_search(get("query"), get("limit"), config)),
            CALL_TOOL => Some(Self::parse_call(get("name"), get("arguments"))),
            _ => None,
        }
    }

    fn parse_search(
        query: Option<&Value>,
        limit: Option<&Value>,
        config: &SearchModeConfig,
    ) -> Result<Self, String> {
        let max = config.max_results();
        let Some(query) = query.and_then(Value::as_str) else {
            return Err(format!(
                "{SEARCH_TOOL} needs a `query` string: describe what the tool should do"
            ));
        };
        let limit = match limit {
            None | Some(Value::Null) => config.default_results(),
            Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) if (1..=max).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "{SEARCH_TOOL}: `limit` must be a whole number from 1 to {max}"
                    ));
                }
            },
        };
        Ok(Self::Search {
            query: query.to_owned(),
            limit,
        })
    }

    fn parse_call(name: Option<&Value>, arguments: Option<&Value>) -> Result<Self, String> {
        let Some(name) = name.and_then(Value::as_str) else {
            return Err(format!(
                "{CALL_TOOL} needs the `name` of a tool that {SEARCH_TOOL} returned"
            ));
        };
        if name == CALL_TOOL || name == SEARCH_TOOL {
            return Err(format!(
                "{CALL_TOOL} calls the servers' tools; call {name} directly"
            ));
        }
        let arguments = match arguments {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map.clone()),
            Some(_) => {
                return Err(format!(
                    "{CALL_TOOL}: `arguments` must be an object matching the tool's input schema"
                ));
            }
        };
        Ok(Self::Call {
            name: name.to_owned(),
            arguments,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_tools_name_each_other_and_require_their_keys() {
        let tools = search_mode_tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, [SEARCH_TOOL, CALL_TOOL]);
        assert_eq!(tools[0].input_schema["required"], json!(["query"]));
        assert_eq!(tools[1].input_schema["required"], json!(["name"]));
        assert!(
            tools[0]
                .description
                .as_deref()
                .unwrap_or("")
                .contains(CALL_TOOL)
        );
    }

    #[test]
    fn an_answer_keeps_the_order_and_the_schema() {
        let schema = json!({"type": "object"});
        let schema = schema.as_object().unwrap_or_else(|| unreachable!());
        let answer = search_answer_from([("b", Some("second"), schema), ("a", None, schema)]);
        assert_eq!(answer["tools"][0]["name"], "b");
        assert_eq!(answer["tools"][1]["description"], Value::Null);
        assert_eq!(answer["tools"][0]["inputSchema"], json!({"type": "object"}));
    }

    #[test]
    fn search_mode_calls_are_read_with_their_errors() {
        let args = |v: Value| v.as_object().cloned();
        assert_eq!(SearchModeCall::parse("mcp__a__b", None), None);
        assert_eq!(
            SearchModeCall::parse(SEARCH_TOOL, args(json!({"query": "weather"})).as_ref()),
            Some(Ok(SearchModeCall::Search {
                query: "weather".to_owned(),
                limit: DEFAULT_SEARCH_RESULTS
            }))
        );
        let bad_limit = SearchModeCall::parse(
            SEARCH_TOOL,
            args(json!({"query": "x", "limit": 0})).as_ref(),
        );
        assert!(matches!(bad_limit, Some(Err(e)) if e.contains("`limit`")));
        assert!(matches!(
            SearchModeCall::parse(SEARCH_TOOL, None),
            Some(Err(e)) if e.contains("`query`")
        ));
        assert_eq!(
            SearchModeCall::parse(
                CALL_TOOL,
                args(json!({"name": "mcp__a__b", "arguments": {"x": 1}})).as_ref()
            ),
            Some(Ok(SearchModeCall::Call {
                name: "mcp__a__b".to_owned(),
                arguments: args(json!({"x": 1}))
            }))
        );
        for wrong in [
            json!({}),
            json!({"name": CALL_TOOL}),
            json!({"name": "t", "arguments": [1]}),
        ] {
            assert!(
                matches!(
                    SearchModeCall::parse(CALL_TOOL, args(wrong.clone()).as_ref()),
                    Some(Err(_))
                ),
                "{wrong}"
            );
        }
    }
}

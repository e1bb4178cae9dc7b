//! The two tools a host offers a model instead of a whole catalog: [`SEARCH_TOOL`], which
//! searches every tool the set can name ([`ConnectionSet::search_tools`](crate::ConnectionSet::search_tools)), and
//! [`CALL_TOOL`], which calls one by its qualified name. `mcpctl serve --tool-exposure
//! search` lists exactly these; a host that talks to a model itself can offer the same.
//!
//! What a call of [`CALL_TOOL`] stands for is the call of the tool it names, with the same
//! approvals, filters and errors: the host unwraps it and calls as for a direct call.
//!
//! [`ConnectionSet::search_tools`]: crate::ConnectionSet::search_tools

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::catalog::search::ToolHit;

/// The search tool's name.
pub const SEARCH_TOOL: &str = "search_tools";
/// The calling tool's name.
pub const CALL_TOOL: &str = "call_tool";
/// Results a search returns unless it asks for another number.
pub const DEFAULT_SEARCH_RESULTS: usize = 8;
/// The most results one search returns.
pub const MAX_SEARCH_RESULTS: usize = 50;

fn object(value: Value) -> Arc<Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

/// The two tools, [`SEARCH_TOOL`] then [`CALL_TOOL`], with their input schemas.
pub fn search_mode_tools() -> Vec<Tool> {
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
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS,
                          "description": format!("How many tools at most (default {DEFAULT_SEARCH_RESULTS}).")},
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
        /// How many tools at most (1 to [`MAX_SEARCH_RESULTS`]; [`DEFAULT_SEARCH_RESULTS`]
        /// when the call gives none).
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
        let get = |key: &str| arguments.and_then(|a| a.get(key));
        match tool {
            SEARCH_TOOL => Some(Self::parse_search(get("query"), get("limit"))),
            CALL_TOOL => Some(Self::parse_call(get("name"), get("arguments"))),
            _ => None,
        }
    }

    fn parse_search(query: Option<&Value>, limit: Option<&Value>) -> Result<Self, String> {
        let Some(query) = query.and_then(Value::as_str) else {
            return Err(format!(
                "{SEARCH_TOOL} needs a `query` string: describe what the tool should do"
            ));
        };
        let limit = match limit {
            None | Some(Value::Null) => DEFAULT_SEARCH_RESULTS,
            Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) if (1..=MAX_SEARCH_RESULTS).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "{SEARCH_TOOL}: `limit` must be a whole number from 1 to {MAX_SEARCH_RESULTS}"
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

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

/// What a search answers: `{"tools": [{"name", "description", "inputSchema"}, ...]}`, in
/// the order given (best first). `found` yields each tool's qualified name, description
/// (`null` when it has none) and input schema.
pub fn search_answer<'a>(
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
        let answer = search_answer([("b", Some("second"), schema), ("a", None, schema)]);
        assert_eq!(answer["tools"][0]["name"], "b");
        assert_eq!(answer["tools"][1]["description"], Value::Null);
        assert_eq!(answer["tools"][0]["inputSchema"], json!({"type": "object"}));
    }
}

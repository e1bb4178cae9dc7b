//! Conversion of scenario parts to MCP wire JSON and then to rmcp's types.
//!
//! Going through JSON keeps this crate independent of rmcp's constructors for
//! `#[non_exhaustive]` types, and lets rmcp's own deserializers validate the shapes.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use rmcp::ErrorData as McpError;

use crate::{PromptSpec, ResourceSpec, ResourceTemplateSpec, Scenario, ToolSpec};

/// Deserialize an rmcp type from wire JSON, naming `what` on failure.
pub(crate) fn from_wire<T: DeserializeOwned>(what: &str, value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| {
        McpError::internal_error(
            format!("fake server: scenario {what} is not valid MCP: {e}"),
            None,
        )
    })
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        map.insert(key.to_owned(), value);
    }
}

fn text(value: Option<&String>) -> Option<Value> {
    value.map(|s| Value::String(s.clone()))
}

pub(crate) fn tool(spec: &ToolSpec) -> Value {
    let mut map = Map::new();
    map.insert("name".to_owned(), json!(spec.name));
    put(&mut map, "title", text(spec.title.as_ref()));
    put(&mut map, "description", text(spec.description.as_ref()));
    let input = spec
        .input_schema
        .clone()
        .unwrap_or_else(|| json!({"type": "object"}));
    map.insert("inputSchema".to_owned(), input);
    put(&mut map, "outputSchema", spec.output_schema.clone());
    put(&mut map, "annotations", spec.annotations.clone());
    put(&mut map, "_meta", spec.meta.clone());
    Value::Object(map)
}

/// A tool that exists only on an endless list page.
pub(crate) fn endless_tool(n: u64) -> Value {
    json!({"name": format!("endless_{n}"), "inputSchema": {"type": "object"}})
}

pub(crate) fn resource(spec: &ResourceSpec) -> Value {
    let mut map = Map::new();
    map.insert("uri".to_owned(), json!(spec.uri));
    map.insert("name".to_owned(), json!(spec.name));
    put(&mut map, "title", text(spec.title.as_ref()));
    put(&mut map, "description", text(spec.description.as_ref()));
    put(&mut map, "mimeType", text(spec.mime_type.as_ref()));
    put(&mut map, "_meta", spec.meta.clone());
    Value::Object(map)
}

pub(crate) fn endless_resource(n: u64) -> Value {
    json!({"uri": format!("fake://endless/{n}"), "name": format!("endless_{n}")})
}

pub(crate) fn template(spec: &ResourceTemplateSpec) -> Value {
    let mut map = Map::new();
    map.insert("uriTemplate".to_owned(), json!(spec.uri_template));
    map.insert("name".to_owned(), json!(spec.name));
    put(&mut map, "description", text(spec.description.as_ref()));
    put(&mut map, "mimeType", text(spec.mime_type.as_ref()));
    Value::Object(map)
}

pub(crate) fn endless_template(n: u64) -> Value {
    json!({"uriTemplate": format!("fake://endless/{n}/{{x}}"), "name": format!("endless_{n}")})
}

pub(crate) fn prompt(spec: &PromptSpec) -> Value {
    let mut map = Map::new();
    map.insert("name".to_owned(), json!(spec.name));
    put(&mut map, "description", text(spec.description.as_ref()));
    let args: Vec<Value> = spec
        .arguments
        .iter()
        .map(|a| json!({"name": a, "required": true}))
        .collect();
    if !args.is_empty() {
        map.insert("arguments".to_owned(), Value::Array(args));
    }
    Value::Object(map)
}

pub(crate) fn endless_prompt(n: u64) -> Value {
    json!({"name": format!("endless_{n}")})
}

/// A list result: `{"<key>": items, "nextCursor": ...}`.
pub(crate) fn list(
    key: &str,
    items: Vec<Value>,
    next_cursor: Option<String>,
    hints: Option<&crate::scenario::CacheHints>,
) -> Value {
    let mut map = Map::new();
    map.insert(key.to_owned(), Value::Array(items));
    put(&mut map, "nextCursor", next_cursor.map(Value::String));
    if let Some(hints) = hints {
        put(&mut map, "ttlMs", hints.ttl_ms.map(Value::from));
        put(
            &mut map,
            "cacheScope",
            hints.scope.clone().map(Value::String),
        );
    }
    Value::Object(map)
}

/// The `initialize` result the scenario describes (the protocol version is negotiated later).
pub(crate) fn server_config(scenario: &Scenario) -> Value {
    let caps = &scenario.capabilities;
    let mut capabilities = Map::new();
    capabilities.insert(
        "tools".to_owned(),
        json!({"listChanged": caps.tools_list_changed}),
    );
    if !scenario.resources.is_empty()
        || !scenario.resource_templates.is_empty()
        || caps.resources_list_changed
        || caps.resources_subscribe
    {
        capabilities.insert(
            "resources".to_owned(),
            json!({"listChanged": caps.resources_list_changed, "subscribe": caps.resources_subscribe}),
        );
    }
    if caps.logging {
        capabilities.insert("logging".to_owned(), json!({}));
    }
    if caps.completions {
        capabilities.insert("completions".to_owned(), json!({}));
    }
    if !caps.experimental.is_empty() {
        capabilities.insert("experimental".to_owned(), json!(caps.experimental));
    }
    if caps.tasks {
        capabilities.insert(
            "extensions".to_owned(),
            json!({ rmcp::model::TASKS_EXTENSION_ID: {} }),
        );
    }
    crate::skills::serve::advertise(scenario, &mut capabilities);
    crate::events::serve::advertise(scenario, &mut capabilities);
    if !scenario.prompts.is_empty() || caps.prompts_list_changed {
        capabilities.insert(
            "prompts".to_owned(),
            json!({"listChanged": caps.prompts_list_changed}),
        );
    }
    let info = &scenario.server_info;
    let mut server_info = Map::new();
    server_info.insert("name".to_owned(), json!(info.name));
    server_info.insert("version".to_owned(), json!(info.version));
    put(&mut server_info, "title", text(info.title.as_ref()));
    let mut map = Map::new();
    map.insert(
        "protocolVersion".to_owned(),
        json!(rmcp::model::ProtocolVersion::V_2025_11_25),
    );
    map.insert("capabilities".to_owned(), Value::Object(capabilities));
    map.insert("serverInfo".to_owned(), Value::Object(server_info));
    put(
        &mut map,
        "instructions",
        text(scenario.instructions.as_ref()),
    );
    Value::Object(map)
}

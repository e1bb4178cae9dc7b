//! Arguments for a tool call, synthesized from its input schema.

use serde_json::{Map, Value, json};

/// A value for every property: its `default`, else a simple value of its type.
pub(crate) fn synthesize(schema: &Map<String, Value>) -> Value {
    let mut args = Map::new();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, prop) in props {
            let value = prop.get("default").cloned().unwrap_or_else(|| {
                match prop.get("type").and_then(Value::as_str) {
                    Some("number") | Some("integer") => json!(1),
                    Some("boolean") => json!(true),
                    Some("array") => json!([]),
                    Some("object") => json!({}),
                    _ => json!("test"),
                }
            });
            args.insert(name.clone(), value);
        }
    }
    Value::Object(args)
}

/// For a tool that echoes a schema (its only required input is an object named `schema`,
/// like the suite's `json_schema_echo`), the input schema of the first other tool, as the
/// connection set listed it.
pub(crate) fn echo_schema_of(
    tools: &[mcp_connections::ToolInfo],
    tool: &mcp_connections::ToolInfo,
) -> Option<Value> {
    let props = tool.tool.input_schema.get("properties")?.as_object()?;
    let is_schema_echo = props.len() == 1
        && props
            .get("schema")
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            == Some("object")
        && tool.raw_name().contains("echo");
    if !is_schema_echo {
        return None;
    }
    tools
        .iter()
        .find(|other| other.raw_name() != tool.raw_name())
        .map(|other| Value::Object((*other.tool.input_schema).clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_win_and_types_get_simple_values() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"}, "n": {"type": "integer", "default": 7},
            "s": {"type": "string"}, "b": {"type": "boolean"}, "l": {"type": "array"}
        }});
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        assert_eq!(
            synthesize(&schema),
            json!({"a": 1, "n": 7, "s": "test", "b": true, "l": []})
        );
    }
}

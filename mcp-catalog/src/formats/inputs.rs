//! VS Code's `inputs`: the values a `.vscode/mcp.json` asks its user for (`${input:id}`).
//!
//! The catalog never prompts. [`declared_inputs`] tells a host what a file declares, so a
//! program on a terminal can ask for each value (hidden when the input is a password) and
//! hand the answers to the parser through its [`EnvLookup`](crate::EnvLookup) under
//! [`DeclaredInput::variable`]; the same variable set in the environment answers it
//! without a prompt.

use serde_json::Value;

use crate::model::format::ConfigFormat;

/// One entry of a VS Code file's `inputs` array.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeclaredInput {
    /// The input's `id`, as written in `${input:id}`.
    pub id: String,
    /// Its `description`, the text to show when asking (the id when there is none).
    pub description: String,
    /// `"password": true`: the answer must not be echoed.
    pub password: bool,
    /// The environment variable that answers it (`MCP_INPUT_` and the id in upper case).
    pub variable: String,
}

/// The `promptString` inputs declared by a VS Code `mcp.json` text, in file order. Other
/// formats declare none; text that does not parse (it is reported when the file is loaded)
/// and entries without an `id` are skipped. `pickString` and `command` inputs are not
/// supported (they fail as undefined values when used).
///
/// ```
/// use mcp_catalog::{ConfigFormat, declared_inputs};
///
/// let text = r#"{
///   "inputs": [{"type": "promptString", "id": "api-key", "description": "Tickets API key", "password": true}],
///   "servers": {"tickets": {"url": "https://t.example/mcp", "headers": {"X-Key": "${input:api-key}"}}}
/// }"#;
/// let inputs = declared_inputs(text, ConfigFormat::VsCode);
/// assert_eq!(inputs[0].variable, "MCP_INPUT_API_KEY");
/// assert!(inputs[0].password);
/// assert!(declared_inputs(text, ConfigFormat::McpJson).is_empty());
/// ```
pub fn declared_inputs(text: &str, format: ConfigFormat) -> Vec<DeclaredInput> {
    if format != ConfigFormat::VsCode {
        return Vec::new();
    }
    let stripped = crate::formats::jsonc::strip(text);
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(&stripped) else {
        return Vec::new();
    };
    let Some(Value::Array(inputs)) = root.get("inputs") else {
        return Vec::new();
    };
    inputs
        .iter()
        .filter_map(|input| {
            let input = input.as_object()?;
            let kind = input.get("type").and_then(Value::as_str);
            if kind.is_some_and(|k| k != "promptString") {
                return None;
            }
            let id = input.get("id")?.as_str()?.to_owned();
            let description = input
                .get("description")
                .and_then(Value::as_str)
                .filter(|d| !d.trim().is_empty())
                .unwrap_or(&id)
                .to_owned();
            Some(DeclaredInput {
                variable: crate::formats::client_env::input_variable(&id),
                password: input.get("password").and_then(Value::as_bool) == Some(true),
                description,
                id,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_other_kinds_and_missing_ids() {
        let text = r#"{
          // a comment, and a trailing comma below
          "inputs": [
            {"type": "promptString", "id": "token", "password": true},
            {"type": "pickString", "id": "region", "options": ["eu"]},
            {"type": "promptString", "description": "no id"},
            {"id": "plain", "description": "  "},
          ],
          "servers": {}
        }"#;
        let inputs = declared_inputs(text, ConfigFormat::VsCode);
        let ids: Vec<_> = inputs.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["token", "plain"]);
        assert_eq!(inputs[0].description, "token");
        assert!(inputs[0].password);
        assert!(!inputs[1].password);
        assert_eq!(inputs[1].description, "plain");
        assert!(declared_inputs("{not json", ConfigFormat::VsCode).is_empty());
    }
}

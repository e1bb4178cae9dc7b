//! Server-to-client elicitation requests, routed to a host-supplied handler.

use std::future::Future;
use std::pin::Pin;

use mcp_key::McpServerKey;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value};

/// A boxed future, as returned by the host traits of this crate.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One elicitation request from a server, as handed to the host.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// A host-side id, unique within this process (`elicit-1`, `elicit-2`, ...).
    pub id: String,
    /// The server that asked.
    pub server: McpServerKey,
    /// The request as the server sent it (form or URL mode).
    pub params: ElicitRequestParams,
}

impl ElicitationRequest {
    /// The message the server shows the user.
    pub fn message(&self) -> &str {
        match &self.params {
            ElicitRequestParams::FormElicitationParams { message, .. }
            | ElicitRequestParams::UrlElicitationParams { message, .. } => message,
            _ => "",
        }
    }

    /// The requested JSON schema for form mode, as JSON.
    pub fn requested_schema(&self) -> Option<Value> {
        match &self.params {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => serde_json::to_value(requested_schema).ok(),
            _ => None,
        }
    }
}

/// The host's answer to elicitation requests. Implementations ask the user (a dialog, a
/// terminal prompt) or decide by policy.
///
/// While a request is pending, the timeout of the tool call that caused it is paused.
pub trait ElicitationHandler: Send + Sync {
    /// Answer one request. Dropping the returned future (when the call is cancelled) must be
    /// harmless.
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult>;
}

/// An [`ElicitationHandler`] that declines everything: what the set does when no handler is
/// configured.
#[derive(Debug, Default, Clone, Copy)]
pub struct DeclineAll;

impl ElicitationHandler for DeclineAll {
    fn elicit(&self, _request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        Box::pin(async { ElicitResult::new(ElicitationAction::Decline) })
    }
}

/// An [`ElicitationHandler`] that accepts every form with its schema's defaults filled in
/// (see [`fill_form_defaults`]) and declines URL requests. Useful for tests and headless
/// agents.
#[derive(Debug, Default, Clone, Copy)]
pub struct AcceptDefaults;

impl ElicitationHandler for AcceptDefaults {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        Box::pin(async move {
            match request.requested_schema() {
                Some(schema) => ElicitResult::new(ElicitationAction::Accept)
                    .with_content(Value::Object(fill_form_defaults(&schema))),
                None => ElicitResult::new(ElicitationAction::Decline),
            }
        })
    }
}

/// The object a form would submit if the user accepted every default: each property of
/// `schema` that has a `default` gets it. Properties without a default are left out.
pub fn fill_form_defaults(schema: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if let Some(default) = prop.get("default") {
                out.insert(name.clone(), default.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_of_every_primitive_type_are_filled() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "nodefault": {"type": "string"}
            }
        });
        let filled = fill_form_defaults(&schema);
        assert_eq!(
            Value::Object(filled),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
        );
    }

    #[test]
    fn a_schema_without_properties_gives_an_empty_form() {
        assert!(fill_form_defaults(&json!({"type": "object"})).is_empty());
    }
}

//! Server-to-client elicitation requests, routed to a host-supplied handler.

use std::sync::Arc;

use mcp_key::McpServerKey;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value};

pub use mcp_client::BoxFuture;

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

    /// The URL the user is asked to visit, for a URL-mode request; `None` for forms.
    pub fn url(&self) -> Option<&str> {
        match &self.params {
            ElicitRequestParams::UrlElicitationParams { url, .. } => Some(url),
            _ => None,
        }
    }

    /// The form's property names in the order the server listed them (a form is asked in
    /// that order; the JSON of [`ElicitationRequest::requested_schema`] has them sorted).
    /// Empty for URL requests.
    pub fn field_order(&self) -> Vec<String> {
        match &self.params {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => requested_schema
                .property_order
                .clone()
                .unwrap_or_else(|| requested_schema.properties.keys().cloned().collect()),
            _ => Vec::new(),
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

/// An [`ElicitationHandler`] that accepts a form with its schema's defaults filled in (see
/// [`fill_form_defaults`]) when the defaults make a complete answer, and declines
/// otherwise: a form with a `required` property that has no `default` (accepting it would
/// send an answer that breaks the server's own schema), and every URL request. Useful for
/// tests and headless agents.
///
/// To ask a person (or another policy) instead of declining, use
/// [`AcceptDefaults::or_else`].
#[derive(Debug, Default, Clone, Copy)]
pub struct AcceptDefaults;

impl AcceptDefaults {
    /// A handler that answers like [`AcceptDefaults`] when the defaults make a complete
    /// answer, and hands every other request (forms with a required property without a
    /// default, URL requests) to `inner`.
    #[must_use]
    pub fn or_else(inner: Arc<dyn ElicitationHandler>) -> Arc<dyn ElicitationHandler> {
        Arc::new(AcceptDefaultsOr { inner })
    }
}

/// The answer of [`AcceptDefaults`] when the defaults make a complete answer.
fn accept_with_defaults(request: &ElicitationRequest) -> Option<ElicitResult> {
    let schema = request.requested_schema()?;
    if !missing_required_defaults(&schema).is_empty() {
        return None;
    }
    Some(
        ElicitResult::new(ElicitationAction::Accept)
            .with_content(Value::Object(fill_form_defaults(&schema))),
    )
}

impl ElicitationHandler for AcceptDefaults {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        let answer = accept_with_defaults(&request).unwrap_or_else(|| {
            tracing::debug!(
                server = %request.server,
                id = %request.id,
                "declining elicitation: not a form whose defaults answer every required property"
            );
            ElicitResult::new(ElicitationAction::Decline)
        });
        Box::pin(std::future::ready(answer))
    }
}

/// [`AcceptDefaults`] with a handler for what the defaults cannot answer.
struct AcceptDefaultsOr {
    inner: Arc<dyn ElicitationHandler>,
}

impl ElicitationHandler for AcceptDefaultsOr {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        match accept_with_defaults(&request) {
            Some(answer) => Box::pin(std::future::ready(answer)),
            None => self.inner.elicit(request),
        }
    }
}

/// The `required` properties of a form schema that have no `default`, in schema order.
/// A form can be accepted with [`fill_form_defaults`] only when this is empty.
pub fn missing_required_defaults(schema: &Value) -> Vec<String> {
    let props = schema.get("properties").and_then(Value::as_object);
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| {
            props
                .and_then(|p| p.get(*name))
                .and_then(|p| p.get("default"))
                .is_none()
        })
        .map(str::to_owned)
        .collect()
}

/// Wraps an async closure as an [`ElicitationHandler`], so hosts need not write
/// `Box::pin` themselves.
///
/// ```
/// use mcp_connections::model::{ElicitResult, ElicitationAction};
/// use mcp_connections::{ConnectionSetOptions, elicitation_fn};
///
/// let handler = elicitation_fn(|request| async move {
///     if request.url().is_some() {
///         ElicitResult::new(ElicitationAction::Decline)
///     } else {
///         ElicitResult::new(ElicitationAction::Cancel)
///     }
/// });
/// let options = ConnectionSetOptions::new().with_elicitation_handler(handler);
/// # drop(options);
/// ```
///
/// The closure is called once per request; dropping its future (when the call that caused
/// the request is cancelled) must be harmless.
pub fn elicitation_fn<F, Fut>(f: F) -> Arc<dyn ElicitationHandler>
where
    F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ElicitResult> + Send + 'static,
{
    Arc::new(FnHandler(f))
}

struct FnHandler<F>(F);

impl<F, Fut> ElicitationHandler for FnHandler<F>
where
    F: Fn(ElicitationRequest) -> Fut + Send + Sync,
    Fut: Future<Output = ElicitResult> + Send + 'static,
{
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        Box::pin((self.0)(request))
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
    fn a_form_keeps_the_order_the_server_listed_its_fields_in() {
        // As it arrives on the wire: `title` first, `pinned` last, not alphabetical.
        let wire = r#"{"mode": "form", "message": "Create a note",
            "requestedSchema": {"type": "object", "properties": {
                "title": {"type": "string"},
                "priority": {"type": "string"},
                "pinned": {"type": "boolean"}}}}"#;
        let request = ElicitationRequest {
            id: "elicit-1".to_owned(),
            server: McpServerKey::unscoped("notes".parse().unwrap()),
            params: serde_json::from_str(wire).unwrap(),
        };
        assert_eq!(request.field_order(), ["title", "priority", "pinned"]);
    }

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
    fn required_properties_without_defaults_are_found() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "Ada"},
                "email": {"type": "string"},
                "age": {"type": "integer"}
            },
            "required": ["name", "email", "missing"]
        });
        assert_eq!(missing_required_defaults(&schema), ["email", "missing"]);
        assert!(missing_required_defaults(&json!({"type": "object"})).is_empty());
    }

    #[test]
    fn a_schema_without_properties_gives_an_empty_form() {
        assert!(fill_form_defaults(&json!({"type": "object"})).is_empty());
    }
}

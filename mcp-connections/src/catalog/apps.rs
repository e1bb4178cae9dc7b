//! MCP Apps (the `io.modelcontextprotocol/ui` extension): a tool may come with an
//! interactive UI, an HTML resource under `ui://` that a host renders beside the
//! conversation. A host that renders apps says so
//! ([`ConnectionSetOptions::with_apps`](crate::ConnectionSetOptions::with_apps)); its
//! connections then announce the extension, and each [`ToolInfo`](crate::ToolInfo) carries
//! its [`ToolUi`]. Reading the `ui://` resource and the tool's results need nothing of
//! their own: they reach the host unchanged (MIME type and `_meta` included).

use rmcp::model::{JsonObject, Tool};
use serde_json::Value;

/// The identifier of the MCP Apps extension.
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's HTML resource, announced as the one a host renders.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Who may see and call a tool with a UI (`_meta.ui.visibility`).
pub const VISIBILITY_MODEL: &str = "model";
/// See [`VISIBILITY_MODEL`]: the app may call the tool.
pub const VISIBILITY_APP: &str = "app";

/// The UI of one tool, from its `_meta.ui`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ToolUi {
    /// The `ui://` resource holding the app (read it with
    /// [`ConnectionSet::read_resource`](crate::ConnectionSet::read_resource)).
    pub resource_uri: String,
    /// Who may see and call the tool: [`VISIBILITY_MODEL`], [`VISIBILITY_APP`] (both when
    /// the server says nothing).
    pub visibility: Vec<String>,
}

impl ToolUi {
    /// The UI `tool` declares: `_meta.ui.resourceUri` (or the older flat
    /// `_meta["ui/resourceUri"]`), a `ui://` URI; `None` without one.
    pub fn of(tool: &Tool) -> Option<Self> {
        let meta = &tool.meta.as_ref()?.0;
        let ui = meta.get("ui").and_then(Value::as_object);
        let uri = ui
            .and_then(|ui| ui.get("resourceUri"))
            .or_else(|| meta.get("ui/resourceUri"))
            .and_then(Value::as_str)
            .filter(|uri| uri.starts_with("ui://"))?;
        let visibility = match ui.and_then(|ui| ui.get("visibility")) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(Value::String(one)) => vec![one.clone()],
            _ => vec![VISIBILITY_MODEL.to_owned(), VISIBILITY_APP.to_owned()],
        };
        Some(Self {
            resource_uri: uri.to_owned(),
            visibility,
        })
    }
}

/// The extension's settings a host that renders apps announces.
pub(crate) fn extension_settings() -> JsonObject {
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".to_owned(), Value::from(vec![APP_MIME_TYPE]));
    settings
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn tool(meta: Value) -> Tool {
        let mut t = Tool::new("t", "d", Arc::new(JsonObject::new()));
        t.meta = serde_json::from_value(meta).ok();
        t
    }

    #[test]
    fn the_ui_is_read_from_meta_in_both_forms() {
        let ui = ToolUi::of(&tool(
            json!({"ui": {"resourceUri": "ui://weather/app.html", "visibility": ["app"]}}),
        ))
        .unwrap();
        assert_eq!(ui.resource_uri, "ui://weather/app.html");
        assert_eq!(ui.visibility, ["app"]);
        let flat = ToolUi::of(&tool(json!({"ui/resourceUri": "ui://w/a"}))).unwrap();
        assert_eq!(flat.visibility, ["model", "app"]);
        assert_eq!(
            ToolUi::of(&tool(json!({"ui": {"resourceUri": "https://x"}}))),
            None
        );
        assert_eq!(ToolUi::of(&tool(json!({"other": 1}))), None);
    }
}

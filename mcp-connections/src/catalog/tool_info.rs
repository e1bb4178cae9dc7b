//! One tool as the host sees it ([`ToolInfo`]), the aggregated catalog at one revision, and
//! the rules for which of a server's listed tools enter it (visibility, unique names).

use std::sync::Arc;

use mcp_key::{McpServerKey, ToolNameTable};
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::Value;

/// One tool as the host shows it to a model.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolInfo {
    /// The model-visible name (`mcp__server__tool`), unique in the catalog.
    pub qualified_name: String,
    /// The server that owns the tool.
    pub server: McpServerKey,
    /// The tool exactly as the server listed it (raw name, title, description, schemas,
    /// annotations, `_meta`).
    pub tool: Tool,
    /// The server's instructions, used as the namespace description. For
    /// environment-scoped servers with multi-environment exposure it starts with
    /// "Runs in environment `<id>`.".
    pub namespace_description: Option<String>,
    /// The catalog revision this entry comes from; pass it to
    /// [`CallOptions::with_catalog_revision`](crate::CallOptions::with_catalog_revision)
    /// so a call by `qualified_name` never reaches a different tool after a change.
    pub catalog_revision: u64,
    /// The plugin that provided the server, if a plugin did.
    pub plugin: Option<PluginOrigin>,
    /// The tool's MCP App (`_meta.ui`), when the host renders apps
    /// ([`ConnectionSetOptions::with_apps`](crate::ConnectionSetOptions::with_apps)) and the
    /// tool has one.
    pub ui: Option<crate::catalog::apps::ToolUi>,
    /// Whether the tool's server is connected now. `false` for the tools of a server that
    /// crashed or is restarting (its last listing, kept so the tools stay findable and
    /// searchable) and for a deferred server's cached tools: a call starts or restarts the
    /// server first (with the restart backoff), as does
    /// [`ConnectionSet::ensure_started`](crate::ConnectionSet::ensure_started).
    pub ready: bool,
}

/// The plugin that provided a server (from the catalog's winning source), so a host can
/// show "from plugin X" and uninstall by plugin.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[non_exhaustive]
pub struct PluginOrigin {
    /// The plugin's name.
    pub name: String,
    /// Whether the plugin was selected for this session (`[[plugins]]`, tier
    /// `selected plugin`) rather than discovered on disk.
    pub selected: bool,
}

impl PluginOrigin {
    /// The plugin that registered the winning entry of `key`, if its source is a plugin.
    pub fn of(catalog: &mcp_catalog::ResolvedCatalog, key: &McpServerKey) -> Option<Self> {
        let source = catalog.source(key)?;
        let selected = match source.tier() {
            mcp_catalog::Tier::SelectedPlugin => true,
            mcp_catalog::Tier::DiscoveredPlugin => false,
            _ => return None,
        };
        Some(Self {
            name: source.name().to_owned(),
            selected,
        })
    }
}

impl ToolInfo {
    /// The tool's name on the wire.
    pub fn raw_name(&self) -> &str {
        &self.tool.name
    }

    /// The tool's description, if any.
    pub fn description(&self) -> Option<&str> {
        self.tool.description.as_deref()
    }

    /// The tool's annotations, if any.
    pub fn annotations(&self) -> Option<&ToolAnnotations> {
        self.tool.annotations.as_ref()
    }

    /// Whether the model may see the tool: not when its `_meta.ui.visibility` names only
    /// the app. Such tools are in the catalog only for hosts that render MCP Apps
    /// ([`ConnectionSetOptions::with_apps`](crate::ConnectionSetOptions::with_apps)): the
    /// host calls them for the app and leaves them out of what its model sees.
    pub fn visible_to_model(&self) -> bool {
        visible_to_model(&self.tool)
    }
}

/// The aggregated catalog at one revision.
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    pub(crate) revision: u64,
    pub(crate) tools: Arc<Vec<ToolInfo>>,
    pub(crate) names: Arc<ToolNameTable>,
}

/// Whether `_meta.ui.visibility` lets the model see the tool (absent = visible).
pub(crate) fn visible_to_model(tool: &Tool) -> bool {
    meta_visible_to_model(tool.meta.as_ref().map(|m| &m.0))
}

/// [`visible_to_model`] of a tool whose `_meta` is `meta`.
pub(crate) fn meta_visible_to_model(meta: Option<&serde_json::Map<String, Value>>) -> bool {
    let Some(visibility) = meta
        .and_then(|m| m.get("ui"))
        .and_then(|ui| ui.get("visibility"))
    else {
        return true;
    };
    match visibility {
        Value::Array(items) => items.iter().any(|v| v.as_str() == Some("model")),
        Value::String(s) => s == "model",
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool_with_meta(meta: Value) -> Tool {
        let mut t = Tool::new("t", "d", Arc::new(serde_json::Map::new()));
        t.meta = serde_json::from_value(meta).ok();
        t
    }

    #[test]
    fn ui_visibility_hides_app_only_tools() {
        assert!(visible_to_model(&Tool::new(
            "t",
            "d",
            Arc::new(serde_json::Map::new())
        )));
        assert!(visible_to_model(&tool_with_meta(
            json!({"ui": {"visibility": ["model", "app"]}})
        )));
        assert!(!visible_to_model(&tool_with_meta(
            json!({"ui": {"visibility": ["app"]}})
        )));
        assert!(visible_to_model(&tool_with_meta(json!({"other": 1}))));
    }
}

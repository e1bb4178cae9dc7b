//! One tool as the host sees it ([`ToolInfo`]), the aggregated catalog at one revision, and
//! the rules for which of a server's listed tools enter it (visibility, unique names).

use std::collections::BTreeMap;
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
    let Some(visibility) = tool
        .meta
        .as_ref()
        .and_then(|m| m.0.get("ui"))
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

/// A server's tool list made fit for the catalog: one tool per raw name (the first one
/// listed wins) and no tool with an empty name (no model-visible name can be made from
/// it). Returns the kept tools in list order, and one warning per problem, naming the
/// server.
pub(crate) fn unique_tools(key: &McpServerKey, tools: Vec<Tool>) -> (Vec<Tool>, Vec<String>) {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut kept = Vec::with_capacity(tools.len());
    for tool in tools {
        let count = counts.entry(tool.name.to_string()).or_insert(0);
        *count += 1;
        if *count == 1 && !tool.name.is_empty() {
            kept.push(tool);
        }
    }
    let warnings = counts
        .into_iter()
        .filter_map(|(name, count)| {
            if name.is_empty() {
                let times = if count == 1 {
                    String::new()
                } else {
                    format!(" ({count} times)")
                };
                Some(format!(
                    "MCP server `{key}` lists a tool with an empty name{times}; it is left out (the server must give every tool a name)"
                ))
            } else if count > 1 {
                Some(format!(
                    "MCP server `{key}` lists tool `{name}` {count} times; only the first is offered (the server must give each tool a unique name)"
                ))
            } else {
                None
            }
        })
        .collect();
    (kept, warnings)
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

    fn named(name: &str, description: &str) -> Tool {
        Tool::new(
            name.to_owned(),
            description.to_owned(),
            Arc::new(serde_json::Map::new()),
        )
    }

    #[test]
    fn the_first_of_duplicate_names_wins_and_empty_names_are_left_out() {
        let key: McpServerKey = "h".parse().unwrap();
        let (kept, warnings) = unique_tools(
            &key,
            vec![
                named("b", "first b"),
                named("", "nameless"),
                named("a", "only a"),
                named("b", "second b"),
                named("b", "third b"),
                named("", "nameless again"),
            ],
        );
        let kept: Vec<(&str, Option<&str>)> = kept
            .iter()
            .map(|t| (t.name.as_ref(), t.description.as_deref()))
            .collect();
        assert_eq!(kept, [("b", Some("first b")), ("a", Some("only a"))]);
        assert_eq!(
            warnings,
            [
                "MCP server `h` lists a tool with an empty name (2 times); it is left out (the server must give every tool a name)",
                "MCP server `h` lists tool `b` 3 times; only the first is offered (the server must give each tool a unique name)",
            ]
        );
        let (kept, warnings) = unique_tools(&key, vec![named("a", ""), named("b", "")]);
        assert_eq!(kept.len(), 2);
        assert!(warnings.is_empty());
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

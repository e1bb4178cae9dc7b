//! What goes into the index (a tool definition) and what comes out (a hit).

use mcp_key::McpServerKey;

/// One tool as a server lists it: name, optional title, description and input schema.
///
/// Nothing here needs a running server: build it from `tools/list`, a cache or a catalog
/// file.
///
/// ```
/// use mcp_search::ToolDef;
/// let tool = ToolDef::new("get_weather", "Current weather for a city.")
///     .with_title("Weather")
///     .with_input_schema(serde_json::json!({
///         "type": "object",
///         "properties": {"city": {"type": "string", "description": "City name"}}
///     }));
/// assert_eq!(tool.name(), "get_weather");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolDef {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: serde_json::Value,
    aliases: Vec<String>,
}

impl ToolDef {
    /// A tool named `name` (the raw name the server lists) with `description` (may be
    /// empty), no title and an empty input schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema: serde_json::Value::Null,
            aliases: Vec::new(),
        }
    }

    /// This tool with a human-readable title (MCP's `title`).
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// This tool with its JSON-Schema `inputSchema`: property names and descriptions are
    /// indexed (nested `properties`, `items` and `anyOf`/`oneOf`/`allOf` too).
    #[must_use]
    pub fn with_input_schema(mut self, schema: serde_json::Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// This tool with one more name that, typed exactly as the query, ranks it first (as
    /// the raw and the `server/tool` names do): for example the model-visible name a
    /// host's `ToolNamer` gave it (`mcp__github__search`).
    #[must_use]
    pub fn with_alias(mut self, alias: impl Into<String>) -> Self {
        self.aliases.push(alias.into());
        self
    }

    /// The raw tool name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The description (may be empty).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The input schema (`Null` when none was given).
    pub fn input_schema(&self) -> &serde_json::Value {
        &self.input_schema
    }

    /// The extra exact-match names.
    pub fn aliases(&self) -> &[String] {
        &self.aliases
    }
}

/// The qualified name of `tool` on `server`: `server/tool` (`server@env/tool` for a scoped
/// key). Split it at the first `/`: server keys never contain one, raw tool names may.
pub fn qualified_name(server: &McpServerKey, tool: &str) -> String {
    format!("{server}/{tool}")
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub(crate) server: McpServerKey,
    pub(crate) tool: String,
    pub(crate) qualified: String,
    pub(crate) score: f64,
    pub(crate) coverage: f64,
}

impl Hit {
    /// The server that lists the tool.
    pub fn server(&self) -> &McpServerKey {
        &self.server
    }

    /// The raw tool name, as the server lists it.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// `server/tool` (see [`qualified_name`]).
    pub fn qualified_name(&self) -> &str {
        &self.qualified
    }

    /// The ranking score: higher is better; comparable only within one result list.
    pub fn score(&self) -> f64 {
        self.score
    }

    /// How much of the query this tool's text has, from 0 to 1: the sum of the inverse
    /// document frequencies of the query's terms it has, over that of all of them. Unlike
    /// the score it compares across queries: 1 means every word of the query (rare ones
    /// weigh more) is in the tool's name, description or schema. 0 for a tool found only
    /// by its name or by an embedding.
    pub fn coverage(&self) -> f64 {
        self.coverage
    }
}

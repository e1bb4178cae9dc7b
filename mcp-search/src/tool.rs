//! What goes into the index (a tool definition) and what comes out (a hit).

use mcp_key::McpServerKey;

/// What an indexed entry is: a server's tool (the default) or one of its skills (the
/// Skills extension, SEP-2640: indexed by its name and the description of its `SKILL.md`
/// frontmatter). Both rank in one list; a hit says which it is ([`Hit::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum EntryKind {
    /// A tool (`tools/list`).
    #[default]
    Tool,
    /// A skill (`skills/list`).
    Skill,
}

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
    kind: EntryKind,
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
            kind: EntryKind::Tool,
        }
    }

    /// A skill named `name` (its frontmatter `name`) with `description` (its frontmatter
    /// `description`): an entry of kind [`EntryKind::Skill`], ranked among the tools. A
    /// skill and a tool of one server may share a name; two skills may not.
    ///
    /// ```
    /// use mcp_search::{EntryKind, ToolDef, ToolIndex};
    /// let mut index = ToolIndex::new();
    /// index.replace_server("docs".parse()?, [
    ///     ToolDef::new("convert", "Convert a document to another format."),
    ///     ToolDef::skill("pdf-processing", "Extract, fill, and assemble PDF documents"),
    /// ])?;
    /// let hits = index.search("fill a PDF form", 5)?;
    /// assert_eq!(hits[0].name(), "pdf-processing");
    /// assert_eq!(hits[0].kind(), EntryKind::Skill);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn skill(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self::new(name, description).with_kind(EntryKind::Skill)
    }

    /// This entry as `kind`.
    #[must_use]
    pub fn with_kind(mut self, kind: EntryKind) -> Self {
        self.kind = kind;
        self
    }

    /// What this entry is.
    pub fn kind(&self) -> EntryKind {
        self.kind
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
    pub(crate) kind: EntryKind,
}

impl Hit {
    /// The server that lists the tool.
    pub fn server(&self) -> &McpServerKey {
        &self.server
    }

    /// The raw tool name, as the server lists it (a skill's name for a skill hit).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The entry's raw name: the tool's, or the skill's.
    pub fn name(&self) -> &str {
        &self.tool
    }

    /// Whether the hit is a tool or a skill.
    pub fn kind(&self) -> EntryKind {
        self.kind
    }

    /// Whether the hit is a skill.
    pub fn is_skill(&self) -> bool {
        self.kind == EntryKind::Skill
    }

    /// `server/tool` (see [`qualified_name`]); `server/skill` for a skill, the same form
    /// (a skill and a tool of the same name share it: tell them apart by [`Self::kind`]).
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

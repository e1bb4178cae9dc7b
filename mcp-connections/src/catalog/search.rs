//! Tool search over the set's catalog ([`ConnectionSet::search_tools`](crate::ConnectionSet::search_tools)): an
//! [`mcp_search::ToolIndex`] that follows the catalog, reindexing only the servers whose
//! listings changed. The servers' skills, as the set last listed them
//! ([`ConnectionSet::skills`](crate::ConnectionSet::skills)), are in the same index
//! ([`ConnectionSet::find_tools_and_skills`](crate::ConnectionSet::find_tools_and_skills));
//! a tool search leaves them out.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use mcp_key::McpServerKey;
use mcp_search::{ToolDef, ToolIndex};

use crate::catalog::skills::SkillInfo;
use crate::catalog::tool_info::ToolInfo;
use crate::error::Result;

/// One result of [`ConnectionSet::search_tools`](crate::ConnectionSet::search_tools).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolHit {
    /// The tool, as [`ConnectionSet::tools`](crate::ConnectionSet::tools) lists it (its qualified name is what a
    /// model calls).
    pub info: ToolInfo,
    /// The ranking score (higher is better; comparable within one search only).
    pub score: f64,
}

/// What [`ConnectionSet::find_tools`](crate::ConnectionSet::find_tools) found: the hits
/// that passed, best first, and when none did, the closest tools ("did you mean").
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolSearch {
    /// The tools that match well enough, best first.
    pub hits: Vec<ToolHit>,
    /// Empty unless `hits` is: then up to [`mcp_search::DID_YOU_MEAN`] of the closest
    /// tools (near spellings of the query, then the best weak matches).
    pub did_you_mean: Vec<ToolHit>,
}

impl ToolSearch {
    /// Whether no tool matched well enough.
    pub fn is_no_match(&self) -> bool {
        self.hits.is_empty()
    }
}

/// One skill found by [`ConnectionSet::find_tools_and_skills`](crate::ConnectionSet::find_tools_and_skills).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillHit {
    /// The skill, as [`ConnectionSet::skills`](crate::ConnectionSet::skills) lists it (its
    /// qualified name is what [`ConnectionSet::load_skill`](crate::ConnectionSet::load_skill)
    /// takes).
    pub info: SkillInfo,
    /// The ranking score (higher is better; comparable within one search only).
    pub score: f64,
}

/// One result of [`ConnectionSet::find_tools_and_skills`](crate::ConnectionSet::find_tools_and_skills):
/// a tool or a skill.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CatalogHit {
    /// A server's tool.
    Tool(ToolHit),
    /// A server's skill.
    Skill(SkillHit),
}

impl CatalogHit {
    /// The tool's or the skill's qualified name (`mcp__server__name`).
    pub fn qualified_name(&self) -> &str {
        match self {
            Self::Tool(hit) => &hit.info.qualified_name,
            Self::Skill(hit) => &hit.info.qualified_name,
        }
    }

    /// Whether this is a skill.
    pub fn is_skill(&self) -> bool {
        matches!(self, Self::Skill(_))
    }

    /// The ranking score (higher is better; comparable within one search only).
    pub fn score(&self) -> f64 {
        match self {
            Self::Tool(hit) => hit.score,
            Self::Skill(hit) => hit.score,
        }
    }
}

/// What [`ConnectionSet::find_tools_and_skills`](crate::ConnectionSet::find_tools_and_skills)
/// found: tools and skills ranked in one list, and when none matched well enough, the
/// closest ones ("did you mean").
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct CatalogSearch {
    /// The tools and skills that match well enough, best first.
    pub hits: Vec<CatalogHit>,
    /// Empty unless `hits` is: then up to [`mcp_search::DID_YOU_MEAN`] of the closest.
    pub did_you_mean: Vec<CatalogHit>,
}

impl CatalogSearch {
    /// Whether nothing matched well enough.
    pub fn is_no_match(&self) -> bool {
        self.hits.is_empty()
    }
}

/// The index and what it was built from.
#[derive(Default)]
pub(crate) struct SearchState {
    /// The catalog revision the index reflects.
    revision: Option<u64>,
    pub(crate) index: ToolIndex,
    /// Per server, a digest of the listing it was indexed from.
    indexed: BTreeMap<McpServerKey, u64>,
    /// Per server, its skills as the set last listed them (those not held back).
    pub(crate) skills: BTreeMap<McpServerKey, Vec<SkillInfo>>,
}

/// A digest of a server's listing that changes when the listing does: each tool's name,
/// title, description and the identity of its input schema (a relisting brings new schema
/// objects; the same listing, cached or live, keeps them), and each skill's name and
/// description.
fn digest(tools: &[&ToolInfo], skills: &[SkillInfo]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for info in tools {
        info.qualified_name.hash(&mut h);
        info.tool.name.hash(&mut h);
        info.tool.title.hash(&mut h);
        info.tool.description.hash(&mut h);
        Arc::as_ptr(&info.tool.input_schema).hash(&mut h);
    }
    for info in skills {
        info.qualified_name.hash(&mut h);
        info.name().hash(&mut h);
        info.description().hash(&mut h);
    }
    h.finish()
}

/// What the index keeps of one skill: its name and description (the frontmatter's), with
/// its qualified name as an alias.
fn skill_definition(info: &SkillInfo) -> ToolDef {
    ToolDef::skill(info.name(), info.description()).with_alias(info.qualified_name.clone())
}

/// What the index keeps of one tool: its raw name, title, description and input schema,
/// with its qualified (model-facing) name as an alias, so a query naming it ranks it first.
fn definition(info: &ToolInfo) -> ToolDef {
    let mut def = ToolDef::new(
        info.tool.name.to_string(),
        info.tool.description.as_deref().unwrap_or_default(),
    )
    .with_input_schema(serde_json::Value::Object(
        info.tool.input_schema.as_ref().clone(),
    ))
    .with_alias(info.qualified_name.clone());
    if let Some(title) = &info.tool.title {
        def = def.with_title(title.clone());
    }
    def
}

impl SearchState {
    /// Keeps `skills` (every server's, as [`ConnectionSet::skills`](crate::ConnectionSet::skills)
    /// just listed them) for the index: those not held back. The next search reindexes the
    /// servers whose skills changed.
    pub(crate) fn set_skills(&mut self, skills: &[SkillInfo]) {
        let mut by_server: BTreeMap<McpServerKey, Vec<SkillInfo>> = BTreeMap::new();
        for info in skills.iter().filter(|s| !s.held) {
            by_server
                .entry(info.server.clone())
                .or_default()
                .push(info.clone());
        }
        if by_server != self.skills {
            self.skills = by_server;
            self.revision = None;
        }
    }

    /// Brings the index up to `revision` of `catalog`: servers whose listing changed are
    /// reindexed, servers gone are dropped, the others are left alone.
    pub(crate) fn follow(&mut self, revision: u64, catalog: &[ToolInfo]) -> Result<()> {
        if self.revision == Some(revision) {
            return Ok(());
        }
        let mut by_server: BTreeMap<&McpServerKey, Vec<&ToolInfo>> = BTreeMap::new();
        // A search is the model's: tools only an MCP App may call are not its to find.
        for info in catalog.iter().filter(|info| info.visible_to_model()) {
            by_server.entry(&info.server).or_default().push(info);
        }
        for key in self.skills.keys() {
            by_server.entry(key).or_default();
        }
        let gone: Vec<McpServerKey> = self
            .indexed
            .keys()
            .filter(|k| !by_server.contains_key(k))
            .cloned()
            .collect();
        for key in gone {
            self.index.remove_server(&key);
            self.indexed.remove(&key);
        }
        for (key, tools) in by_server {
            let skills = self.skills.get(key).map_or(&[][..], Vec::as_slice);
            let digest = digest(&tools, skills);
            if self.indexed.get(key) == Some(&digest) {
                continue;
            }
            // A server that lists a name twice is indexed with the first (as it is named).
            let mut seen = std::collections::HashSet::new();
            let unique = tools
                .iter()
                .filter(|i| seen.insert(i.tool.name.as_ref()))
                .map(|i| definition(i));
            let mut seen_skills = std::collections::HashSet::new();
            let skills = skills
                .iter()
                .filter(|s| seen_skills.insert(s.name()))
                .map(skill_definition);
            self.index
                .replace_server(key.clone(), unique.chain(skills))?;
            self.indexed.insert(key.clone(), digest);
        }
        self.revision = Some(revision);
        Ok(())
    }
}

/// The set's search state (in `SetInner`).
pub(crate) type SharedSearch = Mutex<SearchState>;

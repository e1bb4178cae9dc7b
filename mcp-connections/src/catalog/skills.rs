//! One skill as the host sees it ([`SkillInfo`]) and the names of every server's skills in
//! one catalog: qualified like tools (`mcp__<server>__<skill>`, the environment in the
//! namespace where the set names tools so), by the same namer, so a skill's name is
//! stable across runs and unique in the set.

use std::collections::BTreeMap;

use mcp_key::{McpServerKey, NamingOptions, ToolNamer};
use rmcp::model::Skill;

/// One skill a server serves (the Skills extension), as the host lists it. Listing
/// reads no file: only the entry (frontmatter, files with digests and sizes) is known.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillInfo {
    /// The skill's name in the set (`mcp__server__skill`), unique among its skills;
    /// what [`ConnectionSet::load_skill`](crate::ConnectionSet::load_skill) takes.
    pub qualified_name: String,
    /// The server that serves it.
    pub server: McpServerKey,
    /// The entry exactly as the server listed it.
    pub skill: Skill,
    /// The skill changed since it was pinned and its server's `tool_drift` policy holds
    /// the change: shown to the user ([`ConnectionSet::skill_drift`](crate::ConnectionSet::skill_drift)
    /// says what changed), not loaded until accepted
    /// ([`ConnectionSet::accept_skill_changes`](crate::ConnectionSet::accept_skill_changes)).
    pub held: bool,
}

impl SkillInfo {
    /// The skill's own name (frontmatter `name`).
    pub fn name(&self) -> &str {
        self.skill.name()
    }

    /// The skill's description (frontmatter `description`).
    pub fn description(&self) -> &str {
        &self.skill.frontmatter.description
    }
}

/// Every server's skills (each with whether it is held back) as one list sorted by
/// qualified name, the names given by the tool namer.
pub(crate) fn catalog(
    naming: &NamingOptions,
    per_server: BTreeMap<McpServerKey, Vec<(Skill, bool)>>,
) -> Vec<SkillInfo> {
    let namer = ToolNamer::new(naming.clone());
    let names = namer.qualify(
        per_server
            .iter()
            .flat_map(|(k, skills)| skills.iter().map(move |(s, _)| (k, s.name()))),
    );
    let mut out: Vec<SkillInfo> = per_server
        .into_iter()
        .flat_map(|(server, skills)| {
            let names = &names;
            skills.into_iter().filter_map(move |(skill, held)| {
                let qualified_name = names.qualified_name(&server, skill.name())?.to_owned();
                Some(SkillInfo {
                    qualified_name,
                    server: server.clone(),
                    skill,
                    held,
                })
            })
        })
        .collect();
    out.sort_by(|a, b| a.qualified_name.cmp(&b.qualified_name));
    out
}

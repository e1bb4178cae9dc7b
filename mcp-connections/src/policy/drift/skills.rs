//! What changed in a server's skills since they were pinned: each skill's whole entry
//! (its frontmatter, every file's digest and size, its `_meta`) compared with its pin,
//! classified like a tool's definition ([`SkillChange::adds_risk`]), so the same
//! `tool_drift` policy decides which changes wait for the user.

use std::collections::{BTreeMap, BTreeSet};

use mcp_key::Fingerprint;
use rmcp::model::{Skill, SkillResource, SkillResources};
use serde_json::Value;

use super::{RiskSign, canonical_text, gained, text};

/// The fingerprint domain of skill entries.
const SKILL_DOMAIN: &str = "mcp-connections/skill-entry/v1";

/// The fingerprint of `skill`'s whole entry as the server listed it (its URI, frontmatter,
/// files with their digests and sizes, `_meta`) as canonical JSON: the same across runs
/// and key orders, and any difference changes it. What an approval of a skill approves.
pub fn skill_fingerprint(skill: &Skill) -> Fingerprint {
    let wire = serde_json::to_value(skill).unwrap_or(Value::Null);
    Fingerprint::builder(SKILL_DOMAIN)
        .str("entry", &canonical_text(&wire))
        .finish()
}

/// One classified difference of a skill between its pin and the server's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillChange {
    /// The skill is new.
    Added,
    /// The skill is gone.
    Removed,
    /// The frontmatter's `description` changed; `gained` lists the risk signs the new
    /// text has and the old one had not.
    DescriptionChanged {
        /// Risk signs that appeared.
        gained: Vec<RiskSign>,
        /// Only white space, punctuation or invisible characters changed.
        cosmetic: bool,
    },
    /// A frontmatter field other than `name` and `description` appeared, went or changed
    /// (e.g. `allowed-tools`, `license`).
    FrontmatterChanged {
        /// The field.
        field: String,
    },
    /// A file's content changed: its digest or size is not the pinned one (for the
    /// skill's `SKILL.md` too: the text the model reads).
    FileChanged {
        /// The file's URI.
        uri: String,
    },
    /// The entry lists a file the pin does not.
    FileAdded {
        /// The file's URI.
        uri: String,
    },
    /// The entry no longer lists a file the pin does.
    FileRemoved {
        /// The file's URI.
        uri: String,
    },
    /// The files were listed with digests and are now `"dynamic"` (unverifiable).
    BecameDynamic,
    /// The files were `"dynamic"` and are now listed with digests.
    BecameListed,
    /// `_meta` changed.
    MetaChanged,
}

impl SkillChange {
    /// Whether the change adds risk and so should be approved again: a new skill, any
    /// file whose content changed or appeared, files that can no longer be verified, a
    /// frontmatter field that changed, and a description change beyond white space and
    /// punctuation or one that gained a URL, a file path or instructions to the model.
    /// A removed skill or file, `_meta`, and files that became verifiable do not.
    pub fn adds_risk(&self) -> bool {
        match self {
            Self::Added
            | Self::FrontmatterChanged { .. }
            | Self::FileChanged { .. }
            | Self::FileAdded { .. }
            | Self::BecameDynamic => true,
            Self::DescriptionChanged { gained, cosmetic } => !cosmetic || !gained.is_empty(),
            _ => false,
        }
    }

    /// The change in words, e.g. `file skill://a/SKILL.md changed`.
    pub fn describe(&self) -> String {
        match self {
            Self::Added => "new skill".to_owned(),
            Self::Removed => "removed".to_owned(),
            Self::DescriptionChanged { gained, cosmetic } => {
                crate::policy::pins::text_change("description", gained, *cosmetic)
            }
            Self::FrontmatterChanged { field } => format!("frontmatter `{field}` changed"),
            Self::FileChanged { uri } => format!("file {uri} changed (digest or size)"),
            Self::FileAdded { uri } => format!("file {uri} added"),
            Self::FileRemoved { uri } => format!("file {uri} removed"),
            Self::BecameDynamic => "files became dynamic (no digests to verify)".to_owned(),
            Self::BecameListed => "files are listed with digests now".to_owned(),
            Self::MetaChanged => "_meta changed".to_owned(),
        }
    }
}

/// The changes of one skill between its pin and the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillDrift {
    /// The skill's name (its frontmatter `name`).
    pub skill: String,
    /// The URI of its `SKILL.md` (what it is pinned by).
    pub uri: String,
    /// What changed, in a fixed order.
    pub changes: Vec<SkillChange>,
}

impl SkillDrift {
    /// Whether any of the changes adds risk.
    pub fn adds_risk(&self) -> bool {
        self.changes.iter().any(SkillChange::adds_risk)
    }

    /// The changes, readable for a person, joined with `; `.
    pub fn describe(&self) -> String {
        self.changes
            .iter()
            .map(SkillChange::describe)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Compares a server's `pinned` skills with its `live` listing, skill by skill (by the URI
/// of each `SKILL.md`): every skill that differs, sorted by URI.
pub fn classify_skills(pinned: &[Skill], live: &[Skill]) -> Vec<SkillDrift> {
    let was: BTreeMap<&str, &Skill> = pinned.iter().map(|s| (s.uri.as_str(), s)).collect();
    let is: BTreeMap<&str, &Skill> = live.iter().map(|s| (s.uri.as_str(), s)).collect();
    let uris: BTreeSet<&str> = was.keys().chain(is.keys()).copied().collect();
    let mut out = Vec::new();
    for uri in uris {
        let (changes, skill) = match (was.get(uri), is.get(uri)) {
            (None, Some(now)) => (vec![SkillChange::Added], now),
            (Some(then), None) => (vec![SkillChange::Removed], then),
            (Some(then), Some(now)) => (compare(then, now), now),
            (None, None) => continue,
        };
        if !changes.is_empty() {
            out.push(SkillDrift {
                skill: skill.name().to_owned(),
                uri: uri.to_owned(),
                changes,
            });
        }
    }
    out
}

/// The changes between two entries of the same skill.
fn compare(before: &Skill, after: &Skill) -> Vec<SkillChange> {
    let mut changes = Vec::new();
    let (a, b) = (&before.frontmatter, &after.frontmatter);
    if a.description != b.description {
        changes.push(SkillChange::DescriptionChanged {
            gained: gained(&a.description, &b.description),
            cosmetic: text::cosmetic(&a.description, &b.description),
        });
    }
    // A changed name is another URI (the name is the URI's segment): another skill.
    let fields: BTreeSet<&String> = a.extra.keys().chain(b.extra.keys()).collect();
    for field in fields {
        if a.extra.get(field) != b.extra.get(field) {
            changes.push(SkillChange::FrontmatterChanged {
                field: field.clone(),
            });
        }
    }
    match (&before.resources, &after.resources) {
        (SkillResources::Files(was), SkillResources::Files(is)) => {
            file_changes(was, is, &mut changes)
        }
        (SkillResources::Files(_), _) => changes.push(SkillChange::BecameDynamic),
        (_, SkillResources::Files(_)) => changes.push(SkillChange::BecameListed),
        _ => {}
    }
    if before.meta != after.meta {
        changes.push(SkillChange::MetaChanged);
    }
    changes
}

/// The files added, removed and changed between two manifests, by URI.
fn file_changes(was: &[SkillResource], is: &[SkillResource], out: &mut Vec<SkillChange>) {
    let before: BTreeMap<&str, &SkillResource> = was.iter().map(|f| (f.uri.as_str(), f)).collect();
    let after: BTreeMap<&str, &SkillResource> = is.iter().map(|f| (f.uri.as_str(), f)).collect();
    let uris: BTreeSet<&str> = before.keys().chain(after.keys()).copied().collect();
    for uri in uris {
        let uri_owned = uri.to_owned();
        match (before.get(uri), after.get(uri)) {
            (Some(a), Some(b)) if a.digest != b.digest || a.size != b.size => {
                out.push(SkillChange::FileChanged { uri: uri_owned });
            }
            (None, Some(_)) => out.push(SkillChange::FileAdded { uri: uri_owned }),
            (Some(_), None) => out.push(SkillChange::FileRemoved { uri: uri_owned }),
            _ => {}
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use rmcp::model::SkillFrontmatter;

    fn skill(description: &str, digest: &str) -> Skill {
        let resources = SkillResources::Files(vec![SkillResource::new(
            "skill://a/SKILL.md",
            format!("sha256:{digest}"),
            10,
        )]);
        Skill::new(
            "skill://a/SKILL.md",
            SkillFrontmatter::new("a", description),
            resources,
        )
    }

    #[test]
    fn a_changed_skill_md_is_a_risky_file_change_and_a_cosmetic_description_is_not() {
        let pinned = [skill("Take notes.", &"0".repeat(64))];
        let changed = [skill("Take notes", &"1".repeat(64))];
        let drift = classify_skills(&pinned, &changed);
        assert_eq!(
            drift,
            [SkillDrift {
                skill: "a".into(),
                uri: "skill://a/SKILL.md".into(),
                changes: vec![
                    SkillChange::DescriptionChanged {
                        gained: vec![],
                        cosmetic: true
                    },
                    SkillChange::FileChanged {
                        uri: "skill://a/SKILL.md".into()
                    },
                ],
            }]
        );
        assert!(drift[0].adds_risk());
        assert!(!drift[0].changes[0].adds_risk());
        assert_eq!(
            drift[0].describe(),
            "description changed (spacing or punctuation only); file skill://a/SKILL.md changed (digest or size)"
        );
        assert_eq!(classify_skills(&pinned, &pinned), []);
        assert_eq!(
            classify_skills(&pinned, &[])[0].changes,
            [SkillChange::Removed]
        );
        assert!(!classify_skills(&pinned, &[])[0].adds_risk());
        assert_ne!(
            skill_fingerprint(&pinned[0]),
            skill_fingerprint(&changed[0])
        );
    }
}

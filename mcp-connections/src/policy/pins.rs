//! Tool pins: the first definition of each tool seen for a server is kept (trust on first
//! use), and later listings are compared with it ([`crate::classify_listing`]). A pin is
//! keyed by the server's key (its name and environment) and a target identity the host
//! gives (what runs or where it connects, no secrets), so the same name elsewhere is
//! another pin. An entry installed from the MCP Registry is pinned under what it was
//! installed as ([`mcp_catalog::Provenance::identity`], read from the record beside its
//! configuration file), whatever version it runs, and the pin keeps the version last
//! accepted: when the entry runs another version or something else
//! ([`mcp_catalog::Provenance::check_entry`]), every tool it lists has changed
//! ([`crate::ToolChange::VersionChanged`]) until accepted. Persisted as one JSON file
//! (0600 in a 0700 folder, atomic replace).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use mcp_key::{Fingerprint, McpServerKey};
use rmcp::model::{Skill, Tool};
use serde::{Deserialize, Serialize};

use crate::policy::drift::skills::{SkillDrift, classify_skills};
use crate::policy::drift::{ToolDrift, classify_listing};

/// Name of the pin file inside the folder given to [`ToolPins::persisted`].
pub const TOOL_PINS_FILE: &str = "tool-pins-v1.json";

const FORMAT: &str = "mcp-connections/tool-pins";
const VERSION: u64 = 1;

/// What [`ToolPins::check`] found for a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PinCheck {
    /// No pin existed for this server and target: the listing is pinned now. `rebuilt`
    /// is true when the pin file had to be started over (it was corrupt): the host should
    /// say so, since earlier pins are lost.
    FirstSeen {
        /// The pin file was unreadable and is being rebuilt.
        rebuilt: bool,
    },
    /// The listing equals the pins.
    Unchanged,
    /// The listing differs: every tool that changed, classified. Nothing is re-pinned
    /// until the host accepts ([`ToolPins::accept`], [`ToolPins::accept_tool`]).
    Drifted(Vec<ToolDrift>),
}

#[derive(Serialize, Deserialize)]
struct File {
    format: String,
    version: u64,
    servers: Vec<Entry>,
}

#[derive(Serialize, Deserialize, Clone)]
struct Entry {
    server: String,
    target: String,
    /// Absent: only the server's skills are pinned so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<Tool>>,
    /// The skills' whole entries (absent: none pinned so far; empty: the server listed
    /// none when first seen, so every later skill is new).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skills: Option<Vec<Skill>>,
    /// The version of a registry entry last accepted (absent: the one recorded when it was
    /// installed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
}

type Key = (McpServerKey, Fingerprint);

/// The pinned skills of one server, by the URI of each `SKILL.md`.
type SkillMap = BTreeMap<String, Skill>;

/// What [`ToolPins::check_skills`] found for a skill listing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillPinCheck {
    /// No skill pin existed for this server and target: the listing is pinned now
    /// (`rebuilt` as in [`PinCheck::FirstSeen`]).
    FirstSeen {
        /// The pin file was unreadable and is being rebuilt.
        rebuilt: bool,
    },
    /// The listing equals the pins.
    Unchanged,
    /// The listing differs: every skill that changed, classified. Nothing is re-pinned
    /// until accepted ([`ToolPins::accept_skill`]).
    Drifted(Vec<SkillDrift>),
}

/// The pinned tool definitions of every server; cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct ToolPins {
    path: Option<PathBuf>,
    pins: Mutex<BTreeMap<Key, BTreeMap<String, Tool>>>,
    /// Skill entries, in the same file as the tools, by the same key.
    skills: Mutex<BTreeMap<Key, SkillMap>>,
    /// The version of a registry entry last accepted, by the same key.
    versions: Mutex<BTreeMap<Key, String>>,
    load_problem: Option<String>,
}

impl ToolPins {
    /// Pins that live in this process only.
    pub fn in_memory() -> Self {
        Self {
            path: None,
            pins: Mutex::default(),
            skills: Mutex::default(),
            versions: Mutex::default(),
            load_problem: None,
        }
    }

    /// Pins persisted in `dir/`[`TOOL_PINS_FILE`], read now. A missing file is no pins; a
    /// file that cannot be read or is not a pin file is reported once (`tracing::warn!`
    /// and [`ToolPins::load_problem`]) and started over, and every server's next check
    /// says so ([`PinCheck::FirstSeen`] with `rebuilt`): old pins are never silently
    /// replaced by new trust.
    pub fn persisted(dir: impl AsRef<Path>) -> Self {
        let path = dir.as_ref().join(TOOL_PINS_FILE);
        let ((pins, skills, versions), problem) = match std::fs::read(&path) {
            Ok(bytes) => match parse(&bytes) {
                Ok(pins) => (pins, None),
                Err(problem) => (Default::default(), Some(problem)),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => (Default::default(), None),
            Err(e) => (Default::default(), Some(format!("cannot be read: {e}"))),
        };
        let load_problem = problem.map(|p| {
            let message = format!(
                "tool pins {} are unusable ({p}); every server's tools are pinned again as first seen",
                path.display()
            );
            tracing::warn!("{message}");
            message
        });
        Self {
            path: Some(path),
            pins: Mutex::new(pins),
            skills: Mutex::new(skills),
            versions: Mutex::new(versions),
            load_problem,
        }
    }

    /// Why the pin file was started over, if it was.
    pub fn load_problem(&self) -> Option<&str> {
        self.load_problem.as_deref()
    }

    /// Compares `tools`, the listing of `server` at `target`, with its pins; pins them
    /// when there were none (trust on first use).
    pub fn check(&self, server: &McpServerKey, target: &Fingerprint, tools: &[Tool]) -> PinCheck {
        let mut pins = self.pins.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (server.clone(), *target);
        match pins.get(&key) {
            None => {
                pins.insert(key, by_name(tools));
                PinCheck::FirstSeen {
                    rebuilt: self.load_problem.is_some(),
                }
            }
            Some(pinned) => {
                let pinned: Vec<Tool> = pinned.values().cloned().collect();
                let drift = classify_listing(&pinned, tools);
                if drift.is_empty() {
                    PinCheck::Unchanged
                } else {
                    PinCheck::Drifted(drift)
                }
            }
        }
    }

    /// Pins `tools` as the whole listing of `server` at `target` (the user accepted it).
    pub fn accept(&self, server: &McpServerKey, target: &Fingerprint, tools: &[Tool]) {
        let mut pins = self.pins.lock().unwrap_or_else(PoisonError::into_inner);
        pins.insert((server.clone(), *target), by_name(tools));
    }

    /// Pins one tool's definition (the user accepted its change), or unpins `name` when
    /// `tool` is `None` (the user accepted its removal).
    pub fn accept_tool(
        &self,
        server: &McpServerKey,
        target: &Fingerprint,
        name: &str,
        tool: Option<&Tool>,
    ) {
        let mut pins = self.pins.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = pins.entry((server.clone(), *target)).or_default();
        match tool {
            Some(tool) => {
                entry.insert(name.to_owned(), tool.clone());
            }
            None => {
                entry.remove(name);
            }
        }
    }

    /// The pinned definition of `name` on `server` at `target`.
    pub fn pinned(&self, server: &McpServerKey, target: &Fingerprint, name: &str) -> Option<Tool> {
        let pins = self.pins.lock().unwrap_or_else(PoisonError::into_inner);
        pins.get(&(server.clone(), *target))?.get(name).cloned()
    }

    /// Compares `skills`, the skill listing of `server` at `target`, with its skill pins
    /// (each skill's whole entry: frontmatter, every file's digest and size, `_meta`);
    /// pins them when there were none (trust on first use, as for tools).
    pub fn check_skills(
        &self,
        server: &McpServerKey,
        target: &Fingerprint,
        skills: &[Skill],
    ) -> SkillPinCheck {
        let mut pins = self.skills.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (server.clone(), *target);
        match pins.get(&key) {
            None => {
                pins.insert(key, by_uri(skills));
                SkillPinCheck::FirstSeen {
                    rebuilt: self.load_problem.is_some(),
                }
            }
            Some(pinned) => {
                let pinned: Vec<Skill> = pinned.values().cloned().collect();
                let drift = classify_skills(&pinned, skills);
                if drift.is_empty() {
                    SkillPinCheck::Unchanged
                } else {
                    SkillPinCheck::Drifted(drift)
                }
            }
        }
    }

    /// Pins one skill's entry (the user accepted its change), or unpins the skill whose
    /// `SKILL.md` is at `uri` when `skill` is `None` (the user accepted its removal).
    pub fn accept_skill(
        &self,
        server: &McpServerKey,
        target: &Fingerprint,
        uri: &str,
        skill: Option<&Skill>,
    ) {
        let mut pins = self.skills.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = pins.entry((server.clone(), *target)).or_default();
        match skill {
            Some(skill) => {
                entry.insert(uri.to_owned(), skill.clone());
            }
            None => {
                entry.remove(uri);
            }
        }
    }

    /// The pinned entry of the skill whose `SKILL.md` is at `uri`, on `server` at
    /// `target`.
    pub fn pinned_skill(
        &self,
        server: &McpServerKey,
        target: &Fingerprint,
        uri: &str,
    ) -> Option<Skill> {
        let pins = self.skills.lock().unwrap_or_else(PoisonError::into_inner);
        pins.get(&(server.clone(), *target))?.get(uri).cloned()
    }

    /// The version of a registry entry last accepted for `server` at `target`, if one was.
    pub(crate) fn accepted_version(
        &self,
        server: &McpServerKey,
        target: &Fingerprint,
    ) -> Option<String> {
        let versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
        versions.get(&(server.clone(), *target)).cloned()
    }

    /// Records `version` as accepted for `server` at `target`.
    pub(crate) fn accept_version(
        &self,
        server: &McpServerKey,
        target: &Fingerprint,
        version: &str,
    ) {
        let mut versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
        versions.insert((server.clone(), *target), version.to_owned());
    }

    /// Writes the pin file (atomically, 0600; its folder 0700). No-op in memory.
    pub fn persist(&self) -> io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let servers: Vec<Entry> = {
            let pins = self.pins.lock().unwrap_or_else(PoisonError::into_inner);
            let skills = self.skills.lock().unwrap_or_else(PoisonError::into_inner);
            let versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
            let keys: std::collections::BTreeSet<&Key> = pins
                .keys()
                .chain(skills.keys())
                .chain(versions.keys())
                .collect();
            keys.into_iter()
                .map(|key @ (server, target)| Entry {
                    server: server.to_string(),
                    target: target.to_hex(),
                    tools: pins.get(key).map(|t| t.values().cloned().collect()),
                    skills: skills.get(key).map(|s| s.values().cloned().collect()),
                    version: versions.get(key).cloned(),
                })
                .collect()
        };
        let file = File {
            format: FORMAT.to_owned(),
            version: VERSION,
            servers,
        };
        let bytes = serde_json::to_vec_pretty(&file)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)?;
        crate::catalog::tool_cache::write_atomically(dir, path, &bytes)
    }
}

fn by_name(tools: &[Tool]) -> BTreeMap<String, Tool> {
    tools
        .iter()
        .map(|t| (t.name.to_string(), t.clone()))
        .collect()
}

fn by_uri(skills: &[Skill]) -> SkillMap {
    skills.iter().map(|s| (s.uri.clone(), s.clone())).collect()
}

/// The pinned tools and skills, and the accepted versions.
type Parsed = (
    BTreeMap<Key, BTreeMap<String, Tool>>,
    BTreeMap<Key, SkillMap>,
    BTreeMap<Key, String>,
);

fn parse(bytes: &[u8]) -> Result<Parsed, String> {
    let file: File = serde_json::from_slice(bytes).map_err(|e| format!("not a pin file: {e}"))?;
    if file.format != FORMAT {
        return Err(format!("its format is `{}`, not `{FORMAT}`", file.format));
    }
    if file.version != VERSION {
        return Err(format!(
            "file version {} (this one reads {VERSION})",
            file.version
        ));
    }
    let mut pins = BTreeMap::new();
    let mut skills = BTreeMap::new();
    let mut versions = BTreeMap::new();
    for entry in file.servers {
        let server: McpServerKey = entry
            .server
            .parse()
            .map_err(|e| format!("server `{}`: {e}", entry.server))?;
        let target = Fingerprint::from_hex(&entry.target)
            .ok_or_else(|| format!("server `{}`: target is not a fingerprint", entry.server))?;
        if let Some(version) = entry.version {
            versions.insert((server.clone(), target), version);
        }
        if let Some(listed) = &entry.skills {
            skills.insert((server.clone(), target), by_uri(listed));
        }
        if let Some(tools) = &entry.tools {
            pins.insert((server, target), by_name(tools));
        }
    }
    Ok((pins, skills, versions))
}

#[cfg(test)]
mod tests;

/// One server's drift as a set last saw it (kept by the set, computed by
/// `set/pins_impl.rs`).
#[derive(Debug, Default, Clone)]
pub(crate) struct Drift {
    /// Tools held back until accepted.
    pub(crate) held: Vec<ToolDrift>,
    /// Changes re-pinned as notices in the set's life, one per tool (the latest).
    pub(crate) notices: Vec<ToolDrift>,
}

/// What a pin of `spec`'s server is keyed by besides its key, and for an entry installed
/// from the MCP Registry, the version it runs now against the one recorded.
pub(crate) struct PinSubject {
    /// The pin's target.
    pub(crate) target: Fingerprint,
    /// Set for an entry with a recorded provenance.
    pub(crate) version: Option<EntryVersion>,
}

/// The version of a registry entry: recorded when it was installed, and run now.
pub(crate) struct EntryVersion {
    /// The recorded version ([`mcp_catalog::Provenance::pinned_version`]).
    pub(crate) recorded: String,
    /// The version the entry runs now, or what it runs instead.
    pub(crate) now: String,
}

impl EntryVersion {
    /// The change from the version accepted last (`accepted`, or the recorded one) to the
    /// one run now, if they differ.
    pub(crate) fn change(&self, accepted: Option<String>) -> Option<(String, String)> {
        let from = accepted.unwrap_or_else(|| self.recorded.clone());
        (from != self.now).then(|| (from, self.now.clone()))
    }
}

/// The pin subject of `spec`'s server in `catalog`: an entry whose configuration file has a
/// provenance recorded beside it ([`mcp_catalog::Provenance::recorded`]) is pinned under
/// that provenance's identity, so another version is compared with the same pins;
/// any other entry under what runs ([`runs_target`]).
pub(crate) fn pin_subject(
    catalog: &mcp_catalog::ResolvedCatalog,
    spec: &crate::catalog::spec::ServerSpec,
) -> PinSubject {
    let recorded = catalog.source(&spec.key).and_then(|source| {
        mcp_catalog::Provenance::recorded(Path::new(source.name()), spec.key.name().as_str())
    });
    let Some(provenance) = recorded else {
        return PinSubject {
            target: runs_target(spec),
            version: None,
        };
    };
    let now = match provenance.check_entry(&spec.config) {
        mcp_catalog::EntryCheck::Same => provenance.pinned_version(),
        mcp_catalog::EntryCheck::VersionChanged { now, .. } => now,
        _ => format!(
            "not {} but another command or URL ({})",
            provenance.identity(),
            runs_target(spec)
        ),
    };
    PinSubject {
        target: Fingerprint::builder("mcp-connections/pin-target/registry/v1")
            .str("installed", &provenance.identity())
            .finish(),
        version: Some(EntryVersion {
            recorded: provenance.pinned_version(),
            now,
        }),
    }
}

/// What a pin of `spec`'s server is keyed by besides its key ([`pin_subject`]'s target).
pub(crate) fn pin_target(
    catalog: &mcp_catalog::ResolvedCatalog,
    spec: &crate::catalog::spec::ServerSpec,
) -> Fingerprint {
    pin_subject(catalog, spec).target
}

/// What runs (command, arguments, folder) or where it connects (URL). No variable's value
/// is part of it, so a rotated token is the same pin.
fn runs_target(spec: &crate::catalog::spec::ServerSpec) -> Fingerprint {
    let b = Fingerprint::builder("mcp-connections/pin-target/v1");
    match spec.config.transport() {
        mcp_catalog::Transport::Stdio(stdio) => b
            .str("transport", "stdio")
            .str("command", stdio.command())
            .list("args", stdio.args())
            .opt_str("cwd", stdio.cwd().map(|p| p.to_string_lossy()).as_deref()),
        mcp_catalog::Transport::StreamableHttp(http) => {
            b.str("transport", "http").str("url", http.url())
        }
        mcp_catalog::Transport::Sse(http) => b.str("transport", "sse").str("url", http.url()),
        _ => b.str("transport", "unusable"),
    }
    .finish()
}

/// Whether `policy` holds back a tool with `drift` until it is accepted.
pub(crate) fn holds(policy: mcp_catalog::ToolDriftPolicy, drift: &ToolDrift) -> bool {
    holds_risk(policy, drift.adds_risk())
}

/// Whether `policy` holds back a change that adds risk (`risky`) or not: the rule tools
/// and skills share.
pub(crate) fn holds_risk(policy: mcp_catalog::ToolDriftPolicy, risky: bool) -> bool {
    match policy {
        mcp_catalog::ToolDriftPolicy::Notice => false,
        mcp_catalog::ToolDriftPolicy::Block => true,
        _ => risky,
    }
}

/// One line for a person: each change of `drift`, e.g. `description changed (gained:
/// URL, instructions)`.
pub(crate) fn describe(drift: &ToolDrift) -> String {
    use crate::policy::drift::ToolChange;
    drift
        .changes
        .iter()
        .map(|c| match c {
            ToolChange::Added => "new tool".to_owned(),
            ToolChange::Removed => "removed".to_owned(),
            ToolChange::Renamed { from } => format!("renamed from `{from}`"),
            ToolChange::DescriptionChanged { gained, cosmetic } => {
                text_change("description", gained, *cosmetic)
            }
            ToolChange::TextChanged {
                at,
                gained,
                cosmetic,
            } => text_change(at, gained, *cosmetic),
            ToolChange::SchemaWidened { details } => {
                format!("input schema accepts more: {}", details.join(", "))
            }
            ToolChange::SchemaNarrowed { details } => {
                format!("input schema accepts less: {}", details.join(", "))
            }
            ToolChange::AnnotationsLessSafe { hints } => {
                format!("annotations say less safe: {}", hints.join(", "))
            }
            ToolChange::AnnotationsSafer { hints } => {
                format!("annotations say safer: {}", hints.join(", "))
            }
            ToolChange::OutputSchemaChanged => "output schema changed".to_owned(),
            ToolChange::MetaChanged => "_meta changed".to_owned(),
            ToolChange::BecameModelVisible => {
                "now visible to the model (it was for an app only)".to_owned()
            }
            ToolChange::IconsChanged => "icons changed".to_owned(),
            ToolChange::Unclassified { fields } => format!("{} changed", fields.join(", ")),
            ToolChange::VersionChanged { from, to } => {
                format!("the server runs another version: {from} -> {to}")
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `at changed`, with the risk signs it gained or that only its spacing or punctuation
/// changed.
pub(crate) fn text_change(
    at: &str,
    gained: &[crate::policy::drift::RiskSign],
    cosmetic: bool,
) -> String {
    use crate::policy::drift::RiskSign;
    if !gained.is_empty() {
        let signs: Vec<&str> = gained
            .iter()
            .map(|s| match s {
                RiskSign::Url => "a URL",
                RiskSign::FilePath => "a file path",
                RiskSign::Instruction => "instructions to the model",
            })
            .collect();
        format!("{at} changed, gaining {}", signs.join(", "))
    } else if cosmetic {
        format!("{at} changed (spacing or punctuation only)")
    } else {
        format!("{at} changed")
    }
}

impl ToolDrift {
    /// The changes, readable for a person: e.g. `description changed, gaining a URL;
    /// input schema accepts more: property \`cmd\` added`.
    pub fn describe(&self) -> String {
        describe(self)
    }
}

//! The skills a server serves (the Skills extension, SEP-2640, `io.modelcontextprotocol/skills`):
//! listing them ([`Client::list_skills`], every page within a byte budget, the cache hints
//! kept), describing one ([`Client::get_skill`]), and reading a skill's files only when
//! asked ([`Client::read_skill_file`], [`Client::load_skill`]), each verified against the
//! skill's entry (size, then digest, and for `SKILL.md` its YAML frontmatter field by
//! field); folders where the server offers directory reads
//! ([`Client::read_skill_directory`]). Only URIs the entry lists are read, and nothing is
//! read on connect or on listing.
//!
//! It owns the host's side of the extension for one connection; which skills enter a
//! model's context, and with whose approval, is the caller's decision. A client announces
//! the extension with
//! `ClientSettings::with_extension(SKILLS_EXTENSION_ID, JsonObject::new())`.
//!
//! [`Client::list_skills`]: crate::Client::list_skills
//! [`Client::get_skill`]: crate::Client::get_skill
//! [`Client::read_skill_file`]: crate::Client::read_skill_file
//! [`Client::load_skill`]: crate::Client::load_skill
//! [`Client::read_skill_directory`]: crate::Client::read_skill_directory

pub(crate) mod error;
mod frontmatter;
mod list;
mod read;

use std::time::Duration;

use rmcp::model::Skill;

/// Default [`SkillReadSettings::max_bytes`]: 16 MiB, rmcp's limit for a served skill.
pub const DEFAULT_SKILL_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Every skill a server lists (all pages), with the listing's cache hints.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillListing {
    /// The skills, in the server's order; entries that break the extension's rules, and
    /// every entry of a URI listed more than once, are left out (see `warnings`).
    pub skills: Vec<Skill>,
    /// What was left out, and why.
    pub warnings: Vec<String>,
    /// How long the server says the listing stays fresh (`ttlMs`, the smallest of the
    /// pages'), if it said.
    pub ttl: Option<Duration>,
    /// A page said `cacheScope: "private"`: keep it only under the authorization it was
    /// listed with.
    pub private: bool,
}

/// One skill as `skills/get` describes it, with the answer's cache hints.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The skill's entry.
    pub skill: Skill,
    /// `ttlMs`, if the server sent it.
    pub ttl: Option<Duration>,
    /// `cacheScope: "private"`.
    pub private: bool,
}

/// How a skill's files are read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillReadSettings {
    /// Read the files of a skill listed as `"dynamic"`, which cannot be verified (only its
    /// `SKILL.md`'s frontmatter is checked). Default: refused.
    pub allow_dynamic: bool,
    /// Most bytes one skill may hold (its listed sizes together; a dynamic file's length).
    /// Default [`DEFAULT_SKILL_MAX_BYTES`].
    pub max_bytes: u64,
}

impl Default for SkillReadSettings {
    fn default() -> Self {
        Self::new()
    }
}

impl SkillReadSettings {
    /// Verified files only, at most [`DEFAULT_SKILL_MAX_BYTES`] per skill.
    pub fn new() -> Self {
        Self {
            allow_dynamic: false,
            max_bytes: DEFAULT_SKILL_MAX_BYTES,
        }
    }

    /// Whether to read the files of `"dynamic"` skills, unverified.
    #[must_use]
    pub fn with_dynamic(mut self, allow: bool) -> Self {
        self.allow_dynamic = allow;
        self
    }

    /// Set the most bytes one skill may hold.
    #[must_use]
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }
}

/// One file of a skill, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's URI.
    pub uri: String,
    /// Its bytes (a text's UTF-8, a blob decoded).
    pub bytes: Vec<u8>,
    /// The MIME type the server gave.
    pub mime_type: Option<String>,
    /// Checked against a digest and size of the entry (`false` only for the files of a
    /// dynamic skill, read because the settings allow it).
    pub verified: bool,
}

/// A skill whose files were all read and verified: `SKILL.md` first, then the others in
/// the entry's order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The entry the files were verified against.
    pub skill: Skill,
    /// The files.
    pub files: Vec<SkillFile>,
}

impl LoadedSkill {
    /// The `SKILL.md`'s text.
    pub fn skill_md(&self) -> Option<&str> {
        self.files
            .iter()
            .find(|f| f.uri == self.skill.uri)
            .and_then(|f| std::str::from_utf8(&f.bytes).ok())
    }
}

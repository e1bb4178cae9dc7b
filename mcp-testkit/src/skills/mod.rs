//! The skills a fake server serves (the Skills extension, SEP-2640): [`SkillSpec`] in a
//! scenario, with the faults a host must catch ([`SkillFault`]), and how they are served
//! (`serve.rs`: `skills/list`, `skills/get`, `resources/read` of the files and
//! `resources/directory/read`).
//!
//! A skill named `name` is served at `skill://name/SKILL.md`; its `SKILL.md` is written
//! from the spec (YAML frontmatter with `name`, `description` and the extra fields, then
//! the body) unless a file `SKILL.md` is given. Every file's entry carries the sha256
//! digest and size of the bytes served, unless a fault says otherwise.

pub(crate) mod serve;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The file name of a skill's entry point.
pub const SKILL_MD: &str = "SKILL.md";

/// One skill of a scenario ([`crate::Scenario::with_skill`]).
///
/// ```
/// use mcp_testkit::{Scenario, SkillFault, SkillSpec};
///
/// let scenario = Scenario::new("skills").with_skill(
///     SkillSpec::new("pdf-processing", "Extract, fill, and assemble PDF documents")
///         .with_body("Use the forms reference.")
///         .with_file("references/FORMS.md", "Forms.")
///         .with_fault(SkillFault::WrongDigest { path: "references/FORMS.md".into() }),
/// );
/// assert_eq!(scenario.skills.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SkillSpec {
    /// The skill's name (`frontmatter.name`, and the URI's last segment before
    /// `SKILL.md`): lowercase letters, digits and single inner hyphens.
    pub name: String,
    /// `frontmatter.description`.
    pub description: String,
    /// Frontmatter fields besides `name` and `description`, in the entry and in the
    /// `SKILL.md` written from the spec.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub frontmatter: BTreeMap<String, Value>,
    /// The text of `SKILL.md` after the frontmatter.
    #[serde(default)]
    pub body: String,
    /// The other files, by path below the skill's folder (`references/FORMS.md`); a file
    /// `SKILL.md` here replaces the one written from the spec.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SkillFileSpec>,
    /// List `resources: "dynamic"` instead of the files (they are still served).
    #[serde(default)]
    pub dynamic: bool,
    /// A skill changed between runs: from 1 on, the description ends in
    /// ` (revision N)` and the body in `Revision N.`, so the entry, the `SKILL.md` and its
    /// digest all differ from revision 0's (a test writes the scenario again with another
    /// revision and starts the server again).
    #[serde(default)]
    pub revision: u32,
    /// What is wrong with the skill.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<SkillFault>,
}

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SkillFileSpec {
    /// The path below the skill's folder, `/`-separated.
    pub path: String,
    /// The bytes served (as `text` when they are UTF-8, else as a base64 `blob`).
    pub bytes: Vec<u8>,
}

/// What is wrong with a served skill: each is a fault a host must refuse (or, for
/// [`SkillFault::SplitAcrossPages`], a listing it must not trust).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum SkillFault {
    /// The entry's digest of `path` is the digest of other bytes (the size is right).
    WrongDigest {
        /// The file, below the skill's folder (`SKILL.md` for the entry point).
        path: String,
    },
    /// The entry's size of `path` is one byte more than the bytes served (the digest is
    /// right).
    WrongSize {
        /// The file.
        path: String,
    },
    /// The entry's frontmatter says `value` for `field`, while the `SKILL.md` served says
    /// what the spec says (the entry's digest and size match the served bytes).
    FrontmatterMismatch {
        /// The frontmatter field (`description`, or an extra field).
        field: String,
        /// What the entry says instead.
        value: Value,
    },
    /// `path` is served by `resources/read` but missing from the entry's files.
    Unlisted {
        /// The file.
        path: String,
    },
    /// `path` is listed in the entry but `resources/read` answers "not found".
    NotServed {
        /// The file.
        path: String,
    },
    /// The entry is listed twice, on two consecutive pages of `skills/list`, each with
    /// `SKILL.md` and half of the other files.
    SplitAcrossPages,
}

/// How a scenario's skills are served.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct SkillOptions {
    /// `skills/list` pages of this many entries (default: one page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_size: Option<usize>,
    /// Announce `directoryRead` and serve `resources/directory/read` for the skills'
    /// folders.
    pub directory_read: bool,
}

/// Whether `options` are the defaults (left out of a written scenario).
pub(crate) fn is_default(options: &SkillOptions) -> bool {
    *options == SkillOptions::default()
}

impl SkillOptions {
    /// One page, no directory reads.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pages of `size` entries.
    #[must_use]
    pub fn with_page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size);
        self
    }

    /// Serve directory reads.
    #[must_use]
    pub fn with_directory_read(mut self, on: bool) -> Self {
        self.directory_read = on;
        self
    }
}

impl SkillSpec {
    /// A skill with a `SKILL.md` (frontmatter `name` and `description`, empty body) and no
    /// other file.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            frontmatter: BTreeMap::new(),
            body: String::new(),
            files: Vec::new(),
            dynamic: false,
            revision: 0,
            faults: Vec::new(),
        }
    }

    /// Set the body of `SKILL.md`.
    #[must_use]
    pub fn with_body(mut self, body: impl Into<String>) -> Self {
        self.body = body.into();
        self
    }

    /// Add a frontmatter field.
    #[must_use]
    pub fn with_frontmatter(mut self, field: impl Into<String>, value: Value) -> Self {
        self.frontmatter.insert(field.into(), value);
        self
    }

    /// Add a file (or replace `SKILL.md` with these bytes).
    #[must_use]
    pub fn with_file(mut self, path: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        self.files.push(SkillFileSpec {
            path: path.into(),
            bytes: bytes.as_ref().to_vec(),
        });
        self
    }

    /// List the files as `"dynamic"`.
    #[must_use]
    pub fn with_dynamic(mut self, on: bool) -> Self {
        self.dynamic = on;
        self
    }

    /// Set the revision (see [`SkillSpec::revision`]).
    #[must_use]
    pub fn with_revision(mut self, revision: u32) -> Self {
        self.revision = revision;
        self
    }

    /// Add a fault.
    #[must_use]
    pub fn with_fault(mut self, fault: SkillFault) -> Self {
        self.faults.push(fault);
        self
    }

    /// The URI of the skill's `SKILL.md`: `skill://NAME/SKILL.md`.
    pub fn uri(&self) -> String {
        format!("skill://{}/{SKILL_MD}", self.name)
    }

    /// The URI of the file at `path` below the skill's folder.
    pub fn file_uri(&self, path: &str) -> String {
        format!("skill://{}/{path}", self.name)
    }

    /// The description as served, with the revision.
    pub fn served_description(&self) -> String {
        match self.revision {
            0 => self.description.clone(),
            n => format!("{} (revision {n})", self.description),
        }
    }

    /// Every file as served, `SKILL.md` first, then the others in the order given.
    pub fn served_files(&self) -> Vec<SkillFileSpec> {
        let skill_md = self
            .files
            .iter()
            .find(|f| f.path == SKILL_MD)
            .cloned()
            .unwrap_or_else(|| SkillFileSpec {
                path: SKILL_MD.to_owned(),
                bytes: self.skill_md().into_bytes(),
            });
        let mut files = vec![skill_md];
        files.extend(self.files.iter().filter(|f| f.path != SKILL_MD).cloned());
        files
    }

    /// The `SKILL.md` written from the spec: the frontmatter (every value as a JSON
    /// scalar or collection, which YAML reads as the same value), then the body.
    fn skill_md(&self) -> String {
        let mut text = String::from("---\n");
        let mut field = |key: &str, value: &Value| {
            text.push_str(key);
            text.push_str(": ");
            text.push_str(&value.to_string());
            text.push('\n');
        };
        field("name", &Value::String(self.name.clone()));
        field("description", &Value::String(self.served_description()));
        for (key, value) in &self.frontmatter {
            field(key, value);
        }
        text.push_str("---\n\n");
        text.push_str(&self.body);
        if !self.body.is_empty() && !self.body.ends_with('\n') {
            text.push('\n');
        }
        if self.revision > 0 {
            text.push_str(&format!("\nRevision {}.\n", self.revision));
        }
        text
    }
}

//! Why a skill could not be listed, described or loaded ([`SkillError`]), naming the
//! server, the skill and the file.

use mcp_key::McpServerKey;

use crate::RequestError;

/// Why listing, describing or loading a skill failed (texts are `Box<str>`, keeping the
/// error small). Every message names the server,
/// and the skill and file where there is one; nothing that failed verification is
/// returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The server did not announce the skills extension (`io.modelcontextprotocol/skills`).
    #[error(
        "server `{server}` does not offer skills (no `io.modelcontextprotocol/skills` extension in its capabilities)"
    )]
    Unsupported {
        /// The server.
        server: McpServerKey,
    },
    /// The server does not serve `resources/directory/read` (no `directoryRead` setting
    /// of the skills extension).
    #[error(
        "server `{server}` does not offer directory reads (no `directoryRead` in its skills extension), so folder `{directory}` of skill `{skill}` cannot be listed"
    )]
    DirectoryUnsupported {
        /// The server.
        server: McpServerKey,
        /// The skill's name.
        skill: Box<str>,
        /// The folder asked for.
        directory: Box<str>,
    },
    /// A request to the server failed.
    #[error("{what} on server `{server}` failed")]
    Request {
        /// The server.
        server: McpServerKey,
        /// What was asked (`listing the skills`, `reading skill://a/SKILL.md of skill a`).
        what: Box<str>,
        /// Why it failed.
        #[source]
        source: RequestError,
    },
    /// The server's entry for the skill breaks a rule of the Skills extension (a name
    /// that is not the URI's, a file outside the skill's folder, a malformed digest, no
    /// `SKILL.md` among the files).
    #[error("server `{server}` describes skill `{skill}` wrongly: {detail}")]
    InvalidEntry {
        /// The server.
        server: McpServerKey,
        /// The skill (its name, or its URI when the name is wrong).
        skill: Box<str>,
        /// Which rule it breaks.
        detail: Box<str>,
    },
    /// The file is not one the skill's entry lists (for a `"dynamic"` skill: not within
    /// the skill's folder); refused before any request.
    #[error(
        "`{file}` is not a file of skill `{skill}` of server `{server}` (only the files its entry lists are read)"
    )]
    NotListed {
        /// The server.
        server: McpServerKey,
        /// The skill's name.
        skill: Box<str>,
        /// The URI asked for.
        file: Box<str>,
    },
    /// The skill lists its files as `"dynamic"` (no digests to verify against), and the
    /// read settings do not allow that
    /// ([`SkillReadSettings::with_dynamic`](crate::SkillReadSettings::with_dynamic)).
    #[error(
        "skill `{skill}` of server `{server}` has dynamic files (no digests to verify them against); allow dynamic skills in the read settings to read them unverified"
    )]
    DynamicRefused {
        /// The server.
        server: McpServerKey,
        /// The skill's name.
        skill: Box<str>,
    },
    /// The skill (or one dynamic file) holds more bytes than the read settings allow.
    #[error(
        "skill `{skill}` of server `{server}` holds {bytes} bytes, more than the limit of {limit} (raise it with `SkillReadSettings::with_max_bytes` if the server is trusted)"
    )]
    TooLarge {
        /// The server.
        server: McpServerKey,
        /// The skill's name.
        skill: Box<str>,
        /// How many bytes (listed, or read for a dynamic file).
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The server's answer to `resources/read` holds no usable content for the file
    /// (none, several, another URI, a blob that is not base64).
    #[error(
        "server `{server}` answered the read of `{file}` of skill `{skill}` with unusable contents: {detail}"
    )]
    Contents {
        /// The server.
        server: McpServerKey,
        /// The skill's name.
        skill: Box<str>,
        /// The file's URI.
        file: Box<str>,
        /// What was wrong.
        detail: Box<str>,
    },
    /// The file has another length than its entry says: not loaded.
    #[error(
        "`{file}` of skill `{skill}` of server `{server}` is {actual} bytes, its entry says {expected}: not loaded"
    )]
    SizeMismatch {
        /// The server.
        server: McpServerKey,
        /// The skill's name.
        skill: Box<str>,
        /// The file's URI.
        file: Box<str>,
        /// The size the entry lists.
        expected: u64,
        /// The size read.
        actual: u64,
    },
    /// The file's digest is not the one its entry lists: not loaded.
    #[error(
        "`{file}` of skill `{skill}` of server `{server}` has digest {actual}, its entry says {expected}: not loaded"
    )]
    DigestMismatch {
        /// The server.
        server: McpServerKey,
        /// The skill's name.
        skill: Box<str>,
        /// The file's URI.
        file: Box<str>,
        /// The digest the entry lists.
        expected: Box<str>,
        /// The digest of the bytes read.
        actual: Box<str>,
    },
    /// The frontmatter of the `SKILL.md` read disagrees with the entry's, or cannot be
    /// read: not loaded.
    #[error(
        "the frontmatter of `{file}` of skill `{skill}` of server `{server}` {detail}: not loaded"
    )]
    FrontmatterMismatch {
        /// The server.
        server: McpServerKey,
        /// The skill's name.
        skill: Box<str>,
        /// The `SKILL.md`'s URI.
        file: Box<str>,
        /// The first field that differs (`None` when the frontmatter cannot be read).
        field: Option<Box<str>>,
        /// What differs, or why it cannot be read.
        detail: Box<str>,
    },
}

impl SkillError {
    /// Whether the server offers no skills, or no directory reads.
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self,
            Self::Unsupported { .. } | Self::DirectoryUnsupported { .. }
        )
    }

    /// Whether a file failed verification against its entry (size, digest, frontmatter,
    /// or contents that cannot be verified): the skill must not be loaded.
    pub fn is_verification_failure(&self) -> bool {
        matches!(
            self,
            Self::SizeMismatch { .. }
                | Self::DigestMismatch { .. }
                | Self::FrontmatterMismatch { .. }
                | Self::Contents { .. }
        )
    }

    /// Whether a file had another size than its entry says.
    pub fn is_size_mismatch(&self) -> bool {
        matches!(self, Self::SizeMismatch { .. })
    }

    /// Whether a file had another digest than its entry says.
    pub fn is_digest_mismatch(&self) -> bool {
        matches!(self, Self::DigestMismatch { .. })
    }

    /// Whether a `SKILL.md`'s frontmatter disagreed with the entry (or could not be read).
    pub fn is_frontmatter_mismatch(&self) -> bool {
        matches!(self, Self::FrontmatterMismatch { .. })
    }

    /// Whether a file the entry does not list was asked for (no request was sent).
    pub fn is_not_listed(&self) -> bool {
        matches!(self, Self::NotListed { .. })
    }

    /// Whether a dynamic skill was refused by the read settings.
    pub fn is_dynamic_refused(&self) -> bool {
        matches!(self, Self::DynamicRefused { .. })
    }

    /// Whether the server's entry breaks a rule of the extension.
    pub fn is_invalid_entry(&self) -> bool {
        matches!(self, Self::InvalidEntry { .. })
    }

    /// The failed request's error, if a request failed.
    pub fn request_error(&self) -> Option<&RequestError> {
        match self {
            Self::Request { source, .. } => Some(source),
            _ => None,
        }
    }

    /// The file concerned, if one is.
    pub fn file(&self) -> Option<&str> {
        match self {
            Self::NotListed { file, .. }
            | Self::Contents { file, .. }
            | Self::SizeMismatch { file, .. }
            | Self::DigestMismatch { file, .. }
            | Self::FrontmatterMismatch { file, .. } => Some(&**file),
            _ => None,
        }
    }
}

//! Why a skill was not loaded into the model's context ([`SkillLoadError`]).

use mcp_client::SkillError;
use mcp_key::McpServerKey;

/// Why [`ConnectionSet::load_skill`](crate::ConnectionSet::load_skill) returned no skill.
/// Nothing was read in any case but [`SkillLoadError::Skill`], and nothing that failed
/// verification is ever returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillLoadError {
    /// No server of the set lists a skill of that qualified name.
    #[error("no skill is named `{name}`{hint}; `ConnectionSet::skills` lists them")]
    UnknownSkill {
        /// The name asked for.
        name: String,
        /// The known names, or that there are none.
        hint: String,
    },
    /// The skill changed since it was pinned and its server's `tool_drift` policy holds
    /// the change until the user accepts it.
    #[error(
        "skill `{name}` of server `{server}` changed since it was pinned ({changes}); accept the change first (`ConnectionSet::accept_skill_changes`, `mcpctl accept {server}`)"
    )]
    Held {
        /// The skill's qualified name.
        name: String,
        /// Its server.
        server: McpServerKey,
        /// What changed, in words.
        changes: String,
    },
    /// The host's authority did not let the skill enter the context.
    #[error("skill `{name}` of server `{server}` was not loaded: {reason}")]
    Refused {
        /// The skill's qualified name.
        name: String,
        /// Its server.
        server: McpServerKey,
        /// Which rule refused it.
        reason: SkillRefusal,
    },
    /// The skill's server is not connected now.
    #[error("skill `{name}` cannot be loaded: server `{server}` is {state}")]
    NotReady {
        /// The skill's qualified name.
        name: String,
        /// Its server.
        server: McpServerKey,
        /// The server's state, in words.
        state: String,
    },
    /// Reading or verifying the skill's files failed (the message names the server, the
    /// skill and the file): nothing of it is returned.
    #[error(transparent)]
    Skill(SkillError),
}

/// Which rule of the host's authority refused a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillRefusal {
    /// The authority's skill loading is [`SkillLoading::Deny`](crate::SkillLoading::Deny).
    #[error("the host denies loading skills")]
    Denied,
    /// The approval policy is [`ApprovalPolicy::Never`](crate::ApprovalPolicy::Never), so
    /// nobody is asked.
    #[error("the host runs without asking anyone (approval policy never)")]
    NobodyToAsk,
    /// Loading asks and the authority has no skill approver.
    #[error(
        "loading a skill asks first and the host has no skill approver (`HostAuthority::with_skill_approver`)"
    )]
    NoApprover,
    /// The approver declined.
    #[error("the approver declined")]
    Declined,
}

impl SkillLoadError {
    /// A file of the skill was read and failed verification (size, digest, frontmatter,
    /// unusable contents): nothing of the skill is returned.
    pub fn is_verification_failure(&self) -> bool {
        matches!(self, Self::Skill(e) if e.is_verification_failure())
    }

    /// The host's authority refused the skill (nothing was read).
    pub fn is_refused(&self) -> bool {
        matches!(self, Self::Refused { .. })
    }

    /// The skill is held back since it changed (nothing was read).
    pub fn is_held(&self) -> bool {
        matches!(self, Self::Held { .. })
    }

    /// The error of reading the skill, when it got that far.
    pub fn skill_error(&self) -> Option<&SkillError> {
        match self {
            Self::Skill(e) => Some(e),
            _ => None,
        }
    }
}

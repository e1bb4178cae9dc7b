//! Whether a skill may enter the model's context: the host authority's rule for loading a
//! skill ([`SkillLoading`]: ask, allow or deny) and who answers when it asks
//! ([`SkillApprover`]).

use std::future::Future;
use std::sync::Arc;

use mcp_key::{Fingerprint, McpServerKey};
use rmcp::model::Skill;

use crate::policy::approver::ApprovalAnswer;
use crate::policy::elicitation::BoxFuture;

/// The host's rule for loading a skill into the model's context
/// ([`ConnectionSet::load_skill`](crate::ConnectionSet::load_skill)); part of the
/// [`HostAuthority`](crate::HostAuthority).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillLoading {
    /// Ask the authority's [`SkillApprover`] before each skill is read (the default); no
    /// approver, or approval policy [`ApprovalPolicy::Never`](crate::ApprovalPolicy::Never),
    /// refuses.
    #[default]
    Ask,
    /// Load without asking (the files are still verified).
    Allow,
    /// Refuse every skill, reading nothing.
    Deny,
}

/// One question to the host's [`SkillApprover`]: may this skill enter the model's
/// context? A yes approves exactly the entry shown (`fingerprint`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SkillApprovalRequest {
    /// The server that serves the skill.
    pub server: McpServerKey,
    /// The skill's qualified name in the set.
    pub qualified_name: String,
    /// The skill's entry as listed (frontmatter, files with digests): what the user is
    /// asked about. No file has been read.
    pub skill: Skill,
    /// The [`skill_fingerprint`](crate::skill_fingerprint) of `skill`: what a yes approves.
    pub fingerprint: Fingerprint,
    /// Set when the skill is held back because it changed since it was pinned (a
    /// re-approval, under `tool_drift = "reapprove"`): what changed. A yes accepts this
    /// entry for later loads too.
    pub drift: Option<crate::policy::drift::skills::SkillDrift>,
}

impl SkillApprovalRequest {
    /// Whether this asks to accept a changed skill.
    pub fn is_reapproval(&self) -> bool {
        self.drift.is_some()
    }
}

/// Who answers "may this skill be loaded?" when the host's [`SkillLoading`] is
/// [`SkillLoading::Ask`]: a person or a policy. Set it with
/// [`HostAuthority::with_skill_approver`](crate::HostAuthority::with_skill_approver).
/// [`ApprovalAnswer::ApproveForSession`] approves the same entry for the rest of the set's
/// life.
pub trait SkillApprover: Send + Sync {
    /// Answers one question. Dropping the returned future must be harmless: nothing is
    /// read.
    fn ask(&self, request: SkillApprovalRequest) -> BoxFuture<'_, ApprovalAnswer>;
}

/// Wraps an async closure as a [`SkillApprover`].
///
/// ```
/// use mcp_connections::{ApprovalAnswer, HostAuthority, skill_approver_fn};
///
/// // Approve the skills of one server only.
/// let approver = skill_approver_fn(|request| async move {
///     if request.server.name().as_str() == "docs" {
///         ApprovalAnswer::Approve
///     } else {
///         ApprovalAnswer::Decline
///     }
/// });
/// let authority = HostAuthority::new().with_skill_approver(approver);
/// # drop(authority);
/// ```
pub fn skill_approver_fn<F, Fut>(f: F) -> Arc<dyn SkillApprover>
where
    F: Fn(SkillApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ApprovalAnswer> + Send + 'static,
{
    Arc::new(FnSkillApprover(f))
}

struct FnSkillApprover<F>(F);

impl<F, Fut> SkillApprover for FnSkillApprover<F>
where
    F: Fn(SkillApprovalRequest) -> Fut + Send + Sync,
    Fut: Future<Output = ApprovalAnswer> + Send + 'static,
{
    fn ask(&self, request: SkillApprovalRequest) -> BoxFuture<'_, ApprovalAnswer> {
        Box::pin((self.0)(request))
    }
}

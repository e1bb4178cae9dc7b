//! The host's authority over what servers may ask of the user ([`HostAuthority`]): one
//! value, replaced as a whole while the set runs ([`ConnectionSet::set_authority`](crate::ConnectionSet::set_authority)), and
//! the rule every elicitation decision applies to one snapshot of it.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, RwLock};

use mcp_catalog::ElicitationPolicy;
use mcp_key::EnvironmentId;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::Value;

use crate::policy::elicitation::{BoxFuture, ElicitationRequest};

/// Whether the host may ask the user at all (the reference design's approval policy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalPolicy {
    /// The host may ask the user (the default).
    #[default]
    Ask,
    /// The host never asks the user (a headless run): elicitations are answered by the
    /// rule for empty forms or the reviewer, and declined otherwise.
    Never,
}

/// What the host lets servers of an environment do (the reference design's sandbox or
/// permission profile). Handed to the [`HostMetadataProvider`](crate::HostMetadataProvider)
/// and used by the elicitation rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum PermissionProfile {
    /// The environment is sandboxed or otherwise restricted (the default).
    #[default]
    Restricted,
    /// The environment runs without restrictions (full access).
    Unrestricted,
}

/// A host hook that sees every elicitation before the handler (before the user is
/// asked) and may answer it.
pub trait ElicitationReviewer: Send + Sync {
    /// `Some(answer)` answers the request; `None` hands it on to the elicitation handler.
    /// Dropping the returned future (the call was cancelled) must be harmless.
    fn review(&self, request: ElicitationRequest) -> BoxFuture<'_, Option<ElicitResult>>;
}

/// An [`ElicitationReviewer`] that answers nothing: every request goes on to the handler.
#[derive(Debug, Default, Clone, Copy)]
pub struct PassToHandler;

impl ElicitationReviewer for PassToHandler {
    fn review(&self, _request: ElicitationRequest) -> BoxFuture<'_, Option<ElicitResult>> {
        Box::pin(std::future::ready(None))
    }
}

/// Wraps an async closure as an [`ElicitationReviewer`].
pub fn reviewer_fn<F, Fut>(f: F) -> Arc<dyn ElicitationReviewer>
where
    F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Option<ElicitResult>> + Send + 'static,
{
    Arc::new(FnReviewer(f))
}

struct FnReviewer<F>(F);

impl<F, Fut> ElicitationReviewer for FnReviewer<F>
where
    F: Fn(ElicitationRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Option<ElicitResult>> + Send + 'static,
{
    fn review(&self, request: ElicitationRequest) -> BoxFuture<'_, Option<ElicitResult>> {
        Box::pin((self.0)(request))
    }
}

/// The host's authority: approval policy, elicitation policy, permission profiles and an
/// optional reviewer, as one value. Give the first one with
/// [`ConnectionSetOptions::with_authority`](crate::ConnectionSetOptions::with_authority)
/// and replace it at any time with [`ConnectionSet::set_authority`](crate::ConnectionSet::set_authority); no server restarts.
/// Each elicitation decision reads one snapshot, so a replacement racing with a request
/// gives the old rule or the new one, never a mix.
///
/// The rule, for a request of a server in environment `E`:
/// 1. approval policy [`ApprovalPolicy::Never`] and `E`'s profile
///    [`PermissionProfile::Unrestricted`]: a form that requests no fields is accepted
///    with `{}`;
/// 2. elicitation policy [`ElicitationPolicy::Decline`] (the host's, or `E`'s in the
///    configuration): declined;
/// 3. the reviewer, if any, may answer;
/// 4. under [`ApprovalPolicy::Never`]: declined (the user is never asked); otherwise the
///    elicitation handler (declined without one).
///
/// Defaults: [`ApprovalPolicy::Ask`], [`ElicitationPolicy::Ask`], every environment
/// [`PermissionProfile::Restricted`], no reviewer.
///
/// [`ConnectionSet::approval`](crate::ConnectionSet::approval) keeps following the configured approval modes: under
/// [`ApprovalPolicy::Never`] the host itself decides what an [`Approval::Ask`](crate::Approval::Ask)
/// means (run it, or refuse the call).
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct HostAuthority {
    /// Whether the host may ask the user.
    pub approval_policy: ApprovalPolicy,
    /// Whether servers may elicit at all (on top of each environment's configured policy).
    pub elicitation_policy: ElicitationPolicy,
    /// The profile of environments not in `profiles`.
    pub default_profile: PermissionProfile,
    /// Per-environment profiles.
    pub profiles: BTreeMap<EnvironmentId, PermissionProfile>,
    /// Sees requests before the handler.
    pub reviewer: Option<Arc<dyn ElicitationReviewer>>,
    /// Sees sampling requests before the sampling handler (see
    /// [`SamplingHandler`](crate::SamplingHandler) for the rule).
    pub sampling_reviewer: Option<Arc<dyn crate::policy::sampling::SamplingReviewer>>,
    /// Whether a skill may be loaded into the model's context (default
    /// [`SkillLoading::Ask`](crate::SkillLoading::Ask)).
    pub skill_loading: crate::policy::skill_loading::SkillLoading,
    /// Who answers when `skill_loading` asks (none: refused).
    pub skill_approver: Option<Arc<dyn crate::policy::skill_loading::SkillApprover>>,
}

impl std::fmt::Debug for HostAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostAuthority")
            .field("approval_policy", &self.approval_policy)
            .field("elicitation_policy", &self.elicitation_policy)
            .field("default_profile", &self.default_profile)
            .field("profiles", &self.profiles)
            .field("reviewer", &self.reviewer.is_some())
            .field("sampling_reviewer", &self.sampling_reviewer.is_some())
            .field("skill_loading", &self.skill_loading)
            .field("skill_approver", &self.skill_approver.is_some())
            .finish()
    }
}

impl HostAuthority {
    /// The defaults (see the type's documentation).
    pub fn new() -> Self {
        Self::default()
    }

    /// The approval policy.
    #[must_use]
    pub fn with_approval_policy(mut self, policy: ApprovalPolicy) -> Self {
        self.approval_policy = policy;
        self
    }

    /// The host's elicitation policy.
    #[must_use]
    pub fn with_elicitation_policy(mut self, policy: ElicitationPolicy) -> Self {
        self.elicitation_policy = policy;
        self
    }

    /// The profile of every environment without one of its own.
    #[must_use]
    pub fn with_default_profile(mut self, profile: PermissionProfile) -> Self {
        self.default_profile = profile;
        self
    }

    /// The profile of environment `id`.
    #[must_use]
    pub fn with_profile(mut self, id: EnvironmentId, profile: PermissionProfile) -> Self {
        self.profiles.insert(id, profile);
        self
    }

    /// The reviewer.
    #[must_use]
    pub fn with_reviewer(mut self, reviewer: Arc<dyn ElicitationReviewer>) -> Self {
        self.reviewer = Some(reviewer);
        self
    }

    /// The sampling reviewer: it sees each sampling request first and may answer or
    /// refuse it.
    #[must_use]
    pub fn with_sampling_reviewer(
        mut self,
        reviewer: Arc<dyn crate::policy::sampling::SamplingReviewer>,
    ) -> Self {
        self.sampling_reviewer = Some(reviewer);
        self
    }

    /// The rule for loading skills into the model's context.
    #[must_use]
    pub fn with_skill_loading(mut self, rule: crate::policy::skill_loading::SkillLoading) -> Self {
        self.skill_loading = rule;
        self
    }

    /// Who answers when loading a skill asks.
    #[must_use]
    pub fn with_skill_approver(
        mut self,
        approver: Arc<dyn crate::policy::skill_loading::SkillApprover>,
    ) -> Self {
        self.skill_approver = Some(approver);
        self
    }

    /// The profile of environment `id`.
    pub fn profile(&self, id: &EnvironmentId) -> PermissionProfile {
        self.profiles
            .get(id)
            .copied()
            .unwrap_or(self.default_profile)
    }

    /// Steps 1, 2 and 4 of the rule: what to answer without the reviewer and handler, if
    /// anything. `None` means: the reviewer, then the handler.
    pub(crate) fn rule(
        &self,
        environment: &EnvironmentId,
        environment_policy: ElicitationPolicy,
        params: &ElicitRequestParams,
    ) -> Rule {
        if self.approval_policy == ApprovalPolicy::Never
            && self.profile(environment) == PermissionProfile::Unrestricted
            && requests_no_fields(params)
        {
            return Rule::Answer(
                ElicitResult::new(ElicitationAction::Accept)
                    .with_content(Value::Object(serde_json::Map::new())),
            );
        }
        if self.elicitation_policy == ElicitationPolicy::Decline
            || environment_policy == ElicitationPolicy::Decline
        {
            return Rule::Answer(ElicitResult::new(ElicitationAction::Decline));
        }
        Rule::Review {
            ask_user: self.approval_policy != ApprovalPolicy::Never,
        }
    }
}

/// What [`HostAuthority::rule`] decided.
#[derive(Debug)]
pub(crate) enum Rule {
    /// This answer, without the reviewer or handler.
    Answer(ElicitResult),
    /// The reviewer first; then the handler when `ask_user`, else a decline.
    Review { ask_user: bool },
}

/// A form-mode request whose schema has no properties.
fn requests_no_fields(params: &ElicitRequestParams) -> bool {
    match params {
        ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } => serde_json::to_value(requested_schema)
            .ok()
            .and_then(|s| s.get("properties").and_then(Value::as_object).cloned())
            .is_none_or(|p| p.is_empty()),
        _ => false,
    }
}

/// The live cell holding a set's current authority, shared with its connections'
/// routes. Readers take one snapshot (an `Arc`) per decision.
#[derive(Clone, Default)]
pub(crate) struct AuthorityCell(Arc<RwLock<Arc<HostAuthority>>>);

impl AuthorityCell {
    pub(crate) fn new(authority: HostAuthority) -> Self {
        Self(Arc::new(RwLock::new(Arc::new(authority))))
    }

    pub(crate) fn load(&self) -> Arc<HostAuthority> {
        match self.0.read() {
            Ok(a) => Arc::clone(&a),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    pub(crate) fn store(&self, authority: HostAuthority) {
        let authority = Arc::new(authority);
        match self.0.write() {
            Ok(mut a) => *a = authority,
            Err(poisoned) => *poisoned.into_inner() = authority,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> ElicitRequestParams {
        serde_json::from_value(json!({"mode": "form", "message": "m", "requestedSchema": schema}))
            .unwrap()
    }

    #[test]
    fn the_rule_of_the_reference_design() {
        let local = EnvironmentId::LOCAL;
        let empty = form(json!({"type": "object", "properties": {}}));
        let fields = form(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
        let headless = HostAuthority::new()
            .with_approval_policy(ApprovalPolicy::Never)
            .with_default_profile(PermissionProfile::Unrestricted);
        let accepted = |r: Rule| matches!(r, Rule::Answer(a) if a.action == ElicitationAction::Accept && a.content == Some(json!({})));
        let declined =
            |r: Rule| matches!(r, Rule::Answer(a) if a.action == ElicitationAction::Decline);
        assert!(accepted(headless.rule(
            &local,
            ElicitationPolicy::Ask,
            &empty
        )));
        assert!(matches!(
            headless.rule(&local, ElicitationPolicy::Ask, &fields),
            Rule::Review { ask_user: false }
        ));
        let restricted = headless
            .clone()
            .with_profile(local.clone(), PermissionProfile::Restricted);
        assert!(matches!(
            restricted.rule(&local, ElicitationPolicy::Ask, &empty),
            Rule::Review { ask_user: false }
        ));
        let forbidding = HostAuthority::new().with_elicitation_policy(ElicitationPolicy::Decline);
        assert!(declined(forbidding.rule(
            &local,
            ElicitationPolicy::Ask,
            &empty
        )));
        assert!(declined(HostAuthority::new().rule(
            &local,
            ElicitationPolicy::Decline,
            &fields
        )));
        assert!(matches!(
            HostAuthority::new().rule(&local, ElicitationPolicy::Ask, &fields),
            Rule::Review { ask_user: true }
        ));
    }
}

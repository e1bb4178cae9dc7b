//! The host's approver: who answers "may this tool run?" when a call's approval mode asks
//! ([`ConnectionSet::call_approved`](crate::ConnectionSet::call_approved)).

use std::future::Future;
use std::sync::Arc;

use mcp_key::{Fingerprint, McpServerKey};
use rmcp::model::Tool;
use serde_json::Value;

use crate::policy::drift::ToolDrift;
use crate::policy::elicitation::BoxFuture;

/// One question to the host's [`Approver`]: may `tool` of `server` run with `arguments`?
/// A yes approves exactly the definition shown here (`fingerprint`): if the server lists
/// another one before the call is sent, the set asks again instead of calling it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The server that offers the tool.
    pub server: McpServerKey,
    /// The tool's qualified (model-visible) name, when the catalog names it.
    pub qualified_name: Option<String>,
    /// The tool's definition as the server lists it now: what the user is asked about.
    pub tool: Tool,
    /// The [`tool_fingerprint`](crate::tool_fingerprint) of `tool`: what a yes approves.
    pub fingerprint: Fingerprint,
    /// The call's arguments, as the caller gave them (before any call hook).
    pub arguments: Option<Value>,
    /// Set when the tool is held back because it changed since it was pinned (a
    /// re-approval): what changed. A yes accepts this new definition for later calls too
    /// ([`ConnectionSet::accept_tool_change_seen`](crate::ConnectionSet::accept_tool_change_seen)).
    pub drift: Option<ToolDrift>,
}

impl ApprovalRequest {
    /// A question about `tool` (its definition) of `server` with `arguments`: its
    /// fingerprint computed, no qualified name, not a re-approval. The set builds its own;
    /// this is for an approver's tests.
    pub fn new(server: McpServerKey, tool: Tool, arguments: Option<Value>) -> Self {
        Self {
            server,
            qualified_name: None,
            fingerprint: crate::policy::drift::tool_fingerprint(&tool),
            tool,
            arguments,
            drift: None,
        }
    }

    /// The tool's raw name.
    pub fn tool_name(&self) -> &str {
        &self.tool.name
    }

    /// Whether this asks to accept a changed definition of a held-back tool.
    pub fn is_reapproval(&self) -> bool {
        self.drift.is_some()
    }
}

/// The host's answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalAnswer {
    /// Run it, this once.
    Approve,
    /// Run it, and do not ask again about this tool of this server while its definition
    /// stays the one shown, for the rest of the set's life
    /// ([`ConnectionSet::remember_approval`](crate::ConnectionSet::remember_approval)).
    ApproveForSession,
    /// Do not run it: the call ends with [`Error::NotApproved`](crate::Error::NotApproved).
    Decline,
}

impl ApprovalAnswer {
    /// Whether the answer lets the call run.
    pub fn approves(self) -> bool {
        matches!(self, Self::Approve | Self::ApproveForSession)
    }
}

/// Who answers approval questions: a person (a dialog, a terminal prompt) or a policy.
/// Set it with
/// [`ConnectionSetOptions::with_approver`](crate::ConnectionSetOptions::with_approver);
/// without one, a call whose approval mode asks is refused.
pub trait Approver: Send + Sync {
    /// Answers one question. Dropping the returned future (the call was cancelled) must be
    /// harmless: nothing is called.
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalAnswer>;
}

/// An [`Approver`] that declines every question: what the set does without one.
#[derive(Debug, Default, Clone, Copy)]
pub struct DeclineApprovals;

impl Approver for DeclineApprovals {
    fn ask(&self, _request: ApprovalRequest) -> BoxFuture<'_, ApprovalAnswer> {
        Box::pin(std::future::ready(ApprovalAnswer::Decline))
    }
}

/// Wraps an async closure as an [`Approver`].
///
/// ```
/// use mcp_connections::{ApprovalAnswer, ConnectionSetOptions, approver_fn};
///
/// // Approve read-only tools, decline the rest (a headless host's policy).
/// let approver = approver_fn(|request| async move {
///     let read_only = request
///         .tool
///         .annotations
///         .as_ref()
///         .and_then(|a| a.read_only_hint)
///         .unwrap_or(false);
///     if read_only { ApprovalAnswer::Approve } else { ApprovalAnswer::Decline }
/// });
/// let options = ConnectionSetOptions::new().with_approver(approver);
/// # drop(options);
/// ```
pub fn approver_fn<F, Fut>(f: F) -> Arc<dyn Approver>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ApprovalAnswer> + Send + 'static,
{
    Arc::new(FnApprover(f))
}

struct FnApprover<F>(F);

impl<F, Fut> Approver for FnApprover<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync,
    Fut: Future<Output = ApprovalAnswer> + Send + 'static,
{
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalAnswer> {
        Box::pin((self.0)(request))
    }
}

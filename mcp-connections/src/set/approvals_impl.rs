//! Approvals of a set: whether to ask the user before a call, what was approved, and
//! calls that enforce it ([`ConnectionSet::call_tool_approved`]).

use std::sync::{Arc, PoisonError};

use mcp_key::{Fingerprint, McpServerKey};
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

use crate::error::{Error, NotApprovedReason, Result};
use crate::policy::approvals::{Approval, must_ask};
use crate::policy::approver::{ApprovalAnswer, ApprovalRequest};
use crate::policy::drift::tool_fingerprint;
use crate::set::ConnectionSet;
use crate::set::call::CallOptions;
use crate::set::slot::SlotState;

/// How many times one [`ConnectionSet::call_tool_approved`] looks at the tool (and asks,
/// when its mode asks) at most: a server that lists another definition after each answer
/// is refused after this many.
pub(crate) const MAX_QUESTIONS: usize = 3;

/// What one look at the tool decided.
enum Decision {
    /// Call it if the server still lists this definition.
    Call(Fingerprint),
    /// The definition changed while the approver was asked: look again.
    LookAgain,
}

impl ConnectionSet {
    /// Whether the host must ask the user before calling `tool` on `server`, following the
    /// configured approval mode (the server's, per tool, with the owning environment's
    /// default for environment-scoped servers) and the tool's annotations, unless the user
    /// already approved it for this session. Approvals are per server key: approving a
    /// tool of `github@devbox` does not approve it on `github@local`.
    ///
    /// This only says: [`Self::call_tool`] and [`Self::call_qualified`] call whatever the
    /// answer. [`Self::call_approved`] asks the host's approver and enforces the answer.
    pub fn approval(&self, server: &McpServerKey, tool: &str) -> Result<Approval> {
        let slot = self.inner.slot(server)?;
        let listed = match slot.current() {
            SlotState::Ready(live) => live.tools().iter().find(|t| t.name == tool).cloned(),
            _ => None,
        };
        Ok(self.approval_of(server, tool, listed.as_ref()))
    }

    /// The approval of `tool` of `server` whose definition is `listed` (`None`: unknown).
    fn approval_of(&self, server: &McpServerKey, tool: &str, listed: Option<&Tool>) -> Approval {
        if self.is_remembered(server, tool, listed.map(tool_fingerprint)) {
            return Approval::Remembered;
        }
        let mode = self
            .inner
            .catalog
            .approval_mode(server, tool)
            .unwrap_or_default();
        if must_ask(mode, listed.and_then(|t| t.annotations.as_ref())) {
            Approval::Ask
        } else {
            Approval::NotNeeded
        }
    }

    /// Remembers the user's approval of `tool` on `server` for the rest of this set's life,
    /// bound to the tool's definition as listed now: if the server changes the tool (its
    /// description, schemas, annotations: [`crate::tool_fingerprint`]), the user is asked
    /// again.
    pub fn remember_approval(&self, server: &McpServerKey, tool: &str) -> Result<()> {
        self.inner.slot(server)?;
        let definition = self.definition_fingerprint(server, tool);
        self.remember(server, tool, definition);
        Ok(())
    }

    fn remember(&self, server: &McpServerKey, tool: &str, definition: Option<Fingerprint>) {
        self.inner
            .approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((server.clone(), tool.to_owned()), definition);
    }

    /// The fingerprint of `tool` as `server` lists it now, if it is ready and lists it.
    fn definition_fingerprint(&self, server: &McpServerKey, tool: &str) -> Option<Fingerprint> {
        let slot = self.inner.slot(server).ok()?;
        match slot.current() {
            SlotState::Ready(live) => live
                .tools()
                .iter()
                .find(|t| t.name == tool)
                .map(tool_fingerprint),
            _ => None,
        }
    }

    /// Whether the user approved `tool` of `server` for the session, for the definition
    /// whose fingerprint is `now`.
    fn is_remembered(&self, server: &McpServerKey, tool: &str, now: Option<Fingerprint>) -> bool {
        let remembered = self
            .inner
            .approvals
            .lock()
            .ok()
            .and_then(|s| s.get(&(server.clone(), tool.to_owned())).copied());
        match remembered {
            None => false,
            // Approved before the definition was known: still this session's yes.
            Some(None) => true,
            Some(Some(approved)) => now == Some(approved),
        }
    }

    /// Calls `tool` (its raw name) on `server` as [`Self::call_tool`] does, enforcing its
    /// approval: see [`Self::call_approved`], which this is for a tool known by its server
    /// and raw name.
    ///
    /// # Errors
    /// As [`Self::call_approved`].
    ///
    /// # Cancel safety
    /// As [`Self::call_approved`].
    pub async fn call_tool_approved(
        &self,
        server: &McpServerKey,
        tool: &str,
        arguments: Option<Value>,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let slot = Arc::clone(self.inner.slot(server)?);
        if !slot.spec.config.tool_filter().allows(tool) {
            return Err(Error::ToolFiltered {
                server: server.clone(),
                tool: tool.to_owned(),
            });
        }
        let timeout = options.timeout_within(slot.spec.config.tool_timeout());
        for _ in 0..MAX_QUESTIONS {
            // The question is about the definition the server lists: bring it up first (a
            // crashed server is restarted, a deferred one started).
            self.ready_connection(&slot, mcp_pool::deadline_in(timeout), options.fail_fast)
                .await?;
            let approved = match self.decide(server, tool, arguments.as_ref()).await? {
                Decision::Call(approved) => approved,
                Decision::LookAgain => continue,
            };
            match self
                .call_if_listed_as(server, tool, arguments.clone(), options.clone(), &approved)
                .await
            {
                Ok(Some(result)) => return Ok(result),
                // Another definition by now (nothing was sent): look at it again.
                Ok(None) => {}
                // Held back since the answer: a re-approval, if its policy allows one.
                Err(e)
                    if e.is_tool_changed()
                        && self.tool_drift_policy(server)
                            == mcp_catalog::ToolDriftPolicy::Reapprove => {}
                Err(e) => return Err(e),
            }
        }
        Err(Error::NotApproved {
            server: server.clone(),
            tool: tool.to_owned(),
            reason: NotApprovedReason::KeptChanging {
                answers: MAX_QUESTIONS,
            },
        })
    }

    /// Looks at `tool` of `server` as it lists it now and decides, asking the approver
    /// when the tool is held back by its pins or its approval mode asks.
    async fn decide(
        &self,
        server: &McpServerKey,
        tool: &str,
        arguments: Option<&Value>,
    ) -> Result<Decision> {
        let shown = self.definition(server, tool)?;
        let held = self.tool_drift(server).into_iter().find(|d| d.tool == tool);
        if let Some(drift) = held {
            let changed = || Error::ToolChanged {
                server: server.clone(),
                tool: tool.to_owned(),
                changes: drift.describe(),
            };
            if self.tool_drift_policy(server) != mcp_catalog::ToolDriftPolicy::Reapprove {
                return Err(changed());
            }
            // Removed: nothing is listed to approve or to call.
            let Some(shown) = shown else {
                return Err(changed());
            };
            let fingerprint = tool_fingerprint(&shown);
            let answer = self
                .ask(server, shown, fingerprint, arguments, Some(drift.clone()))
                .await?;
            // A yes accepts exactly what was shown; a server that changed the tool again
            // meanwhile is asked about again.
            if !self.accept_tool_change_seen(server, tool, Some(&fingerprint))? {
                return Ok(Decision::LookAgain);
            }
            if answer == ApprovalAnswer::ApproveForSession {
                self.remember(server, tool, Some(fingerprint));
            }
            return Ok(Decision::Call(fingerprint));
        }
        // Never an unseen definition: a tool the server does not list is not called.
        let Some(shown) = shown else {
            return Err(Error::UnknownTool {
                name: self
                    .qualified_name(server, tool)
                    .unwrap_or_else(|| tool.to_owned()),
            });
        };
        let fingerprint = tool_fingerprint(&shown);
        if !self.approval_of(server, tool, Some(&shown)).must_ask() {
            return Ok(Decision::Call(fingerprint));
        }
        let answer = self
            .ask(server, shown, fingerprint, arguments, None)
            .await?;
        if answer == ApprovalAnswer::ApproveForSession {
            self.remember(server, tool, Some(fingerprint));
        }
        Ok(Decision::Call(fingerprint))
    }

    /// Asks the approver; an error unless it approves (or when there is none).
    async fn ask(
        &self,
        server: &McpServerKey,
        shown: Tool,
        fingerprint: Fingerprint,
        arguments: Option<&Value>,
        drift: Option<crate::policy::drift::ToolDrift>,
    ) -> Result<ApprovalAnswer> {
        let tool = shown.name.to_string();
        let refused = |reason| Error::NotApproved {
            server: server.clone(),
            tool: tool.clone(),
            reason,
        };
        let Some(approver) = self.inner.options.approver.clone() else {
            return Err(refused(NotApprovedReason::NoApprover));
        };
        let request = ApprovalRequest {
            server: server.clone(),
            qualified_name: self.qualified_name(server, &tool),
            tool: shown,
            fingerprint,
            arguments: arguments.cloned(),
            drift,
        };
        let answer = approver.ask(request).await;
        if answer.approves() {
            Ok(answer)
        } else {
            Err(refused(NotApprovedReason::Declined))
        }
    }

    /// `tool` as the ready `server` lists it now (held back or not); an error when the
    /// server is not ready.
    fn definition(&self, server: &McpServerKey, tool: &str) -> Result<Option<Tool>> {
        let slot = self.inner.slot(server)?;
        match slot.current() {
            SlotState::Ready(live) => Ok(live.tools().iter().find(|t| t.name == tool).cloned()),
            state => Err(Error::not_ready(server, state.to_server_state())),
        }
    }

    /// The qualified name of `tool` of `server` in the current catalog.
    fn qualified_name(&self, server: &McpServerKey, tool: &str) -> Option<String> {
        self.catalog()
            .names
            .qualified_name(server, tool)
            .map(ToOwned::to_owned)
    }
}

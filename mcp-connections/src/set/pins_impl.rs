//! Tool pins of a set: what changed in a pinned tool, and accepting changes.

use crate::policy::drift::ToolChange;
use crate::policy::drift::ToolDrift;
use crate::policy::pins::{PinCheck, ToolPins, describe, holds, pin_subject, pin_target};
use mcp_key::McpServerKey;
use rmcp::model::Tool;
use std::sync::PoisonError;

impl crate::set::ConnectionSet {
    /// The changes held back for `server` (tools whose change since their pins its
    /// `tool_drift` policy holds), as of the current catalog; empty without pins or drift.
    pub fn tool_drift(&self, server: &McpServerKey) -> Vec<ToolDrift> {
        let _ = self.catalog();
        self.inner
            .drift
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(server)
            .map(|d| d.held.clone())
            .unwrap_or_default()
    }

    /// The changes of `server`'s tools that were only notices (its `tool_drift` policy
    /// did not hold them) and were re-pinned as the server lists them, in this set's life,
    /// the latest per tool, sorted by tool: for a host to show, since nothing else does.
    pub fn tool_notices(&self, server: &McpServerKey) -> Vec<ToolDrift> {
        let _ = self.catalog();
        self.inner
            .drift
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(server)
            .map(|d| d.notices.clone())
            .unwrap_or_default()
    }

    /// `server`'s `tool_drift` policy ([`ToolDriftPolicy::Reapprove`] for a key the set
    /// does not know): whether a host may offer to accept its held-back tools in the middle
    /// of a call (`Reapprove`) or only out of band (`Block`).
    ///
    /// [`ToolDriftPolicy::Reapprove`]: mcp_catalog::ToolDriftPolicy::Reapprove
    pub fn tool_drift_policy(&self, server: &McpServerKey) -> mcp_catalog::ToolDriftPolicy {
        self.inner
            .slot(server)
            .map_or(mcp_catalog::ToolDriftPolicy::Reapprove, |s| {
                self.inner.catalog.tool_drift(&s.spec.key)
            })
    }

    /// The pinned definition of `tool` on `server` (what was approved), if pins are on and
    /// it has one.
    pub fn pinned_tool(&self, server: &McpServerKey, tool: &str) -> Option<Tool> {
        let pins = self.inner.options.tool_pins.as_ref()?;
        let slot = self.inner.slot(server).ok()?;
        pins.pinned(server, &pin_target(&self.inner.catalog, &slot.spec), tool)
    }

    /// `tool` as `server` lists it now (live, or its cached listing while deferred), held
    /// back or not.
    pub fn listed_tool(&self, server: &McpServerKey, tool: &str) -> Option<Tool> {
        let slot = self.inner.slot(server).ok()?;
        match slot.current() {
            crate::set::slot::SlotState::Ready(live) => {
                live.tools().iter().find(|t| t.name == tool).cloned()
            }
            crate::set::slot::SlotState::Deferred(cached) => {
                cached.tools.iter().find(|t| t.name == tool).cloned()
            }
            _ => None,
        }
    }

    /// What held `tool` of `server` back, readable, if it is held back.
    pub(crate) fn held_changes(&self, server: &McpServerKey, tool: &str) -> Option<String> {
        let drift = self
            .inner
            .drift
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        drift
            .get(server)?
            .held
            .iter()
            .find(|d| d.tool == tool)
            .map(describe)
    }

    /// Accepts the held-back changes of `server`'s tools (all, or only `tool`): they are
    /// pinned as the server lists them now (a removed tool is unpinned) and come back into
    /// the catalog. Accepting a tool held because the server runs another version
    /// ([`ToolChange::VersionChanged`](crate::ToolChange::VersionChanged)) accepts that
    /// version for the whole server: its other tools stay held only for changes of their
    /// own. Returns how many tools were accepted. What is pinned is whatever the
    /// server lists at this moment: a host that showed the user a definition accepts with
    /// [`ConnectionSet::accept_tool_change_seen`](crate::ConnectionSet::accept_tool_change_seen)
    /// instead.
    ///
    /// Errors: [`Error::UnknownServer`](crate::Error::UnknownServer).
    pub fn accept_tool_changes(
        &self,
        server: &McpServerKey,
        tool: Option<&str>,
    ) -> crate::error::Result<usize> {
        self.accept_held(server, |d, _| tool.is_none_or(|t| t == d.tool))
    }

    /// Accepts the held-back change of `tool` of `server` only if the server lists it now
    /// exactly as the user saw it: `seen` is the [`tool_fingerprint`] of the definition
    /// shown (`None`: the user saw it removed). Returns `Ok(false)`, pinning nothing,
    /// when the listing differs (it changed again while the user decided: show the new
    /// definition and ask again) or nothing of `tool` is held back.
    ///
    /// Errors: [`Error::UnknownServer`](crate::Error::UnknownServer).
    ///
    /// [`tool_fingerprint`]: crate::tool_fingerprint
    pub fn accept_tool_change_seen(
        &self,
        server: &McpServerKey,
        tool: &str,
        seen: Option<&mcp_key::Fingerprint>,
    ) -> crate::error::Result<bool> {
        let accepted = self.accept_held(server, |d, now| {
            d.tool == tool && now.map(crate::policy::drift::tool_fingerprint).as_ref() == seen
        })?;
        Ok(accepted > 0)
    }

    /// Pins the held-back tools of `server` that `accept` takes (given each one's drift
    /// and its definition as listed now, which is what is pinned).
    fn accept_held(
        &self,
        server: &McpServerKey,
        accept: impl Fn(&ToolDrift, Option<&Tool>) -> bool,
    ) -> crate::error::Result<usize> {
        let slot = std::sync::Arc::clone(self.inner.slot(server)?);
        let Some(pins) = &self.inner.options.tool_pins else {
            return Ok(0);
        };
        let listed: Vec<Tool> = match slot.current() {
            crate::set::slot::SlotState::Ready(live) => live.tools().as_ref().clone(),
            crate::set::slot::SlotState::Deferred(cached) => cached.tools.clone(),
            _ => Vec::new(),
        };
        let target = pin_target(&self.inner.catalog, &slot.spec);
        let held = self.tool_drift(server);
        let mut accepted = 0;
        for d in &held {
            let now = listed.iter().find(|t| t.name == d.tool);
            if !accept(d, now) {
                continue;
            }
            if let Some(crate::policy::drift::ToolChange::Renamed { from }) = d.changes.first() {
                pins.accept_tool(server, &target, from, None);
            }
            pins.accept_tool(server, &target, &d.tool, now);
            if let Some(version) = version_change(d) {
                pins.accept_version(server, &target, version);
            }
            accepted += 1;
        }
        if accepted > 0 {
            if let Err(e) = pins.persist() {
                tracing::warn!(server = %server, "tool pins not saved: {e}");
            }
            // A new revision: the next catalog checks the pins again.
            self.inner
                .revision
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(accepted)
    }
}

/// Holds back from `tools` (a server's listing, as the catalog would show it) the tools
/// whose change since their pins the server's `tool_drift` policy holds (by default: the
/// changes that add risk), re-pins the others' changes, records the
/// held drift in the set and tells the host when it changed. Returns the tools kept and
/// the tools held back.
pub(crate) fn enforce(
    inner: &crate::set::inner::SetInner,
    pins: &ToolPins,
    slot: &crate::set::slot::Slot,
    tools: Vec<Tool>,
) -> (Vec<Tool>, Vec<Tool>) {
    let key = &slot.spec.key;
    let subject = pin_subject(&inner.catalog, &slot.spec);
    let target = subject.target;
    let mut drift = match pins.check(key, &target, &tools) {
        PinCheck::Drifted(drift) => drift,
        PinCheck::FirstSeen { .. } => {
            if let Err(e) = pins.persist() {
                tracing::warn!(server = %key, "tool pins not saved: {e}");
            }
            Vec::new()
        }
        _ => Vec::new(),
    };
    let version = subject
        .version
        .and_then(|v| v.change(pins.accepted_version(key, &target)));
    if let Some((from, to)) = &version {
        add_version_change(&mut drift, &tools, from, to);
    }
    let policy = inner.catalog.tool_drift(key);
    let (held, notices): (Vec<ToolDrift>, Vec<ToolDrift>) =
        drift.into_iter().partition(|d| holds(policy, d));
    // Another version with nothing held (its policy only notices, or it lists no tool):
    // accepted as it is.
    if let Some((_, to)) = &version
        && !held.iter().any(|d| version_change(d).is_some())
    {
        pins.accept_version(key, &target, to);
        if notices.is_empty()
            && let Err(e) = pins.persist()
        {
            tracing::warn!(server = %key, "tool pins not saved: {e}");
        }
    }
    let repinned: Vec<String> = notices.iter().map(|d| d.tool.clone()).collect();
    for notice in &notices {
        let now = tools.iter().find(|t| t.name == notice.tool);
        pins.accept_tool(key, &target, &notice.tool, now);
    }
    if !notices.is_empty()
        && let Err(e) = pins.persist()
    {
        tracing::warn!(server = %key, "tool pins not saved: {e}");
    }
    let held_names: Vec<String> = held.iter().map(|d| d.tool.clone()).collect();
    let changed = {
        let mut recorded = inner.drift.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = recorded.entry(key.clone()).or_default();
        let changed = entry.held != held;
        entry.held.clone_from(&held);
        for notice in &notices {
            entry.notices.retain(|n| n.tool != notice.tool);
            entry.notices.push(notice.clone());
        }
        entry.notices.sort_by(|a, b| a.tool.cmp(&b.tool));
        changed
    };
    if changed || !repinned.is_empty() {
        for d in &held {
            tracing::warn!(server = %key, tool = %d.tool, changes = ?d.changes, "a tool changed since it was pinned; held back until accepted");
        }
        inner.emit(crate::events::ConnectionEvent::ToolsDrifted {
            server: key.clone(),
            held: held_names.clone(),
            repinned,
        });
    }
    tools
        .into_iter()
        .partition(|t| !held_names.iter().any(|h| *h == t.name))
}

/// Adds to `drift` the change of version `from` -> `to` for every tool `tools` lists (after
/// the tool's own changes, so a rename stays first), sorted by tool as before.
fn add_version_change(drift: &mut Vec<ToolDrift>, tools: &[Tool], from: &str, to: &str) {
    let change = ToolChange::VersionChanged {
        from: from.to_owned(),
        to: to.to_owned(),
    };
    for tool in tools {
        match drift.iter_mut().find(|d| d.tool == *tool.name) {
            Some(d) => d.changes.push(change.clone()),
            None => drift.push(ToolDrift {
                tool: tool.name.to_string(),
                changes: vec![change.clone()],
            }),
        }
    }
    drift.sort_by(|a, b| a.tool.cmp(&b.tool));
}

/// The version a tool's drift says the server runs now, if it says one.
fn version_change(drift: &ToolDrift) -> Option<&str> {
    drift.changes.iter().find_map(|c| match c {
        ToolChange::VersionChanged { to, .. } => Some(to.as_str()),
        _ => None,
    })
}

//! The skills of a set: every connected server's skills in one catalog
//! ([`ConnectionSet::skills`]), each server's listing kept until its connection changes or
//! it announces a resource list change; skill pins (the whole entry, beside the tool pins,
//! under the same `tool_drift` policy); and loading a skill through the host's authority.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, PoisonError};

use mcp_client::{LoadedSkill, SkillReadSettings};
use mcp_key::McpServerKey;
use rmcp::model::Skill;

use crate::catalog::skills::SkillInfo;
use crate::policy::approver::ApprovalAnswer;
use crate::policy::authority::ApprovalPolicy;
use crate::policy::drift::skills::{SkillDrift, skill_fingerprint};
use crate::policy::pins::{SkillPinCheck, ToolPins, holds_risk, pin_target};
use crate::policy::skill_loading::{SkillApprovalRequest, SkillLoading};
use crate::set::ConnectionSet;
use crate::set::inner::SetInner;
use crate::set::live::Live;
use crate::set::skill_state::{Drifted, Listed};
use crate::set::slot::{Slot, SlotState};
use crate::skill_error::{SkillLoadError, SkillRefusal};

/// `live`'s skills: this set's last listing of the same connection unless the server
/// announced a resource list change since; otherwise listed now (`skills/list`, every
/// page; no file is read). A server without the extension has none.
async fn listed(
    inner: &SetInner,
    slot: &Slot,
    live: &Arc<Live>,
) -> Result<Arc<Vec<Skill>>, mcp_client::SkillError> {
    let cell = inner.skills.cell(&slot.spec.key);
    let mut last = cell.lock().await;
    let changes = *live.resource_list_changes().borrow();
    if let Some(l) = last.as_ref()
        && l.changes == changes
        && l.live.upgrade().is_some_and(|was| Arc::ptr_eq(&was, live))
    {
        return Ok(Arc::clone(&l.skills));
    }
    let skills = match live.list_skills(mcp_client::DEFAULT_LIST_BYTE_BUDGET).await {
        Ok(listing) => {
            remember(inner, slot, &listing);
            listing.skills
        }
        Err(e) if e.is_unsupported() => Vec::new(),
        Err(e) => return Err(e),
    };
    let skills = Arc::new(skills);
    *last = Some(Listed {
        live: Arc::downgrade(live),
        changes,
        skills: Arc::clone(&skills),
    });
    Ok(skills)
}

/// Keeps a skill listing in the tool cache beside the server's cached tools (for when it
/// starts deferred), under the tools' rules: not when the host gave no cache or the server
/// opted out, not a listing private to a login the connection fingerprint does not name,
/// not one the server gave no time to live.
fn remember(inner: &SetInner, slot: &Slot, listing: &mcp_client::SkillListing) {
    let Some(cache) = inner
        .options
        .tool_cache
        .as_ref()
        .filter(|_| inner.catalog.tool_cache_enabled(&slot.spec.key))
    else {
        return;
    };
    let private = listing.private && !inner.authorization_in_key(&slot.spec);
    if private || listing.ttl.is_some_and(|ttl| ttl.is_zero()) {
        return;
    }
    cache.remember_skills(
        &slot.spec.key,
        &slot.pool_key.fingerprint,
        listing.skills.clone(),
    );
    inner.persist_cache();
}

/// Checks `skills` (the listing of `slot`'s server) against their pins, re-pins the
/// changes its `tool_drift` policy lets through as notices, records the rest as held and
/// returns the URIs of the skills held back.
fn enforce(
    inner: &SetInner,
    pins: &ToolPins,
    slot: &Slot,
    skills: &Arc<Vec<Skill>>,
) -> BTreeSet<String> {
    let key = &slot.spec.key;
    let target = pin_target(&inner.catalog, &slot.spec);
    let drift = match pins.check_skills(key, &target, skills) {
        SkillPinCheck::Drifted(drift) => drift,
        SkillPinCheck::FirstSeen { .. } => {
            if let Err(e) = pins.persist() {
                tracing::warn!(server = %key, "skill pins not saved: {e}");
            }
            Vec::new()
        }
        _ => Vec::new(),
    };
    let policy = inner.catalog.tool_drift(key);
    let (held, notices): (Vec<SkillDrift>, Vec<SkillDrift>) = drift
        .into_iter()
        .partition(|d| holds_risk(policy, d.adds_risk()));
    for notice in &notices {
        let now = skills.iter().find(|s| s.uri == notice.uri);
        pins.accept_skill(key, &target, &notice.uri, now);
    }
    if !notices.is_empty()
        && let Err(e) = pins.persist()
    {
        tracing::warn!(server = %key, "skill pins not saved: {e}");
    }
    let mut recorded = inner
        .skills
        .drift
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let entry = recorded.entry(key.clone()).or_default();
    if entry.held != held {
        for d in &held {
            tracing::warn!(server = %key, skill = %d.skill, changes = %d.describe(), "a skill changed since it was pinned; held back until accepted");
        }
    }
    entry.held.clone_from(&held);
    entry.listed = Arc::clone(skills);
    for notice in notices {
        entry.notices.retain(|n| n.uri != notice.uri);
        entry.notices.push(notice);
    }
    entry.notices.sort_by(|a, b| a.uri.cmp(&b.uri));
    held.into_iter().map(|d| d.uri).collect()
}

impl ConnectionSet {
    /// Every server's skills (the Skills extension) in one list sorted by qualified name
    /// (`mcp__server__skill`, named like tools). Listing reads no file: it asks each
    /// connected server for its entries (`skills/list`), and a server's listing is reused
    /// until its connection changes or it announces a resource list change. A deferred
    /// server is not started for its skills: it lists those kept in the tool cache with
    /// its tools (when a set listed them while the tools were cached), or none. A server
    /// that is neither connected nor deferred lists none. With tool pins, each entry is pinned on first sight beside the server's
    /// tools; a skill whose change since is held by the server's `tool_drift` policy is
    /// listed with [`SkillInfo::held`] (what changed: [`Self::skill_drift`]). A server
    /// whose listing fails lists none (logged). Servers still starting get the set's
    /// grace period, as for [`Self::tools`]. The skills listed (those not held) are what
    /// [`Self::find_tools_and_skills`] searches until the next listing.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future abandons the listings in flight.
    pub async fn skills(&self) -> Vec<SkillInfo> {
        self.settle_within_grace().await;
        let listings = self.inner.slots.iter().map(|(key, slot)| async move {
            let attached = match slot.current() {
                SlotState::Ready(attached) => attached,
                // Not started: the skills cached with its tools, if any.
                SlotState::Deferred(cached) => {
                    let skills = cached.skills.clone()?;
                    return Some((key, slot, Arc::new(skills)));
                }
                _ => return None,
            };
            match listed(&self.inner, slot, attached.live()).await {
                Ok(skills) => Some((key, slot, skills)),
                Err(e) => {
                    tracing::warn!(server = %key, "skills not listed: {e}");
                    None
                }
            }
        });
        let mut per_server = BTreeMap::new();
        for (key, slot, skills) in futures::future::join_all(listings)
            .await
            .into_iter()
            .flatten()
        {
            let held = match &self.inner.options.tool_pins {
                Some(pins) => enforce(&self.inner, pins, slot, &skills),
                None => BTreeSet::new(),
            };
            let entries = skills
                .iter()
                .map(|s| (s.clone(), held.contains(&s.uri)))
                .collect();
            per_server.insert(key.clone(), entries);
        }
        let all = crate::catalog::skills::catalog(&self.inner.naming, per_server);
        // Search (`find_tools_and_skills`) ranks the skills last listed.
        self.inner
            .search
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .set_skills(&all);
        all
    }

    /// The skill changes held back for `server` (skills whose change since their pins its
    /// `tool_drift` policy holds), as of the last [`Self::skills`]; empty without pins.
    pub fn skill_drift(&self, server: &McpServerKey) -> Vec<SkillDrift> {
        self.drifted(server).held
    }

    /// The skill changes of `server` that were only notices and were re-pinned, in this
    /// set's life, the latest per skill, sorted by URI.
    pub fn skill_notices(&self, server: &McpServerKey) -> Vec<SkillDrift> {
        self.drifted(server).notices
    }

    fn drifted(&self, server: &McpServerKey) -> Drifted {
        self.inner
            .skills
            .drift
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(server)
            .cloned()
            .unwrap_or_default()
    }

    /// Accepts the held-back skill changes of `server` (all, or only the skill named
    /// `skill`, by its own name or its `SKILL.md` URI): each is pinned as the listing the
    /// drift was shown from has it (a removed skill is unpinned), so the next
    /// [`Self::skills`] lists it as usable. Returns how many skills were accepted.
    ///
    /// # Errors
    /// [`Error::UnknownServer`](crate::Error::UnknownServer).
    pub fn accept_skill_changes(
        &self,
        server: &McpServerKey,
        skill: Option<&str>,
    ) -> crate::error::Result<usize> {
        let slot = self.inner.slot(server)?;
        let Some(pins) = &self.inner.options.tool_pins else {
            return Ok(0);
        };
        let target = pin_target(&self.inner.catalog, &slot.spec);
        let drifted = self.drifted(server);
        let mut accepted = 0;
        for d in &drifted.held {
            if skill.is_some_and(|s| s != d.skill && s != d.uri) {
                continue;
            }
            let now = drifted.listed.iter().find(|s| s.uri == d.uri);
            pins.accept_skill(server, &target, &d.uri, now);
            accepted += 1;
        }
        if accepted > 0 {
            if let Err(e) = pins.persist() {
                tracing::warn!(server = %server, "skill pins not saved: {e}");
            }
            let mut recorded = self
                .inner
                .skills
                .drift
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(entry) = recorded.get_mut(server) {
                entry
                    .held
                    .retain(|d| skill.is_some_and(|s| s != d.skill && s != d.uri));
            }
        }
        Ok(accepted)
    }

    /// Accepts the held-back change of the skill whose `SKILL.md` is at `uri` on `server`
    /// only if the server's listing has exactly the entry the user saw (`seen`, its
    /// [`skill_fingerprint`](crate::skill_fingerprint)). Returns `Ok(false)`, pinning
    /// nothing, when it differs (show the new entry and ask again) or nothing of it is
    /// held back.
    ///
    /// # Errors
    /// [`Error::UnknownServer`](crate::Error::UnknownServer).
    pub fn accept_skill_change_seen(
        &self,
        server: &McpServerKey,
        uri: &str,
        seen: &mcp_key::Fingerprint,
    ) -> crate::error::Result<bool> {
        self.inner.slot(server)?;
        let drifted = self.drifted(server);
        let now = drifted.listed.iter().find(|s| s.uri == uri);
        let held = drifted.held.iter().any(|d| d.uri == uri);
        if !held || now.map(skill_fingerprint).as_ref() != Some(seen) {
            return Ok(false);
        }
        Ok(self.accept_skill_changes(server, Some(uri))? > 0)
    }

    /// Loads the skill `qualified` (a name from [`Self::skills`]) into the host's hands.
    /// Refused, reading nothing, when the host's authority does not let it in
    /// ([`SkillLoading`]: `Deny`; `Ask` with no approver, under approval policy `Never`,
    /// or declined), and while it is held back since it changed: under `tool_drift =
    /// "reapprove"` the authority's skill approver is asked, shown the change
    /// ([`SkillApprovalRequest::drift`]), and a yes accepts the entry shown and loads it
    /// (whatever [`SkillLoading`] says but `Deny`); under `block`, or with nobody to ask,
    /// it stays held until [`Self::accept_skill_changes`]. A deferred server (its skills
    /// listed from the cache) is started first, and the entry it lists then is the one
    /// loaded. Otherwise its `SKILL.md`
    /// and then every other file its entry lists are read (only those URIs) and verified
    /// against the entry (size, digest, and the `SKILL.md` frontmatter field by field),
    /// and only verified bytes are returned (a `"dynamic"` skill's files only when
    /// `settings` allow it).
    ///
    /// # Errors
    /// [`SkillLoadError`]: unknown, held, refused, server not connected, or the read or
    /// verification failed ([`SkillLoadError::Skill`], naming server, skill and file).
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future abandons the question or the read in flight.
    pub async fn load_skill(
        &self,
        qualified: &str,
        settings: &SkillReadSettings,
    ) -> Result<LoadedSkill, SkillLoadError> {
        let mut info = self.find_skill(qualified).await?;
        let Some(slot) = self.inner.slots.get(&info.server).map(Arc::clone) else {
            return Err(self.not_ready(&info, "gone".to_owned()));
        };
        let live = match slot.current() {
            SlotState::Ready(attached) => Arc::clone(attached.live()),
            // Listed from the cache (deferred): start the server, then load the entry it
            // lists now (pinned and checked as any other), never the cached one.
            SlotState::Deferred(_) => {
                let deadline = mcp_pool::deadline_in(slot.spec.config.startup_timeout());
                let attached = self
                    .ready_connection(&slot, deadline, false)
                    .await
                    .map_err(|e| self.not_ready(&info, e.to_string()))?;
                info = self.find_skill(qualified).await?;
                Arc::clone(attached.live())
            }
            other => return Err(self.not_ready(&info, other.describe())),
        };
        if info.held {
            self.reapprove_skill(&info).await?;
        } else {
            self.authorize_skill(&info).await?;
        }
        live.load_skill(&info.skill, settings)
            .await
            .map_err(SkillLoadError::Skill)
    }

    /// The skill `qualified` names now.
    async fn find_skill(&self, qualified: &str) -> Result<SkillInfo, SkillLoadError> {
        let all = self.skills().await;
        let Some(info) = all.iter().find(|s| s.qualified_name == qualified) else {
            let names: Vec<&str> = all.iter().map(|s| s.qualified_name.as_str()).collect();
            let hint = if names.is_empty() {
                " (no server lists a skill)".to_owned()
            } else {
                format!(" (known: {})", names.join(", "))
            };
            return Err(SkillLoadError::UnknownSkill {
                name: qualified.to_owned(),
                hint,
            });
        };
        Ok(info.clone())
    }

    fn not_ready(&self, info: &SkillInfo, state: String) -> SkillLoadError {
        SkillLoadError::NotReady {
            name: info.qualified_name.clone(),
            server: info.server.clone(),
            state,
        }
    }

    /// A held-back skill: under `tool_drift = "reapprove"` the skill approver is shown the
    /// change and a yes accepts the entry shown (and loads it); otherwise, or without
    /// anyone to ask, it stays held.
    async fn reapprove_skill(&self, info: &SkillInfo) -> Result<(), SkillLoadError> {
        let drift = self
            .skill_drift(&info.server)
            .into_iter()
            .find(|d| d.uri == info.skill.uri);
        let held = || SkillLoadError::Held {
            name: info.qualified_name.clone(),
            server: info.server.clone(),
            changes: drift.as_ref().map(SkillDrift::describe).unwrap_or_default(),
        };
        let authority = self.inner.authority.load();
        if authority.skill_loading == SkillLoading::Deny {
            return Err(self.refused(info, SkillRefusal::Denied));
        }
        let in_band =
            self.tool_drift_policy(&info.server) == mcp_catalog::ToolDriftPolicy::Reapprove;
        let approver = authority
            .skill_approver
            .as_ref()
            .filter(|_| in_band && authority.approval_policy != ApprovalPolicy::Never);
        let (Some(approver), Some(shown)) = (approver, drift.clone()) else {
            return Err(held());
        };
        let fingerprint = skill_fingerprint(&info.skill);
        let request = SkillApprovalRequest {
            server: info.server.clone(),
            qualified_name: info.qualified_name.clone(),
            skill: info.skill.clone(),
            fingerprint,
            drift: Some(shown),
        };
        let answer = approver.ask(request).await;
        if !answer.approves() {
            return Err(self.refused(info, SkillRefusal::Declined));
        }
        let accepted = self
            .accept_skill_change_seen(&info.server, &info.skill.uri, &fingerprint)
            .map_err(|_| held())?;
        if !accepted {
            // It changed again while the user decided: nothing approved is listed now.
            return Err(held());
        }
        if answer == ApprovalAnswer::ApproveForSession {
            self.inner
                .skills
                .approved
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert((info.server.clone(), fingerprint));
        }
        Ok(())
    }

    fn refused(&self, info: &SkillInfo, reason: SkillRefusal) -> SkillLoadError {
        SkillLoadError::Refused {
            name: info.qualified_name.clone(),
            server: info.server.clone(),
            reason,
        }
    }

    /// Whether the host's authority lets `info` in (one snapshot of it).
    async fn authorize_skill(&self, info: &SkillInfo) -> Result<(), SkillLoadError> {
        let authority = self.inner.authority.load();
        let refused = |reason| SkillLoadError::Refused {
            name: info.qualified_name.clone(),
            server: info.server.clone(),
            reason,
        };
        match authority.skill_loading {
            SkillLoading::Allow => return Ok(()),
            SkillLoading::Deny => return Err(refused(SkillRefusal::Denied)),
            _ => {}
        }
        let fingerprint = skill_fingerprint(&info.skill);
        let remembered = (info.server.clone(), fingerprint);
        let approved = |s: &Self| {
            s.inner
                .skills
                .approved
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&remembered)
        };
        if approved(self) {
            return Ok(());
        }
        if authority.approval_policy == ApprovalPolicy::Never {
            return Err(refused(SkillRefusal::NobodyToAsk));
        }
        let Some(approver) = &authority.skill_approver else {
            return Err(refused(SkillRefusal::NoApprover));
        };
        let request = SkillApprovalRequest {
            server: info.server.clone(),
            qualified_name: info.qualified_name.clone(),
            skill: info.skill.clone(),
            fingerprint,
            drift: None,
        };
        match approver.ask(request).await {
            ApprovalAnswer::Approve => Ok(()),
            ApprovalAnswer::ApproveForSession => {
                self.inner
                    .skills
                    .approved
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(remembered);
                Ok(())
            }
            _ => Err(refused(SkillRefusal::Declined)),
        }
    }
}

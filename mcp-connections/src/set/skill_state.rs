//! What a set keeps about its servers' skills ([`SkillState`]): each server's last
//! listing, the skill drift it showed, and the skills approved for the session. Filled by
//! `skills_impl.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, PoisonError, Weak};

use mcp_key::{Fingerprint, McpServerKey};
use rmcp::model::Skill;

use crate::policy::drift::skills::SkillDrift;
use crate::set::live::Live;

/// A server's skill listing as this set last fetched it.
pub(crate) struct Listed {
    /// The connection it came from (another connection lists again).
    pub(crate) live: Weak<Live>,
    /// The connection's resource-list-change count when it was fetched (a change lists
    /// again: skills change with `notifications/resources/list_changed`).
    pub(crate) changes: u64,
    pub(crate) skills: Arc<Vec<Skill>>,
}

/// One server's skill drift as the set last saw it.
#[derive(Default, Clone)]
pub(crate) struct Drifted {
    /// Skills held back until accepted.
    pub(crate) held: Vec<SkillDrift>,
    /// Changes re-pinned as notices in the set's life (the latest per skill).
    pub(crate) notices: Vec<SkillDrift>,
    /// The listing the drift was computed against (what accepting pins).
    pub(crate) listed: Arc<Vec<Skill>>,
}

/// What a set keeps about its servers' skills.
#[derive(Default)]
pub(crate) struct SkillState {
    /// Per server, its last listing (one fetch at a time per server).
    pub(crate) listings:
        std::sync::Mutex<BTreeMap<McpServerKey, Arc<tokio::sync::Mutex<Option<Listed>>>>>,
    /// Per server, the skill drift of its last listing.
    pub(crate) drift: std::sync::Mutex<BTreeMap<McpServerKey, Drifted>>,
    /// Entries approved "for this session": server and entry fingerprint.
    pub(crate) approved: std::sync::Mutex<BTreeSet<(McpServerKey, Fingerprint)>>,
}

impl SkillState {
    /// The listing slot of `key` (made on first use).
    pub(crate) fn cell(&self, key: &McpServerKey) -> Arc<tokio::sync::Mutex<Option<Listed>>> {
        let mut listings = self.listings.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(listings.entry(key.clone()).or_default())
    }
}

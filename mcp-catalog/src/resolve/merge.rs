//! Picking one winner per key: precedence between tiers and within a tier, then vetoes.
//! [`CatalogBuilder::build`] turns the registrations into a [`ResolvedCatalog`].

use std::collections::BTreeMap;

use mcp_key::McpServerKey;

use crate::diagnostic::{ConfigWarning, Location, Scope};
use crate::resolve::builder::{CatalogBuilder, Registration};
use crate::resolve::resolved::{Entry, Parts, ResolvedCatalog};
use crate::resolve::source::{Conflict, Tier, VetoReason};

impl CatalogBuilder {
    /// Resolves one winner per key, applies vetoes and freezes the result.
    pub fn build(&self) -> ResolvedCatalog {
        let mut by_key: BTreeMap<&McpServerKey, Vec<&Registration>> = BTreeMap::new();
        for registration in &self.registrations {
            by_key
                .entry(&registration.key)
                .or_default()
                .push(registration);
        }
        let mut conflicts = Vec::new();
        let mut winners = BTreeMap::new();
        for (key, registrations) in by_key {
            let mut by_tier: BTreeMap<Tier, Vec<&Registration>> = BTreeMap::new();
            for registration in registrations {
                by_tier
                    .entry(registration.source.tier())
                    .or_default()
                    .push(registration);
            }
            let mut winner = None;
            for (tier, mut group) in by_tier {
                group.sort_by_key(|r| r.seq);
                if !tier.earlier_wins() {
                    group.reverse();
                }
                let Some((first, rest)) = group.split_first() else {
                    continue;
                };
                if !rest.is_empty() {
                    let mut losers: Vec<&Registration> = rest.to_vec();
                    losers.sort_by_key(|r| r.seq);
                    conflicts.push(Conflict {
                        key: key.clone(),
                        tier,
                        winner: first.source.clone(),
                        losers: losers.into_iter().map(|r| r.source.clone()).collect(),
                    });
                }
                // Tiers iterate in ascending precedence: the last one wins overall.
                winner = Some(*first);
            }
            if let Some(winner) = winner {
                winners.insert(key.clone(), winner);
            }
        }

        let mut active = BTreeMap::new();
        let mut vetoed = BTreeMap::new();
        for (key, winner) in winners {
            match self.veto_for(&key, winner) {
                Some(reason) => {
                    vetoed.insert(key, (reason, winner.source.clone()));
                }
                None => {
                    let entry = Entry {
                        config: winner.config.clone(),
                        source: winner.source.clone(),
                    };
                    active.insert(key, entry);
                }
            }
        }
        let mut warnings = self.warnings.clone();
        for (key, entry) in &active {
            let environment = entry.config.environment();
            if !environment.is_local() && !self.environments.contains_key(environment) {
                warnings.push(ConfigWarning::other(
                    Location::origin_only(entry.source.name()),
                    Scope::Server(key.name().as_str().to_owned()),
                    format!(
                        "environment `{environment}` of `{key}` is not declared; its stdio \
                         servers run without a wrapper"
                    ),
                ));
            }
        }
        ResolvedCatalog::new(Parts {
            active,
            vetoed,
            conflicts,
            warnings,
            environments: self.environments.clone(),
            settings: self.settings.clone(),
            plugins: self.plugins.clone(),
            builder: self.clone(),
        })
    }

    fn veto_for(&self, key: &McpServerKey, winner: &Registration) -> Option<VetoReason> {
        if let Some(reason) = self.sticky.get(key) {
            return Some(reason.clone());
        }
        let by_name = self
            .disables
            .iter()
            .filter(|d| &d.name == key.name())
            .find(|d| d.sealed_at.is_none_or(|sealed_at| winner.seq < sealed_at));
        if let Some(disable) = by_name {
            return Some(VetoReason::DisabledByName {
                source: disable.source.clone(),
            });
        }
        (!winner.config.enabled()).then(|| VetoReason::DisabledInConfig {
            source: winner.source.clone(),
        })
    }
}

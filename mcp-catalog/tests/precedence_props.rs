//! Property: the builder picks, per key, the registration a simple model predicts, and the
//! result does not depend on how registrations of different keys interleave.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use std::collections::BTreeMap;

use mcp_catalog::{CatalogBuilder, ServerConfig, Source, Tier};
use mcp_key::{EnvironmentId, McpServerKey, ServerName};
use proptest::prelude::*;

const TIERS: [Tier; 5] = [
    Tier::DiscoveredPlugin,
    Tier::SelectedPlugin,
    Tier::User,
    Tier::BuiltIn,
    Tier::Runtime,
];

fn key(name: u8, env: u8) -> McpServerKey {
    let name = ServerName::new(format!("s{name}")).unwrap();
    match env {
        0 => McpServerKey::unscoped(name),
        n => McpServerKey::in_environment(EnvironmentId::new(format!("e{n}")).unwrap(), name),
    }
}

/// (tier, name, environment, enabled)
type Reg = (usize, u8, u8, bool);

fn registrations() -> impl Strategy<Value = Vec<Reg>> {
    prop::collection::vec(
        (0..5usize, 0..3u8, 0..3u8, prop::bool::weighted(0.8)),
        0..40,
    )
}

proptest! {
    #[test]
    fn winners_follow_the_model(regs in registrations()) {
        let mut builder = CatalogBuilder::new();
        // Model: key -> (tier, index of the winning registration, enabled)
        let mut model: BTreeMap<McpServerKey, (usize, usize, bool)> = BTreeMap::new();
        for (i, (tier, name, env, enabled)) in regs.iter().copied().enumerate() {
            let k = key(name, env);
            let source = Source::new(TIERS[tier], format!("r{i}"));
            builder.register(source, k.clone(), ServerConfig::stdio(format!("r{i}")).with_enabled(enabled));
            let replace = match model.get(&k) {
                None => true,
                Some((t, _, _)) if tier > *t => true,
                Some((t, _, _)) if tier == *t => !TIERS[tier].earlier_wins(),
                Some(_) => false,
            };
            if replace {
                model.insert(k, (tier, i, enabled));
            }
        }
        let catalog = builder.build();
        for (k, (_, index, enabled)) in &model {
            let expected = format!("r{index}");
            if *enabled {
                let command = catalog.get(k).and_then(|s| s.transport().as_stdio()).map(|s| s.command());
                prop_assert_eq!(command, Some(expected.as_str()));
                prop_assert!(catalog.veto(k).is_none());
            } else {
                prop_assert!(catalog.get(k).is_none());
                prop_assert_eq!(catalog.veto(k).map(|r| r.source().name()), Some(expected.as_str()));
            }
        }
        prop_assert_eq!(catalog.len() + catalog.vetoed().count(), model.len());
        // Every name with an active key has exactly one legacy winner, and it is exposed.
        for (k, _) in catalog.iter() {
            let winner = catalog.resolve_server_name(k.name()).unwrap();
            prop_assert!(catalog.is_exposed(winner));
            prop_assert_eq!(catalog.legacy_server_name(k).is_some(), winner == k);
        }
        // Rebuilding from to_builder without changes gives the same result.
        let again = catalog.to_builder().build();
        let a: Vec<_> = catalog.iter().map(|(k, s)| (k.clone(), s.clone())).collect();
        let b: Vec<_> = again.iter().map(|(k, s)| (k.clone(), s.clone())).collect();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn interleaving_of_different_keys_does_not_matter(regs in registrations(), seed in any::<u64>()) {
        let build = |order: &[(usize, Reg)]| {
            let mut builder = CatalogBuilder::new();
            for (i, (tier, name, env, enabled)) in order.iter().copied() {
                builder.register(
                    Source::new(TIERS[tier], format!("r{i}")),
                    key(name, env),
                    ServerConfig::stdio(format!("r{i}")).with_enabled(enabled),
                );
            }
            builder.build().iter().map(|(k, s)| (k.to_string(), format!("{s:?}"))).collect::<Vec<_>>()
        };
        let indexed: Vec<_> = regs.iter().copied().enumerate().collect();
        // Stable-sort by a per-key pseudo-random rank: order between keys changes, order
        // within one key is kept.
        let mut shuffled = indexed.clone();
        shuffled.sort_by_key(|(_, (_, name, env, _))| {
            (u64::from(*name) * 31 + u64::from(*env)).wrapping_mul(seed | 1).rotate_left(7)
        });
        prop_assert_eq!(build(&indexed), build(&shuffled));
    }
}

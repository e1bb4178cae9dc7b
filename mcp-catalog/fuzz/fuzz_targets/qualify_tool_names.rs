//! The tool name qualifier (`mcp_key::ToolNamer`) never panics, and whatever the raw names
//! (control characters, unicode, paths, huge), every qualified name is model-safe, distinct,
//! resolves back to its own pair, and does not depend on the order of the input.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use mcp_key::{McpServerKey, NamingOptions, ToolNamer};

/// Pairs per input: enough for collisions, few enough to keep runs fast.
const MAX_PAIRS: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    // One `key<TAB>tool` pair per line; lines whose key does not parse are skipped.
    let pairs: Vec<(McpServerKey, &str)> = text
        .split('\n')
        .filter_map(|line| {
            let (key, tool) = line.split_once('\t')?;
            Some((key.parse().ok()?, tool))
        })
        .take(MAX_PAIRS)
        .collect();
    let max_len = [16, 17, 20, 33, 64, 128, 0, 1][usize::from(knobs >> 5)];
    let mut options = NamingOptions::new()
        .with_prefix(knobs & 1 == 0)
        .with_environment_namespaces(knobs & 2 == 0)
        .with_max_len(max_len);
    if knobs & 4 != 0
        && let Some((key, _)) = pairs.first()
    {
        options = options.with_prefix_exempt(key.name().clone());
    }
    let namer = ToolNamer::new(options);
    let max_len = namer.options().max_len;

    let table = namer.qualify(pairs.iter().map(|(k, t)| (k, *t)));
    let distinct: BTreeSet<(&McpServerKey, &str)> = pairs.iter().map(|(k, t)| (k, *t)).collect();
    assert_eq!(table.len(), distinct.len());
    let mut names = BTreeSet::new();
    for (key, tool) in &distinct {
        let name = table
            .qualified_name(key, tool)
            .expect("every pair is named");
        assert!((1..=max_len).contains(&name.len()), "{name:?}");
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name:?}"
        );
        assert_eq!(table.resolve(name), Some((*key, *tool)));
        assert!(names.insert(name), "{name:?} given twice");
    }
    let reversed = namer.qualify(pairs.iter().rev().map(|(k, t)| (k, *t)));
    assert_eq!(table, reversed);
});

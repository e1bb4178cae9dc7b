//! Property tests for the tool namer: valid names, bijection, order independence, stability.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers fail loudly on bad fixtures"
)]

use std::collections::BTreeSet;

use mcp_key::{EnvironmentId, McpServerKey, NamingOptions, ServerName, ToolNameTable, ToolNamer};
use proptest::prelude::*;
use proptest::sample::select;

/// Server names without `Q`, so that tests can add servers that collide with nothing.
fn server_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-c_-]{1,4}",
        1 => "[a-pR-Z0-9_-]{1,64}",
        1 => Just("x".repeat(64)),
    ]
}

fn environment() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        2 => Just(None),
        1 => Just(Some("local".to_owned())),
        1 => "[a-c._-]{1,4}".prop_map(Some),
        1 => "[a-z0-9._-]{1,64}".prop_map(Some),
    ]
}

fn key() -> impl Strategy<Value = McpServerKey> {
    (server_name(), environment()).prop_map(|(name, env)| {
        let name = ServerName::new(name).unwrap();
        match env {
            None => McpServerKey::unscoped(name),
            Some(env) => McpServerKey::in_environment(EnvironmentId::new(env).unwrap(), name),
        }
    })
}

/// Raw tool names: near-duplicates, unicode, control characters, paths, long and empty.
fn tool() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a._ /é-]{0,3}",
        2 => "[A-Za-z0-9_.-]{1,20}",
        2 => prop::collection::vec(any::<char>(), 0..24).prop_map(|c| c.into_iter().collect()),
        1 => "[a-z]{40,140}",
        1 => select(vec!["", "\0", "\n", "../../etc/passwd", "C:\\tools\\x", "日本語", "🦀", "a\u{202e}b"])
            .prop_map(str::to_owned),
    ]
}

fn options() -> impl Strategy<Value = NamingOptions> {
    (
        any::<bool>(),
        any::<bool>(),
        select(vec![16usize, 17, 20, 33, 64, 128]),
        prop::collection::vec("[a-c_-]{1,4}", 0..3),
    )
        .prop_map(|(prefix, env_ns, max_len, exempt)| {
            exempt.into_iter().fold(
                NamingOptions::new()
                    .with_prefix(prefix)
                    .with_environment_namespaces(env_ns)
                    .with_max_len(max_len),
                |opts, name| opts.with_prefix_exempt(ServerName::new(name).unwrap()),
            )
        })
}

fn pairs() -> impl Strategy<Value = Vec<(McpServerKey, String)>> {
    // Few servers and many tools, so that collisions are common.
    prop::collection::vec(key(), 1..6)
        .prop_flat_map(|keys| prop::collection::vec((select(keys), tool()), 0..40))
}

fn qualify(namer: &ToolNamer, pairs: &[(McpServerKey, String)]) -> ToolNameTable {
    namer.qualify(pairs.iter().map(|(k, t)| (k, t.as_str())))
}

fn is_valid(name: &str, max_len: usize) -> bool {
    (1..=max_len).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

proptest! {
    #[test]
    fn every_name_is_model_safe_and_within_max_len(opts in options(), pairs in pairs()) {
        let max_len = opts.max_len;
        let table = qualify(&ToolNamer::new(opts), &pairs);
        for (name, _, _) in table.iter() {
            prop_assert!(is_valid(name, max_len), "{name:?} (max_len {max_len})");
            if max_len == 64 {
                // The limit OpenAI and Anthropic enforce.
                prop_assert!(name.len() <= 64);
            }
        }
    }

    #[test]
    fn table_is_a_bijection(opts in options(), pairs in pairs()) {
        let table = qualify(&ToolNamer::new(opts), &pairs);
        let distinct: BTreeSet<(&McpServerKey, &str)> =
            pairs.iter().map(|(k, t)| (k, t.as_str())).collect();
        prop_assert_eq!(table.len(), distinct.len());
        let names: BTreeSet<&str> = table.iter().map(|(n, _, _)| n).collect();
        prop_assert_eq!(names.len(), distinct.len());
        for (key, tool) in distinct {
            let name = table.qualified_name(key, tool).unwrap();
            prop_assert_eq!(table.resolve(name), Some((key, tool)));
        }
        let listed: Vec<&str> = table.iter().map(|(n, _, _)| n).collect();
        prop_assert!(listed.windows(2).all(|w| w[0] < w[1]), "iter is sorted");
    }

    #[test]
    fn output_does_not_depend_on_input_order(
        opts in options(),
        (pairs, shuffled) in pairs().prop_flat_map(|p| (Just(p.clone()), Just(p).prop_shuffle())),
    ) {
        let namer = ToolNamer::new(opts);
        prop_assert_eq!(qualify(&namer, &pairs), qualify(&namer, &shuffled));
    }

    #[test]
    fn adding_an_unrelated_server_renames_nothing(
        opts in options(),
        pairs in pairs(),
        new_name in "Q[A-Za-z0-9_-]{0,63}",
        new_env in environment(),
        new_tools in prop::collection::vec(tool(), 0..10),
    ) {
        let namer = ToolNamer::new(opts);
        let before = qualify(&namer, &pairs);
        let name = ServerName::new(new_name).unwrap();
        let new_key = match new_env {
            None => McpServerKey::unscoped(name),
            Some(env) => McpServerKey::in_environment(EnvironmentId::new(env).unwrap(), name),
        };
        let mut more = pairs.clone();
        more.extend(new_tools.into_iter().map(|t| (new_key.clone(), t)));
        let after = qualify(&namer, &more);
        for (name, key, tool) in before.iter() {
            prop_assert_eq!(after.qualified_name(key, tool), Some(name));
        }
    }

    #[test]
    fn same_inputs_same_names_across_namers(opts in options(), pairs in pairs()) {
        let first = qualify(&ToolNamer::new(opts.clone()), &pairs);
        let second = qualify(&ToolNamer::new(opts), &pairs);
        prop_assert_eq!(first, second);
    }
}

#[test]
fn hostile_raw_names_do_not_panic() {
    let key: McpServerKey = "srv@dev.box".parse().unwrap();
    let ten_kb = [
        "a".repeat(10_240),
        "é".repeat(5_120),
        "/".repeat(10_240),
        "\0".repeat(10_240),
    ];
    let mut tools: Vec<&str> = ten_kb.iter().map(String::as_str).collect();
    tools.extend([
        "",
        "\u{7f}",
        "\r\n\t",
        "../..",
        "a\\b",
        "\u{feff}",
        "\u{10ffff}",
    ]);
    for max_len in [0, 1, 16, 64, 128, 10_000] {
        let namer = ToolNamer::new(NamingOptions::new().with_max_len(max_len));
        let table = namer.qualify(tools.iter().map(|t| (&key, *t)));
        assert_eq!(table.len(), tools.len());
        let limit = namer.options().max_len;
        for (name, k, tool) in table.iter() {
            assert!(is_valid(name, limit), "{name:?}");
            assert_eq!(table.qualified_name(k, tool), Some(name));
        }
    }
}

#[test]
fn many_near_duplicates_stay_distinct() {
    let key: McpServerKey = "s".parse().unwrap();
    // 5^4 = 625 tools that mostly sanitize to the same handful of names.
    let alphabet = ["a", ".", "_", "/", "é"];
    let mut tools = Vec::new();
    for a in alphabet {
        for b in alphabet {
            for c in alphabet {
                for d in alphabet {
                    tools.push(format!("{a}{b}{c}{d}"));
                }
            }
        }
    }
    let table = ToolNamer::default().qualify(tools.iter().map(|t| (&key, t.as_str())));
    assert_eq!(table.len(), tools.len());
    for tool in &tools {
        let name = table.qualified_name(&key, tool).unwrap();
        assert!(is_valid(name, 64));
        assert_eq!(table.resolve(name), Some((&key, tool.as_str())));
    }
}

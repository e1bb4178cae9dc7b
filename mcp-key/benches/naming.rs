//! How long naming a large catalog takes: 10,000 tools from 100 servers.

#![allow(
    clippy::unwrap_used,
    reason = "benchmark fixtures are known to be valid"
)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_key::{McpServerKey, ToolNamer};

/// 100 servers (a quarter of them scoped to an environment) with 100 tools each. Every
/// tenth server has tools that collide after sanitizing (`get.item` / `get_item`), and a
/// few tool names are too long, so the hash paths are measured too.
fn catalog() -> Vec<(McpServerKey, String)> {
    let mut pairs = Vec::with_capacity(10_000);
    for s in 0..100 {
        let key: McpServerKey = if s % 4 == 0 {
            format!("server-{s}@devbox-{}", s % 3).parse().unwrap()
        } else {
            format!("server-{s}").parse().unwrap()
        };
        for t in 0..100 {
            let tool = match t {
                0 if s % 10 == 0 => "get.item".to_owned(),
                1 if s % 10 == 0 => "get_item".to_owned(),
                2 => format!("a_tool_with_a_rather_long_descriptive_name_number_{t}_of_{s}"),
                _ => format!("tool.{t}/action"),
            };
            pairs.push((key.clone(), tool));
        }
    }
    pairs
}

fn naming(c: &mut Criterion) {
    let pairs = catalog();
    let namer = ToolNamer::default();
    let mut reversed = pairs.clone();
    reversed.reverse();

    c.bench_function("qualify_10k_tools_100_servers", |b| {
        b.iter(|| namer.qualify(black_box(&pairs).iter().map(|(k, t)| (k, t.as_str()))));
    });

    // The same catalog handed over in the reverse order, then listed in name order, as a
    // host does when it builds the model's tool list.
    c.bench_function("qualify_10k_then_list_sorted", |b| {
        b.iter(|| {
            let table = namer.qualify(black_box(&reversed).iter().map(|(k, t)| (k, t.as_str())));
            let listed: Vec<&str> = table.iter().map(|(name, _, _)| name).collect();
            black_box(listed.len())
        });
    });

    let table = namer.qualify(pairs.iter().map(|(k, t)| (k, t.as_str())));
    let names: Vec<String> = table.iter().map(|(n, _, _)| n.to_owned()).collect();
    c.bench_function("resolve_10k_names", |b| {
        b.iter(|| {
            for name in &names {
                black_box(table.resolve(name));
            }
        });
    });
}

criterion_group!(benches, naming);
criterion_main!(benches);

//! Qualify + filter + sort 10,000 tools from 100 servers with the tool namer.

use std::hint::black_box;
use std::time::Instant;

use mcp_key::{McpServerKey, ToolNamer};

use crate::stats::median;
use crate::table::{Row, Unit};
use crate::{Result, Settings};

/// 100 servers (a quarter scoped to an environment) with 100 tools each, some colliding
/// after sanitizing and some too long (as mcp-key's `naming` bench).
fn catalog() -> Result<Vec<(McpServerKey, String)>> {
    let mut pairs = Vec::with_capacity(10_000);
    for s in 0..100 {
        let key: McpServerKey = if s % 4 == 0 {
            format!("server-{s}@devbox-{}", s % 3).parse()?
        } else {
            format!("server-{s}").parse()?
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
    // Handed over in reverse order, as a host merging servers as they come may.
    pairs.reverse();
    Ok(pairs)
}

/// One host listing: a tool filter (one tool in ten disabled), qualify, names sorted.
fn list(namer: &ToolNamer, pairs: &[(McpServerKey, String)]) -> usize {
    let table = namer.qualify(
        pairs
            .iter()
            .filter(|(_, t)| !t.ends_with("9/action"))
            .map(|(k, t)| (k, t.as_str())),
    );
    let mut names: Vec<&str> = table.iter().map(|(name, _, _)| name).collect();
    names.sort_unstable();
    black_box(names.len())
}

/// The median time of a listing.
pub(crate) fn naming(s: &Settings) -> Result<Vec<Row>> {
    let pairs = catalog()?;
    let namer = ToolNamer::default();
    for _ in 0..s.naming_warmup {
        list(&namer, &pairs);
    }
    let mut samples = Vec::new();
    for _ in 0..s.naming_iterations {
        let t = Instant::now();
        list(&namer, black_box(&pairs));
        samples.push(t.elapsed().as_secs_f64());
    }
    let p50 = median(&samples);
    Ok(vec![
        Row::absolute(
            "naming: qualify + filter + sort 10,000 tools, 100 servers",
            Unit::Seconds,
            p50,
            "≤ 10 ms",
            p50 <= 10e-3,
        )
        .with_note(format!("median of {} runs", samples.len())),
    ])
}

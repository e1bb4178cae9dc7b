//! Accuracy on the public benchmark queries stays where it was measured (see the README's
//! tool search table): a change that ranks worse fails here. The floors are the measured
//! figures less two points, for small, deliberate trade-offs.

#![allow(clippy::unwrap_used, reason = "tests")]

use mcp_search::{Bm25Baseline, Catalog, LabelledQuery};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/tool-search");

#[test]
fn the_public_queries_rank_at_least_as_measured_and_above_the_baseline() {
    let catalog = Catalog::from_path(format!("{DATA}/catalog.json")).unwrap();
    let queries = LabelledQuery::list_from_path(format!("{DATA}/queries-public.json")).unwrap();
    assert_eq!((catalog.tool_count(), queries.len()), (3361, 283));
    let index = catalog.to_index().unwrap();
    let mut baseline = Bm25Baseline::new();
    for (server, tools) in catalog.servers() {
        baseline.add_server(server, tools);
    }
    let (mut top1, mut top5, mut base5, mut live5, mut live) = (0, 0, 0, 0, 0);
    for q in &queries {
        let ranked: Vec<String> = index
            .search(&q.query, 10)
            .unwrap()
            .iter()
            .map(|h| h.qualified_name().to_owned())
            .collect();
        top1 += usize::from(q.hit_at(&ranked, 1));
        top5 += usize::from(q.hit_at(&ranked, 5));
        base5 += usize::from(q.hit_at(&baseline.search(&q.query, 10), 5));
        if !q.expected.iter().all(|e| e.starts_with("azure/")) {
            live += 1;
            live5 += usize::from(q.hit_at(&ranked, 5));
        }
    }
    let pct = |n: usize, of: usize| 100.0 * n as f64 / of as f64;
    let n = queries.len();
    assert!(pct(top1, n) >= 67.6, "top-1 {:.1} %", pct(top1, n));
    assert!(pct(top5, n) >= 87.8, "top-5 {:.1} %", pct(top5, n));
    assert!(
        pct(live5, live) >= 50.0,
        "LiveMCPBench top-5 {:.1} %",
        pct(live5, live)
    );
    assert!(
        top5 > base5,
        "top-5 {top5} not above the baseline's {base5}"
    );
}

/// Top-1 and top-5 counts of our ranking and the baseline's over `queries`.
fn scores(
    catalog: &Catalog,
    index: &mcp_search::ToolIndex,
    queries: &[&LabelledQuery],
) -> [usize; 4] {
    let mut baseline = Bm25Baseline::new();
    for (server, tools) in catalog.servers() {
        baseline.add_server(server, tools);
    }
    let mut out = [0; 4];
    for q in queries {
        let ranked: Vec<String> = index
            .search(&q.query, 10)
            .unwrap()
            .iter()
            .map(|h| h.qualified_name().to_owned())
            .collect();
        let reference = baseline.search(&q.query, 10);
        out[0] += usize::from(q.hit_at(&ranked, 1));
        out[1] += usize::from(q.hit_at(&ranked, 5));
        out[2] += usize::from(q.hit_at(&reference, 1));
        out[3] += usize::from(q.hit_at(&reference, 5));
    }
    out
}

/// The held-out split is the one the README describes (75 of the 283 public queries), and
/// the held-out part ranks as measured there, above the baseline.
#[test]
fn the_held_out_part_is_fixed_and_ranks_as_measured() {
    let catalog = Catalog::from_path(format!("{DATA}/catalog.json")).unwrap();
    let queries = LabelledQuery::list_from_path(format!("{DATA}/queries-public.json")).unwrap();
    let held: Vec<&LabelledQuery> = queries.iter().filter(|q| q.is_held_out()).collect();
    assert_eq!(held.len(), 75);
    let index = catalog.to_index().unwrap();
    let [top1, top5, base1, base5] = scores(&catalog, &index, &held);
    let pct = |n: usize| 100.0 * n as f64 / held.len() as f64;
    assert!(pct(top1) >= 67.3, "held-out top-1 {:.1} %", pct(top1));
    assert!(pct(top5) >= 92.7, "held-out top-5 {:.1} %", pct(top5));
    assert!(
        top1 > base1 && top5 > base5,
        "{top1} {top5} vs {base1} {base5}"
    );
}

/// The independent queries name only tools of the catalog, and rank at least as measured
/// in the README, not below the baseline.
#[test]
fn the_independent_queries_are_labelled_with_catalog_tools_and_rank_as_measured() {
    let catalog = Catalog::from_path(format!("{DATA}/catalog.json")).unwrap();
    let queries =
        LabelledQuery::list_from_path(format!("{DATA}/queries-independent.json")).unwrap();
    assert_eq!(queries.len(), 54);
    let names: std::collections::HashSet<String> = catalog
        .servers()
        .flat_map(|(s, tools)| {
            tools
                .iter()
                .map(|t| mcp_search::qualified_name(s, t.name()))
        })
        .collect();
    for q in &queries {
        for e in &q.expected {
            assert!(
                names.contains(e),
                "{:?} expects {e}, not in the catalog",
                q.query
            );
        }
    }
    let index = catalog.to_index().unwrap();
    let all: Vec<&LabelledQuery> = queries.iter().collect();
    let [top1, top5, base1, base5] = scores(&catalog, &index, &all);
    let pct = |n: usize| 100.0 * n as f64 / all.len() as f64;
    assert!(pct(top1) >= 31.3, "independent top-1 {:.1} %", pct(top1));
    assert!(pct(top5) >= 53.6, "independent top-5 {:.1} %", pct(top5));
    assert!(
        top1 >= base1 && top5 >= base5,
        "{top1} {top5} vs {base1} {base5}"
    );
}

/// At the default minimum coverage no public or independent query gets a "no good
/// match" answer, and neither set has fewer top-5 hits than without a minimum (the
/// README's measurement: weak hits left out can let a lower one into the first five).
#[test]
fn the_default_minimum_coverage_costs_no_benchmark_hit() {
    use mcp_search::SearchOptions;
    let catalog = Catalog::from_path(format!("{DATA}/catalog.json")).unwrap();
    let index = catalog.to_index().unwrap();
    let names = |hits: &[mcp_search::Hit]| -> Vec<String> {
        hits.iter().map(|h| h.qualified_name().to_owned()).collect()
    };
    for file in ["queries-public.json", "queries-independent.json"] {
        let queries = LabelledQuery::list_from_path(format!("{DATA}/{file}")).unwrap();
        let (mut with_min, mut without) = (0, 0);
        for q in &queries {
            let found = index.search_with(&q.query, &SearchOptions::new(5)).unwrap();
            assert!(!found.is_no_match(), "{file}: {:?}", q.query);
            with_min += usize::from(q.hit_at(&names(&found.hits), 5));
            without += usize::from(q.hit_at(&names(&index.search(&q.query, 5).unwrap()), 5));
        }
        assert!(with_min >= without, "{file}: top-5 {with_min} < {without}");
    }
}

//! Top-1 / top-5 of the lexical ranking and of the plain BM25 baseline on the three query
//! sets (tuning part, held-out part, independent), and with `--misses` every top-1 miss
//! of the independent set beside the baseline's first tool.
//!
//! ```text
//! cargo run -p mcp-search --example rank_check -- [--misses]
//! ```

use std::path::Path;

use mcp_search::{Bm25Baseline, Catalog, LabelledQuery};

#[expect(clippy::print_stdout, reason = "an example that prints a table")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let misses = std::env::args().any(|a| a == "--misses");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/tool-search");
    let catalog = Catalog::from_path(data.join("catalog.json"))?;
    let public = LabelledQuery::list_from_path(data.join("queries-public.json"))?;
    let independent = LabelledQuery::list_from_path(data.join("queries-independent.json"))?;
    let index = catalog.to_index()?;
    let mut baseline = Bm25Baseline::new();
    for (server, tools) in catalog.servers() {
        baseline.add_server(server, tools);
    }
    if let Some(q) = std::env::args().skip_while(|a| a != "--query").nth(1) {
        for h in index.search(&q, 8)? {
            println!(
                "{:.3} cov {:.2} {}",
                h.score(),
                h.coverage(),
                h.qualified_name()
            );
        }
        return Ok(());
    }
    let (tuning, held): (Vec<_>, Vec<_>) = public.into_iter().partition(|q| !q.is_held_out());
    println!("| set | queries | ours top-1 | ours top-5 | BM25 top-1 | BM25 top-5 |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (name, set) in [
        ("tuning", &tuning),
        ("held out", &held),
        ("independent", &independent),
    ] {
        let mut n = [0usize; 4];
        for q in set.iter() {
            let ours: Vec<String> = index
                .search(&q.query, 10)?
                .iter()
                .map(|h| h.qualified_name().to_owned())
                .collect();
            let theirs = baseline.search(&q.query, 10);
            n[0] += usize::from(q.hit_at(&ours, 1));
            n[1] += usize::from(q.hit_at(&ours, 5));
            n[2] += usize::from(q.hit_at(&theirs, 1));
            n[3] += usize::from(q.hit_at(&theirs, 5));
            if misses && name == "independent" && !q.hit_at(&ours, 1) {
                println!(
                    "MISS {:?} | {} | ours {} (expected at {:?}) | BM25 {}{}",
                    q.query,
                    q.expected.join(" "),
                    ours.first().map_or("-", String::as_str),
                    q.rank_in(&ours).map(|r| r + 1),
                    theirs.first().map_or("-", String::as_str),
                    if q.hit_at(&theirs, 1) { " (HIT)" } else { "" },
                );
            }
        }
        let pct = |x: usize| 100.0 * x as f64 / set.len() as f64;
        println!(
            "| {name} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
            set.len(),
            pct(n[0]),
            pct(n[1]),
            pct(n[2]),
            pct(n[3])
        );
    }
    Ok(())
}

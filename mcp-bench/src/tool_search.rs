//! `mcp-bench tool-search --catalog FILE --queries FILE [--independent FILE] [--json]
//! [--limit K]`: the tool search's accuracy and speed on a labelled catalog, beside the
//! reference-style BM25 baseline computed in the same run on the same data.
//!
//! Per query it prints the query, the expected tools and the ranked qualified names (with
//! `--json`, one JSON line per query and ranking); then a Markdown table of top-1, top-5,
//! MRR (within the first `--limit`), query latency p50/p99, index build time and index
//! memory, for both rankings, overall and per subset (`azure`: expected tools under
//! `azure/`; `livemcpbench`: the others), for the two parts of the held-out split
//! ([`LabelledQuery::is_held_out`]: `tuning` is what constants may be chosen on, `held
//! out` is not), and for the `--independent` queries (a third set, scored apart from the
//! others).
//!
//! Last, what the listing costs a model: the size in bytes and in tokens (OpenAI's
//! `o200k_base`, through `tiktoken-rs`) of a `tools/list` result carrying every tool of the
//! catalog, beside the search mode's (`mcp_connections::search_mode_tools`) and beside one
//! search's answer (`mcp_connections::search_answer_from`, the median over the queries).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_search::{Bm25Baseline, Catalog, LabelledQuery, ToolIndex};
use serde_json::json;

const USAGE: &str = "usage: mcp-bench tool-search --catalog FILE --queries FILE \
     [--independent FILE] [--json] [--limit K]";

/// Rounds of the whole query set timed for the latency figures.
const TIMING_ROUNDS: usize = 5;

struct Args {
    catalog: PathBuf,
    queries: PathBuf,
    independent: Option<PathBuf>,
    json: bool,
    limit: usize,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let (mut catalog, mut queries, mut json, mut limit) = (None, None, false, 10usize);
    let mut independent = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--catalog" => catalog = it.next().map(PathBuf::from),
            "--queries" => queries = it.next().map(PathBuf::from),
            "--independent" => {
                independent = Some(PathBuf::from(
                    it.next().ok_or("--independent needs a queries file")?,
                ));
            }
            "--json" => json = true,
            "--limit" => {
                let value = it.next().ok_or("--limit needs a number")?;
                limit = value
                    .parse()
                    .map_err(|_| format!("--limit {value:?} is not a number"))?;
                if limit == 0 {
                    return Err("--limit 0 ranks nothing: give at least 1".to_owned());
                }
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Args {
        catalog: catalog.ok_or("--catalog FILE is required")?,
        queries: queries.ok_or("--queries FILE is required")?,
        independent,
        json,
        limit: limit.max(5),
    })
}

/// Scores of one ranking over a set of queries.
#[derive(Default, Clone)]
struct Score {
    queries: usize,
    top1: usize,
    top5: usize,
    reciprocal: f64,
}

impl Score {
    fn add(&mut self, query: &LabelledQuery, ranked: &[String]) {
        self.queries += 1;
        self.top1 += usize::from(query.hit_at(ranked, 1));
        self.top5 += usize::from(query.hit_at(ranked, 5));
        if let Some(rank) = query.rank_in(ranked) {
            self.reciprocal += 1.0 / (rank as f64 + 1.0);
        }
    }

    fn pct(n: usize, of: usize) -> String {
        if of == 0 {
            "-".to_owned()
        } else {
            format!("{:.1} %", 100.0 * n as f64 / of as f64)
        }
    }
}

/// The rows of [`SUBSETS`] a query of the main set counts in.
fn rows(query: &LabelledQuery) -> [usize; 3] {
    let kind = if query.expected.iter().all(|e| e.starts_with("azure/")) {
        1
    } else {
        2
    };
    [0, kind, if query.is_held_out() { 4 } else { 3 }]
}

/// The row of [`SUBSETS`] the `--independent` queries count in.
const INDEPENDENT: usize = 5;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// `e`'s message followed by its sources' (`cannot read F: No such file or directory`).
fn with_sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// This process's resident set size (Linux `/proc/self/status`), if known.
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

/// Runs the subcommand; `args` are those after `tool-search`.
#[expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line tool: results to stdout, errors to stderr"
)]
pub(crate) fn run(args: &[String]) -> std::process::ExitCode {
    let args = match parse(args) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("mcp-bench tool-search: {e}\n{USAGE}");
            return std::process::ExitCode::from(2);
        }
    };
    let loaded = Catalog::from_path(&args.catalog).and_then(|c| {
        let queries = LabelledQuery::list_from_path(&args.queries)?;
        let independent = match &args.independent {
            Some(path) => LabelledQuery::list_from_path(path)?,
            None => Vec::new(),
        };
        Ok((c, queries, independent))
    });
    let (catalog, queries, independent) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("mcp-bench tool-search: {}", with_sources(&e));
            return std::process::ExitCode::FAILURE;
        }
    };
    let built = match Built::timed(&catalog) {
        Ok(built) => built,
        Err(e) => {
            eprintln!("mcp-bench tool-search: {}", with_sources(&e));
            return std::process::ExitCode::FAILURE;
        }
    };
    let quality = rank_all(&built, &queries, &independent, &args);
    let every: Vec<LabelledQuery> = queries.iter().chain(&independent).cloned().collect();
    let (ours_lat, theirs_lat) = latencies(&built, &every, args.limit);

    println!();
    println!(
        "{} tools of {} servers, {} queries and {} independent ones (MRR within the first {}){}",
        catalog.tool_count(),
        catalog.servers().count(),
        queries.len(),
        independent.len(),
        args.limit,
        if cfg!(debug_assertions) {
            "; DEBUG BUILD: the times mean little (cargo run --release -p mcp-bench)"
        } else {
            ""
        }
    );
    print_quality(&quality);
    print_costs(&built, &ours_lat, &theirs_lat);
    match listing_sizes(&catalog, &built.index, &queries) {
        Ok(table) => {
            println!();
            print!("{table}");
        }
        Err(e) => {
            eprintln!("mcp-bench tool-search: the listing sizes: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    if quality.failed > 0 {
        eprintln!("mcp-bench tool-search: {} queries failed", quality.failed);
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}

/// Both rankings' indexes, with what building them took.
struct Built {
    index: ToolIndex,
    /// Build times of the index, sorted.
    builds: Vec<Duration>,
    /// How much the resident set grew over the index's first build, if known.
    rss_growth: Option<u64>,
    baseline: Bm25Baseline,
    /// Build times of the baseline, sorted.
    baseline_builds: Vec<Duration>,
}

impl Built {
    /// Builds each index a few times (the median build is reported), the search's first.
    fn timed(catalog: &Catalog) -> Result<Self, mcp_search::SearchError> {
        let mut builds = Vec::new();
        let mut index = ToolIndex::new();
        // A cross-check of the index's own estimate: how much the resident set grew over
        // the first build (the allocator may keep more than the index holds).
        let rss_before = rss_bytes();
        let mut rss_growth = None;
        for _ in 0..5 {
            let started = Instant::now();
            index = catalog.to_index()?;
            builds.push(started.elapsed());
            if rss_growth.is_none() {
                rss_growth = rss_before
                    .zip(rss_bytes())
                    .map(|(a, b)| b.saturating_sub(a));
            }
        }
        builds.sort();
        let mut baseline_builds = Vec::new();
        let mut baseline = Bm25Baseline::new();
        for _ in 0..5 {
            let started = Instant::now();
            baseline = Bm25Baseline::new();
            for (server, tools) in catalog.servers() {
                baseline.add_server(server, tools);
            }
            baseline_builds.push(started.elapsed());
        }
        baseline_builds.sort();
        Ok(Self {
            index,
            builds,
            rss_growth,
            baseline,
            baseline_builds,
        })
    }
}

/// The subsets scored, in the tables' order: every query of the main set, each kind, the
/// two parts of the held-out split, then the independent set.
const SUBSETS: [&str; 6] = [
    "all",
    "azure",
    "livemcpbench",
    "tuning part",
    "held out",
    "independent",
];

/// How well each ranking did, per subset ([`SUBSETS`]).
struct Quality {
    ours: Vec<Score>,
    theirs: Vec<Score>,
    /// Queries the search refused.
    failed: usize,
}

/// Ranks every query with both rankings, printing each query's rankings, and scores them.
#[expect(
    clippy::print_stderr,
    reason = "a command-line tool: a refused query is reported on stderr"
)]
fn rank_all(
    built: &Built,
    queries: &[LabelledQuery],
    independent: &[LabelledQuery],
    args: &Args,
) -> Quality {
    let mut ours: Vec<Score> = vec![Score::default(); SUBSETS.len()];
    let mut theirs: Vec<Score> = vec![Score::default(); SUBSETS.len()];
    let mut failed = 0usize;
    let main = queries.iter().map(|q| (q, rows(q).to_vec()));
    let third = independent.iter().map(|q| (q, vec![INDEPENDENT]));
    for (query, counted) in main.chain(third) {
        let ranked: Vec<String> = match built.index.search(&query.query, args.limit) {
            Ok(hits) => hits.iter().map(|h| h.qualified_name().to_owned()).collect(),
            Err(e) => {
                failed += 1;
                eprintln!("query {:?}: {e}", query.query);
                Vec::new()
            }
        };
        let reference = built.baseline.search(&query.query, args.limit);
        for &i in &counted {
            ours[i].add(query, &ranked);
            theirs[i].add(query, &reference);
        }
        print_query(query, &ranked, &reference, args.json);
    }
    Quality {
        ours,
        theirs,
        failed,
    }
}

/// Prints one query with what it expects and both rankings (the first five of each), or
/// with `json` the whole of them as one JSON line.
#[expect(
    clippy::print_stdout,
    reason = "a command-line tool: results to stdout"
)]
fn print_query(query: &LabelledQuery, ranked: &[String], reference: &[String], json: bool) {
    if json {
        println!(
            "{}",
            json!({
                "query": query.query,
                "expected": query.expected,
                "ranked": ranked,
                "baseline": reference,
            })
        );
        return;
    }
    println!("query: {}", query.query.replace('\n', " "));
    println!("  expected: {}", query.expected.join(", "));
    println!("  ranked:   {}", first_five(ranked));
    println!("  baseline: {}", first_five(reference));
}

/// The first five names of a ranking, joined with `, `.
fn first_five(ranked: &[String]) -> String {
    ranked
        .iter()
        .take(5)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each ranking's search latencies, sorted: every query, several rounds, each search
/// timed alone.
fn latencies(
    built: &Built,
    queries: &[LabelledQuery],
    limit: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let mut ours_lat = Vec::new();
    let mut theirs_lat = Vec::new();
    for _ in 0..TIMING_ROUNDS {
        for query in queries {
            let started = Instant::now();
            let _ = std::hint::black_box(built.index.search(&query.query, limit));
            ours_lat.push(started.elapsed());
            let started = Instant::now();
            let _ = std::hint::black_box(built.baseline.search(&query.query, limit));
            theirs_lat.push(started.elapsed());
        }
    }
    ours_lat.sort();
    theirs_lat.sort();
    (ours_lat, theirs_lat)
}

/// Prints the quality table: top-1, top-5 and MRR of each ranking per subset.
#[expect(
    clippy::print_stdout,
    reason = "a command-line tool: results to stdout"
)]
fn print_quality(quality: &Quality) {
    println!();
    println!("| ranking | subset | queries | top-1 | top-5 | MRR |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    for (name, scores) in [
        ("mcp-search", &quality.ours),
        ("baseline BM25", &quality.theirs),
    ] {
        for (i, subset) in SUBSETS.iter().enumerate() {
            let s = &scores[i];
            if s.queries == 0 {
                continue;
            }
            println!(
                "| {name} | {subset} | {} | {} | {} | {:.3} |",
                s.queries,
                Score::pct(s.top1, s.queries),
                Score::pct(s.top5, s.queries),
                if s.queries == 0 {
                    0.0
                } else {
                    s.reciprocal / s.queries as f64
                },
            );
        }
    }
}

/// Prints the cost table (latency percentiles, median build time, index memory) and how
/// much the resident set grew.
#[expect(
    clippy::print_stdout,
    reason = "a command-line tool: results to stdout"
)]
fn print_costs(built: &Built, ours_lat: &[Duration], theirs_lat: &[Duration]) {
    println!();
    println!("| ranking | query p50 | query p99 | index build | index memory |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    println!(
        "| mcp-search | {} | {} | {:.1} ms | {:.1} MiB |",
        micros(percentile(ours_lat, 0.5)),
        micros(percentile(ours_lat, 0.99)),
        built.builds[built.builds.len() / 2].as_secs_f64() * 1e3,
        built.index.heap_bytes() as f64 / (1024.0 * 1024.0),
    );
    println!(
        "| baseline BM25 | {} | {} | {:.1} ms | - |",
        micros(percentile(theirs_lat, 0.5)),
        micros(percentile(theirs_lat, 0.99)),
        built.baseline_builds[built.baseline_builds.len() / 2].as_secs_f64() * 1e3,
    );
    println!();
    println!(
        "Index memory: the index's estimate of its heap (capacities times element sizes, \
         `ToolIndex::heap_bytes`); the resident set grew by {} over the first build.",
        built.rss_growth.map_or("(unknown)".to_owned(), |b| format!(
            "{:.1} MiB",
            b as f64 / (1024.0 * 1024.0)
        ))
    );
}

/// Results one `search_tools` call returns by default, as the gateway does.
const SEARCH_RESULTS: usize = mcp_connections::DEFAULT_SEARCH_RESULTS;

/// The size table: a `tools/list` result of every tool (qualified names as the search
/// gives them), of the search mode's two tools, and the median search answer.
fn listing_sizes(
    catalog: &Catalog,
    index: &ToolIndex,
    queries: &[LabelledQuery],
) -> Result<String, String> {
    use rmcp::model::{ListToolsResult, Tool};
    let bpe = tiktoken_rs::o200k_base().map_err(|e| format!("the tokenizer: {e}"))?;
    let measure = |value: &serde_json::Value| {
        let text = value.to_string();
        (text.len(), bpe.encode_ordinary(&text).len())
    };
    let schema_of = |def: &mcp_search::ToolDef| match def.input_schema() {
        serde_json::Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    let mut by_name = std::collections::HashMap::new();
    let mut every = Vec::new();
    for (server, tools) in catalog.servers() {
        for def in tools {
            let name = mcp_search::qualified_name(server, def.name());
            every.push(Tool::new(
                name.clone(),
                def.description().to_owned(),
                std::sync::Arc::new(schema_of(def)),
            ));
            by_name.insert(name, def);
        }
    }
    let json = |result: ListToolsResult| serde_json::to_value(result).map_err(|e| e.to_string());
    let full = measure(&json(ListToolsResult::with_all_items(every))?);
    let search_mode = measure(&json(ListToolsResult::with_all_items(
        mcp_connections::search_mode_tools(),
    ))?);
    let no_schema = serde_json::Map::new();
    let mut answers = Vec::new();
    for query in queries {
        let Ok(hits) = index.search(&query.query, SEARCH_RESULTS) else {
            continue;
        };
        let found = hits.iter().filter_map(|h| {
            let def = by_name.get(h.qualified_name())?;
            let schema = def.input_schema().as_object().unwrap_or(&no_schema);
            Some((h.qualified_name(), Some(def.description()), schema))
        });
        answers.push(measure(&mcp_connections::search_answer_from(found)));
    }
    answers.sort_unstable();
    let answer = answers.get(answers.len() / 2).copied().unwrap_or_default();
    let mut out = String::new();
    out.push_str("| what the model reads | bytes | tokens (o200k_base) |\n");
    out.push_str("| --- | ---: | ---: |\n");
    for (what, (bytes, tokens)) in [
        (
            format!("`tools/list`, every tool ({})", catalog.tool_count()),
            full,
        ),
        (
            "`tools/list`, search mode (2 tools)".to_owned(),
            search_mode,
        ),
        (
            format!("one `search_tools` answer ({SEARCH_RESULTS} tools, median)"),
            answer,
        ),
    ] {
        out.push_str(&format!("| {what} | {bytes} | {tokens} |\n"));
    }
    Ok(out)
}

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
//!
//! Built with the `semantic` feature, a third ranking stands beside the two: mcp-search
//! with its static-embedding layer (`StaticEmbedder`, fused by `Fusion::static_model`),
//! the model read from `--model DIR`, else `MCP_SEARCH_MODEL_DIR`, else the workspace's
//! `target/semantic-model/potion-base-8M` (`scripts/semantic-model.sh` installs it). Its
//! build time embeds every tool; a second figure re-indexes every server into the built
//! index, where each unchanged tool keeps its cached vector. Its memory counts the model's
//! matrix beside the index.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_search::{Bm25Baseline, Catalog, LabelledQuery, ToolIndex};
use serde_json::json;

const USAGE: &str = "usage: mcp-bench tool-search --catalog FILE --queries FILE \
     [--independent FILE] [--json] [--limit K] [--model DIR (with the semantic feature)]";

/// Rounds of the whole query set timed for the latency figures.
const TIMING_ROUNDS: usize = 5;

struct Args {
    catalog: PathBuf,
    queries: PathBuf,
    independent: Option<PathBuf>,
    json: bool,
    limit: usize,
    /// The semantic layer's model folder, if given.
    model: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let (mut catalog, mut queries, mut json, mut limit) = (None, None, false, 10usize);
    let mut independent = None;
    let mut model = None;
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
            "--model" => model = Some(PathBuf::from(it.next().ok_or("--model needs a folder")?)),
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
        model,
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
    let built = match Built::timed(&catalog, args.model.as_deref()) {
        Ok(built) => built,
        Err(e) => {
            eprintln!("mcp-bench tool-search: {}", with_sources(&e));
            return std::process::ExitCode::FAILURE;
        }
    };
    let quality = rank_all(&built, &queries, &independent, &args);
    let every: Vec<LabelledQuery> = queries.iter().chain(&independent).cloned().collect();
    let lat = latencies(&built, &every, args.limit);

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
    print_costs(&built, &lat);
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
    /// The index with the semantic layer (the `semantic` feature).
    semantic: Option<semantic::Built>,
}

impl Built {
    /// Builds each index a few times (the median build is reported), the search's first.
    fn timed(
        catalog: &Catalog,
        model: Option<&std::path::Path>,
    ) -> Result<Self, mcp_search::SearchError> {
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
        let semantic = semantic::Built::timed(catalog, model)?;
        Ok(Self {
            index,
            builds,
            rss_growth,
            baseline,
            baseline_builds,
            semantic,
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
    /// Empty without the semantic layer.
    semantic: Vec<Score>,
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
    let mut semantic: Vec<Score> = Vec::new();
    if built.semantic.is_some() {
        semantic = vec![Score::default(); SUBSETS.len()];
    }
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
        let meaning: Option<Vec<String>> = match &built.semantic {
            Some(s) => match s.index.search(&query.query, args.limit) {
                Ok(hits) => Some(hits.iter().map(|h| h.qualified_name().to_owned()).collect()),
                Err(e) => {
                    failed += 1;
                    eprintln!("query {:?} (semantic): {e}", query.query);
                    Some(Vec::new())
                }
            },
            None => None,
        };
        for &i in &counted {
            ours[i].add(query, &ranked);
            theirs[i].add(query, &reference);
            if let Some(m) = &meaning {
                semantic[i].add(query, m);
            }
        }
        print_query(query, &ranked, &reference, meaning.as_deref(), args.json);
    }
    Quality {
        ours,
        theirs,
        semantic,
        failed,
    }
}

/// Prints one query with what it expects and both rankings (the first five of each), or
/// with `json` the whole of them as one JSON line.
#[expect(
    clippy::print_stdout,
    reason = "a command-line tool: results to stdout"
)]
fn print_query(
    query: &LabelledQuery,
    ranked: &[String],
    reference: &[String],
    semantic: Option<&[String]>,
    json: bool,
) {
    if json {
        let mut line = json!({
            "query": query.query,
            "expected": query.expected,
            "ranked": ranked,
            "baseline": reference,
        });
        if let Some(semantic) = semantic {
            line["semantic"] = json!(semantic);
        }
        println!("{line}");
        return;
    }
    println!("query: {}", query.query.replace('\n', " "));
    println!("  expected: {}", query.expected.join(", "));
    println!("  ranked:   {}", first_five(ranked));
    println!("  baseline: {}", first_five(reference));
    if let Some(semantic) = semantic {
        println!("  semantic: {}", first_five(semantic));
    }
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

/// Each ranking's search latencies, sorted.
struct Latencies {
    ours: Vec<Duration>,
    theirs: Vec<Duration>,
    /// Empty without the semantic layer.
    semantic: Vec<Duration>,
}

/// Each ranking's search latencies, sorted: every query, several rounds, each search
/// timed alone.
fn latencies(built: &Built, queries: &[LabelledQuery], limit: usize) -> Latencies {
    let mut lat = Latencies {
        ours: Vec::new(),
        theirs: Vec::new(),
        semantic: Vec::new(),
    };
    for _ in 0..TIMING_ROUNDS {
        for query in queries {
            let started = Instant::now();
            let _ = std::hint::black_box(built.index.search(&query.query, limit));
            lat.ours.push(started.elapsed());
            let started = Instant::now();
            let _ = std::hint::black_box(built.baseline.search(&query.query, limit));
            lat.theirs.push(started.elapsed());
            if let Some(s) = &built.semantic {
                let started = Instant::now();
                let _ = std::hint::black_box(s.index.search(&query.query, limit));
                lat.semantic.push(started.elapsed());
            }
        }
    }
    lat.ours.sort();
    lat.theirs.sort();
    lat.semantic.sort();
    lat
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
        ("mcp-search + semantic", &quality.semantic),
        ("baseline BM25", &quality.theirs),
    ] {
        for (s, subset) in scores.iter().zip(SUBSETS) {
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
fn print_costs(built: &Built, lat: &Latencies) {
    println!();
    println!("| ranking | query p50 | query p99 | index build | index memory |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    println!(
        "| mcp-search | {} | {} | {:.1} ms | {:.1} MiB |",
        micros(percentile(&lat.ours, 0.5)),
        micros(percentile(&lat.ours, 0.99)),
        built.builds[built.builds.len() / 2].as_secs_f64() * 1e3,
        built.index.heap_bytes() as f64 / (1024.0 * 1024.0),
    );
    if let Some(s) = &built.semantic {
        println!(
            "| mcp-search + semantic | {} | {} | {:.1} ms (re-index, vectors cached: {:.1} ms) | {:.1} MiB (model {:.1} MiB + index {:.1} MiB) |",
            micros(percentile(&lat.semantic, 0.5)),
            micros(percentile(&lat.semantic, 0.99)),
            s.builds[s.builds.len() / 2].as_secs_f64() * 1e3,
            s.rebuild.as_secs_f64() * 1e3,
            (s.model_bytes + s.index.heap_bytes()) as f64 / (1024.0 * 1024.0),
            s.model_bytes as f64 / (1024.0 * 1024.0),
            s.index.heap_bytes() as f64 / (1024.0 * 1024.0),
        );
    }
    println!(
        "| baseline BM25 | {} | {} | {:.1} ms | - |",
        micros(percentile(&lat.theirs, 0.5)),
        micros(percentile(&lat.theirs, 0.99)),
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
    if let Some(s) = &built.semantic {
        println!(
            "With the semantic layer: the resident set grew by {} over loading the model \
             ({}) and building its index once.",
            s.rss_growth.map_or("(unknown)".to_owned(), |b| format!(
                "{:.1} MiB",
                b as f64 / (1024.0 * 1024.0)
            )),
            s.model.display()
        );
    }
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

/// The semantic layer's index (the `semantic` feature): one [`semantic::Built`], built only
/// with the feature.
mod semantic {
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use mcp_search::{Catalog, SearchError, ToolIndex};

    /// The index with the static-embedding layer, and what building it took.
    pub(super) struct Built {
        pub(super) index: ToolIndex,
        /// Build times from nothing (every tool embedded), sorted.
        pub(super) builds: Vec<Duration>,
        /// Re-indexing every server into the built index (every vector cached).
        pub(super) rebuild: Duration,
        /// The model's matrix, in bytes.
        pub(super) model_bytes: usize,
        /// How much the resident set grew over loading the model and the first build.
        pub(super) rss_growth: Option<u64>,
        /// The model folder.
        pub(super) model: PathBuf,
    }

    impl Built {
        /// Loads the model (`model`, else `MCP_SEARCH_MODEL_DIR`, else the workspace's
        /// `target/semantic-model/potion-base-8M`) and builds the index a few times.
        #[cfg(feature = "semantic")]
        pub(super) fn timed(
            catalog: &Catalog,
            model: Option<&Path>,
        ) -> Result<Option<Self>, SearchError> {
            use std::sync::Arc;
            use std::time::Instant;

            use mcp_search::{Fusion, StaticEmbedder};

            let dir = model
                .map(Path::to_owned)
                .or_else(|| std::env::var_os(mcp_search::MODEL_DIR_ENV).map(PathBuf::from))
                .unwrap_or_else(|| {
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("../target/semantic-model/potion-base-8M")
                });
            let rss_before = super::rss_bytes();
            let embedder = Arc::new(StaticEmbedder::from_dir(&dir)?);
            let model_bytes = embedder.heap_bytes();
            let mut builds = Vec::new();
            let mut index = ToolIndex::new();
            let mut rss_growth = None;
            for _ in 0..5 {
                let started = Instant::now();
                index =
                    ToolIndex::with_embedder(embedder.clone()).with_fusion(Fusion::static_model());
                catalog.index_into(&mut index)?;
                builds.push(started.elapsed());
                if rss_growth.is_none() {
                    rss_growth = rss_before
                        .zip(super::rss_bytes())
                        .map(|(a, b)| b.saturating_sub(a));
                }
            }
            builds.sort();
            let started = Instant::now();
            catalog.index_into(&mut index)?;
            let rebuild = started.elapsed();
            Ok(Some(Self {
                index,
                builds,
                rebuild,
                model_bytes,
                rss_growth,
                model: dir,
            }))
        }

        /// Without the `semantic` feature: `None`, no third ranking (a `--model` is
        /// refused by name).
        #[cfg(not(feature = "semantic"))]
        pub(super) fn timed(
            _catalog: &Catalog,
            model: Option<&Path>,
        ) -> Result<Option<Self>, SearchError> {
            match model {
                Some(path) => Err(SearchError::Model {
                    path: path.to_owned(),
                    message: "mcp-bench was built without the `semantic` feature: \
                              rebuild with --features semantic"
                        .to_owned(),
                }),
                None => Ok(None),
            }
        }
    }
}

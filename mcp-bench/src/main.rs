//! `mcp-bench`: every row of `quality.md`'s benchmark table, measured in one run, each
//! figure beside its baseline from the same run (bare rmcp clients on the same
//! `mcp-fake-server` scenario) and the ratio, printed as one Markdown table (or JSON with
//! `--json`).
//!
//! Run: `cargo run --release -p mcp-bench` (`-- --json`; `-- --only NAME` for some rows;
//! `-- --quick` for a short smoke run). A debug build runs too, but its numbers mean
//! little; it says so.
//!
//! A and B sides run interleaved (A B, B A, …) and the figures are medians, because the
//! machines are shared and noisy. Every process started is shut down; at the end the run
//! looks in `/proc` for any `mcp-fake-server` of its own scenario and fails if one is left.
//!
//! Exit status: 0 when every row measured (whether or not it meets its target: a ratio never
//! fails the run, the machines are noisy), 1 when a row broke (an error, a probe that
//! failed) or a server process of the run was left behind, 2 for a bad argument. `.ci/run`
//! runs `--quick` and relies on exactly that.

#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line tool: the table goes to stdout, progress to stderr"
)]

mod fixture;
mod installs;
mod procs;
mod rows;
mod spawned;
mod stats;
mod table;
mod tool_search;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use fixture::Fixture;
use table::Row;

/// Errors of a row: anything, with its message.
pub(crate) type Error = Box<dyn std::error::Error + Send + Sync>;
/// A row's result.
pub(crate) type Result<T> = std::result::Result<T, Error>;

/// An error with `message`.
pub(crate) fn fail(message: impl Into<String>) -> Error {
    message.into().into()
}

/// Iteration counts; `--quick` divides them for a smoke run.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) warmup_calls: usize,
    pub(crate) rounds_calls: usize,
    pub(crate) calls_per_round: usize,
    pub(crate) rounds_throughput: usize,
    pub(crate) calls_per_caller: usize,
    pub(crate) rounds_startup: usize,
    pub(crate) rounds_memory: usize,
    pub(crate) pool_batches: usize,
    pub(crate) pool_batch_size: usize,
    pub(crate) naming_warmup: usize,
    pub(crate) naming_iterations: usize,
}

impl Settings {
    pub(crate) fn full() -> Self {
        Self {
            warmup_calls: 500,
            rounds_calls: 40,
            calls_per_round: 500,
            rounds_throughput: 48,
            calls_per_caller: 50,
            rounds_startup: 16,
            rounds_memory: 5,
            pool_batches: 200,
            pool_batch_size: 1000,
            naming_warmup: 5,
            naming_iterations: 50,
        }
    }

    /// These settings with `factor` times fewer rounds and warm-up calls, for a server
    /// whose calls take milliseconds (a Node server, a gateway).
    pub(crate) fn slower(&self, factor: usize) -> Self {
        let factor = factor.max(1);
        Self {
            warmup_calls: (self.warmup_calls / factor).max(1),
            rounds_calls: (self.rounds_calls / factor).max(2),
            ..self.clone()
        }
    }

    fn quick() -> Self {
        Self {
            warmup_calls: 20,
            rounds_calls: 4,
            calls_per_round: 50,
            rounds_throughput: 2,
            calls_per_caller: 10,
            rounds_startup: 2,
            rounds_memory: 1,
            pool_batches: 20,
            pool_batch_size: 100,
            naming_warmup: 1,
            naming_iterations: 5,
        }
    }
}

const USAGE: &str = "usage: mcp-bench [--json] [--quick] [--only NAME]\n\
    Measures every row of quality.md's benchmark table against its baseline, in one run.\n\
    --json   print the rows as JSON instead of a Markdown table\n\
    --quick  fewer iterations (a smoke run; numbers are rough)\n\
    --only NAME  only the measurements whose name contains NAME (e.g. \"era probe\")\n\
    Exit status: 0 when every row measured (a missed target never fails the run), 1 when a\n\
    row broke or a server process was left behind, 2 for a bad argument.\n\
    mcp-bench tool-search --catalog FILE --queries FILE [--json] [--limit K]\n\
             the tool search's accuracy and speed beside a plain BM25 baseline";

/// How long the leftover check waits for processes to be gone.
pub(crate) const LEFTOVER_BOUND: Duration = Duration::from_secs(5);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "tool-search") {
        return tool_search::run(&args[1..]);
    }
    if let [flag, side] = args.as_slice()
        && flag == rows::memory::PROBE_ARG
    {
        return memory_probe(side);
    }
    let mut json = false;
    let mut settings = Settings::full();
    let mut only = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => json = true,
            "--quick" => settings = Settings::quick(),
            "--only" => match args.next() {
                Some(name) => only = Some(name),
                None => {
                    eprintln!("mcp-bench: --only needs a name\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("mcp-bench: unknown argument {other:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "mcp-bench: WARNING: this is a debug build; the numbers are only meaningful in \
             release (cargo run --release -p mcp-bench)"
        );
    }
    match runtime() {
        Ok(rt) => rt.block_on(run(json, settings, only)),
        Err(e) => {
            eprintln!("mcp-bench: cannot start the tokio runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The runtime of every measurement: two workers, as the machines have two cores.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// `--memory-probe set|bare`: one memory sample in this fresh process, as JSON on stdout.
fn memory_probe(side: &str) -> ExitCode {
    let outcome = runtime()
        .map_err(Error::from)
        .and_then(|rt| rt.block_on(rows::memory::probe(side)))
        .and_then(|probe| Ok(serde_json::to_string(&probe)?));
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mcp-bench: memory probe: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(json: bool, s: Settings, only: Option<String>) -> ExitCode {
    let fx = match Fixture::new() {
        Ok(fx) => fx,
        Err(e) => {
            eprintln!("mcp-bench: cannot prepare the fake server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    let load_before = procs::load_average();
    let mut rows: Vec<Row> = Vec::new();
    let mut failed = Vec::new();
    macro_rules! measure {
        ($name:expr, $rows:expr) => {{
            if only.as_ref().is_none_or(|o| $name.contains(o.as_str())) {
                eprintln!("mcp-bench: {} …", $name);
                let t = Instant::now();
                match $rows {
                    Ok(r) => rows.extend(r),
                    Err(e) => {
                        eprintln!("mcp-bench: {} FAILED: {e}", $name);
                        rows.push(Row::failed($name, &e.to_string()));
                        failed.push(format!("{}: {e}", $name));
                    }
                }
                eprintln!(
                    "mcp-bench: {} took {:.1} s",
                    $name,
                    t.elapsed().as_secs_f64()
                );
            }
        }};
    }
    measure!("call overhead", rows::calls::overhead(&fx, &s).await);
    measure!("call throughput", rows::calls::throughput(&fx, &s).await);
    measure!("HTTP call overhead", rows::http::overhead(&fx, &s).await);
    measure!(
        "HTTP call throughput",
        rows::http::throughput(&fx, &s).await
    );
    measure!(
        "HTTP call overhead (server-everything)",
        rows::http::everything(&fx, &s).await
    );
    measure!("gateway", rows::gateway::gateway(&fx, &s).await);
    measure!(
        "gateway: input round",
        rows::input_round::input_round(&fx, &s).await
    );
    measure!(
        "gateway as each caller",
        rows::identity::identity(&fx, &s).await
    );
    measure!("sharing", rows::sharing::sharing(&fx, &s).await);
    measure!("startup fan-out", rows::startup::fan_out(&fx, &s).await);
    measure!("startup with pins", rows::startup::pinned(&fx, &s).await);
    measure!("era probe", rows::era::era_probe(&fx, &s).await);
    measure!("warm start", rows::startup::warm_start(&fx, &s).await);
    measure!("skills", rows::skills::skills(&fx, &s).await);
    measure!("event latency", rows::events::event_latency(&fx, &s).await);
    measure!("naming", rows::naming::naming(&s));
    measure!("pool", rows::pool::acquire_release(&s).await);
    measure!(
        "pool: 100 sessions",
        rows::sharing::hundred_sessions(&fx).await
    );
    measure!("memory", rows::memory::memory(&s).await);

    let left = procs::wait_gone(fx.marker(), LEFTOVER_BOUND).await;
    let load_after = procs::load_average();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    if json {
        let doc = serde_json::json!({
            "build": build,
            "cores": cores,
            "arch": std::env::consts::ARCH,
            "seconds": started.elapsed().as_secs_f64(),
            "load_average_1m": [load_before, load_after],
            "bare_processes_started": fx.bare_started(),
            "leftover_processes": left,
            "failed": failed,
            "rows": rows,
        });
        println!("{doc:#}");
    } else {
        println!(
            "mcp-bench ({build} build, {cores} cores, {}), {:.0} s, 1-minute load average \
             {load_before} before, {load_after} after:\n",
            std::env::consts::ARCH,
            started.elapsed().as_secs_f64()
        );
        print!("{}", table::markdown(&rows));
    }
    let mut code = ExitCode::SUCCESS;
    if !left.is_empty() {
        eprintln!(
            "mcp-bench: FAILED: {} mcp-fake-server process(es) of this run still alive after \
             shutdown: pids {left:?}",
            left.len()
        );
        code = ExitCode::FAILURE;
    } else {
        eprintln!("mcp-bench: no mcp-fake-server of this run is left");
    }
    if !failed.is_empty() {
        eprintln!("mcp-bench: FAILED rows: {}", failed.join("; "));
        code = ExitCode::FAILURE;
    }
    code
}

//! `mcp-fake-server`: a fake MCP server for tests, over stdio (default), streamable HTTP
//! (`--http ADDR`) or the legacy HTTP+SSE transport (`--http ADDR --sse`).
//!
//! Configure it with a scenario file (`--scenario FILE`, TOML or JSON by extension) or
//! inline JSON (`--scenario-json TEXT`), and/or flags; flags are applied on top of it. Run `mcp-fake-server --help`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mcp_testkit::{Scenario, ToolSpec};

/// A fake MCP server for tests (see the mcp-testkit crate docs).
#[derive(Debug, Parser)]
#[command(name = "mcp-fake-server", version)]
struct Args {
    /// Scenario file (.toml or .json).
    #[arg(long, value_name = "FILE", conflicts_with = "scenario_json")]
    scenario: Option<PathBuf>,
    /// The scenario itself, as JSON text (instead of a file), e.g.
    /// `--scenario-json '{"tools": [{"name": "echo"}]}'`.
    #[arg(long, value_name = "JSON")]
    scenario_json: Option<String>,
    /// Add an echo tool with this name (repeatable).
    #[arg(long = "tool", value_name = "NAME")]
    tools: Vec<String>,
    /// Write this process's pid to FILE at startup.
    #[arg(long, value_name = "FILE")]
    pid_file: Option<PathBuf>,
    /// Append one JSON line per received request (method + params) to FILE.
    #[arg(long, value_name = "FILE")]
    request_log: Option<PathBuf>,
    /// Ignore SIGTERM and keep running after stdin closes, until SIGKILL.
    #[arg(long)]
    ignore_sigterm: bool,
    /// Spawn `sleep 1000` in this process group and write its pid to PIDFILE.
    #[arg(long, value_name = "PIDFILE")]
    spawn_grandchild: Option<PathBuf>,
    /// Exit with CODE at startup, before reading stdin.
    #[arg(long, value_name = "CODE", allow_negative_numbers = true)]
    exit_at_startup: Option<i32>,
    /// Write TEXT to stderr at startup.
    #[arg(long, value_name = "TEXT")]
    stderr: Option<String>,
    /// Delay the initialize answer by N milliseconds.
    #[arg(long, value_name = "N")]
    init_delay_ms: Option<u64>,
    /// Delay each tools/list page answer by N milliseconds.
    #[arg(long, value_name = "N")]
    list_delay_ms: Option<u64>,
    /// Never answer initialize.
    #[arg(long)]
    hang_initialize: bool,
    /// Write a line of non-JSON garbage to stdout before serving.
    #[arg(long)]
    garbage_stdout: bool,
    /// Write one non-JSON stdout line of BYTES bytes before serving.
    #[arg(long, value_name = "BYTES")]
    huge_line: Option<usize>,
    /// Write LINES lines to stderr at startup.
    #[arg(long, value_name = "LINES")]
    flood_stderr: Option<usize>,
    /// Paginate lists in pages of N.
    #[arg(long, value_name = "N")]
    page_size: Option<usize>,
    /// Every list page returns the same cursor.
    #[arg(long)]
    repeating_cursor: bool,
    /// Lists never end.
    #[arg(long)]
    endless_pages: bool,
    /// Answer initialize with this protocolVersion, whatever the client asked for.
    #[arg(long, value_name = "VERSION")]
    protocol_version: Option<String>,
    /// With --sse: end each event stream after N `message` events.
    #[arg(long, value_name = "N", requires = "sse")]
    sse_drop_after: Option<u64>,
    /// Instructions for the initialize result.
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,
    /// Serve streamable HTTP on ADDR (e.g. 127.0.0.1:0) instead of stdio; the MCP
    /// endpoint is `/mcp`.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// With --http: write the bound URL (`http://ADDR/mcp`) and a newline to FILE.
    #[arg(long, value_name = "FILE", requires = "http")]
    addr_file: Option<PathBuf>,
    /// With --http: require `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "TOKEN", requires = "http")]
    bearer_token: Option<String>,
    /// With --http: serve the legacy HTTP+SSE transport (MCP 2024-11-05) instead of
    /// streamable HTTP; the event stream is `/sse`, the message endpoint `/messages`.
    #[arg(long, requires = "http")]
    sse: bool,
}

impl Args {
    fn scenario(self) -> Result<Scenario, mcp_testkit::Error> {
        let mut s = match (&self.scenario, &self.scenario_json) {
            (Some(path), _) => Scenario::from_path(path)?,
            (None, Some(json)) => Scenario::from_json_str(json)?,
            (None, None) => Scenario::new("mcp-fake-server"),
        };
        s.tools.extend(self.tools.into_iter().map(ToolSpec::echo));
        let f = &mut s.faults;
        f.ignore_sigterm |= self.ignore_sigterm;
        f.hang_initialize |= self.hang_initialize;
        f.garbage_stdout |= self.garbage_stdout;
        f.repeating_cursor |= self.repeating_cursor;
        f.endless_pages |= self.endless_pages;
        f.spawn_grandchild = self.spawn_grandchild.or(f.spawn_grandchild.take());
        f.exit_at_startup = self.exit_at_startup.or(f.exit_at_startup);
        f.stderr = self.stderr.or(f.stderr.take());
        f.init_delay_ms = self.init_delay_ms.or(f.init_delay_ms);
        f.list_delay_ms = self.list_delay_ms.or(f.list_delay_ms);
        f.huge_line = self.huge_line.or(f.huge_line);
        f.flood_stderr = self.flood_stderr.or(f.flood_stderr);
        f.page_size = self.page_size.or(f.page_size);
        f.protocol_version = self.protocol_version.or(f.protocol_version.take());
        f.sse_drop_after = self.sse_drop_after.or(f.sse_drop_after);
        s.record.pid_file = self.pid_file.or(s.record.pid_file.take());
        s.record.request_log = self.request_log.or(s.record.request_log.take());
        s.instructions = self.instructions.or(s.instructions.take());
        Ok(s)
    }
}

#[expect(
    clippy::print_stderr,
    reason = "a program reporting its own fatal error"
)]
fn main() -> ExitCode {
    let args = Args::parse();
    let sse = args.sse;
    let http = args
        .http
        .map(|addr| (addr, args.addr_file.clone(), args.bearer_token.clone()));
    let result = args.scenario().and_then(|scenario| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|source| mcp_testkit::Error::Io {
                doing: "starting the tokio runtime",
                source,
            })?;
        runtime.block_on(async move {
            match http {
                None => mcp_testkit::serve_stdio(scenario).await,
                Some((addr, addr_file, token)) if sse => {
                    mcp_testkit::serve_sse_process(scenario, addr, addr_file, token).await
                }
                Some((addr, addr_file, token)) => {
                    mcp_testkit::serve_http_process(scenario, addr, addr_file, token).await
                }
            }
        })
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-fake-server: {e}");
            ExitCode::from(2)
        }
    }
}

//! `mcpctl`: check and use MCP server configurations from the command line.
//!
//! It loads a configuration (`--config FILE`, else another client's files with `--from
//! CLIENT`, else the user file `~/.config/mcpctl/mcp.toml` below `./mcp.toml` or else
//! `./.mcp.json`, else an embedded demo that starts fake servers) through `mcp_catalog::Discovery`, starts every server through
//! `mcp-connections`, and shows their status, tools and resources, calls tools and reads
//! resources. `login`, `logout` and `auth-status` manage the OAuth credentials of
//! streamable HTTP servers (through `mcp-auth`) without starting any server; `config import`
//! converts another client's configuration to `mcp.toml`. Run
//! `mcpctl --help`.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "CLI output")]

mod cli;
mod commands;
mod error;
mod host;
mod serve;
mod telemetry;
mod term;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let telemetry = init_tracing(cli.global.verbose);
    term::render::set_table_width(cli.global.wide);
    let code = run(cli);
    // Every command's spans and metrics leave before the process does (bounded).
    telemetry.shutdown();
    code
}

/// The stack of each runtime worker thread. The gateway polls a whole upstream call (the
/// client's request, the approval rule, the set, the connection, telemetry) inside one
/// task; unoptimized builds give each of those poll functions a frame of hundreds of KB,
/// and tokio's default of 2 MiB overflowed. Optimized builds need far less.
const WORKER_STACK: usize = 8 * 1024 * 1024;

/// Runs the command line's command to its exit code.
fn run(cli: Cli) -> ExitCode {
    if let Command::FakeServer(args) = &cli.command {
        return commands::fake_server::run(args);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(WORKER_STACK)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(error::EXIT_FAILURE);
        }
    };
    let json = cli.global.json;
    let span = command_span(&cli.command);
    let code = match runtime.block_on(tracing::Instrument::instrument(commands::run(cli), span)) {
        Ok(code) => code,
        Err(e) => {
            e.print();
            if json {
                term::render::out_json(&e.to_json());
            }
            e.code()
        }
    };
    // Background tasks of the connection set were shut down by the command; do not wait
    // for stragglers (e.g. a blocked stdin read of a declined prompt).
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(code)
}

/// The root span of a command that does one job and ends (`mcpctl call`, …): its requests'
/// spans are children of it, so one command is one trace. `serve` (whose requests have
/// spans of their own, one trace per client request) and the commands that start no
/// server have none.
fn command_span(command: &Command) -> tracing::Span {
    let name = match command {
        Command::Status => "mcpctl status",
        Command::Tools(_) => "mcpctl tools",
        Command::Call(_) => "mcpctl call",
        Command::Accept(_) => "mcpctl accept",
        Command::Skills(_) => "mcpctl skills",
        Command::Events(_) => "mcpctl events",
        Command::Resources(_) => "mcpctl resources",
        Command::Read(_) => "mcpctl read",
        _ => return tracing::Span::none(),
    };
    tracing::info_span!("mcpctl", otel.name = name)
}

/// Longest logged field value (a message, a server's line) in bytes; longer ones are cut
/// and marked with their length. rmcp logs every unparsable stdout line whole at debug
/// level, and a server may print lines of megabytes.
const MAX_LOGGED_FIELD: usize = 8192;

/// Logs go to stderr, each field cut to [`MAX_LOGGED_FIELD`] bytes. Without `-v` and
/// `RUST_LOG` only mcp-auth's security warnings are shown (a loose credential directory, a
/// refused credential file, the keyring fallback…), as plain `WARN` lines; `-v` shows debug
/// logs, `-vv` trace logs, and `RUST_LOG` replaces the filter entirely. Beside them, when the
/// environment asks for it, spans go to OpenTelemetry ([`telemetry`]), whose providers are
/// returned to be shut down at exit.
fn init_tracing(verbose: u8) -> telemetry::Telemetry {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::Layer;
    use tracing_subscriber::field::MakeExt;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = match verbose {
        0 => EnvFilter::try_from_default_env().ok(),
        1 => Some(EnvFilter::new("debug")),
        _ => Some(EnvFilter::new("trace")),
    };
    let log: telemetry::BoxedLayer = match filter {
        None => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .without_time()
            .with_filter(quiet_filter())
            .boxed(),
        Some(filter) => {
            let fields = tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
                let text = format!("{value:?}");
                let text = bounded(&text, MAX_LOGGED_FIELD);
                if field.name() == "message" {
                    writer.write_str(&text)
                } else {
                    write!(writer, "{}={text}", field.name())
                }
            })
            .delimited(" ");
            tracing_subscriber::fmt::layer()
                .fmt_fields(fields)
                .with_writer(std::io::stderr)
                .with_filter(filter)
                .boxed()
        }
    };
    let (mut telemetry, otel) = telemetry::Telemetry::from_env();
    let layers: Vec<telemetry::BoxedLayer> = std::iter::once(log).chain(otel).collect();
    let _ = tracing_subscriber::registry().with(layers).try_init();
    telemetry.report_setup();
    telemetry
}

/// The filter without `-v`: everything off except security warnings.
fn quiet_filter() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::new(quiet_directives())
}

fn quiet_directives() -> String {
    format!("off,{}=warn", mcp_auth::SECURITY_LOG_TARGET)
}

/// `text` cut to at most `max` bytes (on a character boundary) and marked `… (N bytes)`
/// when cut.
fn bounded(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    std::borrow::Cow::Owned(format!("{}… ({} bytes)", &text[..cut], text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quiet_filter_keeps_only_security_warnings() {
        assert_eq!(quiet_directives(), "off,mcp_auth::security=warn");
        // Parses as written (an invalid directive would be dropped silently).
        assert_eq!(quiet_filter().to_string(), "mcp_auth::security=warn,off");
    }

    #[test]
    fn long_log_fields_are_cut_and_marked() {
        assert_eq!(bounded("short", 8), "short");
        assert_eq!(bounded("0123456789", 4), "0123… (10 bytes)");
        assert_eq!(bounded("ééé", 3), "é… (6 bytes)");
    }
}

//! The command line: global options and subcommands (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Check and use MCP server configurations.
///
/// Without --config, mcpctl reads ./mcp.toml, else ./.mcp.json, else runs an embedded demo
/// that starts fake servers.
#[derive(Debug, Parser)]
#[command(
    name = "mcpctl",
    version,
    propagate_version = true,
    after_help = "Examples:\n  mcpctl status\n  mcpctl tools --server notes\n  mcpctl call mcp__notes__echo '{\"text\": \"hi\"}'\n  echo '{\"query\": \"milk\"}' | mcpctl call mcp__notes__search_notes -\n  mcpctl --config ~/.codex/config.toml status --json"
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every command takes.
#[derive(Debug, Args, Clone)]
pub(crate) struct GlobalArgs {
    /// Configuration file: TOML with [mcp_servers.*] tables, or .mcp.json.
    #[arg(long, short = 'c', global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Print JSON for scripts instead of human output.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Debug logs on stderr (-vv for trace).
    #[arg(long, short = 'v', global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start every server and show its state, tool count and failure reason.
    Status,
    /// List the aggregated tools with their qualified names.
    Tools(ServerFilter),
    /// Call a tool and print its result.
    Call(CallArgs),
    /// List the resources (and resource templates) of the servers.
    Resources(ServerFilter),
    /// Read one resource of one server.
    Read(ReadArgs),
    /// Configuration commands.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Serve a fake MCP server on stdio (used by the embedded demo).
    #[command(hide = true)]
    FakeServer(FakeServerArgs),
}

/// `--server KEY`.
#[derive(Debug, Args)]
pub(crate) struct ServerFilter {
    /// Only this server (its name, or name@environment).
    #[arg(long, short = 's', value_name = "KEY")]
    pub(crate) server: Option<String>,
}

/// Arguments of `call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The qualified tool name from `mcpctl tools` (mcp__server__tool); with --server, the
    /// tool's own name on that server.
    #[arg(value_name = "QUALIFIED_NAME")]
    pub(crate) name: String,
    /// Arguments as a JSON object, or `-` to read them from stdin.
    #[arg(value_name = "JSON_ARGS")]
    pub(crate) arguments: Option<String>,
    /// Call the tool by its own (raw) name on this server instead of a qualified name.
    #[arg(long, short = 's', value_name = "KEY")]
    pub(crate) server: Option<String>,
    /// Give up after this many seconds (the server's tool_timeout_sec applies too).
    #[arg(long, value_name = "SECONDS")]
    pub(crate) timeout: Option<f64>,
}

/// Arguments of `read`.
#[derive(Debug, Args)]
pub(crate) struct ReadArgs {
    /// The server (its name, or name@environment).
    #[arg(value_name = "KEY")]
    pub(crate) server: String,
    /// The resource URI.
    #[arg(value_name = "URI")]
    pub(crate) uri: String,
}

/// `config` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Validate the configuration: errors with file, line and column; warnings; conflicts.
    Check,
}

/// Arguments of the hidden `fake-server` command.
#[derive(Debug, Args)]
pub(crate) struct FakeServerArgs {
    /// Scenario file (.toml or .json).
    #[arg(long, value_name = "FILE", conflicts_with = "scenario_json")]
    pub(crate) scenario: Option<PathBuf>,
    /// Scenario as inline JSON.
    #[arg(long, value_name = "JSON")]
    pub(crate) scenario_json: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}

//! The command line: global options and subcommands (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use mcp_catalog::ClientKind;

/// Parses `--from CLIENT`.
fn parse_client(s: &str) -> Result<ClientKind, mcp_catalog::UnknownClient> {
    s.parse()
}

/// Check and use MCP server configurations.
///
/// Without --config, mcpctl reads its user file (~/.config/mcpctl/mcp.toml) below ./mcp.toml,
/// else ./.mcp.json, else runs an embedded demo that starts fake servers. With --from
/// CLIENT it reads another client's configuration from that client's usual places instead.
#[derive(Debug, Parser)]
#[command(
    name = "mcpctl",
    version,
    propagate_version = true,
    after_help = AFTER_HELP
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Examples and where credentials live, after the option list of `mcpctl --help`.
const AFTER_HELP: &str = "Examples:
  mcpctl status
  mcpctl tools --server notes
  mcpctl call mcp__notes__echo '{\"text\": \"hi\"}'
  echo '{\"query\": \"milk\"}' | mcpctl call mcp__notes__search_notes -
  mcpctl --config ~/.codex/config.toml status --json
  mcpctl --from cursor tools
  mcpctl config import --from vscode --output mcp.toml
  mcpctl login tickets

Exit codes:
  0    success
  1    failure: a tool returned an error, a call failed or timed out, a required server
       failed (`status`)
  2    usage: bad command line, configuration, tool or server name, or arguments
  3    server unavailable: the server `call` or `read` needs is not ready (it failed to
       start, needs a login, or is crash-looping); the message says why
  4    untrusted: a project configuration (./mcp.toml, ./.mcp.json, or another client's
       project file with --from) is not trusted with its current content; nothing started
  130  interrupted (Ctrl-C)
  With --json, errors are printed to stdout as {\"error\": {\"kind\", \"message\", \"hint\",
  \"exit_code\", ...}}; kind is one of usage, unknown_server, ambiguous_server,
  unknown_tool, tool_filtered, invalid_arguments, server_unavailable (with \"server\" and
  \"reason\"), timeout, denied, server_error, server_failed, required_servers_failed,
  failure, interrupted.

Credentials:
  `mcpctl login SERVER` stores OAuth tokens for a streamable HTTP server; every command
  that starts servers uses them (refreshed when they expire). Where they live is set by
  the configuration's credentials_store: \"auto\" (default: the OS keyring, else the file),
  \"keyring\" or \"file\". The file is credentials.json (mode 0600) in the data directory:
  $MCPCTL_HOME if set, else $XDG_DATA_HOME/mcpctl, else $HOME/.local/share/mcpctl.
  The embedded demo keeps credentials in memory only.";

/// Options every command takes.
#[derive(Debug, Args, Clone)]
pub(crate) struct GlobalArgs {
    /// Configuration file: TOML with [mcp_servers.*] tables, .mcp.json, or another client's
    /// file (.vscode/mcp.json, .cursor/mcp.json, claude_desktop_config.json, Gemini CLI or
    /// Zed settings.json, Windsurf mcp_config.json, Goose config.yaml), detected by name and
    /// content.
    #[arg(long, short = 'c', global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Read another client's MCP configuration from its usual user file ($HOME) and project
    /// file (working directory; wins over the user file, and needs `mcpctl trust` like any
    /// project file): codex, claude, claude-desktop, cursor, vscode, gemini, goose, zed,
    /// windsurf. `mcpctl --from cursor config check` lists the files read.
    #[arg(
        long,
        global = true,
        value_name = "CLIENT",
        value_parser = parse_client,
        conflicts_with = "config"
    )]
    pub(crate) from: Option<ClientKind>,
    /// Print JSON for scripts instead of human output.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Print table cells whole: on a terminal, tables are cut to its width (a pipe always
    /// gets whole cells).
    #[arg(long, global = true)]
    pub(crate) wide: bool,
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
    Tools(ToolsArgs),
    /// Call a tool and print its result.
    Call(CallArgs),
    /// Accept the changes of a server's tools and skills since they were first seen (all,
    /// or one tool or skill), after `mcpctl tools` or `mcpctl skills` said they are held
    /// back.
    Accept(AcceptArgs),
    /// List the skills the servers serve (the Skills extension) without reading any of
    /// their files; `skills show NAME` reads one skill's files, verified, and prints them.
    Skills(SkillsArgs),
    /// List the event types a server describes (the Events extension); `events watch
    /// SERVER TYPE` prints its events as they come.
    Events(EventsArgs),
    /// List the resources (and resource templates) of the servers.
    Resources(ServerFilter),
    /// Read one resource of one server.
    Read(ReadArgs),
    /// Log in to a streamable HTTP server with OAuth (opens the browser or prints the URL),
    /// or with `--enterprise` to the enterprise identity provider of `auth = "ema"` servers.
    Login(LoginArgs),
    /// Delete the stored OAuth credentials of a server (or, with `--enterprise`, the
    /// enterprise sign-in).
    Logout(LogoutArgs),
    /// Show how each server authenticates, without starting any.
    AuthStatus,
    /// Configuration commands.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Ask a team gateway (`mcpctl serve --http`) to forget upstream sign-ins: yours for
    /// one server (`sign-out`), or every one of a caller (`revoke`, administrators).
    #[command(subcommand)]
    Gateway(crate::commands::gateway::GatewayCommand),
    /// Trust a project configuration (or a plugin folder) with its current content, after
    /// showing what it runs, connects to and reads. A changed file needs trust again.
    Trust(TrustArgs),
    /// Serve every configured server as one MCP server, for any MCP client: over stdio
    /// (a client launches `mcpctl serve` as its MCP server), or with --http over streamable
    /// HTTP for many clients. One process per server, shared by every client and session.
    Serve(ServeArgs),
    /// Search the MCP Registry for servers (their latest versions; deprecated ones marked).
    SearchRegistry(SearchRegistryArgs),
    /// Add a server from the MCP Registry to a configuration file: shows what it will run
    /// or connect to and asks first; nothing runs before the entry is written.
    Add(AddArgs),
    /// Print a shell completion script: `mcpctl completions bash > ~/.local/share/bash-completion/completions/mcpctl`
    /// (zsh: a `_mcpctl` file on `$fpath`; fish: `~/.config/fish/completions/mcpctl.fish`).
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `mcpctl man > mcpctl.1; man ./mcpctl.1`.
    Man,
    /// Serve a fake MCP server on stdio (used by the embedded demo).
    #[command(hide = true)]
    FakeServer(FakeServerArgs),
}

/// `--registry URL`.
#[derive(Debug, Args)]
pub(crate) struct RegistryArg {
    /// The registry's base URL (an organisation's subregistry) [default:
    /// $MCPCTL_REGISTRY, else `https://registry.modelcontextprotocol.io`].
    #[arg(long, value_name = "URL")]
    pub(crate) registry: Option<String>,
}

/// Arguments of `search-registry`.
#[derive(Debug, Args)]
pub(crate) struct SearchRegistryArgs {
    /// Text the server's name contains.
    #[arg(value_name = "QUERY")]
    pub(crate) query: String,
    /// At most this many servers.
    #[arg(long, default_value_t = 20)]
    pub(crate) limit: usize,
    #[command(flatten)]
    pub(crate) registry: RegistryArg,
}

/// Which configuration file `add` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AddScope {
    /// ./mcp.toml (needs `mcpctl trust` again after the change, like any edit).
    Project,
    /// mcpctl's user file: $XDG_CONFIG_HOME/mcpctl/mcp.toml, else ~/.config/mcpctl/mcp.toml,
    /// read in every folder below the project's file (no trust needed: it is yours).
    User,
}

/// Arguments of `add`.
#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// The registry's server name, optionally with a version: io.github.user/weather@1.0.2
    /// [default version: the latest].
    #[arg(value_name = "NAME[@VERSION]")]
    pub(crate) name: String,
    /// The file to write to (--config FILE wins over it).
    #[arg(long, value_enum, default_value = "project")]
    pub(crate) scope: AddScope,
    /// The server's name in the configuration [default: the part after the last `/`].
    #[arg(long = "as", value_name = "NAME")]
    pub(crate) local_name: Option<String>,
    /// Which package or remote to use: npm, pypi, oci, nuget, mcpb or remote [default:
    /// the first the entry lists].
    #[arg(long, value_name = "KIND")]
    pub(crate) using: Option<String>,
    /// An input's value (repeatable): --set NAME=VALUE. Secrets are never taken: the entry
    /// reads them from environment variables.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub(crate) values: Vec<String>,
    /// Write without asking (needed when stdin is not a terminal).
    #[arg(long)]
    pub(crate) yes: bool,
    #[command(flatten)]
    pub(crate) registry: RegistryArg,
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// Arguments of `trust`.
#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The file or plugin folder [default: ./mcp.toml, else ./.mcp.json; with --from, the
    /// client's file that takes precedence, its project file when there is one].
    #[arg(value_name = "PATH")]
    pub(crate) path: Option<PathBuf>,
}

/// `--server KEY`.
#[derive(Debug, Args)]
pub(crate) struct ServerFilter {
    /// Only this server (its name, or name@environment).
    #[arg(long, short = 's', value_name = "KEY")]
    pub(crate) server: Option<String>,
}

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8931; port 0 picks one)
    /// instead of stdio. Every request must carry `Authorization: Bearer <token>`: the
    /// token is generated and printed on stderr, or read from --token-file or
    /// $MCPCTL_SERVE_TOKEN.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<String>,
    /// Read the HTTP bearer token from this file (at least 16 characters).
    #[arg(long, value_name = "FILE")]
    pub(crate) token_file: Option<PathBuf>,
    /// Allow --http on an address other than loopback (other machines can then reach
    /// every configured server: keep the token secret).
    #[arg(long)]
    pub(crate) allow_remote: bool,
    /// Most HTTP clients connected at once [default: 32].
    #[arg(long, value_name = "N")]
    pub(crate) max_clients: Option<usize>,
    /// Most calls one client may have in flight [default: 16]. MCP 2026-07-28 clients
    /// have no session: nothing but the token tells them apart, so their calls share
    /// one such bound.
    #[arg(long, value_name = "N")]
    pub(crate) max_calls: Option<usize>,
    /// Which tools clients see: every tool of every server (`all`), or two (`search`):
    /// `search_tools`, which finds tools by what they do, and `call_tool`, which calls
    /// one by its qualified name, approvals and filters as for a direct call
    /// [default: the configuration's `tool_exposure`, else `all`].
    #[arg(long, value_name = "all|search")]
    pub(crate) tool_exposure: Option<mcp_catalog::ToolExposure>,
    /// Seconds a call may wait for its client's answer (an approval question, a server's
    /// elicitation, a sign-in to a `caller` server once the client accepted going to its
    /// page) before the question is cancelled; meanwhile other clients' calls to a
    /// 2025-era server wait their turn [default: 60].
    #[arg(long, value_name = "SECS")]
    pub(crate) answer_deadline: Option<u64>,
    /// Largest HTTP request body, in bytes [default: 4194304].
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_body: Option<usize>,
    /// Keep a server running this many seconds after its last client left, so a client
    /// that comes back (a new session) finds it warm; also how long a 2026-era caller's
    /// connection set is kept for its next call [default: 60 with --http, 0 over stdio].
    #[arg(long, value_name = "SECS")]
    pub(crate) keep_alive: Option<u64>,
    /// Seal the `requestState` of MCP 2026-07-28 calls with the key in this file (32
    /// random bytes as 64 hex digits or base64, e.g. from `openssl rand -hex 32`; only its
    /// owner may read it: `chmod 600`), or in $MCPCTL_SEAL_KEY. Instances behind one load
    /// balancer share it; without it each process makes its own [default: a key of this
    /// process].
    #[arg(long, value_name = "FILE")]
    pub(crate) seal_key_file: Option<PathBuf>,
    /// This instance's id among several behind one load balancer (letters, digits, `-`,
    /// `_`): the `Mcp-Session-Id` of each 2025-era session it opens starts with it and a
    /// dot, so the balancer can route the session's requests back to it.
    #[arg(long, value_name = "ID")]
    pub(crate) instance_id: Option<String>,
    /// What a client's trace context (`_meta.traceparent`) does: `link`, each request
    /// starts a trace of the gateway's own whose first span links the client's; or
    /// `continue`, the request's spans and the upstream servers join the client's trace.
    /// Either way the client's `tracestate` and `baggage` stay at the gateway [default:
    /// link].
    #[arg(long, value_enum, value_name = "link|continue")]
    pub(crate) client_trace: Option<ClientTrace>,
}

/// What `mcpctl serve` does with a client's trace context (`--client-trace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ClientTrace {
    /// A trace of the gateway's own per request, linking the client's span.
    #[default]
    Link,
    /// The client's trace continued (its `traceparent` only).
    Continue,
}

/// Arguments of `tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Only this server (its name, or name@environment).
    #[arg(long, short = 's', value_name = "KEY")]
    pub(crate) server: Option<String>,
    /// List the tools from the persisted catalog cache (in the data directory) without
    /// starting any server, with each listing's age. Servers never listed are named.
    #[arg(long, conflicts_with_all = ["search", "changes"])]
    pub(crate) cached: bool,
    /// List the tools held back because they changed since they were first seen: what
    /// changed, the description before and after, and how to accept; and entries `mcpctl
    /// add` wrote that were edited since (another version, another package or URL).
    #[arg(long, conflicts_with = "search")]
    pub(crate) changes: bool,
    /// Only the tools that best match QUERY, best first (a tool's name in the query ranks
    /// it first). Servers whose listing is cached are searched from the cache and not
    /// started; the others start.
    #[arg(long, value_name = "QUERY")]
    pub(crate) search: Option<String>,
    /// With --search, how many tools at most [default: 8].
    #[arg(long, value_name = "N", requires = "search")]
    pub(crate) limit: Option<usize>,
}

/// Arguments of `accept`.
#[derive(Debug, Args)]
pub(crate) struct AcceptArgs {
    /// The server (its name, or name@environment).
    #[arg(value_name = "SERVER")]
    pub(crate) server: String,
    /// Only this tool or skill (its own name on the server); without it, every held-back
    /// tool and skill.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: Option<String>,
}

/// Arguments of `skills`.
#[derive(Debug, Args)]
pub(crate) struct SkillsArgs {
    /// Show one skill instead of listing them.
    #[command(subcommand)]
    pub(crate) command: Option<SkillsCommand>,
    /// Only this server (its name, or name@environment).
    #[arg(long, short = 's', value_name = "KEY")]
    pub(crate) server: Option<String>,
}

/// Arguments of `events`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct EventsArgs {
    /// Watch one event type instead of listing them.
    #[command(subcommand)]
    pub(crate) command: Option<EventsCommand>,
    /// The server (its name, or name@environment).
    #[arg(value_name = "SERVER", required = true)]
    pub(crate) server: Option<String>,
}

/// The subcommands of `events`.
#[derive(Debug, Subcommand)]
pub(crate) enum EventsCommand {
    /// Print the events of one event type as they come (JSON lines with --json) until
    /// Ctrl-C or --count; the subscription ends on exit. Delivered by push when the server
    /// offers it, else by poll (webhook-only event types need a host with a public URL).
    Watch(EventsWatchArgs),
}

/// Arguments of `events watch`.
#[derive(Debug, Args)]
pub(crate) struct EventsWatchArgs {
    /// The server (its name, or name@environment).
    #[arg(value_name = "SERVER")]
    pub(crate) server: String,
    /// The event type, as `mcpctl events SERVER` lists it.
    #[arg(value_name = "TYPE")]
    pub(crate) event_type: String,
    /// The subscription's arguments as a JSON object (what the event type's input schema
    /// describes: filters).
    #[arg(long, value_name = "JSON")]
    pub(crate) filter: Option<String>,
    /// Stop after this many events.
    #[arg(long, value_name = "N")]
    pub(crate) count: Option<u64>,
}

/// The subcommands of `skills`.
#[derive(Debug, Subcommand)]
pub(crate) enum SkillsCommand {
    /// Read one skill's files, each verified against the skill's entry (size, digest, and
    /// the SKILL.md frontmatter), and print its SKILL.md and its files with their digests.
    /// A file that fails verification shows nothing.
    Show {
        /// The skill's name from `mcpctl skills` (mcp__server__skill).
        #[arg(value_name = "NAME")]
        name: String,
    },
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
    /// Run the tool without the approval question its approval mode may ask (on a
    /// terminal; elsewhere such a call is declined). A tool held back since it changed
    /// still needs `mcpctl accept`.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
}

/// Arguments of `login`.
#[derive(Debug, Args)]
pub(crate) struct LoginArgs {
    /// The server (its name, or name@environment).
    #[arg(value_name = "SERVER", required_unless_present = "enterprise")]
    pub(crate) server: Option<String>,
    /// Sign in to the enterprise identity provider that servers with `auth = "ema"` use.
    #[arg(long, conflicts_with = "server")]
    pub(crate) enterprise: bool,
    /// Give up waiting for the browser after this many seconds [default: 300].
    #[arg(long, value_name = "SECONDS")]
    pub(crate) timeout: Option<f64>,
    /// Fetch the authorization URL without a browser and deliver its redirect to the
    /// callback (for authorization servers that approve at once; used by tests).
    #[arg(long, hide = true)]
    pub(crate) headless: bool,
}

/// Arguments of `logout`.
#[derive(Debug, Args)]
pub(crate) struct LogoutArgs {
    /// The server (its name, or name@environment).
    #[arg(value_name = "SERVER", required_unless_present = "enterprise")]
    pub(crate) server: Option<String>,
    /// Forget the sign-in to the enterprise identity provider (`auth = "ema"` servers).
    #[arg(long, conflicts_with = "server")]
    pub(crate) enterprise: bool,
}

/// One server, by name.
#[derive(Debug, Args)]
pub(crate) struct ServerArg {
    /// The server (its name, or name@environment).
    #[arg(value_name = "SERVER")]
    pub(crate) server: String,
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
    /// Write the configuration of another client (--from CLIENT) as an equivalent mcp.toml,
    /// with a comment for each setting that could not be carried over. Nothing is started
    /// or expanded: `${VAR}` references become env_vars, bearer_token_env_var or
    /// env_http_headers where mcp.toml has an equivalent.
    Import(ImportArgs),
}

/// Arguments of `config import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// Write here instead of to stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Replace the output file if it exists.
    #[arg(long, requires = "output")]
    pub(crate) force: bool,
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

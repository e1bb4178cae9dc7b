//! One module per command. `run` loads the configuration, starts the servers, runs the
//! command (or stops at Ctrl-C) and always shuts the servers down.

pub(crate) mod add;
pub(crate) mod add_bundle;
pub(crate) mod add_entry;
pub(crate) mod auth_status;
pub(crate) mod call;
pub(crate) mod config_check;
pub(crate) mod enterprise;
pub(crate) mod events;
pub(crate) mod fake_server;
pub(crate) mod gateway;
pub(crate) mod import;
pub(crate) mod login;
pub(crate) mod logout;
pub(crate) mod read;
pub(crate) mod resources;
pub(crate) mod search_registry;
pub(crate) mod shell;
pub(crate) mod skills;
pub(crate) mod status;
pub(crate) mod tools;
pub(crate) mod trust;

use crate::cli::{Cli, Command, ConfigCommand, GlobalArgs, ToolsArgs};
use crate::error::CliError;
use crate::host::session::Session;
use crate::serve::StopSignals;

/// Runs a command; returns the exit code.
pub(crate) async fn run(cli: Cli) -> Result<u8, CliError> {
    let global = cli.global;
    let command = cli.command;
    // Registered before any server starts, so Ctrl-C (or SIGTERM) at any point shuts the
    // servers down instead of killing mcpctl and orphaning them.
    let mut stop = StopSignals::new()?;
    // Commands that start no server.
    match &command {
        Command::Config(ConfigCommand::Check) => return config_check::run(&global).await,
        Command::Config(ConfigCommand::Import(args)) => return import::run(&global, args),
        Command::Login(args) => {
            return tokio::select! {
                outcome = login::run(&global, args) => outcome,
                () = stop.recv() => Err(CliError::interrupted_with(
                    "interrupted; the login was abandoned and nothing was stored",
                )),
            };
        }
        Command::Logout(args) => return logout::run(&global, args).await,
        Command::Gateway(command) => return gateway::run(command).await,
        Command::AuthStatus => return auth_status::run(&global).await,
        Command::Trust(args) => return trust::run(args.path.as_deref(), &global),
        Command::SearchRegistry(args) => return search_registry::run(&global, args).await,
        Command::Add(args) => return add::run(&global, args).await,
        Command::Serve(args) => return crate::serve::run(&global, args, &mut stop).await,
        Command::Completions(args) => return Ok(shell::completions(args.shell)),
        Command::Man => return shell::man_page(),
        _ => {}
    }
    // Check what can be checked before any server starts.
    let call_arguments = match &command {
        Command::Call(args) => Some(call::parse_arguments(args)?),
        _ => None,
    };
    let cache_only = matches!(&command, Command::Tools(args) if args.cached);
    let defer_cached = matches!(&command, Command::Tools(args) if args.search.is_some());
    let mut session = Session::start(&global, cache_only, defer_cached).await?;
    let outcome = match command {
        // Takes Ctrl-C itself, to end its subscription with the server before the servers
        // are shut down (dropping it would race the shutdown).
        Command::Events(crate::cli::EventsArgs {
            command: Some(crate::cli::EventsCommand::Watch(args)),
            ..
        }) => events::watch(&mut session, &global, &args, &mut stop).await,
        command => tokio::select! {
            outcome = dispatch(&mut session, &global, command, call_arguments) => outcome,
            () = stop.recv() => Err(CliError::interrupted()),
        },
    };
    session.shutdown().await;
    outcome
}

async fn dispatch(
    session: &mut Session,
    global: &GlobalArgs,
    command: Command,
    call_arguments: Option<Option<serde_json::Value>>,
) -> Result<u8, CliError> {
    match command {
        Command::Status => status::run(session, global).await,
        Command::Tools(args) if args.cached => {
            tools::run_cached(session, global, args.server.as_deref()).await
        }
        Command::Tools(ToolsArgs {
            changes: true,
            server,
            ..
        }) => tools::run_changes(session, global, server.as_deref()).await,
        Command::Tools(ToolsArgs {
            search: Some(query),
            limit,
            server,
            ..
        }) => tools::run_search(session, global, server.as_deref(), &query, limit).await,
        Command::Tools(args) => tools::run(session, global, args.server.as_deref()).await,
        Command::Call(args) => call::run(session, global, &args, call_arguments.flatten()).await,
        Command::Accept(args) => accept(session, global, &args).await,
        Command::Skills(crate::cli::SkillsArgs {
            command: Some(crate::cli::SkillsCommand::Show { name }),
            ..
        }) => skills::show(session, global, &name).await,
        Command::Skills(args) => skills::run(session, global, args.server.as_deref()).await,
        Command::Resources(filter) => {
            resources::run(session, global, filter.server.as_deref()).await
        }
        Command::Read(args) => read::run(session, global, &args).await,
        Command::Events(crate::cli::EventsArgs {
            command: Some(crate::cli::EventsCommand::Watch(_)),
            ..
        }) => Ok(0), // run by `run`, which gives it the stop signals
        Command::Events(args) => events::list(session, global, args.server.as_deref()).await,
        Command::Config(_)
        | Command::FakeServer(_)
        | Command::Login(_)
        | Command::Logout(_)
        | Command::Gateway(_)
        | Command::AuthStatus
        | Command::Serve(_)
        | Command::Completions(_)
        | Command::Man
        | Command::Trust(_)
        | Command::SearchRegistry(_)
        | Command::Add(_) => Ok(0),
    }
}

/// The servers a listing command is about (all, or the one `--server` names), waited for
/// with progress; those not ready are reported. Returns the key named, the servers, and
/// whether a required one failed.
pub(crate) async fn wait_relevant(
    session: &mut Session,
    global: &GlobalArgs,
    server: Option<&str>,
) -> Result<
    (
        Option<mcp_key::McpServerKey>,
        Vec<mcp_connections::ServerStatus>,
        bool,
    ),
    CliError,
> {
    let only = server.map(|s| session.server_key(s)).transpose()?;
    let relevant = session
        .wait_servers(
            crate::term::progress::ProgressMode::choose(global.json, false),
            only.as_ref(),
        )
        .await;
    let required_failed = warn_unready(&relevant);
    Ok((only, relevant, required_failed))
}

/// Says which tools of `servers` are held back because they changed since they were
/// pinned, and how to accept them; and which changed in a way that was only a notice (they
/// were pinned again as they are now).
pub(crate) fn warn_drift(session: &Session, servers: &[mcp_connections::ServerStatus]) {
    for status in servers {
        for notice in session.set.tool_notices(&status.key) {
            crate::term::render::warn(&format!(
                "tool `{}` of server `{}` changed since it was first seen: {} (not held back; pinned as it is now)",
                notice.tool.escape_debug(),
                status.key,
                notice.describe(),
            ));
        }
        for drift in session.set.tool_drift(&status.key) {
            crate::term::render::warn(&format!(
                "tool `{}` of server `{}` changed since it was first seen and is held back: {} (if you trust the change: mcpctl accept {} {})",
                drift.tool.escape_debug(),
                status.key,
                drift.describe(),
                status.key,
                drift.tool.escape_debug(),
            ));
        }
    }
}

/// Runs `accept SERVER [TOOL]`: the server's held-back tools and skills (or the one
/// named).
async fn accept(
    session: &mut Session,
    global: &GlobalArgs,
    args: &crate::cli::AcceptArgs,
) -> Result<u8, CliError> {
    let key = session.server_key(&args.server)?;
    session
        .wait_servers(
            crate::term::progress::ProgressMode::choose(global.json, false),
            Some(&key),
        )
        .await;
    let held = session.set.tool_drift(&key);
    // Skill drift is known once the skills are listed (no file is read).
    let _ = session.set.skills().await;
    let held_skills = session.set.skill_drift(&key);
    if let Some(tool) = &args.tool
        && !held.iter().any(|d| d.tool == *tool)
        && !held_skills.iter().any(|d| d.skill == *tool)
    {
        return Err(CliError::usage(format!(
            "tool or skill `{}` of server `{key}` has no change waiting to be accepted",
            tool.escape_debug()
        ))
        .with_hint("`mcpctl tools` and `mcpctl skills` name what is held back"));
    }
    // Each tool is accepted as shown here: a definition that changed since is not.
    let mut text = String::new();
    let mut accepted = 0;
    for drift in held
        .iter()
        .filter(|d| args.tool.as_ref().is_none_or(|t| *t == d.tool))
    {
        let shown = session.set.listed_tool(&key, &drift.tool);
        let seen = shown.as_ref().map(mcp_connections::tool_fingerprint);
        let description = shown
            .as_ref()
            .and_then(|t| t.description.as_deref())
            .unwrap_or_default();
        if session
            .set
            .accept_tool_change_seen(&key, &drift.tool, seen.as_ref())
            .map_err(|e| CliError::failure(e.to_string()))?
        {
            accepted += 1;
            text.push_str(&format!(
                "accepted `{}`: {}; description now {:?}\n",
                drift.tool.escape_debug(),
                drift.describe(),
                description
            ));
        } else {
            crate::term::render::warn(&format!(
                "tool `{}` of server `{key}` changed again while it was being accepted; not accepted (see `mcpctl tools --changes`)",
                drift.tool.escape_debug()
            ));
        }
    }
    text.push_str(&format!(
        "accepted {} of server `{key}`\n",
        crate::term::progress::plural(accepted, "changed tool")
    ));
    // Each skill is accepted as the listing above showed it.
    let mut skills_accepted = 0;
    for drift in held_skills
        .iter()
        .filter(|d| args.tool.as_ref().is_none_or(|t| *t == d.skill))
    {
        skills_accepted += session
            .set
            .accept_skill_changes(&key, Some(&drift.uri))
            .map_err(|e| CliError::failure(e.to_string()))?;
        text.push_str(&format!(
            "accepted skill `{}`: {}\n",
            drift.skill.escape_debug(),
            drift.describe()
        ));
    }
    if !held_skills.is_empty() {
        text.push_str(&format!(
            "accepted {} of server `{key}`\n",
            crate::term::progress::plural(skills_accepted, "changed skill")
        ));
    }
    crate::term::render::out(&text);
    Ok(0)
}

/// Warns about every server that did not become ready (sorted by key); returns whether a
/// required one is among them.
pub(crate) fn warn_unready(servers: &[mcp_connections::ServerStatus]) -> bool {
    use mcp_connections::ServerState;
    let mut required_failed = false;
    for status in servers {
        let why = match &status.state {
            // A deferred server's tools come from the cache; it starts on first use.
            ServerState::Ready { .. } | ServerState::Deferred { .. } => continue,
            ServerState::Failed(f) => f.reason().to_string(),
            ServerState::Cancelled => "cancelled".to_owned(),
            _ => "not ready".to_owned(),
        };
        required_failed |= status.required;
        crate::term::render::warn(&format!(
            "server `{}` is not ready ({why}); its items are missing (run `mcpctl status` for details)",
            status.key
        ));
    }
    required_failed
}

/// The group a server is listed under when multi-environment exposure is on: its
/// environment, or `host-wide` for servers registered for the whole host.
pub(crate) fn environment_group(key: &mcp_key::McpServerKey) -> String {
    key.environment()
        .map_or_else(|| "host-wide".to_owned(), ToString::to_string)
}

/// Inserts a header line before each environment group of `lines` (already sorted by
/// group); `group_of(i)` is the group of line `i`.
pub(crate) fn with_group_headers(
    lines: Vec<String>,
    group_of: impl Fn(usize) -> String,
    style: crate::term::style::Style,
) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    let mut current: Option<String> = None;
    for (i, line) in lines.into_iter().enumerate() {
        let group = group_of(i);
        if current.as_ref() != Some(&group) {
            out.push(style.bold(&format!("environment {group}:")));
            current = Some(group);
        }
        out.push(line);
    }
    out
}

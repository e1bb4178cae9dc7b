//! `mcpctl serve`: every configured server behind one MCP server, for any MCP client.
//!
//! A host like any other: one shared [`ServerPool`] (one process per server key and
//! fingerprint), one connection set per connected client on it ([`gateway::Gateway`]).
//! Over stdio the client that launched `mcpctl serve` is the one client; with `--http` many
//! clients connect over streamable HTTP ([`http`]), each proving the bearer token, or,
//! with `[gateway.oauth]` in the configuration, an access token of the team's
//! authorization server ([`oauth`]): each token's subject is a caller of its own
//! ([`caller`]), with what the grants give it, and what it opens is bound to it
//! ([`binding`]).

mod absent;
mod approval;
mod binding;
mod caller;
mod exposure;
mod gateway;
mod host_requests;
mod http;
mod identity;
mod modern;
mod oauth;
mod outcome;
mod pipes;
mod progress;
mod seal;
mod sessions;
mod shared_uri;
mod status;
mod stop;
mod target;
mod tasks;
mod trace;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_connections::ServerPool;
use rmcp::ServiceExt;

use crate::cli::{GlobalArgs, ServeArgs};
use crate::error::CliError;
use crate::host::session::{Loaded, host_options, with_stored_secrets};

pub(crate) use gateway::{Gateway, Hub};
pub(crate) use stop::StopSignals;

/// The default bound on clients connected at once over HTTP.
pub(crate) const DEFAULT_MAX_CLIENTS: usize = 32;
/// The default bound on calls one client has in flight.
pub(crate) const DEFAULT_MAX_CALLS: usize = 16;
/// How long a call waits for its client's answer by default.
pub(crate) const DEFAULT_ANSWER_DEADLINE: Duration = Duration::from_secs(60);
/// How long a server stays up after its last HTTP client left, by default.
pub(crate) const DEFAULT_HTTP_KEEP_ALIVE_SECS: u64 = 60;
/// The default bound on one HTTP request body.
pub(crate) const DEFAULT_MAX_BODY: usize = 4 * 1024 * 1024;

/// Runs `serve` until the client goes away (stdio) or a stop signal (both).
pub(crate) async fn run(
    global: &GlobalArgs,
    args: &ServeArgs,
    stop: &mut StopSignals,
) -> Result<u8, CliError> {
    let http_addr = http_addr(args)?;
    let loaded = Loaded::find(global, true, false).await?;
    let hub = Arc::new(hub(&loaded, args, http_addr.is_some()).await?);
    // Questions nobody answered expire on a timer, not on the next request.
    let expiry = tokio::spawn(modern::expire_every_second(Arc::downgrade(&hub)));
    let outcome = match http_addr {
        None => serve_stdio(&hub, args.client_trace.unwrap_or_default(), stop).await,
        Some(addr) => http::serve(Arc::clone(&hub), addr, args, stop).await,
    };
    // Every upstream process ends with the gateway, whatever the clients did.
    expiry.abort();
    hub.parked.clear().await;
    hub.tasks.clear().await;
    hub.kept.clear().await;
    // Webhook subscriptions end upstream while their servers still run.
    hub.events.close().await;
    hub.pool.shutdown().await;
    if let Some(http) = loaded.demo_http {
        http.shutdown().await;
    }
    outcome
}

/// The `--http` address, if given: refused when it is not loopback without
/// `--allow-remote`, or the any-address; with `--allow-remote`, a warning that the
/// traffic is plain HTTP.
fn http_addr(args: &ServeArgs) -> Result<Option<SocketAddr>, CliError> {
    let http_addr = args.http.as_deref().map(parse_addr).transpose()?;
    if let Some(addr) = http_addr
        && !addr.ip().is_loopback()
        && !args.allow_remote
    {
        return Err(CliError::usage(format!(
            "`{addr}` is not a loopback address: other machines could reach every configured server"
        ))
        .with_hint("bind 127.0.0.1 (the default), or pass --allow-remote with a --token-file you keep secret"));
    }
    if let Some(addr) = http_addr
        && addr.ip().is_unspecified()
    {
        // rmcp checks each request's Host against the addresses it is told (DNS
        // rebinding): an any-address bind cannot name the address clients will use.
        return Err(CliError::usage(format!(
            "`{addr}` listens on every address, but each request's Host must name an address mcpctl serve knows: every client would get 403"
        ))
        .with_hint("bind the address clients connect to, e.g. --http 192.168.1.20:8931 --allow-remote"));
    }
    if http_addr.is_some() && args.allow_remote {
        eprintln!(
            "mcpctl serve: warning: --allow-remote serves plain HTTP: the token and every call cross the network unencrypted; put a TLS proxy in front or reach it through an ssh tunnel"
        );
    }
    Ok(http_addr)
}

/// What every client of this `serve` shares, from the loaded configuration and the
/// flags (`over_http`: clients come over `--http`, not stdio).
async fn hub(loaded: &Loaded, args: &ServeArgs, over_http: bool) -> Result<Hub, CliError> {
    let catalog = loaded.catalog();
    // The flag wins over the configuration.
    let tool_exposure = args
        .tool_exposure
        .unwrap_or_else(|| catalog.tool_exposure());
    let (options, _store) = host_options(loaded, &catalog);
    // Servers whose entries refer to secrets `mcpctl add` stored start here as in mcpctl.
    let options = with_stored_secrets(options, &catalog).await;
    let answer_deadline = answer_deadline(args)?;
    if let Some(id) = &args.instance_id {
        sessions::check_instance_id(id).map_err(|e| {
            CliError::usage(e)
                .with_hint("name each instance behind the load balancer, e.g. --instance-id gw-1")
        })?;
    }
    let seal_key = seal_key(args)?;
    let max_calls = args.max_calls.unwrap_or(DEFAULT_MAX_CALLS);
    // Over stdio the one client is the only one.
    let max_clients = if over_http {
        args.max_clients.unwrap_or(DEFAULT_MAX_CLIENTS)
    } else {
        1
    };
    let limits = caller_limits(&catalog, over_http);
    let keep_alive = args.keep_alive.unwrap_or(if over_http {
        DEFAULT_HTTP_KEEP_ALIVE_SECS
    } else {
        0
    });
    let vault = identity::vault::open_for(&catalog, over_http).await;
    let identities =
        identity::Identities::new(&catalog, &vault, &|name: &str| std::env::var(name).ok());
    Ok(Hub {
        catalog,
        pool: ServerPool::with_idle_keep_alive(Duration::from_secs(keep_alive)),
        options: options
            .with_client(|c| {
                c.with_client_info(mcp_connections::model::Implementation::new(
                    "mcpctl-serve",
                    env!("CARGO_PKG_VERSION"),
                ))
            })
            .with_answer_deadline(answer_deadline)
            // Passed through to clients that render MCP Apps (see `Gateway::initialize`).
            .with_apps(true),
        max_calls,
        max_clients,
        tool_exposure,
        modern_calls: tokio::sync::Semaphore::new(max_calls),
        answer_deadline,
        clients: Arc::default(),
        parked: modern::Parked::new(seal_key, answer_deadline)?,
        // A kept set holds its servers no longer than the pool keeps them after their
        // last client.
        kept: modern::KeptSets::new(Duration::from_secs(keep_alive)),
        tasks: tasks::Tasks::default(),
        waiting: Arc::default(),
        listen_setups: gateway::ListenSetups::default(),
        bindings: Arc::new(binding::Bindings::new(limits)),
        status: status::Board::default(),
        events: Arc::default(),
        vault,
        identities,
    })
}

/// How long a call waits for its client's answer: `--answer-deadline` (never 0), else
/// [`DEFAULT_ANSWER_DEADLINE`].
fn answer_deadline(args: &ServeArgs) -> Result<Duration, CliError> {
    match args.answer_deadline {
        Some(0) => Err(
            CliError::usage("--answer-deadline 0 would cancel every question").with_hint(
                "give the seconds a client may take to answer, e.g. --answer-deadline 60",
            ),
        ),
        Some(secs) => Ok(Duration::from_secs(secs)),
        None => Ok(DEFAULT_ANSWER_DEADLINE),
    }
}

/// The limits per caller. They apply to a team's callers (`[gateway.oauth]`, over HTTP);
/// the static token's one caller keeps --max-clients and --max-calls.
fn caller_limits(
    catalog: &mcp_catalog::ResolvedCatalog,
    over_http: bool,
) -> Option<binding::Limits> {
    catalog
        .gateway()
        .filter(|g| over_http && g.oauth().is_some())
        .map(|g| binding::Limits {
            clients: g
                .limits()
                .clients_per_principal()
                .unwrap_or(binding::DEFAULT_CLIENTS_PER_CALLER),
            calls: g
                .limits()
                .calls_per_principal()
                .unwrap_or(binding::DEFAULT_CALLS_PER_CALLER),
        })
}

/// One client over stdin/stdout; ends when it closes stdin or on a stop signal.
async fn serve_stdio(
    hub: &Arc<Hub>,
    client_trace: crate::cli::ClientTrace,
    stop: &mut StopSignals,
) -> Result<u8, CliError> {
    let gateway = Gateway::start(hub);
    let set = gateway.set().clone();
    let service = trace::Traced::new(gateway, trace::Transport::Pipe, client_trace)
        .serve(pipes::stdio())
        .await
        .map_err(|e| CliError::failure(format!("the MCP client did not initialize: {e}")))?;
    let cancel = service.cancellation_token();
    tokio::select! {
        _ = service.waiting() => {}
        () = stop.recv() => cancel.cancel(),
    }
    tokio::time::timeout(Duration::from_secs(15), set.shutdown())
        .await
        .map_err(|_| CliError::failure("stopping the servers timed out"))?;
    Ok(0)
}

/// The key 2026-era `requestState` values are sealed with: `--seal-key-file`, else
/// `$MCPCTL_SEAL_KEY`, else one of this process.
fn seal_key(args: &ServeArgs) -> Result<seal::SealKey, CliError> {
    let hint = "write 32 random bytes as hex to a file only you can read, e.g. `(umask 077; openssl rand -hex 32 > seal.key)`, and give every instance the same file";
    let (text, from) = match &args.seal_key_file {
        Some(path) => (
            http::private_file(path, "--seal-key-file").and_then(|()| {
                std::fs::read_to_string(path).map_err(|e| {
                    CliError::usage(format!(
                        "--seal-key-file {} cannot be read: {e}",
                        path.display()
                    ))
                    .with_hint(hint)
                })
            })?,
            format!("--seal-key-file {}", path.display()),
        ),
        None => match std::env::var(seal::SEAL_KEY_ENV) {
            Ok(text) => (text, format!("${}", seal::SEAL_KEY_ENV)),
            Err(_) => {
                return seal::SealKey::generate().map_err(|e| CliError::failure(e.to_string()));
            }
        },
    };
    seal::SealKey::from_text(&text)
        .map_err(|e| CliError::usage(format!("{from}: {e}")).with_hint(hint))
}

/// `bytes` random bytes from the system, as lowercase hex.
pub(crate) fn random_hex(bytes: usize) -> std::io::Result<String> {
    use std::io::Read;
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(mcp_key::hex_encode(&buf))
}

fn parse_addr(text: &str) -> Result<SocketAddr, CliError> {
    text.parse().map_err(|e| {
        CliError::usage(format!("--http `{text}` is not an address: {e}")).with_hint(
            "pass an address with a port, e.g. --http 127.0.0.1:8931 (port 0 picks a free one)",
        )
    })
}

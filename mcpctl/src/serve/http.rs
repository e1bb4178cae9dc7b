//! `mcpctl serve --http ADDR`: streamable HTTP for many clients. Every request carries the
//! bearer token (401 without it), or with `[gateway.oauth]` an access token of the team's
//! authorization server ([`super::oauth`]; the Protected Resource Metadata is served
//! without one); rmcp checks `Host` (loopback names only, DNS-rebinding protection) and
//! `Origin` (this server's own origins); bodies, clients and calls in flight are bounded.
//! The guard puts each request's caller into its extensions, records which caller each
//! new 2025-era session is, and answers `404` to a request naming a session that is not
//! its caller's ([`super::binding`]).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use http::{StatusCode, header};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::caller::Caller;
use super::{DEFAULT_MAX_BODY, Gateway, Hub};
use crate::cli::ServeArgs;
use crate::error::CliError;

/// The MCP endpoint's path.
const MCP_PATH: &str = "/mcp";

/// The environment variable a token can come from (instead of a generated one).
pub(crate) const TOKEN_VAR: &str = "MCPCTL_SERVE_TOKEN";

/// How callers prove who they are.
enum Auth {
    /// The one static bearer token: one caller with everything (the default).
    Token(String),
    /// Access tokens of the team's authorization server (`[gateway.oauth]`).
    OAuth(Arc<super::oauth::ResourceServer>),
}

/// What the request guard checks.
struct Guard {
    auth: Auth,
    max_body: usize,
    hub: Arc<Hub>,
    sessions: Arc<super::sessions::InstanceSessions>,
}

/// Serves until a stop signal.
pub(crate) async fn serve(
    hub: Arc<Hub>,
    addr: SocketAddr,
    args: &ServeArgs,
    stop: &mut super::StopSignals,
) -> Result<u8, CliError> {
    let oauth = hub
        .catalog
        .gateway()
        .and_then(|g| Some((g.oauth()?, g.grants())));
    let (token, generated) = static_token(oauth.is_some(), args)?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| CliError::failure(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| CliError::failure(format!("cannot read the bound address: {e}")))?;
    // The consent pages of `caller` servers make their links under this address unless
    // `[gateway] public_url` says otherwise.
    let consent = hub.identities.consent.as_ref().ok().cloned();
    if let Some(consent) = &consent {
        consent.listening_on(bound);
    }
    let cancel = CancellationToken::new();
    let config = http_config(bound, &cancel);
    // Clients are counted (and refused beyond --max-clients) when they initialize a
    // session: a 2026-era request gets a gateway of its own too, but is no client, and
    // its calls have their own bound (`Hub::modern_calls`).
    let factory_hub = Arc::clone(&hub);
    let client_trace = args.client_trace.unwrap_or_default();
    let sessions = Arc::new(super::sessions::InstanceSessions::new(
        args.instance_id.as_deref(),
    ));
    let service = StreamableHttpService::new(
        move || {
            Ok(super::trace::Traced::new(
                Gateway::start(&factory_hub),
                super::trace::Transport::Http,
                client_trace,
            ))
        },
        Arc::clone(&sessions),
        config,
    );
    let url = format!("http://{bound}{MCP_PATH}");
    let auth = match oauth {
        Some((config, grants)) => Auth::OAuth(Arc::new(super::oauth::ResourceServer::new(
            config, grants, &url,
        )?)),
        None => Auth::Token(token),
    };
    let metadata = match &auth {
        Auth::OAuth(server) => super::oauth::routes(Arc::clone(server), MCP_PATH),
        Auth::Token(_) => axum::Router::new(),
    };
    let guard = Arc::new(Guard {
        auth,
        max_body: args.max_body.unwrap_or(DEFAULT_MAX_BODY),
        hub: Arc::clone(&hub),
        sessions,
    });
    let mcp = axum::Router::new().nest_service(MCP_PATH, service);
    let router = routes(&hub, mcp, &guard, metadata, consent);
    announce(&url, &guard.auth, generated.as_deref());
    let shutdown = cancel.clone();
    let server = tokio::spawn(async move {
        // The client's address, for the allowance of token introspections.
        let router = router.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(no_delay(listener), router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
    });
    stop.recv().await;
    eprintln!("mcpctl serve: stopping");
    cancel.cancel();
    // Open streams end with their sessions; do not wait on a client that hangs on.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), server).await;
    Ok(0)
}

/// Every route of the listener: the MCP endpoint, the status page, the event relay's
/// counts and the sign-out behind `guard`; the login metadata, the webhook receiver and
/// the sign-in pages outside it.
fn routes(
    hub: &Arc<Hub>,
    mcp: axum::Router,
    guard: &Arc<Guard>,
    metadata: axum::Router,
    consent: Option<Arc<super::identity::consent::Consent>>,
) -> axum::Router {
    mcp.merge(super::status::routes(Arc::clone(hub)))
        .merge(super::gateway::event_status_routes(Arc::clone(hub)))
        // A caller signs out of a `caller` server (the guard names the caller).
        .merge(
            consent
                .clone()
                .map(super::identity::consent::signed_in_routes)
                .unwrap_or_default(),
        )
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(guard),
            check,
        ))
        // Unguarded: what a client reads to find where to log in.
        .merge(metadata)
        // Unguarded: upstream servers' webhook deliveries, each signed (see `gateway::webhook`).
        .merge(super::gateway::webhook_routes(Arc::clone(hub)))
        // Unguarded: the browser's sign-in pages (each state is bound to its caller) and
        // the admin revocation, which checks the admin token itself.
        .merge(
            consent
                .map(super::identity::consent::routes)
                .unwrap_or_default(),
        )
}

/// The static bearer token, and whether it was generated (then it is printed): none with
/// `[gateway.oauth]` (`oauth`), where `--token-file` is refused.
fn static_token(oauth: bool, args: &ServeArgs) -> Result<(String, Option<String>), CliError> {
    if oauth && args.token_file.is_some() {
        return Err(CliError::usage(
            "--token-file has no use with [gateway.oauth]: callers bring the authorization server's access tokens",
        )
        .with_hint("remove --token-file, or [gateway.oauth] from the configuration to serve with a static token"));
    }
    if oauth {
        return Ok((String::new(), None));
    }
    token(args)
}

/// rmcp's settings for a listener bound to `bound`: stopped by `cancel`, 2025-era
/// sessions, and the `Origin`s and `Host`s it accepts.
fn http_config(bound: SocketAddr, cancel: &CancellationToken) -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.child_token())
        .with_sse_keep_alive(None);
    // Sessions: server-to-client requests (elicitation) need them in the 2025 era.
    config.legacy_session_mode = true;
    let port = bound.port();
    config.allowed_origins = vec![
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ];
    if !bound.ip().is_loopback() {
        // An explicit non-loopback bind (--allow-remote): accept its own address too.
        config.allowed_hosts.push(bound.ip().to_string());
        config.allowed_hosts.push(bound.to_string());
    }
    config
}

/// Tells the operator where the gateway listens and what callers need: the
/// authorization server's access tokens, or the `generated` token.
fn announce(url: &str, auth: &Auth, generated: Option<&str>) {
    eprintln!("mcpctl serve: listening on {url}");
    if let Auth::OAuth(server) = auth {
        eprintln!(
            "mcpctl serve: callers need access tokens for {} (metadata at {})",
            server.resource(),
            server.metadata_url()
        );
    }
    if let Some(token) = generated {
        eprintln!(
            "mcpctl serve: token {token} (send `Authorization: Bearer <token>`; set {TOKEN_VAR} or --token-file to choose it)"
        );
    }
}

/// The address a request came from (its connection's peer).
fn client_address(request: &Request) -> Option<std::net::IpAddr> {
    request
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip())
}

/// `listener` with Nagle's algorithm off on every accepted connection. hyper writes a
/// streamed response's head and each SSE event as separate small writes; with Nagle on,
/// each event after the head waits for the client's ACK, which a client in
/// request/response rhythm delays by 40 ms: every call would take ~44 ms.
/// (A named type, not `impl Listener`: axum gives the peer's address to a `TapIo`.)
fn no_delay(listener: TcpListener) -> axum::serve::TapIo<TcpListener, fn(&mut TcpStream)> {
    fn set(stream: &mut TcpStream) {
        // Failing costs only latency: serve the connection either way.
        let _ = stream.set_nodelay(true);
    }
    listener.tap_io(set)
}

/// The token from `--token-file`, else `MCPCTL_SERVE_TOKEN`, else a new random one
/// (returned a second time to be printed).
fn token(args: &ServeArgs) -> Result<(String, Option<String>), CliError> {
    if let Some(path) = &args.token_file {
        private_file(path, "--token-file")?;
        let text = std::fs::read_to_string(path).map_err(|e| {
            CliError::usage(format!("cannot read --token-file {}: {e}", path.display()))
        })?;
        let token = text.trim().to_owned();
        if token.len() < MIN_TOKEN_LEN {
            return Err(CliError::usage(format!(
                "the token in {} is shorter than {MIN_TOKEN_LEN} characters",
                path.display()
            ))
            .with_hint(TOKEN_HINT));
        }
        return Ok((token, None));
    }
    if let Ok(token) = std::env::var(TOKEN_VAR) {
        if token.len() < MIN_TOKEN_LEN {
            return Err(CliError::usage(format!(
                "${TOKEN_VAR} is shorter than {MIN_TOKEN_LEN} characters"
            ))
            .with_hint("set a long random token (e.g. `openssl rand -hex 32`), or unset it to have one generated"));
        }
        return Ok((token, None));
    }
    let token = super::random_hex(32)
        .map_err(|e| CliError::failure(format!("cannot generate a token: {e}")))?;
    Ok((token.clone(), Some(token)))
}

/// The shortest token accepted.
const MIN_TOKEN_LEN: usize = 16;

/// How to make a token file only its owner reads.
const TOKEN_HINT: &str =
    "make a long random token only you can read: `(umask 077; openssl rand -hex 32 > token)`";

/// Refuses a secret file given with `flag` (`--token-file`, `--seal-key-file`) that other
/// users can read (or write), as ssh does for keys.
#[cfg(unix)]
pub(crate) fn private_file(path: &std::path::Path, flag: &str) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .map_err(|e| CliError::usage(format!("cannot read {flag} {}: {e}", path.display())))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(CliError::usage(format!(
            "{flag} {} can be read by other users (mode {:o})",
            path.display(),
            mode & 0o777
        ))
        .with_hint(format!("chmod 600 {}", path.display())));
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn private_file(_path: &std::path::Path, _flag: &str) -> Result<(), CliError> {
    Ok(())
}

/// The token of an `Authorization` value with the Bearer scheme, which is
/// case-insensitive (RFC 9110 §11.1): `Bearer`, `bearer` and `BEARER` all count.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Refuses requests without the token (401) and bounds the body.
async fn check(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    let caller = match &guard.auth {
        Auth::Token(token) => {
            let presented = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(bearer);
            if !presented.is_some_and(|t| same(t.as_bytes(), token.as_bytes())) {
                return (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer realm=\"mcpctl serve\"")],
                    "mcpctl serve: a bearer token is required (printed when serve started)\n",
                )
                    .into_response();
            }
            Caller::static_token()
        }
        Auth::OAuth(server) => match server
            .authenticate(request.headers(), client_address(&request))
            .await
        {
            Ok(caller) => {
                tracing::debug!(subject = caller.subject(), "an access token was accepted");
                caller
            }
            Err(refusal) => return server.refuse(&refusal),
        },
    };
    let caller = Arc::new(caller);
    let too_big = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > guard.max_body);
    if too_big {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "mcpctl serve: request bodies are limited to {} bytes\n",
                guard.max_body
            ),
        )
            .into_response();
    }
    let session = request
        .headers()
        .get(super::absent::SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let path = request.uri().path().to_owned();
    let bindings = &guard.hub.bindings;
    if let Some(session) = &session
        && !bindings.owns_session(session, &caller, &path)
    {
        // Not this caller's (or not on this path): as if it did not exist.
        return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
    }
    let deleting = request.method() == http::Method::DELETE;
    request.extensions_mut().insert(Arc::clone(&caller));
    let (parts, body) = request.into_parts();
    let body = Body::new(http_body_util::Limited::new(body, guard.max_body));
    let response = next.run(Request::from_parts(parts, body)).await;
    let Some(session) = session else {
        let created = response
            .headers()
            .get(super::absent::SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        if let Some(created) = created {
            forget_ended_sessions(&guard).await;
            bindings.bind_session(created, &caller, &path);
        }
        return response;
    };
    if deleting && response.status().is_success() {
        bindings.forget_session(&session);
    }
    // A 2025-era session's stream: if it breaks while a question to its client is out,
    // find out whether the client is still there.
    let (parts, body) = response.into_parts();
    let watcher = Arc::clone(&guard);
    let body = super::absent::watch_stream(body, move || {
        let sessions = Arc::clone(&watcher.sessions);
        super::absent::stream_lost(&watcher.hub.waiting, session, move |id| async move {
            let _ =
                rmcp::transport::streamable_http_server::session::SessionManager::close_session(
                    &*sessions,
                    &id.into(),
                )
                .await;
        });
    });
    Response::from_parts(parts, body)
}

/// Forgets the sessions rmcp no longer has (ended by their idle timeout or their
/// client's end), so the record of who owns which stays as small as the sessions.
async fn forget_ended_sessions(guard: &Guard) {
    use rmcp::transport::streamable_http_server::session::SessionManager;
    for id in guard.hub.bindings.session_ids() {
        let alive = guard
            .sessions
            .has_session(&id.clone().into())
            .await
            .unwrap_or(true);
        if !alive {
            guard.hub.bindings.forget_session(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer abc"), Some("abc"));
        assert_eq!(bearer("BEARER  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearerabc"), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "0123456789abcdef0123").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = private_file(&path, "--token-file").unwrap_err();
        assert!(
            err.message()
                .contains("can be read by other users (mode 644)"),
            "{}",
            err.message()
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(private_file(&path, "--token-file").is_ok());
    }

    #[tokio::test]
    async fn accepted_connections_have_nagle_off() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut listener = no_delay(listener);
        let client = TcpStream::connect(addr);
        let ((accepted, _), _client) =
            tokio::join!(axum::serve::Listener::accept(&mut listener), client);
        assert!(
            accepted.nodelay().unwrap(),
            "TCP_NODELAY on the gateway's side"
        );
    }
}

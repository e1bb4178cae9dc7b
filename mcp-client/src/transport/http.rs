//! HTTP connections (streamable HTTP, and the legacy HTTP+SSE transport of [`crate::transport::sse`]):
//! headers, auth, and retries of transient failures.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use mcp_key::{McpServerKey, Secret};
use rmcp::RoleClient;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::{ExponentialBackoff, SseRetryPolicy};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::failure::{FailureReason, StartupFailure};
use crate::handshake::handler::Handler;
use crate::rmcp_errors::{HttpFailure, answered_as_legacy, describe_init, http_failure_of_init};
use crate::settings::{ClientSettings, HttpTarget};
use crate::transport::http_client::McpHttpClient;

/// Delays between attempts of `initialize` on transient failures.
pub(crate) const RETRY_DELAYS: [Duration; 2] = [Duration::from_millis(250), Duration::from_secs(1)];

/// True when credentials must not be sent: plain `http://` to a host that is not
/// loopback, without `allow_plain_http`.
fn credentials_forbidden(target: &HttpTarget) -> bool {
    !target.allow_plain_http && !secure_or_loopback(&target.url)
}

/// True when credentials may go to `url`: `https://`, or `http://` to loopback
/// ([`mcp_auth::may_carry_credentials`], the one rule).
pub(crate) fn secure_or_loopback(url: &str) -> bool {
    reqwest::Url::parse(url)
        .is_ok_and(|parsed| mcp_auth::may_carry_credentials(parsed.scheme(), parsed.host_str()))
}

/// The failure of a server whose credentials could not be produced: the provider's
/// verdict, with `mcp-auth`'s error behind it as the cause (so a host can downcast it).
fn no_credentials(e: crate::settings::auth::CredentialsError) -> StartupFailure {
    let failure = StartupFailure::new(e.reason(), e.to_string());
    match e.auth_error() {
        Some(cause) => failure.with_shared_source(Arc::clone(cause) as _),
        None => failure,
    }
}

/// The failure of a server that would send credentials in the clear.
fn plain_http_failure(key: &McpServerKey, url: &str, what: &str) -> StartupFailure {
    StartupFailure::new(
        FailureReason::Config,
        format!(
            "MCP server `{key}`: refusing to send {what} over plain http to {}; use an https:// URL, or set `allow_plain_http = true` for this server if the network is trusted",
            mcp_key::redact_url(url)
        ),
    )
}

fn header_map(
    key: &McpServerKey,
    headers: &[(String, Secret)],
) -> Result<HashMap<HeaderName, HeaderValue>, StartupFailure> {
    let mut map = HashMap::new();
    for (name, value) in headers {
        let n = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            StartupFailure::new(
                FailureReason::Config,
                format!("MCP server `{key}`: `{name}` is not a valid HTTP header name"),
            )
        })?;
        let mut v = HeaderValue::from_str(value.expose()).map_err(|_| {
            StartupFailure::new(
                FailureReason::Config,
                format!("MCP server `{key}`: the value of header `{name}` is not a valid HTTP header value"),
            )
        })?;
        v.set_sensitive(true);
        map.insert(n, v);
    }
    Ok(map)
}

/// Follows at most 10 redirects, and only within the origin (scheme, host, port) of the
/// first URL: a redirect elsewhere (or from https to http) is not followed, so the 3xx
/// fails the request instead of handing configured headers to another party.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

/// Reconnection of a broken SSE stream: 3 tries, 250 ms doubling to at most 2 s.
fn sse_retry_policy() -> ExponentialBackoff {
    let mut policy = ExponentialBackoff::default();
    policy.max_times = Some(3);
    policy.base_duration = Duration::from_millis(250);
    policy.max_delay = Some(Duration::from_secs(2));
    policy
}

/// Resumption of a broken SSE stream, by era. In the 2025 era a stream is resumed
/// ([`sse_retry_policy`]: `GET` with `Last-Event-ID`). MCP 2026-07-28 has no resumption:
/// once the connection is known to speak it (the same flag makes [`McpHttpClient`] refuse
/// any `GET`, for a server that asked for a reconnect with `retry`), a broken response
/// stream ends its request,
/// which [`crate::transport::reissue`] sends again when it is an idempotent read, and which fails with
/// a retryable error otherwise.
#[derive(Debug)]
struct EraRetry {
    legacy: ExponentialBackoff,
    modern: Arc<std::sync::atomic::AtomicBool>,
}

impl SseRetryPolicy for EraRetry {
    fn retry(&self, current_times: usize) -> Option<Duration> {
        if self.modern.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        self.legacy.retry(current_times)
    }
}

/// What every handshake attempt of one connection shares: the headers, whether a token is
/// configured, the HTTP clients, and whether credentials are forbidden (plain http).
struct Prepared {
    headers: HashMap<HeaderName, HeaderValue>,
    token_configured: bool,
    client: reqwest::Client,
    /// The client of `subscriptions/listen` requests (none: no stall watchdog).
    listen_client: Option<reqwest::Client>,
    forbidden: bool,
}

/// One handshake attempt's outcome.
enum Attempt {
    Served(RunningService<RoleClient, Handler>),
    /// The `server/discover` probe went unanswered within the probe timeout.
    ProbeUnanswered,
    /// The handshake failed; the client that tried, for the provider's last verdict.
    Failed(Box<(ClientInitializeError, McpHttpClient)>),
}

/// Connects and initializes, retrying transient failures after [`RETRY_DELAYS`]. The caller
/// bounds the whole thing with the startup timeout.
pub(crate) async fn connect(
    key: &McpServerKey,
    target: &HttpTarget,
    settings: &ClientSettings,
    handler: Handler,
    lifecycle: &rmcp::service::ClientLifecycleMode,
) -> Result<RunningService<RoleClient, Handler>, StartupFailure> {
    let prepared = prepare(key, target, settings).await?;
    let mut attempt = 0;
    let mut lifecycle = std::borrow::Cow::Borrowed(lifecycle);
    // A DPoP nonce the server gave outlives a handshake attempt.
    let dpop_nonce = crate::transport::http_dpop::NonceSlot::default();
    loop {
        let probing = matches!(*lifecycle, ClientLifecycleMode::Auto { .. });
        let outcome = handshake(
            key,
            target,
            settings,
            &handler,
            &prepared,
            &lifecycle,
            &dpop_nonce,
        );
        let (err, mcp_client) = match outcome.await {
            Attempt::Served(service) => return Ok(service),
            Attempt::ProbeUnanswered => {
                // A server that leaves the probe unanswered: shake hands the 2025 way.
                tracing::info!(server = %key, "no answer to the server/discover probe within {:?}; connecting with initialize", settings.probe_timeout);
                lifecycle = std::borrow::Cow::Owned(ClientLifecycleMode::Initialize);
                continue;
            }
            Attempt::Failed(failed) => *failed,
        };
        // The probe was answered, but not as a 2026-era server answers it: a server of the
        // 2025 era (listing only older versions, or answering `server/discover` with an
        // error or something else). Shake hands the 2025 way instead.
        if probing && answered_as_legacy(&err) {
            tracing::info!(server = %key, "the server/discover probe was not answered the 2026 way ({err}); connecting with initialize");
            lifecycle = std::borrow::Cow::Owned(ClientLifecycleMode::Initialize);
            continue;
        }
        if http_failure_of_init(&err) == HttpFailure::Transient && attempt < RETRY_DELAYS.len() {
            tracing::debug!(server = %key, attempt, error = %describe_init(&err), "transient failure, retrying initialize");
            tokio::time::sleep(RETRY_DELAYS[attempt]).await;
            attempt += 1;
            continue;
        }
        return Err(init_failure(
            key,
            target,
            &prepared,
            &err,
            &mcp_client,
            attempt + 1,
        ));
    }
}

/// The headers, the first token (to refuse sending it in the clear) and the HTTP client.
async fn prepare(
    key: &McpServerKey,
    target: &HttpTarget,
    settings: &ClientSettings,
) -> Result<Prepared, StartupFailure> {
    let forbidden = credentials_forbidden(target);
    if forbidden && !target.headers.is_empty() {
        return Err(plain_http_failure(key, &target.url, "configured headers"));
    }
    let headers = header_map(key, &target.headers)?;
    let token = match &target.auth {
        Some(provider) => provider.authorization(key).await.map_err(no_credentials)?,
        None => None,
    };
    if forbidden && token.is_some() {
        return Err(plain_http_failure(key, &target.url, "a bearer token"));
    }
    let client = http_client(key, settings, None)?;
    // Listens get a client of their own: its read timeout is the stall watchdog, which no
    // other request may have (a tool call's stream may rightly stay silent for minutes).
    let listen_client = (!settings.listen_stall.is_zero())
        .then(|| http_client(key, settings, Some(settings.listen_stall)))
        .transpose()?;
    Ok(Prepared {
        headers,
        token_configured: token.is_some(),
        client,
        listen_client,
        forbidden,
    })
}

/// The reqwest client of one server, with `read_timeout` between any two reads of a body.
fn http_client(
    key: &McpServerKey,
    settings: &ClientSettings,
    read_timeout: Option<Duration>,
) -> Result<reqwest::Client, StartupFailure> {
    let builder = reqwest::Client::builder()
        .user_agent(settings.user_agent())
        // Configured headers and tokens must not follow a redirect to another origin, and a
        // Referer would carry the URL's query string there.
        .redirect(same_origin_redirects())
        .referer(false);
    let builder = match read_timeout {
        Some(timeout) => builder.read_timeout(timeout),
        None => builder,
    };
    builder.build().map_err(|e| {
        StartupFailure::new(
            FailureReason::Transport,
            format!("MCP server `{key}` has no HTTP client"),
        )
        .with_source(e)
    })
}

/// One handshake over a new transport (streamable HTTP, or the legacy SSE transport,
/// which always shakes hands with `initialize`).
async fn handshake(
    key: &McpServerKey,
    target: &HttpTarget,
    settings: &ClientSettings,
    handler: &Handler,
    prepared: &Prepared,
    lifecycle: &ClientLifecycleMode,
    dpop_nonce: &crate::transport::http_dpop::NonceSlot,
) -> Attempt {
    let mut config = StreamableHttpClientTransportConfig::with_uri(target.url.clone())
        .custom_headers(prepared.headers.clone())
        .reinit_on_expired_session(true);
    // rmcp's default reconnects an SSE stream forever, so a dead server would hang calls;
    // give up after a few tries and let the call fail. Never in the 2026 era.
    let modern = Arc::new(std::sync::atomic::AtomicBool::new(matches!(
        lifecycle,
        ClientLifecycleMode::Discover { .. }
    )));
    config.retry_config = Arc::new(EraRetry {
        legacy: sse_retry_policy(),
        modern: Arc::clone(&modern),
    });
    // With a provider, every request asks it for the token (refresh before expiry, and once
    // after a 401); without one, no Authorization header is sent.
    let mut mcp_client =
        McpHttpClient::new(prepared.client.clone(), target.auth.clone(), key.clone())
            .with_tokens_forbidden(prepared.forbidden)
            .with_dpop_nonce(dpop_nonce.clone())
            .with_modern_flag(Arc::clone(&modern))
            .with_tap({
                let shared = Arc::clone(&handler.shared);
                Arc::new(move |data| shared.task_support.note(data))
            });
    let renewed_shared = Arc::clone(&handler.shared);
    mcp_client = mcp_client
        .with_renewal_note(Arc::new(move || renewed_shared.note_session_renewed()))
        .with_session_slot(handler.shared.instruments.session.clone());
    if let Some(client) = &prepared.listen_client {
        let shared = Arc::clone(&handler.shared);
        mcp_client = mcp_client.with_listen_watch(crate::transport::http_client::ListenWatch {
            client: client.clone(),
            stall: settings.listen_stall,
            note: Arc::new(move |id| shared.listens.note_stall(id)),
        });
    }
    let served = if target.legacy_sse {
        let opened = crate::transport::sse::open(
            mcp_client.clone(),
            &target.url,
            prepared.headers.clone(),
            Arc::clone(&handler.shared),
        )
        .await;
        match opened {
            Ok(transport) => {
                let served = rmcp::service::ClientServiceExt::serve_with_lifecycle(
                    handler.clone(),
                    crate::transport::read_order::ReadOrder::new(
                        transport,
                        Arc::clone(&handler.shared),
                    ),
                    ClientLifecycleMode::Initialize,
                );
                crate::telemetry::outside_spans(served).await
            }
            Err(e) => Err(ClientInitializeError::transport::<
                crate::transport::sse::SseTransport,
            >(e, "open the SSE event stream")),
        }
    } else {
        // Log messages are routed and progress delivered as they are read (see `read_order`): a call's own
        // messages come on its response stream, before its reply.
        let transport = StreamableHttpClientTransport::with_client(mcp_client.clone(), config);
        let handshake =
            crate::telemetry::outside_spans(rmcp::service::ClientServiceExt::serve_with_lifecycle(
                handler.clone(),
                crate::transport::read_order::ReadOrder::new(
                    transport,
                    Arc::clone(&handler.shared),
                ),
                lifecycle.clone(),
            ));
        if matches!(lifecycle, ClientLifecycleMode::Auto { .. }) {
            match tokio::time::timeout(settings.probe_timeout, handshake).await {
                Ok(served) => served,
                Err(_) => return Attempt::ProbeUnanswered,
            }
        } else {
            handshake.await
        }
    };
    match served {
        Ok(service) => {
            let version = service
                .peer()
                .peer_info()
                .map(|i| i.protocol_version.clone());
            modern.store(
                version.is_some_and(|v| crate::Era::of(&v) == crate::Era::V2026_07_28),
                std::sync::atomic::Ordering::Relaxed,
            );
            Attempt::Served(service)
        }
        Err(err) => Attempt::Failed(Box::new((err, mcp_client))),
    }
}

/// The failure of a handshake that will not be tried again, after `attempts` attempts.
fn init_failure(
    key: &McpServerKey,
    target: &HttpTarget,
    prepared: &Prepared,
    err: &ClientInitializeError,
    mcp_client: &McpHttpClient,
    attempts: usize,
) -> StartupFailure {
    match http_failure_of_init(err) {
        HttpFailure::AuthRequired => {
            // The provider's own verdict (e.g. a rejected refresh) is the better reason.
            if let Some(e) = mcp_client.last_failure().filter(|e| {
                !matches!(
                    e,
                    crate::settings::auth::CredentialsError::LoginRequired { .. }
                )
            }) {
                return no_credentials(e).with_auth_challenge(err.auth_challenge());
            }
            StartupFailure::new(
                FailureReason::LoginRequired,
                format!(
                    "MCP server `{key}` requires login (HTTP 401){}",
                    if prepared.token_configured {
                        "; the configured token was rejected"
                    } else {
                        ""
                    }
                ),
            )
            .with_auth_challenge(err.auth_challenge())
        }
        // The cause names the URL (reqwest's errors quote it).
        HttpFailure::Transient => StartupFailure::new(
            FailureReason::Transport,
            format!(
                "MCP server `{key}` is unreachable after {attempts} attempts: {}",
                describe_init(err)
            ),
        ),
        HttpFailure::Permanent => StartupFailure::new(
            FailureReason::Protocol,
            format!(
                "MCP server `{key}` at {}: initialize failed: {}",
                mcp_key::redact_url(&target.url),
                describe_init(err)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::secure_or_loopback;

    #[test]
    fn https_and_loopback_may_carry_credentials() {
        for ok in [
            "https://example.com/mcp",
            "http://127.0.0.1:3000/mcp",
            "http://127.9.9.9/mcp",
            "http://[::1]:80/mcp",
            "http://localhost/mcp",
            "http://LOCALHOST:1/mcp",
        ] {
            assert!(secure_or_loopback(ok), "{ok}");
        }
        for no in [
            "http://example.com/mcp",
            "http://10.0.0.1/mcp",
            "http://localhost.evil.com/mcp",
            "http://127.0.0.1.nip.io/mcp",
            // Loopback, but neither http nor https (accepted before the rule had one home).
            "ws://localhost/mcp",
            "not a url",
        ] {
            assert!(!secure_or_loopback(no), "{no}");
        }
    }
}

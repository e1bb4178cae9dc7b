//! Streamable-HTTP connections: headers, auth, and retries of transient failures.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use mcp_key::{McpServerKey, Secret};
use rmcp::RoleClient;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::{
    HttpStatusError, StreamableHttpClientTransportConfig, StreamableHttpError,
};

use crate::auth::AuthHeaderProvider;
use crate::error::StartupFailure;
use crate::events::FailureReason;
use crate::handler::Handler;
use crate::http_client::McpHttpClient;

/// Delays between attempts of `initialize` on transient failures.
pub(crate) const RETRY_DELAYS: [Duration; 2] = [Duration::from_millis(250), Duration::from_secs(1)];

/// What is needed to connect to one HTTP server.
pub(crate) struct HttpTarget {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, Secret)>,
    pub(crate) auth: Option<Arc<dyn AuthHeaderProvider>>,
    pub(crate) user_agent: String,
    /// Credentials may go over plain http to a non-loopback host.
    pub(crate) allow_plain_http: bool,
}

impl HttpTarget {
    /// True when credentials must not be sent: plain `http://` to a host that is not
    /// loopback, without `allow_plain_http`.
    fn credentials_forbidden(&self) -> bool {
        !self.allow_plain_http && !secure_or_loopback(&self.url)
    }
}

/// True for `https://` URLs and for URLs whose host is loopback (`localhost`, 127.0.0.0/8,
/// `::1`).
pub(crate) fn secure_or_loopback(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    if parsed.scheme() == "https" {
        return true;
    }
    match parsed.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
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

/// How a failed HTTP operation should be treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HttpFailure {
    /// Worth another try (connect error, 408, 429, 5xx).
    Transient,
    /// 401: the server wants credentials.
    AuthRequired,
    /// Anything else.
    Permanent,
}

fn classify_dyn(err: &(dyn std::error::Error + 'static)) -> Option<HttpFailure> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(h) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return Some(match h {
                StreamableHttpError::AuthRequired(_) => HttpFailure::AuthRequired,
                StreamableHttpError::HttpStatus(s) => status_class(s),
                StreamableHttpError::Client(c) if c.is_connect() || c.is_timeout() => {
                    HttpFailure::Transient
                }
                StreamableHttpError::Client(c) => match c.status() {
                    Some(s) if transient_status(s.as_u16()) => HttpFailure::Transient,
                    _ => HttpFailure::Permanent,
                },
                StreamableHttpError::UnexpectedServerResponse(text) if text.contains("408") => {
                    HttpFailure::Transient
                }
                _ => HttpFailure::Permanent,
            });
        }
        if let Some(s) = e.downcast_ref::<HttpStatusError>() {
            return Some(status_class(s));
        }
        if let Some(r) = e.downcast_ref::<reqwest::Error>()
            && (r.is_connect() || r.is_timeout())
        {
            return Some(HttpFailure::Transient);
        }
        cur = e.source();
    }
    None
}

fn transient_status(status: u16) -> bool {
    matches!(status, 408 | 429) || (500..=599).contains(&status)
}

fn status_class(s: &HttpStatusError) -> HttpFailure {
    if transient_status(s.status) {
        HttpFailure::Transient
    } else if s.status == 401 {
        HttpFailure::AuthRequired
    } else {
        HttpFailure::Permanent
    }
}

/// The messages of an error and its sources, without rmcp's type names, e.g.
/// `HTTP 500` or `error sending request for url (...): tcp connect error: Connection refused`.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        let text = match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(inner)) => {
                cur = Some(inner);
                continue;
            }
            Some(StreamableHttpError::SessionExpired) => {
                "the server lost the session (did it restart?) and it could not be recovered"
                    .to_owned()
            }
            Some(StreamableHttpError::ReinitializationFailed(data)) => format!(
                "the server lost the session (did it restart?) and refused a new one: {}",
                data.message
            ),
            _ => e.to_string(),
        };
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = e.source();
    }
    // reqwest's errors quote the URL, query string included.
    mcp_key::redact_urls(&parts.join(": ")).into_owned()
}

/// A readable description of an `initialize` failure.
pub(crate) fn describe_init(err: &ClientInitializeError) -> String {
    match err {
        ClientInitializeError::TransportError { error, context } => {
            format!(
                "{} (while trying to {context})",
                error_chain(error.error.as_ref())
            )
        }
        other => mcp_key::redact_urls(&other.to_string()).into_owned(),
    }
}

/// A readable description of a request failure.
pub(crate) fn describe_service(err: &ServiceError) -> String {
    match err {
        ServiceError::TransportSend(e) => error_chain(e.error.as_ref()),
        other => mcp_key::redact_urls(&other.to_string()).into_owned(),
    }
}

/// Classifies an `initialize` failure.
pub(crate) fn classify_init(err: &ClientInitializeError) -> HttpFailure {
    if err.is_authorization_required() {
        return HttpFailure::AuthRequired;
    }
    match err {
        ClientInitializeError::TransportError { error, .. } => {
            classify_dyn(error.error.as_ref()).unwrap_or(HttpFailure::Permanent)
        }
        ClientInitializeError::ConnectionClosed(_) => HttpFailure::Transient,
        _ => HttpFailure::Permanent,
    }
}

/// True when a request failed because of what the server sent (a reply that cannot complete
/// the request, a body over the size limit, an unexpected content type), not because the
/// connection broke: a protocol error rather than a disconnect.
pub(crate) fn is_protocol_fault(err: &ServiceError) -> bool {
    let ServiceError::TransportSend(e) = err else {
        return false;
    };
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e.error.as_ref());
    while let Some(e) = cur {
        if let Some(h) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return matches!(
                h,
                StreamableHttpError::UnexpectedServerResponse(_)
                    | StreamableHttpError::ResponseBodyTooLarge { .. }
                    | StreamableHttpError::UnexpectedContentType(_)
                    | StreamableHttpError::Deserialize(_)
            );
        }
        cur = e.source();
    }
    false
}

/// Classifies a request failure after initialization.
pub(crate) fn classify_service(err: &ServiceError) -> HttpFailure {
    if err.is_authorization_required() {
        return HttpFailure::AuthRequired;
    }
    match err {
        ServiceError::TransportSend(e) => {
            classify_dyn(e.error.as_ref()).unwrap_or(HttpFailure::Permanent)
        }
        _ => HttpFailure::Permanent,
    }
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

/// Connects and initializes, retrying transient failures after [`RETRY_DELAYS`]. The caller
/// bounds the whole thing with the startup timeout.
/// Whether a failed `server/discover` probe was answered (not a transport failure) in a
/// way that says the server is not of the 2026 era.
fn answered_as_legacy(err: &ClientInitializeError) -> bool {
    match err {
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => !server_supported.contains(&ProtocolVersion::V_2026_07_28),
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::JsonRpcError(_)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => true,
        _ => false,
    }
}

pub(crate) async fn connect(
    key: &McpServerKey,
    target: &HttpTarget,
    handler: Handler,
    lifecycle: &rmcp::service::ClientLifecycleMode,
) -> Result<RunningService<RoleClient, Handler>, StartupFailure> {
    let forbidden = target.credentials_forbidden();
    if forbidden && !target.headers.is_empty() {
        return Err(plain_http_failure(key, &target.url, "configured headers"));
    }
    let headers = header_map(key, &target.headers)?;
    let token = match &target.auth {
        Some(provider) => provider
            .authorization(key)
            .await
            .map_err(|e| StartupFailure::new(e.reason(), e.to_string()).with_source(e))?,
        None => None,
    };
    if forbidden && token.is_some() {
        return Err(plain_http_failure(key, &target.url, "a bearer token"));
    }
    let client = reqwest::Client::builder()
        .user_agent(target.user_agent.clone())
        // Configured headers and tokens must not follow a redirect to another origin, and a
        // Referer would carry the URL's query string there.
        .redirect(same_origin_redirects())
        .referer(false)
        .build()
        .map_err(|e| {
            StartupFailure::new(
                FailureReason::Transport,
                format!("MCP server `{key}`: cannot build the HTTP client: {e}"),
            )
        })?;
    let mut attempt = 0;
    let mut lifecycle = std::borrow::Cow::Borrowed(lifecycle);
    // A DPoP nonce the server gave outlives a handshake attempt.
    let dpop_nonce = crate::http_dpop::NonceSlot::default();
    loop {
        let mut config = StreamableHttpClientTransportConfig::with_uri(target.url.clone())
            .custom_headers(headers.clone())
            .reinit_on_expired_session(true);
        // rmcp's default reconnects an SSE stream forever, so a dead server would hang
        // calls; give up after a few tries and let the call fail.
        config.retry_config = Arc::new(sse_retry_policy());
        // With a provider, every request asks it for the token (refresh before expiry, and
        // once after a 401); without one, no Authorization header is sent.
        let mcp_client = McpHttpClient::new(client.clone(), target.auth.clone(), key.clone())
            .with_tokens_forbidden(forbidden)
            .with_dpop_nonce(dpop_nonce.clone());
        let served = rmcp::service::ClientServiceExt::serve_with_lifecycle(
            handler.clone(),
            StreamableHttpClientTransport::with_client(mcp_client.clone(), config),
            lifecycle.as_ref().clone(),
        )
        .await;
        match served {
            Ok(service) => return Ok(service),
            // The probe was answered, but not as a 2026-era server answers it: a server
            // of the 2025 era (listing only older versions, or answering `server/discover`
            // with an error or something else). Shake hands the 2025 way instead.
            Err(err)
                if matches!(*lifecycle, ClientLifecycleMode::Auto { .. })
                    && answered_as_legacy(&err) =>
            {
                tracing::info!(server = %key, "the server/discover probe was not answered the 2026 way ({err}); connecting with initialize");
                lifecycle = std::borrow::Cow::Owned(ClientLifecycleMode::Initialize);
            }
            Err(err) => {
                let class = classify_init(&err);
                match class {
                    HttpFailure::AuthRequired => {
                        // The provider's own verdict (e.g. a rejected refresh) is the
                        // better reason.
                        if let Some(e) = mcp_client.last_failure().filter(|e| {
                            !matches!(e, crate::auth::CredentialsError::LoginRequired { .. })
                        }) {
                            return Err(StartupFailure::new(e.reason(), e.to_string())
                                .with_auth_challenge(err.auth_challenge())
                                .with_source(e));
                        }
                        return Err(StartupFailure::new(
                            FailureReason::LoginRequired,
                            format!(
                                "MCP server `{key}` requires login (HTTP 401){}",
                                if token.is_some() {
                                    "; the configured token was rejected"
                                } else {
                                    ""
                                }
                            ),
                        )
                        .with_auth_challenge(err.auth_challenge()));
                    }
                    HttpFailure::Transient if attempt < RETRY_DELAYS.len() => {
                        tracing::debug!(server = %key, attempt, error = %describe_init(&err), "transient failure, retrying initialize");
                        tokio::time::sleep(RETRY_DELAYS[attempt]).await;
                        attempt += 1;
                    }
                    HttpFailure::Transient => {
                        return Err(StartupFailure::new(
                            FailureReason::Transport,
                            format!(
                                "MCP server `{key}` at {} is unreachable after {} attempts: {}",
                                mcp_key::redact_url(&target.url),
                                attempt + 1,
                                describe_init(&err)
                            ),
                        ));
                    }
                    HttpFailure::Permanent => {
                        return Err(StartupFailure::new(
                            FailureReason::Protocol,
                            format!(
                                "MCP server `{key}` at {}: initialize failed: {}",
                                mcp_key::redact_url(&target.url),
                                describe_init(&err)
                            ),
                        ));
                    }
                }
            }
        }
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
            "not a url",
        ] {
            assert!(!secure_or_loopback(no), "{no}");
        }
    }
}

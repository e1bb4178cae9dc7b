//! rmcp's errors, read in one place: what a request's failure is ([`ServiceFailure`]),
//! whether a failed `initialize` was a 2025-era answer ([`answered_as_legacy`]), how an
//! HTTP failure should be treated ([`HttpFailure`], feature `http`), and readable
//! descriptions (the messages of an error and its sources without rmcp's type names, URLs
//! redacted; the streamable-HTTP transport's errors get words of their own). Every other
//! file asks here instead of matching rmcp's variants itself.

use rmcp::ErrorData;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, ServiceError};
#[cfg(feature = "http")]
use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};

/// What a request rmcp failed with a [`ServiceError`] met: the one classification of
/// rmcp's request errors, for the request errors, telemetry, listens, retries and the
/// gateway.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum ServiceFailure<'a> {
    /// The server wants credentials (HTTP 401 or 403 through the transport).
    AuthRequired,
    /// The server answered with a JSON-RPC error: it refused the request.
    Refused(&'a ErrorData),
    /// rmcp's own timeout ended the wait.
    Timeout,
    /// The connection is gone.
    Closed,
    /// An answer of the wrong type.
    UnexpectedResponse,
    /// The transport got an answer that cannot complete the request (a body over the size
    /// limit, an unexpected content type, an unreadable reply; streamable HTTP only): the
    /// server is at fault, not the connection.
    ProtocolFault,
    /// The request could not be sent, or its POST failed.
    SendFailed,
    /// Anything else (cancelled, a lagging subscription, too many input rounds).
    Other,
}

impl<'a> ServiceFailure<'a> {
    /// Classifies `err`.
    pub fn of(err: &'a ServiceError) -> Self {
        if err.is_authorization_required() {
            return Self::AuthRequired;
        }
        match err {
            ServiceError::McpError(data) => Self::Refused(data),
            ServiceError::Timeout { .. } => Self::Timeout,
            ServiceError::TransportClosed => Self::Closed,
            ServiceError::UnexpectedResponse => Self::UnexpectedResponse,
            ServiceError::TransportSend(_) if is_protocol_fault(err) => Self::ProtocolFault,
            ServiceError::TransportSend(_) => Self::SendFailed,
            _ => Self::Other,
        }
    }
}

/// Whether a failed `server/discover` probe was answered (not a transport failure) in a
/// way that says the server is not of the 2026 era: the connection is still good for
/// `initialize` (over HTTP on the same client, over stdio on the same process).
pub(crate) fn answered_as_legacy(err: &ClientInitializeError) -> bool {
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

/// How a failed HTTP operation should be treated.
#[cfg(feature = "http")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HttpFailure {
    /// Worth another try (connect error, 408, 429, 5xx).
    Transient,
    /// 401: the server wants credentials.
    AuthRequired,
    /// Anything else.
    Permanent,
}

/// Classifies an HTTP transport error (of either HTTP transport).
#[cfg(feature = "http")]
pub(crate) fn http_failure(err: &StreamableHttpError<reqwest::Error>) -> HttpFailure {
    http_failure_in(err).unwrap_or(HttpFailure::Permanent)
}

/// Classifies an `initialize` failure over HTTP.
#[cfg(feature = "http")]
pub(crate) fn http_failure_of_init(err: &ClientInitializeError) -> HttpFailure {
    if err.is_authorization_required() {
        return HttpFailure::AuthRequired;
    }
    match err {
        ClientInitializeError::TransportError { error, .. } => {
            http_failure_in(error.error.as_ref()).unwrap_or(HttpFailure::Permanent)
        }
        ClientInitializeError::ConnectionClosed(_) => HttpFailure::Transient,
        _ => HttpFailure::Permanent,
    }
}

/// Classifies a request failure over HTTP after initialization.
#[cfg(feature = "http")]
pub(crate) fn http_failure_of_service(err: &ServiceError) -> HttpFailure {
    match (ServiceFailure::of(err), err) {
        (ServiceFailure::AuthRequired, _) => HttpFailure::AuthRequired,
        (_, ServiceError::TransportSend(e)) => {
            http_failure_in(e.error.as_ref()).unwrap_or(HttpFailure::Permanent)
        }
        _ => HttpFailure::Permanent,
    }
}

/// The class of the first HTTP error in `err`'s chain, if any.
#[cfg(feature = "http")]
fn http_failure_in(err: &(dyn std::error::Error + 'static)) -> Option<HttpFailure> {
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

#[cfg(feature = "http")]
fn transient_status(status: u16) -> bool {
    matches!(status, 408 | 429) || (500..=599).contains(&status)
}

#[cfg(feature = "http")]
fn status_class(s: &HttpStatusError) -> HttpFailure {
    if transient_status(s.status) {
        HttpFailure::Transient
    } else if s.status == 401 {
        HttpFailure::AuthRequired
    } else {
        HttpFailure::Permanent
    }
}

/// The text for one error of the chain, `None` to skip it in favour of `next`.
#[cfg(feature = "http")]
fn http_text<'a>(
    e: &'a (dyn std::error::Error + 'static),
    next: &mut Option<&'a (dyn std::error::Error + 'static)>,
) -> Option<String> {
    match e.downcast_ref::<StreamableHttpError<reqwest::Error>>()? {
        StreamableHttpError::Client(inner) => {
            *next = Some(inner);
            None
        }
        StreamableHttpError::SessionExpired => Some(
            "the server lost the session (did it restart?) and it could not be recovered"
                .to_owned(),
        ),
        StreamableHttpError::ReinitializationFailed(data) => Some(format!(
            "the server lost the session (did it restart?) and refused a new one: {}",
            data.message
        )),
        _ => Some(e.to_string()),
    }
}

/// The messages of an error and its sources, without rmcp's type names, e.g.
/// `HTTP 500` or `error sending request for url (...): tcp connect error: Connection refused`.
pub(crate) fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        #[cfg(feature = "http")]
        let text = {
            let mut next = None;
            match http_text(e, &mut next) {
                Some(text) => text,
                None if next.is_some() => {
                    cur = next;
                    continue;
                }
                None => e.to_string(),
            }
        };
        #[cfg(not(feature = "http"))]
        let text = e.to_string();
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

/// True when a request failed because of what the server sent (a reply that cannot complete
/// the request, a body over the size limit, an unexpected content type), not because the
/// connection broke: a protocol error rather than a disconnect. Only the streamable-HTTP
/// transport reports such faults this way (stdio reports them through the reply check).
fn is_protocol_fault(err: &ServiceError) -> bool {
    #[cfg(feature = "http")]
    {
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
    #[cfg(not(feature = "http"))]
    {
        let _ = err;
        false
    }
}

#[cfg(test)]
mod tests {
    use std::any::TypeId;
    use std::time::Duration;

    use rmcp::ErrorData;
    use rmcp::model::{ErrorCode, ProtocolVersion};
    use rmcp::service::{ClientInitializeError, ServiceError};
    use rmcp::transport::DynamicTransportError;

    use super::{ServiceFailure, answered_as_legacy};

    fn send_failed(error: impl std::error::Error + Send + Sync + 'static) -> ServiceError {
        ServiceError::TransportSend(DynamicTransportError::from_parts(
            "test",
            TypeId::of::<()>(),
            Box::new(error),
        ))
    }

    #[test]
    fn each_request_failure_has_one_class() {
        let refused = ServiceError::McpError(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "no such method",
            None,
        ));
        assert!(matches!(
            ServiceFailure::of(&refused),
            ServiceFailure::Refused(data) if data.code == ErrorCode::METHOD_NOT_FOUND
        ));
        assert!(matches!(
            ServiceFailure::of(&ServiceError::TransportClosed),
            ServiceFailure::Closed
        ));
        assert!(matches!(
            ServiceFailure::of(&ServiceError::Timeout {
                timeout: Duration::from_secs(1)
            }),
            ServiceFailure::Timeout
        ));
        assert!(matches!(
            ServiceFailure::of(&ServiceError::UnexpectedResponse),
            ServiceFailure::UnexpectedResponse
        ));
        assert!(matches!(
            ServiceFailure::of(&ServiceError::Cancelled { reason: None }),
            ServiceFailure::Other
        ));
        assert!(matches!(
            ServiceFailure::of(&send_failed(std::io::Error::other("broken pipe"))),
            ServiceFailure::SendFailed
        ));
    }

    #[cfg(feature = "http")]
    #[test]
    fn http_failures_say_whether_another_try_may_work() {
        use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};

        use super::{HttpFailure, http_failure, http_failure_of_service};

        let status = |code| {
            StreamableHttpError::<reqwest::Error>::HttpStatus(HttpStatusError::new(code, None))
        };
        assert_eq!(http_failure(&status(503)), HttpFailure::Transient);
        assert_eq!(http_failure(&status(429)), HttpFailure::Transient);
        assert_eq!(http_failure(&status(401)), HttpFailure::AuthRequired);
        assert_eq!(http_failure(&status(404)), HttpFailure::Permanent);
        assert_eq!(
            http_failure_of_service(&send_failed(status(502))),
            HttpFailure::Transient
        );
        assert_eq!(
            http_failure_of_service(&ServiceError::TransportClosed),
            HttpFailure::Permanent
        );
        // A reply the transport could not use is the server's fault, not the connection's.
        let bad = send_failed(
            StreamableHttpError::<reqwest::Error>::UnexpectedContentType(Some(
                "text/plain".to_owned(),
            )),
        );
        assert!(matches!(
            ServiceFailure::of(&bad),
            ServiceFailure::ProtocolFault
        ));
        assert_eq!(http_failure_of_service(&bad), HttpFailure::Permanent);
    }

    #[test]
    fn a_2025_era_answer_to_the_probe_is_told_apart() {
        let legacy = ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported: vec![ProtocolVersion::V_2026_07_28],
            server_supported: vec![ProtocolVersion::V_2025_11_25],
        };
        assert!(answered_as_legacy(&legacy));
        let modern = ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported: vec![ProtocolVersion::V_2025_11_25],
            server_supported: vec![ProtocolVersion::V_2026_07_28],
        };
        assert!(!answered_as_legacy(&modern));
        assert!(!answered_as_legacy(
            &ClientInitializeError::ConnectionClosed("gone".to_owned())
        ));
    }
}

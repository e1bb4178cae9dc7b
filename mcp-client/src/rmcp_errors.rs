//! Readable descriptions of rmcp's errors, for every transport: the messages of an error and
//! its sources without rmcp's type names, URLs redacted. The streamable-HTTP transport's
//! errors get words of their own (feature `http`).

use rmcp::service::{ClientInitializeError, ServiceError};
#[cfg(feature = "http")]
use rmcp::transport::streamable_http_client::StreamableHttpError;

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
pub(crate) fn is_protocol_fault(err: &ServiceError) -> bool {
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

//! [`MetadataFault`]: how a fake server answers requests for its metadata document
//! instead of serving it (for clients' discovery limits).

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};

/// A fault in place of a metadata document: authorization-server metadata (RFC 8414 and
/// OpenID discovery, [`crate::AuthServerOptions::with_metadata_fault`]) or
/// protected-resource metadata (RFC 9728, [`crate::ProtectedOptions::with_metadata_fault`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetadataFault {
    /// `307 Temporary Redirect` to this URL (for example another origin's metadata, which a
    /// client must not follow).
    Redirect(String),
    /// A valid JSON document (`{"x":"xxx…"}`) of this many bytes, at least 8, streamed
    /// with its `Content-Length` (for clients' size limits).
    Oversized(usize),
}

/// Bytes per chunk of an oversized document.
const CHUNK: usize = 64 * 1024;

impl MetadataFault {
    /// The response that takes the document's place.
    pub(crate) fn respond(&self) -> Response {
        match self {
            Self::Redirect(location) => {
                let mut response = StatusCode::TEMPORARY_REDIRECT.into_response();
                if let Ok(value) = http::HeaderValue::from_str(location) {
                    response.headers_mut().insert(header::LOCATION, value);
                }
                response
            }
            Self::Oversized(size) => oversized(*size),
        }
    }
}

/// `{"x":"…"}` of `size` bytes (at least the 8 of `{"x":""}`), produced chunk by chunk
/// rather than held in memory.
fn oversized(size: usize) -> Response {
    const HEAD: &[u8] = b"{\"x\":\"";
    const TAIL: &[u8] = b"\"}";
    let filler = size.saturating_sub(HEAD.len() + TAIL.len());
    let block = Bytes::from(vec![b'x'; CHUNK.min(filler)]);
    let last = Bytes::from(vec![b'x'; filler % CHUNK]);
    let chunks = std::iter::once(Bytes::from_static(HEAD))
        .chain(std::iter::repeat_n(block, filler / CHUNK))
        .chain(std::iter::once(last))
        .chain(std::iter::once(Bytes::from_static(TAIL)))
        .map(Ok::<_, Infallible>);
    let length = HEAD.len() + filler + TAIL.len();
    (
        [
            (header::CONTENT_TYPE, "application/json".to_owned()),
            (header::CONTENT_LENGTH, length.to_string()),
        ],
        Body::from_stream(futures::stream::iter(chunks)),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    async fn body(size: usize) -> (Option<String>, Bytes) {
        let response = MetadataFault::Oversized(size).respond();
        let length = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .map(|v| v.to_str().unwrap().to_owned());
        (
            length,
            axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap(),
        )
    }

    #[tokio::test]
    async fn an_oversized_document_is_json_of_the_given_size() {
        for size in [0, 8, 9, CHUNK, CHUNK + 8, 3 * CHUNK + 17] {
            let (length, bytes) = body(size).await;
            let expected = size.max(8);
            assert_eq!(bytes.len(), expected, "{size}");
            assert_eq!(length, Some(expected.to_string()));
            let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(value["x"].as_str().unwrap().len(), expected - 8);
        }
    }

    #[test]
    fn a_redirect_names_its_target() {
        let response = MetadataFault::Redirect("http://127.0.0.1:1/x".to_owned()).respond();
        assert_eq!(response.status(), StatusCode::TEMPORARY_REDIRECT);
        assert_eq!(response.headers()[header::LOCATION], "http://127.0.0.1:1/x");
    }
}

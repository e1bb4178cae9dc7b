//! Discovery where rmcp does the fetching: a metadata endpoint that redirects to another
//! origin (which must receive nothing) and one that answers a 32 MiB document (refused
//! without reading it). Against tiny loopback servers in this file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail fast"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use mcp_auth::{AuthError, MemoryStore, OAuthCredentials, OAuthSettings};
use mcp_key::McpServerKey;
use serde_json::json;

/// A document well over any metadata limit (rmcp reads at most 1 MiB).
const HUGE: usize = 32 * 1024 * 1024;

/// What the MCP server's origin does with metadata requests.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Protected-resource metadata answers 307 to the other origin.
    RedirectResource,
    /// Protected-resource metadata is fine; authorization-server metadata answers 307
    /// to the other origin.
    RedirectServer,
    /// Protected-resource metadata is a 32 MiB document.
    HugeResource,
    /// Authorization-server metadata is a 32 MiB document.
    HugeServer,
}

/// A loopback origin; counts the requests it receives.
struct Origin {
    url: String,
    hits: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Origin {
    async fn start(
        answer: impl Fn(&str, &str) -> Response + Clone + Send + Sync + 'static,
    ) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let hits = Arc::new(AtomicUsize::new(0));
        let (count, origin) = (hits.clone(), url.clone());
        let app = Router::new().fallback(move |uri: Uri| {
            let answer = answer.clone();
            let origin = origin.clone();
            count.fetch_add(1, Ordering::SeqCst);
            async move { answer(&origin, uri.path()) }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { url, hits, task }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn is_resource_metadata(path: &str) -> bool {
    path.starts_with("/.well-known/oauth-protected-resource")
}

fn is_server_metadata(path: &str) -> bool {
    path.starts_with("/.well-known/oauth-authorization-server")
        || path.starts_with("/.well-known/openid-configuration")
        || path.ends_with("/.well-known/openid-configuration")
}

/// Metadata that would make a login work, were it used: served by the other origin, so
/// a followed redirect could not fail for want of a good answer.
fn good_metadata(origin: &str, path: &str) -> Response {
    if is_resource_metadata(path) {
        axum::Json(json!({
            "resource": format!("{origin}/mcp"),
            "authorization_servers": [origin],
        }))
        .into_response()
    } else if is_server_metadata(path) {
        axum::Json(json!({
            "issuer": origin,
            "authorization_endpoint": format!("{origin}/authorize"),
            "token_endpoint": format!("{origin}/token"),
            "registration_endpoint": format!("{origin}/register"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        }))
        .into_response()
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

fn huge_json() -> Response {
    // `{"x":"xxxx…"}`, built once and shared (cloning `Bytes` copies nothing).
    static DOCUMENT: std::sync::OnceLock<axum::body::Bytes> = std::sync::OnceLock::new();
    let document = DOCUMENT.get_or_init(|| {
        let mut text = Vec::with_capacity(HUGE + 8);
        text.extend_from_slice(b"{\"x\":\"");
        text.resize(HUGE, b'x');
        text.extend_from_slice(b"\"}");
        text.into()
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(document.clone()),
    )
        .into_response()
}

fn answer(mode: Mode, elsewhere: &str, origin: &str, path: &str) -> Response {
    let redirect = || {
        (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, format!("{elsewhere}{path}"))],
        )
            .into_response()
    };
    if path == "/mcp" {
        let metadata = format!("{origin}/.well-known/oauth-protected-resource/mcp");
        return (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                format!("Bearer resource_metadata=\"{metadata}\""),
            )],
        )
            .into_response();
    }
    match mode {
        Mode::RedirectResource if is_resource_metadata(path) => redirect(),
        Mode::HugeResource if is_resource_metadata(path) => huge_json(),
        Mode::RedirectServer if is_server_metadata(path) => redirect(),
        Mode::HugeServer if is_server_metadata(path) => huge_json(),
        // Every other metadata request is answered well, by this origin.
        _ => good_metadata(origin, path),
    }
}

/// Starts the other origin and the MCP server's origin in `mode`, then runs a login's
/// discovery (with the 401 challenge, as a host would, and without one).
async fn discover_in(mode: Mode) -> (Vec<AuthError>, Origin) {
    let elsewhere = Origin::start(good_metadata).await;
    let target = elsewhere.url.clone();
    let origin = Origin::start(move |origin, path| answer(mode, &target, origin, path)).await;
    let creds = OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        format!("{}/mcp", origin.url),
        OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
        Arc::new(MemoryStore::new()),
    );
    let challenge = creds
        .probe()
        .await
        .unwrap()
        .expect("the MCP endpoint answers 401");
    let mut errors = Vec::new();
    for challenge in [Some(challenge.as_str()), None] {
        // Promptly: far within the 30 s rmcp allows each request (a generous bound).
        let outcome = tokio::time::timeout(Duration::from_secs(20), creds.begin_login(challenge))
            .await
            .unwrap_or_else(|_| panic!("{mode:?}: discovery did not end promptly"));
        match outcome {
            Ok(_) => panic!("{mode:?}: discovery succeeded"),
            Err(e) => errors.push(e),
        }
    }
    (errors, elsewhere)
}

/// Classified as a failed OAuth request, with rmcp's refusal (`cause`) as a source.
fn assert_refused(mode: Mode, err: &AuthError, cause: &str) {
    assert!(matches!(err, AuthError::Http { .. }), "{mode:?}: {err:?}");
    assert!(!err.is_auth_required(), "{mode:?}: {err:?}");
    let mut chain = Vec::new();
    let mut source = std::error::Error::source(err);
    while let Some(e) = source {
        chain.push(e.to_string());
        source = e.source();
    }
    assert!(
        chain.iter().any(|text| text.contains(cause)),
        "{mode:?}: {chain:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_redirects_to_another_origin_are_not_followed() {
    for mode in [Mode::RedirectResource, Mode::RedirectServer] {
        let (errors, elsewhere) = discover_in(mode).await;
        assert_eq!(elsewhere.hits(), 0, "{mode:?}: the other origin was asked");
        for err in errors {
            assert_refused(mode, &err, "redirect to non-same-origin URL rejected");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_metadata_document_is_refused_promptly() {
    for mode in [Mode::HugeResource, Mode::HugeServer] {
        let (errors, elsewhere) = discover_in(mode).await;
        assert_eq!(elsewhere.hits(), 0);
        for err in errors {
            assert_refused(mode, &err, "response body exceeds 1048576 bytes");
        }
    }
}

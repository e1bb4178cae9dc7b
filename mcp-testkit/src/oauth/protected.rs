//! [`FakeProtectedMcpServer`]: the streamable-HTTP fake MCP server behind bearer
//! tokens from a [`FakeAuthServer`], with RFC 9728 protected-resource metadata.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderValue, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::as_state::AsShared;
use super::auth_server::FakeAuthServer;
use super::common::Running;
use super::metadata_fault::MetadataFault;
use crate::record::lock;
use crate::server::{CrashMode, FakeServer};
use crate::{Error, MCP_PATH, RecordedRequest, Scenario};

/// The RFC 9728 well-known path of protected-resource metadata.
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Largest request body the scope check reads (1 MiB).
const MAX_BODY: usize = 1 << 20;

/// Options for [`FakeProtectedMcpServer::start`].
///
/// Defaults: `127.0.0.1:0`; metadata served, naming the server's own MCP URL as the
/// resource, without `scopes_supported`; no `scope` in the challenge; no per-tool
/// scopes; tokens bound (RFC 8707) to another resource are refused; the authorization
/// server on its own origin.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProtectedOptions {
    /// Address to bind.
    pub bind: SocketAddr,
    /// `scopes_supported` of the resource metadata (omitted when empty).
    pub scopes_supported: Vec<String>,
    /// `scope` parameter of the 401 challenge.
    pub challenge_scope: Option<String>,
    /// Name this resource in the metadata instead of the MCP URL (mismatch tests).
    pub resource_override: Option<String>,
    /// Tool name -> scope a `tools/call` of it needs (403 `insufficient_scope`
    /// otherwise).
    pub tool_scopes: BTreeMap<String, String>,
    /// Refuse tokens whose recorded `resource` is not this server's URL.
    pub check_resource: bool,
    /// Serve RFC 9728 metadata and name it in challenges (off: 404, and a bare
    /// `Bearer` challenge, like a pre-2025-06 server).
    pub resource_metadata: bool,
    /// Require this nonce in the DPoP proofs of requests with DPoP-bound tokens: a proof
    /// without it gets 401 `WWW-Authenticate: DPoP error="use_dpop_nonce"` and the nonce
    /// in `DPoP-Nonce`.
    pub dpop_nonce: Option<String>,
    /// Serve the authorization server's endpoints and metadata on this server's origin,
    /// as 2025-03-26 servers did (their origin was their authorization server).
    pub same_origin_auth_server: bool,
    /// Answer requests for the resource metadata with this fault instead.
    pub metadata_fault: Option<MetadataFault>,
}

impl Default for ProtectedOptions {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            scopes_supported: Vec::new(),
            challenge_scope: None,
            resource_override: None,
            tool_scopes: BTreeMap::new(),
            check_resource: true,
            resource_metadata: true,
            dpop_nonce: None,
            same_origin_auth_server: false,
            metadata_fault: None,
        }
    }
}

impl ProtectedOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `scopes_supported` of the resource metadata.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Add `scope="<scope>"` to the 401 challenge.
    #[must_use]
    pub fn with_challenge_scope(mut self, scope: impl Into<String>) -> Self {
        self.challenge_scope = Some(scope.into());
        self
    }

    /// Name a different resource in the metadata.
    #[must_use]
    pub fn with_resource_override(mut self, resource: impl Into<String>) -> Self {
        self.resource_override = Some(resource.into());
        self
    }

    /// Require `scope` for calls of `tool`.
    #[must_use]
    pub fn with_tool_scope(mut self, tool: impl Into<String>, scope: impl Into<String>) -> Self {
        self.tool_scopes.insert(tool.into(), scope.into());
        self
    }

    /// Serve no protected-resource metadata (404) and leave `resource_metadata` out
    /// of challenges.
    #[must_use]
    pub fn without_resource_metadata(mut self) -> Self {
        self.resource_metadata = false;
        self
    }

    /// Require `nonce` in the DPoP proofs of bound tokens (see
    /// [`ProtectedOptions::dpop_nonce`]).
    #[must_use]
    pub fn with_dpop_nonce(mut self, nonce: impl Into<String>) -> Self {
        self.dpop_nonce = Some(nonce.into());
        self
    }

    /// Accept tokens bound to any resource (or none).
    #[must_use]
    pub fn without_resource_check(mut self) -> Self {
        self.check_resource = false;
        self
    }

    /// Serve the [`FakeAuthServer`]'s endpoints (`/.well-known/oauth-authorization-server`,
    /// OpenID discovery, `/register`, `/authorize`, `/token`) on this server's origin too:
    /// one origin for the MCP endpoint and its authorization server, as in MCP
    /// 2025-03-26. From then on the authorization server advertises this origin (in its
    /// metadata, `iss` and [`FakeAuthServer::url`]); its own listener keeps answering.
    /// One protected server per authorization server should do this.
    #[must_use]
    pub fn with_same_origin_auth_server(mut self) -> Self {
        self.same_origin_auth_server = true;
        self
    }

    /// Answer resource metadata requests with `fault` (see
    /// [`ProtectedOptions::metadata_fault`]).
    #[must_use]
    pub fn with_metadata_fault(mut self, fault: MetadataFault) -> Self {
        self.metadata_fault = Some(fault);
        self
    }
}

impl Gate {
    /// A DPoP-bound token must come with the DPoP scheme and a fresh proof of its key for
    /// this request (and the configured nonce).
    fn check_dpop(
        &self,
        request: &Request,
        scheme_dpop: bool,
        token: Option<&str>,
        jkt: &str,
    ) -> Result<(), Box<Response>> {
        let reject = |why: &str| {
            lock(&self.counters).dpop_rejections += 1;
            lock(&self.counters).unauthorized += 1;
            let mut response = (StatusCode::UNAUTHORIZED, why.to_owned()).into_response();
            if let Ok(value) = HeaderValue::from_str(r#"DPoP error="invalid_dpop_proof""#) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            Box::new(response)
        };
        if !scheme_dpop {
            return Err(reject("a DPoP-bound token needs the DPoP scheme"));
        }
        let proofs: Vec<&str> = request
            .headers()
            .get_all("dpop")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        let [proof] = proofs[..] else {
            return Err(reject("exactly one DPoP proof is required"));
        };
        let info = super::dpop::verify(
            proof,
            request.method().as_str(),
            &self.url,
            token,
            &mut lock(&self.dpop_jtis),
        )
        .map_err(reject)?;
        if info.jkt != jkt {
            return Err(reject("the proof's key is not the token's key"));
        }
        if let Some(nonce) = &self.options.dpop_nonce
            && info.nonce.as_ref() != Some(nonce)
        {
            lock(&self.counters).dpop_nonce_challenges += 1;
            lock(&self.counters).unauthorized += 1;
            let mut response = StatusCode::UNAUTHORIZED.into_response();
            let headers = response.headers_mut();
            if let Ok(value) = HeaderValue::from_str(&format!(
                r#"DPoP error="use_dpop_nonce", resource_metadata="{}""#,
                self.metadata_url
            )) {
                headers.insert(header::WWW_AUTHENTICATE, value);
            }
            if let Ok(value) = HeaderValue::from_str(nonce) {
                headers.insert("dpop-nonce", value);
            }
            return Err(Box::new(response));
        }
        lock(&self.counters).dpop_requests += 1;
        Ok(())
    }
}

/// Request counters of a [`FakeProtectedMcpServer`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProtectedCounters {
    /// Requests to the MCP endpoint.
    pub total: u64,
    /// Answered 401 (missing, unknown, expired, revoked or misbound token).
    pub unauthorized: u64,
    /// Answered 403 `insufficient_scope`.
    pub forbidden: u64,
    /// Resource metadata requests answered, with the document or with its
    /// [`MetadataFault`].
    pub metadata: u64,
    /// Requests that presented a DPoP-bound token with a valid proof.
    pub dpop_requests: u64,
    /// Requests answered with `use_dpop_nonce`.
    pub dpop_nonce_challenges: u64,
    /// Requests with a DPoP-bound token and a missing, invalid or replayed proof, or sent
    /// with the Bearer scheme.
    pub dpop_rejections: u64,
}

#[derive(Debug)]
struct Gate {
    auth: Arc<AsShared>,
    options: ProtectedOptions,
    url: String,
    metadata_url: String,
    counters: Mutex<ProtectedCounters>,
    /// `jti`s of the DPoP proofs seen.
    dpop_jtis: Mutex<std::collections::HashSet<String>>,
    /// Every token presented in `Authorization`, accepted or not, in arrival order.
    presented: Mutex<Vec<String>>,
    /// The subject of every accepted token, in arrival order.
    subjects: Mutex<Vec<String>>,
}

impl Gate {
    fn resource(&self) -> &str {
        self.options
            .resource_override
            .as_deref()
            .unwrap_or(&self.url)
    }

    /// A 401/403 with a `WWW-Authenticate: Bearer` challenge: `resource_metadata`,
    /// then `error` if given, then `scope` (the given one, else the configured one).
    fn challenge(&self, status: StatusCode, error: Option<&str>, scope: Option<&str>) -> Response {
        let mut params = Vec::new();
        if self.options.resource_metadata {
            params.push(format!("resource_metadata=\"{}\"", self.metadata_url));
        }
        if let Some(code) = error {
            params.push(format!("error=\"{code}\""));
        }
        let scope = scope.or(self.options.challenge_scope.as_deref());
        if let Some(scope) = scope.filter(|s| !s.is_empty()) {
            params.push(format!("scope=\"{scope}\""));
        }
        let value = if params.is_empty() {
            "Bearer".to_owned()
        } else {
            format!("Bearer {}", params.join(", "))
        };
        let body = if status == StatusCode::FORBIDDEN {
            "insufficient scope"
        } else {
            "bearer token required"
        };
        let mut response = (status, body).into_response();
        if let Ok(value) = HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// A fake MCP server on streamable HTTP that requires bearer tokens issued by a
/// [`FakeAuthServer`], checked live on every request (so expiry, revocation and
/// rotation apply at once).
///
/// - Without a live token: 401 with `WWW-Authenticate: Bearer
///   resource_metadata="<base>/.well-known/oauth-protected-resource"` (plus
///   `error="invalid_token"` when a token was presented, and `scope="…"` with
///   [`ProtectedOptions::with_challenge_scope`]).
/// - `GET <base>/.well-known/oauth-protected-resource` (and `…/mcp`): RFC 9728
///   metadata with `resource` (the MCP URL), `authorization_servers` (the auth
///   server's URL), `scopes_supported`, `bearer_methods_supported`.
/// - A `tools/call` of a tool given in [`ProtectedOptions::with_tool_scope`] whose
///   token lacks the scope: 403 with `error="insufficient_scope", scope="…"`.
/// - With [`ProtectedOptions::with_same_origin_auth_server`]: the authorization
///   server's metadata and endpoints on this origin too.
#[derive(Debug)]
pub struct FakeProtectedMcpServer {
    server: FakeServer,
    gate: Arc<Gate>,
    running: Running,
}

impl FakeProtectedMcpServer {
    /// Serve `scenario` behind tokens of `auth`.
    ///
    /// # Errors
    /// [`Error::Io`] when binding fails.
    ///
    /// # Cancel safety
    /// Cancel-safe: a server that was bound stops when dropped.
    pub async fn start(
        scenario: Scenario,
        auth: &FakeAuthServer,
        options: ProtectedOptions,
    ) -> Result<Self, Error> {
        let stop = CancellationToken::new();
        let server =
            FakeServer::with_crash(scenario, CrashMode::Cancel(stop.clone()), stop.clone());
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(stop.child_token())
            .with_sse_keep_alive(None);
        let factory = server.clone();
        let service = StreamableHttpService::new(
            move || Ok(factory.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let auth = auth.shared();
        let mut slot = None;
        let running = Running::start(
            options.bind,
            stop,
            "binding the protected MCP server",
            |addr| {
                let base = format!("http://{addr}");
                let gate = Arc::new(Gate {
                    auth,
                    options,
                    url: format!("{base}{MCP_PATH}"),
                    metadata_url: format!("{base}{RESOURCE_METADATA_PATH}"),
                    counters: Mutex::new(ProtectedCounters::default()),
                    presented: Mutex::new(Vec::new()),
                    subjects: Mutex::new(Vec::new()),
                    dpop_jtis: Mutex::new(std::collections::HashSet::new()),
                });
                slot = Some(Arc::clone(&gate));
                let mcp = axum::Router::new().nest_service(MCP_PATH, service).layer(
                    axum::middleware::from_fn_with_state(Arc::clone(&gate), check),
                );
                let same_origin = gate.options.same_origin_auth_server;
                let auth = Arc::clone(&gate.auth);
                let router = axum::Router::new()
                    .route(RESOURCE_METADATA_PATH, get(metadata))
                    .route(
                        &format!("{RESOURCE_METADATA_PATH}{MCP_PATH}"),
                        get(metadata),
                    )
                    .with_state(gate)
                    .merge(mcp);
                if same_origin {
                    lock(&auth.advertised).origin = base;
                    router.merge(super::auth_server::router(auth))
                } else {
                    router
                }
            },
        )
        .await?;
        let gate = slot.ok_or_else(|| Error::Protocol {
            doing: "starting the protected MCP server",
            message: "router was not built".to_owned(),
        })?;
        Ok(Self {
            server,
            gate,
            running,
        })
    }

    /// The MCP endpoint, `http://127.0.0.1:<port>/mcp` (also the resource identifier).
    pub fn url(&self) -> String {
        self.gate.url.clone()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.running.addr
    }

    /// `http://127.0.0.1:<port>/.well-known/oauth-protected-resource`.
    pub fn resource_metadata_url(&self) -> String {
        self.gate.metadata_url.clone()
    }

    /// Counters so far.
    pub fn counters(&self) -> ProtectedCounters {
        *lock(&self.gate.counters)
    }

    /// MCP requests served so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// Every token presented in an `Authorization` header to the MCP endpoint, accepted
    /// or not, in arrival order (to check which tokens reached this upstream, and which
    /// never did).
    pub fn presented_tokens(&self) -> Vec<String> {
        lock(&self.gate.presented).clone()
    }

    /// The subject (`sub`) of every accepted token, in arrival order: who the upstream
    /// served.
    pub fn subjects(&self) -> Vec<String> {
        lock(&self.gate.subjects).clone()
    }

    /// The shared server (tool set, request log).
    pub fn server(&self) -> &FakeServer {
        &self.server
    }

    /// Stop serving and wait up to [`crate::SHUTDOWN_GRACE`] for the server task.
    ///
    /// # Cancel safety
    /// Cancel-safe: the server is already told to stop.
    pub async fn shutdown(mut self) {
        self.running.shutdown().await;
    }
}

async fn metadata(State(gate): State<Arc<Gate>>) -> Response {
    if !gate.options.resource_metadata {
        return StatusCode::NOT_FOUND.into_response();
    }
    lock(&gate.counters).metadata += 1;
    if let Some(fault) = &gate.options.metadata_fault {
        return fault.respond();
    }
    let mut doc = json!({
        "resource": gate.resource(),
        "authorization_servers": [gate.auth.advertised().origin],
        "bearer_methods_supported": ["header"],
    });
    if !gate.options.scopes_supported.is_empty() {
        doc["scopes_supported"] = json!(gate.options.scopes_supported);
    }
    Json(doc).into_response()
}

async fn check(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    lock(&gate.counters).total += 1;
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let (scheme_dpop, token) = match authorization {
        Some(v) if v.starts_with("Bearer ") => (false, Some(v["Bearer ".len()..].to_owned())),
        Some(v) if v.starts_with("DPoP ") => (true, Some(v["DPoP ".len()..].to_owned())),
        _ => (false, None),
    };
    let presented = token.is_some();
    if let Some(token) = &token {
        lock(&gate.presented).push(token.clone());
    }
    let info = token
        .as_ref()
        .and_then(|t| lock(&gate.auth.inner).live(t).cloned());
    let Some(info) = info.filter(|info| {
        !gate.options.check_resource || info.resource.as_deref().is_none_or(|r| r == gate.url)
    }) else {
        lock(&gate.counters).unauthorized += 1;
        let error = presented.then_some("invalid_token");
        return gate.challenge(StatusCode::UNAUTHORIZED, error, None);
    };
    if let Some(jkt) = &info.dpop_jkt
        && let Err(response) = gate.check_dpop(&request, scheme_dpop, token.as_deref(), jkt)
    {
        return *response;
    }
    lock(&gate.subjects).push(info.subject.clone());
    if gate.options.tool_scopes.is_empty() || request.method() != http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "request too large").into_response();
    };
    let needed = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|message| {
            (message.get("method").and_then(Value::as_str) == Some("tools/call"))
                .then(|| {
                    message
                        .pointer("/params/name")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .flatten()
                .and_then(|tool| gate.options.tool_scopes.get(&tool).cloned())
        });
    if let Some(scope) = needed
        && !info.scopes.contains(&scope)
    {
        lock(&gate.counters).forbidden += 1;
        return gate.challenge(
            StatusCode::FORBIDDEN,
            Some("insufficient_scope"),
            Some(&scope),
        );
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

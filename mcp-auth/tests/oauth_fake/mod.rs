//! A minimal fake OAuth authorization server plus protected-resource metadata, on loopback,
//! for the OAuth tests. One origin serves the MCP endpoint (`/mcp`, always 401), the
//! protected-resource metadata, and the authorization server.

#![allow(dead_code, reason = "each test file uses a different part")]
#![allow(
    clippy::unwrap_used,
    unreachable_pub,
    reason = "a test fixture: failing fast is the point"
)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Knobs a test turns before (or between) logins.
#[derive(Clone, Debug)]
pub struct Config {
    /// Serve protected-resource metadata (false: a 2025-03-26 server).
    pub prm: bool,
    /// The issuer named in the metadata (default: the origin).
    pub issuer: Option<String>,
    /// The token endpoint named in the metadata (default: `{origin}/token`).
    pub token_endpoint: Option<String>,
    /// `code_challenge_methods_supported`.
    pub challenge_methods: Vec<String>,
    /// Send this `state` back instead of the real one.
    pub wrong_state: Option<String>,
    /// Add `iss` to the redirect.
    pub iss_param: Option<String>,
    /// Answer the authorization request with this OAuth error instead of a code.
    pub authorize_error: Option<String>,
    /// `expires_in` of issued access tokens.
    pub expires_in: u64,
    /// Answer every refresh with `invalid_grant`.
    pub reject_refresh: bool,
    /// Token prefix, so tests can plant recognisable secrets.
    pub token_prefix: String,
    /// Act as an OpenID provider: add an ID token with this `alg` in its header (`none`:
    /// unsigned; anything else: signed ES256 with the fake's key, published at `/jwks`).
    pub id_token_alg: Option<String>,
    /// The `kid` in the ID token's header.
    pub id_token_kid: String,
    /// The `kid` of the key in `/jwks`.
    pub jwks_kid: String,
    /// Corrupt the ID token's signature.
    pub id_token_bad_signature: bool,
    /// The ID token's `iss` (default: the issuer).
    pub id_token_iss: Option<String>,
    /// `scopes_supported` in the protected-resource metadata.
    pub prm_scopes: Vec<String>,
    /// Answer any authorization request that asks for scopes with `invalid_scope`.
    pub reject_scopes: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            prm: true,
            issuer: None,
            token_endpoint: None,
            challenge_methods: vec!["S256".into()],
            wrong_state: None,
            iss_param: None,
            authorize_error: None,
            expires_in: 3600,
            reject_refresh: false,
            token_prefix: "tok".into(),
            id_token_alg: None,
            id_token_kid: "k1".into(),
            jwks_kid: "k1".into(),
            id_token_bad_signature: false,
            id_token_iss: None,
            prm_scopes: Vec::new(),
            reject_scopes: false,
        }
    }
}

/// What the server saw.
#[derive(Default, Debug)]
pub struct Seen {
    pub authorize_queries: Vec<BTreeMap<String, String>>,
    pub refresh_requests: usize,
    pub code_exchanges: usize,
    pub registrations: usize,
    /// Refresh tokens currently valid (rotation: a used one is removed).
    pub valid_refresh_tokens: BTreeSet<String>,
    /// Access tokens issued, in order.
    pub issued_access_tokens: Vec<String>,
    pub last_code_verifier: Option<String>,
    /// `/jwks` requests.
    pub jwks_fetches: usize,
    codes: HashMap<String, String>,
    code_scopes: HashMap<String, String>,
    counter: u64,
}

#[derive(Clone)]
struct AppState {
    origin: String,
    config: Arc<Mutex<Config>>,
    seen: Arc<Mutex<Seen>>,
    key: Arc<aws_lc_rs::signature::EcdsaKeyPair>,
}

/// A running fake server; aborted on drop.
pub struct FakeAs {
    pub origin: String,
    pub config: Arc<Mutex<Config>>,
    pub seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeAs {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeAs {
    pub async fn start(config: Config) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let state = AppState {
            origin: origin.clone(),
            config: Arc::new(Mutex::new(config)),
            seen: Arc::new(Mutex::new(Seen::default())),
            key: Arc::new(
                aws_lc_rs::signature::EcdsaKeyPair::generate(
                    &aws_lc_rs::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                )
                .unwrap(),
            ),
        };
        let app = Router::new()
            .route("/mcp", post(mcp))
            .route("/.well-known/oauth-protected-resource/mcp", get(prm))
            .route("/.well-known/oauth-protected-resource", get(not_found))
            .route("/.well-known/oauth-authorization-server", get(as_metadata))
            .route(
                "/.well-known/oauth-authorization-server/oauth",
                get(as_metadata),
            )
            .route("/.well-known/openid-configuration", get(not_found))
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/jwks", get(jwks))
            .with_state(state.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            origin,
            config: state.config,
            seen: state.seen,
            task,
        }
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.origin)
    }

    pub fn set(&self, f: impl FnOnce(&mut Config)) {
        f(&mut self.config.lock().unwrap());
    }

    pub fn seen<T>(&self, f: impl FnOnce(&Seen) -> T) -> T {
        f(&self.seen.lock().unwrap())
    }
}

async fn not_found() -> StatusCode {
    StatusCode::NOT_FOUND
}

async fn mcp(State(s): State<AppState>) -> Response {
    let mut headers = HeaderMap::new();
    let value = if s.config.lock().unwrap().prm {
        format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            s.origin
        )
    } else {
        "Bearer".to_owned()
    };
    headers.insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_str(&value).unwrap(),
    );
    (StatusCode::UNAUTHORIZED, headers, "").into_response()
}

async fn prm(State(s): State<AppState>) -> Response {
    let c = s.config.lock().unwrap().clone();
    if !c.prm {
        return StatusCode::NOT_FOUND.into_response();
    }
    Json(json!({
        "resource": format!("{}/mcp", s.origin),
        "authorization_servers": [s.origin],
        "scopes_supported": c.prm_scopes,
    }))
    .into_response()
}

async fn as_metadata(State(s): State<AppState>) -> Json<Value> {
    let c = s.config.lock().unwrap().clone();
    let o = &s.origin;
    Json(json!({
        "issuer": c.issuer.clone().unwrap_or_else(|| o.clone()),
        "authorization_endpoint": format!("{o}/authorize"),
        "token_endpoint": c.token_endpoint.clone().unwrap_or_else(|| format!("{o}/token")),
        "registration_endpoint": format!("{o}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": c.challenge_methods,
        "token_endpoint_auth_methods_supported": ["none"],
        "jwks_uri": format!("{o}/jwks"),
    }))
}

async fn jwks(State(s): State<AppState>) -> Json<Value> {
    use aws_lc_rs::signature::KeyPair;
    s.seen.lock().unwrap().jwks_fetches += 1;
    let kid = s.config.lock().unwrap().jwks_kid.clone();
    let point = s.key.public_key().as_ref().to_vec();
    Json(json!({"keys": [{
        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
        "x": base64url(&point[1..33]), "y": base64url(&point[33..65]),
    }]}))
}

async fn register(State(s): State<AppState>, Json(body): Json<Value>) -> (StatusCode, Json<Value>) {
    let mut seen = s.seen.lock().unwrap();
    seen.registrations += 1;
    (
        StatusCode::CREATED,
        Json(json!({
            "client_id": format!("client-{}", seen.registrations),
            "redirect_uris": body["redirect_uris"],
            "token_endpoint_auth_method": "none",
        })),
    )
}

async fn authorize(
    State(s): State<AppState>,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    let c = s.config.lock().unwrap().clone();
    let mut seen = s.seen.lock().unwrap();
    seen.authorize_queries.push(q.clone());
    if q.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return (StatusCode::BAD_REQUEST, "PKCE S256 required").into_response();
    }
    seen.counter += 1;
    let code = format!("code-{}", seen.counter);
    seen.codes.insert(code.clone(), q["code_challenge"].clone());
    seen.code_scopes
        .insert(code.clone(), q.get("scope").cloned().unwrap_or_default());
    let state = c.wrong_state.clone().unwrap_or_else(|| q["state"].clone());
    let mut target = url::Url::parse(&q["redirect_uri"]).unwrap();
    let scope_rejected = c.reject_scopes && q.get("scope").is_some_and(|s| !s.is_empty());
    if let Some(error) = c
        .authorize_error
        .as_ref()
        .or(scope_rejected.then_some(&"invalid_scope".to_owned()))
    {
        target
            .query_pairs_mut()
            .append_pair("error", error)
            .append_pair("error_description", "SENSITIVE-DESCRIPTION")
            .append_pair("state", &state);
        return (StatusCode::FOUND, [(header::LOCATION, target.to_string())]).into_response();
    }
    target
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &state);
    if let Some(iss) = &c.iss_param {
        target.query_pairs_mut().append_pair("iss", iss);
    }
    (StatusCode::FOUND, [(header::LOCATION, target.to_string())]).into_response()
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

fn issue(seen: &mut Seen, c: &Config, scope: &str) -> Value {
    seen.counter += 1;
    let at = format!("{}-access-{}", c.token_prefix, seen.counter);
    let rt = format!("{}-refresh-{}", c.token_prefix, seen.counter);
    seen.valid_refresh_tokens.insert(rt.clone());
    seen.issued_access_tokens.push(at.clone());
    json!({"access_token": at, "token_type": "Bearer", "expires_in": c.expires_in, "refresh_token": rt, "scope": scope})
}

fn oauth_error(code: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": code, "error_description": "SENSITIVE-DESCRIPTION"})),
    )
        .into_response()
}

async fn token(State(s): State<AppState>, Form(f): Form<BTreeMap<String, String>>) -> Response {
    let c = s.config.lock().unwrap().clone();
    let mut seen = s.seen.lock().unwrap();
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            seen.code_exchanges += 1;
            let Some(challenge) = f.get("code").and_then(|code| seen.codes.remove(code)) else {
                return oauth_error("invalid_grant");
            };
            let scope = f
                .get("code")
                .and_then(|code| seen.code_scopes.remove(code))
                .unwrap_or_default();
            let verifier = f.get("code_verifier").cloned().unwrap_or_default();
            seen.last_code_verifier = Some(verifier.clone());
            if base64url(&Sha256::digest(verifier.as_bytes())) != challenge {
                return oauth_error("invalid_grant");
            }
            let mut body = issue(&mut seen, &c, &scope);
            if let Some(alg) = &c.id_token_alg {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs();
                let header = if alg == "none" {
                    json!({"alg": alg, "typ": "JWT"})
                } else {
                    json!({"alg": "ES256", "typ": "JWT", "kid": c.id_token_kid})
                };
                let claims = json!({
                    "iss": c.id_token_iss.clone().or_else(|| c.issuer.clone()).unwrap_or_else(|| s.origin.clone()),
                    "aud": f.get("client_id").cloned().unwrap_or_default(),
                    "sub": "user-1",
                    "exp": now + 3600,
                });
                let input = format!(
                    "{}.{}",
                    base64url(header.to_string().as_bytes()),
                    base64url(claims.to_string().as_bytes())
                );
                let signature = if alg == "none" {
                    "c2ln".to_owned()
                } else {
                    let rng = aws_lc_rs::rand::SystemRandom::new();
                    let mut sig = s
                        .key
                        .sign(&rng, input.as_bytes())
                        .unwrap()
                        .as_ref()
                        .to_vec();
                    if c.id_token_bad_signature {
                        sig[0] ^= 1;
                    }
                    base64url(&sig)
                };
                body["id_token"] = json!(format!("{input}.{signature}"));
            }
            Json(body).into_response()
        }
        Some("refresh_token") => {
            seen.refresh_requests += 1;
            let rt = f.get("refresh_token").cloned().unwrap_or_default();
            if c.reject_refresh || !seen.valid_refresh_tokens.remove(&rt) {
                return oauth_error("invalid_grant");
            }
            Json(issue(&mut seen, &c, "mcp")).into_response()
        }
        _ => oauth_error("unsupported_grant_type"),
    }
}

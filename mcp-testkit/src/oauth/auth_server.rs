//! [`FakeAuthServer`]: an OAuth 2.1 authorization server on loopback, with metadata,
//! dynamic registration and an auto-approving `/authorize`. The token endpoint is in
//! `token.rs`.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::StatusCode;
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::as_state::{Advertised, AsInner, AsShared, AuthCounters, CodeGrant, TokenInfo};
use super::common::{
    Params, Running, is_loopback_redirect, random_token, redirect, redirect_allowed, with_query,
};
use super::exchange::{ExchangeFault, TokenExchangeRecord};
use super::jwt_access::AccessTokenClaims;
use super::options::{AuthServerOptions, ClientAuthMethod, OAuthClient};
use super::signing::JwksFault;
use crate::Error;
use crate::record::lock;

/// How long an authorization code stays redeemable.
pub const CODE_LIFETIME: Duration = Duration::from_secs(60);

/// A fake OAuth 2.1 authorization server on `127.0.0.1:<port>`.
///
/// Endpoints: `/.well-known/oauth-authorization-server` (RFC 8414),
/// `/.well-known/openid-configuration`, `/register` (RFC 7591), `/authorize`
/// (auto-approves, 302 to the client's loopback redirect URI with `code`, `state` and
/// `iss`), `/token` (`authorization_code` with PKCE S256, `refresh_token` with
/// optional rotation, `client_credentials`, and the JWT-bearer grant for ID-JAGs from
/// a trusted [`crate::FakeIdp`]), `/jwks` (the key JWT access tokens are signed with) and
/// `/introspect` (RFC 7662, for confidential clients). Access tokens are opaque, or JWTs
/// (RFC 9068) with [`AuthServerOptions::with_jwt_access_tokens`]: `aud` the requested
/// `resource`, `sub` and groups of [`FakeAuthServer::set_subject`], `scope`, signed RS256
/// or, after [`FakeAuthServer::rotate_signing_key`], with the other test key.
/// [`FakeAuthServer::is_valid_token`] checks tokens live (expiry, revocation), and
/// [`crate::FakeProtectedMcpServer`] uses the same check.
///
/// Dropping it stops the server without waiting; prefer [`FakeAuthServer::shutdown`].
#[derive(Debug)]
pub struct FakeAuthServer {
    shared: Arc<AsShared>,
    running: Running,
}

impl FakeAuthServer {
    /// Start serving with `options`.
    ///
    /// # Errors
    /// [`Error::Io`] when binding fails.
    ///
    /// # Cancel safety
    /// Cancel-safe: a server that was bound stops when dropped.
    pub async fn start(options: AuthServerOptions) -> Result<Self, Error> {
        let mut slot = None;
        let running = Running::start(
            options.bind,
            CancellationToken::new(),
            "binding the fake authorization server",
            |addr: SocketAddr| {
                let base = format!("http://{addr}");
                let clients = options
                    .clients
                    .iter()
                    .map(|c| (c.client_id.clone(), c.clone()))
                    .collect();
                let shared = Arc::new(AsShared {
                    advertised: Mutex::new(Advertised {
                        origin: base.clone(),
                        issuer_override: options.issuer_override.clone(),
                        token_endpoint_override: None,
                    }),
                    listener: base,
                    inner: Mutex::new(AsInner {
                        options,
                        clients,
                        codes: HashMap::new(),
                        access: HashMap::new(),
                        refresh: HashMap::new(),
                        counters: AuthCounters::default(),
                        last_resource: None,
                        last_scope: None,
                        fail_refreshes: 0,
                        authorize_requests: Vec::new(),
                        token_requests: Vec::new(),
                        issued: Vec::new(),
                        dpop_jtis: std::collections::HashSet::new(),
                        signing: super::signing::AccessSigning::new(),
                        exchanges: Vec::new(),
                        exchange_fault: None,
                    }),
                });
                slot = Some(Arc::clone(&shared));
                router(shared)
            },
        )
        .await?;
        let shared = slot.ok_or_else(|| Error::Protocol {
            doing: "starting the fake authorization server",
            message: "router was not built".to_owned(),
        })?;
        Ok(Self { shared, running })
    }

    /// The issuer as advertised in the metadata (the URL unless
    /// [`AuthServerOptions::with_issuer_override`] or
    /// [`FakeAuthServer::set_issuer_override`]).
    pub fn issuer(&self) -> String {
        self.shared.advertised().issuer()
    }

    /// The server's base URL, `http://127.0.0.1:<port>` (the real issuer): its own
    /// listener's, or the origin of the [`crate::FakeProtectedMcpServer`] that serves it
    /// ([`crate::ProtectedOptions::with_same_origin_auth_server`]).
    pub fn url(&self) -> String {
        self.shared.advertised().origin
    }

    /// The bound address of the server's own listener.
    pub fn addr(&self) -> SocketAddr {
        self.running.addr
    }

    /// `<url>/.well-known/oauth-authorization-server`.
    pub fn metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-authorization-server", self.url())
    }

    /// `<url>/authorize`.
    pub fn authorization_endpoint(&self) -> String {
        format!("{}/authorize", self.url())
    }

    /// `<url>/token`, where the token endpoint is (whatever
    /// [`FakeAuthServer::set_token_endpoint_override`] makes the metadata say).
    pub fn token_endpoint(&self) -> String {
        self.shared.token_endpoint()
    }

    /// `<url>/register` (served unless [`AuthServerOptions::without_registration`]).
    pub fn registration_endpoint(&self) -> String {
        format!("{}/register", self.url())
    }

    /// Advertise `issuer` from now on, in the metadata and in `iss` redirect parameters
    /// (`None`: the real one, [`FakeAuthServer::url`]). For issuers only known once the
    /// server runs, such as `<url>/oauth` (an authorization server under a path) or the
    /// same port under another host name.
    pub fn set_issuer_override(&self, issuer: Option<&str>) {
        lock(&self.shared.advertised).issuer_override = issuer.map(str::to_owned);
    }

    /// Name `endpoint` as `token_endpoint` in the metadata from now on (`None`: the real
    /// one). The token endpoint itself stays at [`FakeAuthServer::token_endpoint`].
    pub fn set_token_endpoint_override(&self, endpoint: Option<&str>) {
        lock(&self.shared.advertised).token_endpoint_override = endpoint.map(str::to_owned);
    }

    /// Send this `iss` on redirects from now on (`None`: the issuer); see
    /// [`AuthServerOptions::with_iss_parameter_value`].
    pub fn set_iss_parameter_value(&self, iss: Option<&str>) {
        lock(&self.shared.inner).options.iss_value_override = iss.map(str::to_owned);
    }

    /// Counters so far.
    pub fn counters(&self) -> AuthCounters {
        lock(&self.shared.inner).counters
    }

    /// True when `token` is an access token this server issued that is neither expired
    /// nor revoked.
    pub fn is_valid_token(&self, token: &str) -> bool {
        lock(&self.shared.inner).live(token).is_some()
    }

    /// What the server knows about an access token (also expired ones; `None` for
    /// unknown or revoked tokens).
    pub fn token_info(&self, token: &str) -> Option<TokenInfo> {
        lock(&self.shared.inner).access.get(token).cloned()
    }

    /// True when `token` is a refresh token that can still be used.
    pub fn is_valid_refresh_token(&self, token: &str) -> bool {
        lock(&self.shared.inner).refresh.contains_key(token)
    }

    /// Every refresh token that can still be used, sorted (rotation removes a used one).
    pub fn valid_refresh_tokens(&self) -> Vec<String> {
        let mut tokens: Vec<String> = lock(&self.shared.inner).refresh.keys().cloned().collect();
        tokens.sort();
        tokens
    }

    /// The `resource` parameter of the last authorization or token request that had one.
    pub fn last_resource(&self) -> Option<String> {
        lock(&self.shared.inner).last_resource.clone()
    }

    /// The `scope` parameter of the last authorization or token request that had one.
    pub fn last_scope(&self) -> Option<String> {
        lock(&self.shared.inner).last_scope.clone()
    }

    /// Revoke every access and refresh token (and pending code).
    pub fn revoke_all(&self) {
        let mut inner = lock(&self.shared.inner);
        inner.access.clear();
        inner.refresh.clear();
        inner.codes.clear();
    }

    /// Make every access token issued so far expired; refresh tokens stay valid.
    pub fn expire_access_tokens(&self) {
        let now = Instant::now();
        for info in lock(&self.shared.inner).access.values_mut() {
            info.expires_at = now;
        }
    }

    /// Answer the next `n` refresh requests with `invalid_grant` (and invalidate the
    /// refresh tokens they present).
    pub fn fail_next_refreshes(&self, n: usize) {
        lock(&self.shared.inner).fail_refreshes += n;
    }

    /// Deny (`error=access_denied`) or approve future authorizations.
    pub fn set_deny_authorization(&self, deny: bool) {
        lock(&self.shared.inner).options.authorize_error = deny.then(|| "access_denied".to_owned());
    }

    /// Answer future authorizations with `error=<code>` (`None`: approve).
    pub fn set_authorize_error(&self, code: Option<&str>) {
        lock(&self.shared.inner).options.authorize_error = code.map(str::to_owned);
    }

    /// The query parameters of every `/authorize` request, in arrival order.
    pub fn authorize_requests(&self) -> Vec<BTreeMap<String, String>> {
        lock(&self.shared.inner).authorize_requests.clone()
    }

    /// The form parameters of every `/token` request, in arrival order (secrets
    /// included: this is a fake).
    pub fn token_requests(&self) -> Vec<BTreeMap<String, String>> {
        lock(&self.shared.inner).token_requests.clone()
    }

    /// Every access token issued so far, in order (also revoked and expired ones).
    pub fn issued_access_tokens(&self) -> Vec<String> {
        lock(&self.shared.inner).issued.clone()
    }

    /// Every token exchange (RFC 8693) so far, in arrival order, with what was sent and
    /// what was answered.
    pub fn token_exchanges(&self) -> Vec<TokenExchangeRecord> {
        lock(&self.shared.inner).exchanges.clone()
    }

    /// Make token exchanges from now on misbehave (`None`: exchange normally).
    pub fn set_exchange_fault(&self, fault: Option<ExchangeFault>) {
        lock(&self.shared.inner).exchange_fault = fault;
    }

    /// Revoke every access token issued by a token exchange so far (other tokens stay
    /// valid): an upstream then answers 401 to them.
    pub fn revoke_exchanged_tokens(&self) {
        lock(&self.shared.inner)
            .access
            .retain(|_, info| info.grant != "token_exchange");
    }

    /// Change the lifetime of tokens issued from now on.
    pub fn set_token_lifetime(&self, lifetime: Duration) {
        lock(&self.shared.inner).options.token_lifetime = lifetime;
    }

    /// Turn refresh-token rotation on or off.
    pub fn set_rotation(&self, rotate: bool) {
        lock(&self.shared.inner).options.rotate_refresh_tokens = rotate;
    }

    /// Register (or replace) a client.
    pub fn add_client(&self, client: OAuthClient) {
        lock(&self.shared.inner)
            .clients
            .insert(client.client_id.clone(), client);
    }

    /// A known client (pre-registered or registered through `/register`).
    pub fn client(&self, client_id: &str) -> Option<OAuthClient> {
        lock(&self.shared.inner).clients.get(client_id).cloned()
    }

    /// Every known client, sorted by id.
    pub fn clients(&self) -> Vec<OAuthClient> {
        lock(&self.shared.inner).clients.values().cloned().collect()
    }

    /// Issue an access token directly (no grant, not counted), for tests that need
    /// a valid token without a flow: a JWT with
    /// [`AuthServerOptions::with_jwt_access_tokens`], else opaque.
    pub fn mint_token(&self, client_id: &str, scopes: &[&str], resource: Option<&str>) -> String {
        let scopes = scopes.iter().map(|s| (*s).to_owned()).collect();
        let mut inner = lock(&self.shared.inner);
        let mut body = inner.issue(
            client_id,
            scopes,
            resource.map(str::to_owned),
            "minted",
            false,
        );
        if inner.options.jwt_access_tokens {
            super::jwt_access::as_jwt(&self.shared, &mut inner, &mut body);
        }
        body["access_token"].as_str().unwrap_or_default().to_owned()
    }

    /// A JWT access token with exactly `claims`, signed with the current key (or not at
    /// all, [`AccessTokenClaims::unsigned`]), whatever the options say; the server knows
    /// it as issued (introspection answers for it while it is valid).
    pub fn mint_jwt(&self, claims: &AccessTokenClaims) -> String {
        let issuer = self.issuer();
        let json = claims.to_json(&issuer);
        let mut inner = lock(&self.shared.inner);
        let token = if claims.unsigned {
            super::jwt_access::unsigned(&json)
        } else {
            match inner.signing.sign(&json) {
                Ok(token) => token,
                Err(_) => return String::new(),
            }
        };
        let now = Instant::now();
        let expires_at = match u64::try_from(claims.expires_in) {
            Ok(secs) => now + Duration::from_secs(secs),
            Err(_) => now,
        };
        inner.access.insert(
            token.clone(),
            TokenInfo {
                client_id: claims.client_id.clone(),
                scopes: claims.scopes.clone(),
                resource: claims.audience.clone(),
                grant: "minted",
                dpop_jkt: None,
                subject: claims.subject.clone(),
                groups: claims.groups.clone(),
                expires_at,
            },
        );
        inner.issued.push(token.clone());
        token
    }

    /// Issue tokens for logins to `subject`, a member of `groups`, from now on. Tokens
    /// refreshed later stay those of the login they came from (alice's refresh token
    /// keeps giving alice's tokens after a switch to bob).
    pub fn set_subject(&self, subject: &str, groups: &[&str]) {
        let mut inner = lock(&self.shared.inner);
        inner.options.subject = subject.to_owned();
        inner.options.groups = groups.iter().map(|g| (*g).to_owned()).collect();
    }

    /// Sign JWT access tokens with the other test key under a new key id from now on;
    /// `/jwks` publishes only the new key (tokens signed with the old one no longer
    /// verify with anything published). Returns the new key id.
    pub fn rotate_signing_key(&self) -> String {
        let mut inner = lock(&self.shared.inner);
        inner.signing.rotate();
        inner.signing.key_id()
    }

    /// The id (`kid`) of the key JWT access tokens are signed with now.
    pub fn signing_key_id(&self) -> String {
        lock(&self.shared.inner).signing.key_id()
    }

    /// `<url>/jwks`.
    pub fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.url())
    }

    /// `<url>/introspect`.
    pub fn introspection_endpoint(&self) -> String {
        format!("{}/introspect", self.url())
    }

    /// Answer `/jwks` with `fault` from now on (`None`: the key set).
    pub fn set_jwks_fault(&self, fault: Option<JwksFault>) {
        lock(&self.shared.inner).signing.fault = fault;
    }

    pub(crate) fn shared(&self) -> Arc<AsShared> {
        Arc::clone(&self.shared)
    }

    /// Stop serving and wait up to [`crate::SHUTDOWN_GRACE`] for the server task.
    ///
    /// # Cancel safety
    /// Cancel-safe: the server is already told to stop.
    pub async fn shutdown(mut self) {
        self.running.shutdown().await;
    }
}

/// The server's endpoints, served by its own listener and by a protected server on the
/// same origin.
pub(crate) fn router(shared: Arc<AsShared>) -> axum::Router {
    let inner = lock(&shared.inner);
    let mut router = axum::Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/authorize", get(authorize))
        .route("/token", post(super::token::token))
        .route("/jwks", get(super::jwt_access::jwks))
        .route("/introspect", post(super::jwt_access::introspect));
    if inner.options.openid_configuration {
        router = router.route("/.well-known/openid-configuration", get(metadata));
    }
    if inner.options.registration {
        router = router.route("/register", post(register));
    }
    drop(inner);
    router.with_state(shared)
}

async fn metadata(State(shared): State<Arc<AsShared>>) -> Response {
    let mut inner = lock(&shared.inner);
    inner.counters.metadata += 1;
    if let Some(fault) = &inner.options.metadata_fault {
        return fault.respond();
    }
    let advertised = shared.advertised();
    let base = &advertised.origin;
    let mut doc = json!({
        "issuer": advertised.issuer(),
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": advertised.advertised_token_endpoint(),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": [
            "authorization_code",
            "refresh_token",
            "client_credentials",
            "urn:ietf:params:oauth:grant-type:jwt-bearer",
            super::idp::TOKEN_EXCHANGE_GRANT,
        ],
        "code_challenge_methods_supported": inner.options.code_challenge_methods,
        "token_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt",
            "none",
        ],
        "token_endpoint_auth_signing_alg_values_supported": ["RS256", "ES256"],
        "scopes_supported": inner.options.scopes_supported,
        "authorization_response_iss_parameter_supported": inner.options.iss_parameter,
        "jwks_uri": format!("{base}/jwks"),
        "introspection_endpoint": format!("{base}/introspect"),
    });
    if inner.options.registration {
        doc["registration_endpoint"] = json!(format!("{base}/register"));
    }
    if inner.options.dpop {
        doc["dpop_signing_alg_values_supported"] = json!(["ES256", "RS256"]);
    }
    Json(doc).into_response()
}

async fn register(State(shared): State<Arc<AsShared>>, Json(body): Json<Value>) -> Response {
    let invalid = |code: &'static str, why: &str| {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": code, "error_description": why})),
        )
            .into_response()
    };
    let redirect_uris: Vec<String> = body
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|uris| {
            uris.iter()
                .filter_map(|u| u.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let grant_types: Vec<String> = body
        .get("grant_types")
        .and_then(Value::as_array)
        .map(|g| {
            g.iter()
                .filter_map(|g| g.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_else(|| vec!["authorization_code".to_owned(), "refresh_token".to_owned()]);
    if grant_types.iter().any(|g| g == "authorization_code") && redirect_uris.is_empty() {
        return invalid("invalid_redirect_uri", "redirect_uris is required");
    }
    if let Some(bad) = redirect_uris.iter().find(|u| !is_loopback_redirect(u)) {
        return invalid(
            "invalid_redirect_uri",
            &format!("redirect URI {bad} is not a loopback http URI"),
        );
    }
    let method_name = body
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("client_secret_basic");
    let Some(method) = ClientAuthMethod::parse(method_name) else {
        return invalid(
            "invalid_client_metadata",
            &format!("token_endpoint_auth_method {method_name} is not supported"),
        );
    };
    if method == ClientAuthMethod::PrivateKeyJwt {
        return invalid(
            "invalid_client_metadata",
            "private_key_jwt clients must be pre-registered (AuthServerOptions::with_client)",
        );
    }
    let client_id = random_token("client");
    let secret = (method != ClientAuthMethod::None).then(|| random_token("secret"));
    let client = OAuthClient {
        client_id: client_id.clone(),
        client_secret: secret.clone(),
        auth_method: method,
        redirect_uris: redirect_uris.clone(),
        public_key_pem: None,
        client_name: body
            .get("client_name")
            .and_then(|n| n.as_str())
            .map(str::to_owned),
    };
    let mut inner = lock(&shared.inner);
    inner.clients.insert(client_id.clone(), client);
    inner.counters.registrations += 1;
    let mut doc = json!({
        "client_id": client_id,
        "client_id_issued_at": super::common::unix_now(),
        "redirect_uris": redirect_uris,
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": method.as_str(),
    });
    if let Some(name) = body.get("client_name") {
        doc["client_name"] = name.clone();
    }
    if let Some(secret) = secret {
        doc["client_secret"] = json!(secret);
        doc["client_secret_expires_at"] = json!(0);
    }
    (StatusCode::CREATED, Json(doc)).into_response()
}

async fn authorize(State(shared): State<Arc<AsShared>>, Query(params): Query<Params>) -> Response {
    let mut inner = lock(&shared.inner);
    inner.counters.authorize += 1;
    inner.authorize_requests.push(params.clone());
    if let Some(resource) = params.get("resource") {
        inner.last_resource = Some(resource.clone());
    }
    if let Some(scope) = params.get("scope") {
        inner.last_scope = Some(scope.clone());
    }
    // Errors about the client or redirect URI are shown, never redirected (RFC 6749 4.1.2.1).
    let client_id = params.get("client_id").cloned().unwrap_or_default();
    let Some(client) = inner.clients.get(&client_id).cloned() else {
        return (
            StatusCode::BAD_REQUEST,
            format!("unknown client_id {client_id:?}"),
        )
            .into_response();
    };
    let redirect_uri = params.get("redirect_uri").cloned().unwrap_or_default();
    if !redirect_allowed(&client.redirect_uris, &redirect_uri) {
        return (
            StatusCode::BAD_REQUEST,
            format!(
                "redirect_uri {redirect_uri:?} is not a registered loopback URI of client {client_id}"
            ),
        )
            .into_response();
    }
    let state = inner
        .options
        .state_override
        .clone()
        .or_else(|| params.get("state").cloned());
    let issuer = (inner.options.iss_parameter && !inner.options.omit_iss).then(|| {
        inner
            .options
            .iss_value_override
            .clone()
            .unwrap_or_else(|| shared.advertised().issuer())
    });
    let back = |pairs: &[(&str, &str)]| {
        let mut all: Vec<(&str, &str)> = pairs.to_vec();
        if let Some(state) = &state {
            all.push(("state", state));
        }
        if let Some(issuer) = &issuer {
            all.push(("iss", issuer));
        }
        redirect(&with_query(&redirect_uri, &all))
    };
    let error = |code: &str, why: &str| {
        back(&[("error", code), ("error_description", &inner.describe(why))])
    };
    if params.get("response_type").map(String::as_str) != Some("code") {
        return error("unsupported_response_type", "response_type must be code");
    }
    let Some(challenge) = params.get("code_challenge") else {
        return error("invalid_request", "code_challenge is required (PKCE)");
    };
    if params.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return error("invalid_request", "code_challenge_method must be S256");
    }
    let scopes = match inner.scopes(params.get("scope")) {
        Ok(scopes) => scopes,
        Err(why) => return error("invalid_scope", &why),
    };
    if let Some(code) = &inner.options.authorize_error {
        return error(code, "the authorization was refused (injected)");
    }
    let code = random_token("code");
    inner.codes.insert(
        code.clone(),
        CodeGrant {
            client_id,
            redirect_uri: redirect_uri.clone(),
            challenge: challenge.clone(),
            scopes,
            resource: params.get("resource").cloned(),
            expires_at: Instant::now() + CODE_LIFETIME,
        },
    );
    drop(inner);
    back(&[("code", &code)])
}

//! [`FakeIdp`]: an enterprise identity provider for enterprise-managed authorization
//! (cross-app access): OpenID login issuing signed ID tokens, and token exchange
//! (RFC 8693) issuing ID-JAGs for a [`crate::FakeAuthServer`].

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json};
use http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::common::verifier_matches;
use super::common::{
    OAuthError, Params, Running, authenticate_client, random_token, redirect, redirect_allowed,
    token_response, unix_now, with_query,
};
use super::id_token::{IdTokenAlg, IdTokenFault, IdTokenSigning};
use super::keys::{TEST_KEY_ID, TEST_RSA_PRIVATE_KEY_PEM};
use super::options::OAuthClient;
use crate::Error;
use crate::record::lock;

/// The JWT `typ` of an ID-JAG.
pub const ID_JAG_TYP: &str = "oauth-id-jag+jwt";
/// `urn:ietf:params:oauth:token-type:id-jag`.
pub const ID_JAG_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// `urn:ietf:params:oauth:token-type:id_token`.
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// `urn:ietf:params:oauth:token-type:refresh_token`.
pub const REFRESH_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:refresh_token";
/// `urn:ietf:params:oauth:grant-type:token-exchange`.
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// The client id of the IdP's default client.
pub const DEFAULT_IDP_CLIENT_ID: &str = "enterprise-client";
/// The secret of the IdP's default client (`client_secret_basic` or post).
pub const DEFAULT_IDP_CLIENT_SECRET: &str = "enterprise-secret";
/// The default `sub` of ID tokens and ID-JAGs.
pub const DEFAULT_SUBJECT: &str = "alice@example.com";
/// Default lifetime of ID tokens.
pub const DEFAULT_ID_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);
/// Default lifetime of ID-JAGs.
pub const DEFAULT_ID_JAG_LIFETIME: Duration = Duration::from_secs(300);

/// How [`FakeIdp`]'s token exchange misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdpRejection {
    /// Answer `invalid_grant` (the enterprise login must be redone).
    InvalidGrant,
    /// Issue the ID-JAG, but with `aud` = [`WRONG_AUDIENCE`].
    WrongAudience,
}

/// The audience of ID-JAGs issued under [`IdpRejection::WrongAudience`].
pub const WRONG_AUDIENCE: &str = "https://wrong-audience.invalid";

/// Options for [`FakeIdp::start`].
///
/// Defaults: `127.0.0.1:0`; one client [`DEFAULT_IDP_CLIENT_ID`] /
/// [`DEFAULT_IDP_CLIENT_SECRET`]; subject [`DEFAULT_SUBJECT`]; lifetimes
/// [`DEFAULT_ID_TOKEN_LIFETIME`] and [`DEFAULT_ID_JAG_LIFETIME`]; no rejection; the
/// ID-JAG's `client_id` is the requesting client's id unless mapped with
/// [`IdpOptions::with_resource_client`]; ID tokens signed RS256 ([`IdTokenAlg::Rs256`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IdpOptions {
    /// Address to bind.
    pub bind: SocketAddr,
    /// Clients of the IdP.
    pub clients: Vec<OAuthClient>,
    /// `sub` of issued tokens.
    pub subject: String,
    /// Lifetime of ID tokens.
    pub id_token_lifetime: Duration,
    /// Lifetime of ID-JAGs.
    pub id_jag_lifetime: Duration,
    /// The rejection mode of the token exchange.
    pub rejection: Option<IdpRejection>,
    /// Authorization server issuer -> client id at that server (the ID-JAG's
    /// `client_id` claim).
    pub resource_clients: BTreeMap<String, String>,
    /// How ID tokens are signed (ID-JAGs are always RS256).
    pub id_token_alg: IdTokenAlg,
}

impl Default for IdpOptions {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            clients: vec![OAuthClient::confidential(
                DEFAULT_IDP_CLIENT_ID,
                DEFAULT_IDP_CLIENT_SECRET,
            )],
            subject: DEFAULT_SUBJECT.to_owned(),
            id_token_lifetime: DEFAULT_ID_TOKEN_LIFETIME,
            id_jag_lifetime: DEFAULT_ID_JAG_LIFETIME,
            rejection: None,
            resource_clients: BTreeMap::new(),
            id_token_alg: IdTokenAlg::default(),
        }
    }
}

impl IdpOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a client.
    #[must_use]
    pub fn with_client(mut self, client: OAuthClient) -> Self {
        self.clients.push(client);
        self
    }

    /// Set the subject (`sub`).
    #[must_use]
    pub fn with_subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = subject.into();
        self
    }

    /// Set the ID token lifetime.
    #[must_use]
    pub fn with_id_token_lifetime(mut self, lifetime: Duration) -> Self {
        self.id_token_lifetime = lifetime;
        self
    }

    /// Set a rejection mode.
    #[must_use]
    pub fn with_rejection(mut self, rejection: IdpRejection) -> Self {
        self.rejection = Some(rejection);
        self
    }

    /// ID-JAGs for the authorization server `issuer` carry `client_id` (the client's
    /// id at that server).
    #[must_use]
    pub fn with_resource_client(
        mut self,
        issuer: impl Into<String>,
        client_id: impl Into<String>,
    ) -> Self {
        self.resource_clients
            .insert(issuer.into(), client_id.into());
        self
    }

    /// Sign ID tokens with `alg` (and publish its key in the JWKS).
    #[must_use]
    pub fn with_id_token_alg(mut self, alg: IdTokenAlg) -> Self {
        self.id_token_alg = alg;
        self
    }
}

/// Counters of a [`FakeIdp`] (token requests by grant, successful or not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IdpCounters {
    /// Requests to `/authorize`.
    pub authorize: u64,
    /// `authorization_code` token requests.
    pub authorization_code: u64,
    /// `refresh_token` token requests.
    pub refresh_token: u64,
    /// Token-exchange requests.
    pub token_exchange: u64,
    /// Token requests answered with an OAuth error.
    pub token_errors: u64,
    /// Requests for the JWKS.
    pub jwks: u64,
}

/// The parameters of the last token exchange.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExchangeRecord {
    /// The requesting client.
    pub client_id: String,
    /// `audience`.
    pub audience: Option<String>,
    /// `resource`.
    pub resource: Option<String>,
    /// `scope`.
    pub scope: Option<String>,
    /// `subject_token_type`.
    pub subject_token_type: Option<String>,
}

#[derive(Debug)]
struct IdpCode {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    nonce: Option<String>,
    scope: Option<String>,
}

#[derive(Debug)]
struct IdpInner {
    options: IdpOptions,
    clients: BTreeMap<String, OAuthClient>,
    codes: HashMap<String, IdpCode>,
    refresh: HashMap<String, String>,
    counters: IdpCounters,
    last_exchange: Option<ExchangeRecord>,
    authorize_requests: Vec<Params>,
    signing: IdTokenSigning,
}

#[derive(Debug)]
struct IdpShared {
    issuer: String,
    inner: Mutex<IdpInner>,
}

impl IdpShared {
    fn audiences(&self) -> Vec<String> {
        vec![self.issuer.clone(), format!("{}/token", self.issuer)]
    }

    fn sign(&self, typ: &str, claims: &Value) -> Result<String, OAuthError> {
        let key = jsonwebtoken::EncodingKey::from_rsa_pem(TEST_RSA_PRIVATE_KEY_PEM.as_bytes())
            .map_err(|_| OAuthError::new("server_error", "test key unreadable"))?;
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        header.typ = Some(typ.to_owned());
        header.kid = Some(TEST_KEY_ID.to_owned());
        jsonwebtoken::encode(&header, claims, &key)
            .map_err(|_| OAuthError::new("server_error", "signing failed"))
    }

    fn id_token(
        &self,
        inner: &IdpInner,
        client_id: &str,
        nonce: Option<&str>,
    ) -> Result<String, OAuthError> {
        let now = unix_now();
        let mut claims = json!({
            "iss": self.issuer,
            "sub": inner.options.subject,
            "aud": client_id,
            "email": inner.options.subject,
            "iat": now,
            "exp": now + inner.options.id_token_lifetime.as_secs().max(1),
        });
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        inner.signing.sign(claims)
    }
}

/// A fake enterprise IdP on `127.0.0.1:<port>`.
///
/// Endpoints: `/.well-known/openid-configuration` and
/// `/.well-known/oauth-authorization-server`, `/jwks` (the ID token signing key:
/// [`crate::test_jwks`] by default), `/authorize` (auto-approving login, PKCE S256, 302
/// with `code`, `state`, `iss`), `/token`: `authorization_code` -> `id_token` (RS256,
/// signed with [`crate::TEST_RSA_PRIVATE_KEY_PEM`], or per
/// [`IdpOptions::with_id_token_alg`]; `aud` = client id) + access and refresh tokens; `refresh_token` -> a new ID token (refresh tokens are not rotated); token
/// exchange (RFC 8693) of an ID token or refresh token for an ID-JAG
/// (`requested_token_type=urn:ietf:params:oauth:token-type:id-jag`, `audience` =
/// the authorization server's issuer, optional `resource` and `scope`).
#[derive(Debug)]
pub struct FakeIdp {
    shared: Arc<IdpShared>,
    running: Running,
}

impl FakeIdp {
    /// Start serving with `options`.
    ///
    /// # Errors
    /// [`Error::Io`] when binding fails.
    ///
    /// # Cancel safety
    /// Cancel-safe: a server that was bound stops when dropped.
    pub async fn start(options: IdpOptions) -> Result<Self, Error> {
        let mut slot = None;
        let running = Running::start(
            options.bind,
            CancellationToken::new(),
            "binding the fake IdP",
            |addr| {
                let clients = options
                    .clients
                    .iter()
                    .map(|c| (c.client_id.clone(), c.clone()))
                    .collect();
                let signing = IdTokenSigning::new(options.id_token_alg);
                let shared = Arc::new(IdpShared {
                    issuer: format!("http://{addr}"),
                    inner: Mutex::new(IdpInner {
                        options,
                        clients,
                        codes: HashMap::new(),
                        refresh: HashMap::new(),
                        counters: IdpCounters::default(),
                        last_exchange: None,
                        authorize_requests: Vec::new(),
                        signing,
                    }),
                });
                slot = Some(Arc::clone(&shared));
                axum::Router::new()
                    .route("/.well-known/openid-configuration", get(metadata))
                    .route("/.well-known/oauth-authorization-server", get(metadata))
                    .route("/jwks", get(jwks))
                    .route("/authorize", get(authorize))
                    .route("/token", post(token))
                    .with_state(shared)
            },
        )
        .await?;
        let shared = slot.ok_or_else(|| Error::Protocol {
            doing: "starting the fake IdP",
            message: "router was not built".to_owned(),
        })?;
        Ok(Self { shared, running })
    }

    /// The issuer, `http://127.0.0.1:<port>`.
    pub fn issuer(&self) -> String {
        self.shared.issuer.clone()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.running.addr
    }

    /// `<issuer>/authorize`.
    pub fn authorization_endpoint(&self) -> String {
        format!("{}/authorize", self.shared.issuer)
    }

    /// `<issuer>/token`.
    pub fn token_endpoint(&self) -> String {
        format!("{}/token", self.shared.issuer)
    }

    /// `<issuer>/jwks`.
    pub fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.shared.issuer)
    }

    /// Counters so far.
    pub fn counters(&self) -> IdpCounters {
        lock(&self.shared.inner).counters
    }

    /// The last token exchange's parameters.
    pub fn last_exchange(&self) -> Option<ExchangeRecord> {
        lock(&self.shared.inner).last_exchange.clone()
    }

    /// Set or clear the rejection mode of the token exchange.
    pub fn set_rejection(&self, rejection: Option<IdpRejection>) {
        lock(&self.shared.inner).options.rejection = rejection;
    }

    /// Map an authorization server issuer to the client id the ID-JAG names.
    pub fn set_resource_client(&self, issuer: impl Into<String>, client_id: impl Into<String>) {
        lock(&self.shared.inner)
            .options
            .resource_clients
            .insert(issuer.into(), client_id.into());
    }

    /// The query parameters of every `/authorize` request, in arrival order.
    pub fn authorize_requests(&self) -> Vec<BTreeMap<String, String>> {
        lock(&self.shared.inner).authorize_requests.clone()
    }

    /// Spoil the ID tokens issued from now on with `fault` (`None`: good tokens again).
    pub fn set_id_token_fault(&self, fault: Option<IdTokenFault>) {
        lock(&self.shared.inner).signing.fault = fault;
    }

    /// Rotate the signing key's id: the JWKS publishes the key under `kid` and new ID
    /// tokens name it, so a client caching the old key set must fetch it again. The
    /// default is [`crate::TEST_KEY_ID`] (RS256) or [`crate::TEST_EC_KEY_ID`] (ES256).
    pub fn rotate_key_id(&self, kid: impl Into<String>) {
        lock(&self.shared.inner).signing.key_id = kid.into();
    }

    /// Invalidate every refresh token (ID tokens stay valid until they expire).
    pub fn revoke_all(&self) {
        lock(&self.shared.inner).refresh.clear();
    }

    /// An ID token for `client_id`, as the login would issue (skips the login; the
    /// algorithm and any [`IdTokenFault`] apply).
    ///
    /// # Errors
    /// Never in practice (signing with the built-in test key).
    pub fn mint_id_token(&self, client_id: &str) -> Result<String, Error> {
        let inner = lock(&self.shared.inner);
        self.shared
            .id_token(&inner, client_id, None)
            .map_err(|e| Error::Protocol {
                doing: "signing an ID token",
                message: e.description,
            })
    }

    /// Stop serving and wait up to [`crate::SHUTDOWN_GRACE`] for the server task.
    ///
    /// # Cancel safety
    /// Cancel-safe: the server is already told to stop.
    pub async fn shutdown(mut self) {
        self.running.shutdown().await;
    }
}

async fn jwks(State(shared): State<Arc<IdpShared>>) -> Json<Value> {
    let mut inner = lock(&shared.inner);
    inner.counters.jwks += 1;
    Json(inner.signing.jwks())
}

async fn metadata(State(shared): State<Arc<IdpShared>>) -> Json<Value> {
    let alg = lock(&shared.inner).signing.alg;
    let issuer = &shared.issuer;
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": [alg.as_str()],
        "grant_types_supported": ["authorization_code", "refresh_token", TOKEN_EXCHANGE_GRANT],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": [
            "client_secret_basic", "client_secret_post", "private_key_jwt", "none"
        ],
        "scopes_supported": ["openid", "offline_access", "profile", "email"],
        "authorization_response_iss_parameter_supported": true,
    }))
}

async fn authorize(State(shared): State<Arc<IdpShared>>, Query(params): Query<Params>) -> Response {
    let mut inner = lock(&shared.inner);
    inner.counters.authorize += 1;
    inner.authorize_requests.push(params.clone());
    let client_id = params.get("client_id").cloned().unwrap_or_default();
    let redirect_uri = params.get("redirect_uri").cloned().unwrap_or_default();
    let registered = match inner.clients.get(&client_id) {
        Some(client) => client.redirect_uris.clone(),
        None => {
            return (
                StatusCode::BAD_REQUEST,
                format!("unknown client_id {client_id:?}"),
            )
                .into_response();
        }
    };
    if !redirect_allowed(&registered, &redirect_uri) {
        return (
            StatusCode::BAD_REQUEST,
            format!("redirect_uri {redirect_uri:?} is not a loopback URI of client {client_id}"),
        )
            .into_response();
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    match (
        params.get("response_type").map(String::as_str),
        params.get("code_challenge"),
        params.get("code_challenge_method").map(String::as_str),
    ) {
        (Some("code"), Some(challenge), Some("S256")) => {
            let code = random_token("idp_code");
            inner.codes.insert(
                code.clone(),
                IdpCode {
                    client_id,
                    redirect_uri: redirect_uri.clone(),
                    challenge: challenge.clone(),
                    nonce: params.get("nonce").cloned(),
                    scope: params.get("scope").cloned(),
                },
            );
            pairs.push(("code".to_owned(), code));
        }
        _ => {
            pairs.push(("error".to_owned(), "invalid_request".to_owned()));
            pairs.push((
                "error_description".to_owned(),
                "response_type=code and PKCE S256 are required".to_owned(),
            ));
        }
    }
    if let Some(state) = params.get("state") {
        pairs.push(("state".to_owned(), state.clone()));
    }
    pairs.push(("iss".to_owned(), shared.issuer.clone()));
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    redirect(&with_query(&redirect_uri, &pairs))
}

async fn token(
    State(shared): State<Arc<IdpShared>>,
    headers: HeaderMap,
    Form(params): Form<Params>,
) -> Response {
    let mut inner = lock(&shared.inner);
    let result = match params.get("grant_type").map(String::as_str).unwrap_or("") {
        "authorization_code" => {
            inner.counters.authorization_code += 1;
            login(&shared, &mut inner, &headers, &params)
        }
        "refresh_token" => {
            inner.counters.refresh_token += 1;
            refresh(&shared, &mut inner, &headers, &params)
        }
        TOKEN_EXCHANGE_GRANT => {
            inner.counters.token_exchange += 1;
            exchange(&shared, &mut inner, &headers, &params)
        }
        other => Err(OAuthError::new(
            "unsupported_grant_type",
            format!("grant_type {other:?} is not supported by the IdP"),
        )),
    };
    match result {
        Ok(body) => token_response(body),
        Err(error) => {
            inner.counters.token_errors += 1;
            error.into_response()
        }
    }
}

fn login(
    shared: &IdpShared,
    inner: &mut IdpInner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<Value, OAuthError> {
    let (client, _) = authenticate_client(&inner.clients, headers, params, &shared.audiences())?;
    let code = params
        .get("code")
        .and_then(|c| inner.codes.remove(c))
        .ok_or_else(|| OAuthError::invalid_grant("unknown or used authorization code"))?;
    if code.client_id != client.client_id || params.get("redirect_uri") != Some(&code.redirect_uri)
    {
        return Err(OAuthError::invalid_grant(
            "code was issued to another client or redirect_uri",
        ));
    }
    verifier_matches(params.get("code_verifier"), &code.challenge)?;
    let id_token = shared.id_token(inner, &client.client_id, code.nonce.as_deref())?;
    let refresh = random_token("idp_rt");
    inner
        .refresh
        .insert(refresh.clone(), client.client_id.clone());
    Ok(json!({
        "access_token": random_token("idp_at"),
        "token_type": "Bearer",
        "expires_in": inner.options.id_token_lifetime.as_secs().max(1),
        "id_token": id_token,
        "refresh_token": refresh,
        "scope": code.scope.unwrap_or_else(|| "openid".to_owned()),
    }))
}

fn refresh(
    shared: &IdpShared,
    inner: &mut IdpInner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<Value, OAuthError> {
    let (client, _) = authenticate_client(&inner.clients, headers, params, &shared.audiences())?;
    let token = params
        .get("refresh_token")
        .ok_or_else(|| OAuthError::invalid_request("refresh_token is required"))?;
    if inner.refresh.get(token) != Some(&client.client_id) {
        return Err(OAuthError::invalid_grant(
            "unknown or revoked refresh token",
        ));
    }
    Ok(json!({
        "access_token": random_token("idp_at"),
        "token_type": "Bearer",
        "expires_in": inner.options.id_token_lifetime.as_secs().max(1),
        "id_token": shared.id_token(inner, &client.client_id, None)?,
    }))
}

fn exchange(
    shared: &IdpShared,
    inner: &mut IdpInner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<Value, OAuthError> {
    let (client, _) = authenticate_client(&inner.clients, headers, params, &shared.audiences())?;
    inner.last_exchange = Some(ExchangeRecord {
        client_id: client.client_id.clone(),
        audience: params.get("audience").cloned(),
        resource: params.get("resource").cloned(),
        scope: params.get("scope").cloned(),
        subject_token_type: params.get("subject_token_type").cloned(),
    });
    if inner.options.rejection == Some(IdpRejection::InvalidGrant) {
        return Err(OAuthError::invalid_grant(
            "the enterprise session ended (injected)",
        ));
    }
    if params.get("requested_token_type").map(String::as_str) != Some(ID_JAG_TOKEN_TYPE) {
        return Err(OAuthError::invalid_request(format!(
            "requested_token_type must be {ID_JAG_TOKEN_TYPE}"
        )));
    }
    let audience = params
        .get("audience")
        .ok_or_else(|| OAuthError::invalid_request("audience (the AS issuer) is required"))?;
    let subject = params
        .get("subject_token")
        .ok_or_else(|| OAuthError::invalid_request("subject_token is required"))?;
    match params.get("subject_token_type").map(String::as_str) {
        Some(ID_TOKEN_TYPE) => {
            inner
                .signing
                .verify(subject, &shared.issuer)
                .map_err(|e| OAuthError::invalid_grant(format!("ID token rejected: {e}")))?;
        }
        Some(REFRESH_TOKEN_TYPE) => {
            if inner.refresh.get(subject) != Some(&client.client_id) {
                return Err(OAuthError::invalid_grant(
                    "unknown or revoked refresh token",
                ));
            }
        }
        _ => {
            return Err(OAuthError::invalid_request(
                "subject_token_type must be an id_token or refresh_token type",
            ));
        }
    }
    let aud = if inner.options.rejection == Some(IdpRejection::WrongAudience) {
        WRONG_AUDIENCE.to_owned()
    } else {
        audience.clone()
    };
    let resource_client = inner
        .options
        .resource_clients
        .get(audience)
        .cloned()
        .unwrap_or_else(|| client.client_id.clone());
    let now = unix_now();
    let lifetime = inner.options.id_jag_lifetime.as_secs().max(1);
    let mut claims = json!({
        "iss": shared.issuer,
        "sub": inner.options.subject,
        "aud": aud,
        "client_id": resource_client,
        "jti": random_token("jti"),
        "iat": now,
        "exp": now + lifetime,
    });
    if let Some(resource) = params.get("resource") {
        claims["resource"] = json!(resource);
    }
    let mut body = json!({
        "issued_token_type": ID_JAG_TOKEN_TYPE,
        "token_type": "N_A",
        "expires_in": lifetime,
    });
    if let Some(scope) = params.get("scope") {
        claims["scope"] = json!(scope);
        body["scope"] = json!(scope);
    }
    body["access_token"] = json!(shared.sign(ID_JAG_TYP, &claims)?);
    Ok(body)
}

//! JWT access tokens (RFC 9068) of [`crate::FakeAuthServer`]: the claims, the key set it
//! publishes (`/jwks`) and what can go wrong with that endpoint ([`JwksFault`]; the signing
//! key and its rotation are in `signing.rs`), tokens minted with chosen claims
//! ([`AccessTokenClaims`]) and token introspection (RFC 7662, `/introspect`).

use std::sync::Arc;
use std::time::Duration;

use axum::Form;
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderMap, StatusCode, header};
use serde_json::{Value, json};

use super::as_state::{AsShared, TokenInfo};
use super::common::{OAuthError, Params, authenticate_client, random_token, unix_now};
use super::signing::{ACCESS_TOKEN_TYP, JwksFault};
use crate::record::lock;

/// The claim JWT access tokens carry the subject's groups in.
pub const GROUPS_CLAIM: &str = "groups";

/// How long a [`JwksFault::Hang`] holds the request (the server's shutdown ends it
/// sooner).
const HANG: Duration = Duration::from_secs(600);

/// The claims of a token minted with [`crate::FakeAuthServer::mint_jwt`]: by default
/// issued by the server, for client `testkit-client`, valid for an hour, with no
/// audience, scope or group.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessTokenClaims {
    /// `sub`.
    pub subject: String,
    /// The groups claim ([`GROUPS_CLAIM`]); left out when empty.
    pub groups: Vec<String>,
    /// `scope`, space-separated; left out when empty.
    pub scopes: Vec<String>,
    /// `aud` (the resource, RFC 8707); left out when `None`.
    pub audience: Option<String>,
    /// Seconds from now to `exp`; negative for a token that expired that long ago.
    pub expires_in: i64,
    /// `iss` instead of the server's issuer.
    pub issuer: Option<String>,
    /// `client_id`.
    pub client_id: String,
    /// Unsigned: header `alg: none` and an empty signature, which a resource server must
    /// refuse.
    pub unsigned: bool,
}

impl AccessTokenClaims {
    /// A token for `subject`.
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            groups: Vec::new(),
            scopes: Vec::new(),
            audience: None,
            expires_in: 3600,
            issuer: None,
            client_id: "testkit-client".to_owned(),
            unsigned: false,
        }
    }

    /// Set the groups.
    #[must_use]
    pub fn with_groups<I, S>(mut self, groups: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.groups = groups.into_iter().map(Into::into).collect();
        self
    }

    /// Set the scopes.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Set `aud`.
    #[must_use]
    pub fn with_audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// Set the seconds to `exp` (negative: expired).
    #[must_use]
    pub fn with_expires_in(mut self, seconds: i64) -> Self {
        self.expires_in = seconds;
        self
    }

    /// Set `iss`.
    #[must_use]
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sign nothing (`alg: none`).
    #[must_use]
    pub fn unsigned(mut self) -> Self {
        self.unsigned = true;
        self
    }

    /// The JSON claims, issued by `issuer` unless the claims name another.
    pub(crate) fn to_json(&self, issuer: &str) -> Value {
        let now = unix_now();
        let exp = i64::try_from(now)
            .unwrap_or(i64::MAX)
            .saturating_add(self.expires_in);
        let mut claims = json!({
            "iss": self.issuer.as_deref().unwrap_or(issuer),
            "sub": self.subject,
            "client_id": self.client_id,
            "iat": now,
            "exp": exp,
            "jti": random_token("jti"),
        });
        if let Some(audience) = &self.audience {
            claims["aud"] = json!(audience);
        }
        if !self.scopes.is_empty() {
            claims["scope"] = json!(self.scopes.join(" "));
        }
        if !self.groups.is_empty() {
            claims[GROUPS_CLAIM] = json!(self.groups);
        }
        claims
    }
}

/// `claims` as an unsigned JWT (`alg: none`, empty signature).
pub(crate) fn unsigned(claims: &Value) -> String {
    let header = json!({"alg": "none", "typ": ACCESS_TOKEN_TYP});
    format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    )
}

/// The claims of an issued token as the server knows it.
pub(crate) fn claims_of(info: &TokenInfo, issuer: &str) -> Value {
    let remaining = info
        .expires_at
        .saturating_duration_since(tokio::time::Instant::now());
    let mut claims = AccessTokenClaims::new(info.subject.clone())
        .with_groups(info.groups.clone())
        .with_scopes(info.scopes.clone())
        .with_expires_in(i64::try_from(remaining.as_secs()).unwrap_or(i64::MAX));
    claims.client_id.clone_from(&info.client_id);
    // RFC 9068 requires an audience: the resource, else the client.
    claims.audience = Some(
        info.resource
            .clone()
            .unwrap_or_else(|| info.client_id.clone()),
    );
    claims.to_json(issuer)
}

/// A token response's opaque access token replaced by a JWT with the same grant: the
/// server then knows the token by its JWT.
pub(crate) fn as_jwt(shared: &AsShared, inner: &mut super::as_state::AsInner, body: &mut Value) {
    let Some(opaque) = body["access_token"].as_str().map(str::to_owned) else {
        return;
    };
    let Some(info) = inner.access.remove(&opaque) else {
        return;
    };
    let claims = claims_of(&info, &shared.advertised().issuer());
    let Ok(jwt) = inner.signing.sign(&claims) else {
        inner.access.insert(opaque, info);
        return;
    };
    if let Some(issued) = inner.issued.iter_mut().find(|t| **t == opaque) {
        issued.clone_from(&jwt);
    }
    inner.access.insert(jwt.clone(), info);
    body["access_token"] = json!(jwt);
}

/// `/jwks`: the current key, or the fault.
pub(crate) async fn jwks(State(shared): State<Arc<AsShared>>) -> Response {
    let (set, fault) = {
        let mut inner = lock(&shared.inner);
        inner.counters.jwks += 1;
        (inner.signing.jwks(), inner.signing.fault.clone())
    };
    match fault {
        None => Json(set).into_response(),
        Some(JwksFault::Hang) => {
            tokio::time::sleep(HANG).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        Some(JwksFault::Garbage) => (
            [(header::CONTENT_TYPE, "application/json")],
            Body::from("<html>not a key set</html>"),
        )
            .into_response(),
        Some(JwksFault::Oversized(size)) => {
            super::metadata_fault::MetadataFault::Oversized(size).respond()
        }
    }
}

/// `/introspect` (RFC 7662): the client must authenticate; a live token is `active` with
/// its claims, anything else is `{"active": false}`.
pub(crate) async fn introspect(
    State(shared): State<Arc<AsShared>>,
    headers: HeaderMap,
    Form(params): Form<Params>,
) -> Response {
    let mut inner = lock(&shared.inner);
    inner.counters.introspections += 1;
    if let Err(error) = authenticate_client(&inner.clients, &headers, &params, &shared.audiences())
    {
        return error.into_response();
    }
    let Some(token) = params.get("token") else {
        return OAuthError::invalid_request("token is required").into_response();
    };
    let Some(info) = inner.live(token) else {
        return Json(json!({"active": false})).into_response();
    };
    let mut claims = claims_of(info, &shared.advertised().issuer());
    claims["active"] = json!(true);
    claims["token_type"] = json!("Bearer");
    Json(claims).into_response()
}

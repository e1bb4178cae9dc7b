//! The token endpoint of [`crate::FakeAuthServer`]: `authorization_code`,
//! `refresh_token`, `client_credentials`, the JWT-bearer grant (RFC 7523) and token
//! exchange (RFC 8693, in `exchange.rs`).

use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::HeaderMap;
use serde_json::Value;
use tokio::time::Instant;

use super::as_state::{AsInner, AsShared};
use super::common::{OAuthError, Params, authenticate_client, token_response, verifier_matches};
use super::idp::ID_JAG_TYP;
use super::keys::TEST_RSA_PUBLIC_KEY_PEM;
use crate::record::lock;

/// `urn:ietf:params:oauth:grant-type:jwt-bearer`.
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

pub(crate) async fn token(
    State(shared): State<Arc<AsShared>>,
    headers: HeaderMap,
    Form(params): Form<Params>,
) -> Response {
    let mut inner = lock(&shared.inner);
    inner.token_requests.push(params.clone());
    if let Some(resource) = params.get("resource") {
        inner.last_resource = Some(resource.clone());
    }
    if let Some(scope) = params.get("scope") {
        inner.last_scope = Some(scope.clone());
    }
    let bound = match dpop_check(&shared, &mut inner, &headers) {
        Ok(bound) => bound,
        Err(response) => return *response,
    };
    let grant = params.get("grant_type").map(String::as_str).unwrap_or("");
    let result = match grant {
        "authorization_code" => {
            inner.counters.authorization_code += 1;
            authorization_code(&shared, &mut inner, &headers, &params)
        }
        "refresh_token" => {
            inner.counters.refresh_token += 1;
            refresh(&shared, &mut inner, &headers, &params)
        }
        "client_credentials" => {
            inner.counters.client_credentials += 1;
            client_credentials(&shared, &mut inner, &headers, &params)
        }
        JWT_BEARER_GRANT => {
            inner.counters.jwt_bearer += 1;
            jwt_bearer(&shared, &mut inner, &headers, &params)
        }
        super::idp::TOKEN_EXCHANGE_GRANT => {
            inner.counters.token_exchange += 1;
            super::exchange::token_exchange(&shared, &mut inner, &headers, &params)
        }
        other => Err(OAuthError::new(
            "unsupported_grant_type",
            format!("grant_type {other:?} is not supported"),
        )),
    };
    match result {
        Ok(mut body) => {
            if inner.options.jwt_access_tokens {
                super::jwt_access::as_jwt(&shared, &mut inner, &mut body);
            }
            if let Some(jkt) = bound
                && let Some(token) = body["access_token"].as_str()
                && let Some(info) = inner.access.get_mut(token)
            {
                info.dpop_jkt = Some(jkt);
                body["token_type"] = Value::from("DPoP");
            }
            token_response(body)
        }
        Err(mut error) => {
            inner.counters.token_errors += 1;
            error.description = inner.describe(&error.description);
            error.into_response()
        }
    }
}

/// The DPoP proof of a token request, when the server supports DPoP and the request has
/// one: the thumbprint to bind the token to, or the error response (a bad proof, or a
/// missing nonce).
fn dpop_check(
    shared: &AsShared,
    inner: &mut AsInner,
    headers: &HeaderMap,
) -> Result<Option<String>, Box<Response>> {
    if !inner.options.dpop {
        return Ok(None);
    }
    let Some(proof) = headers.get("dpop").and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    inner.counters.dpop_proofs += 1;
    let endpoint = shared.token_endpoint();
    let info = match super::dpop::verify(proof, "POST", &endpoint, None, &mut inner.dpop_jtis) {
        Ok(info) => info,
        Err(why) => {
            inner.counters.dpop_rejections += 1;
            inner.counters.token_errors += 1;
            return Err(Box::new(
                OAuthError::new("invalid_dpop_proof", inner.describe(why)).into_response(),
            ));
        }
    };
    if let Some(nonce) = &inner.options.dpop_nonce
        && info.nonce.as_ref() != Some(nonce)
    {
        inner.counters.dpop_nonce_challenges += 1;
        inner.counters.token_errors += 1;
        let mut response = OAuthError::new(
            "use_dpop_nonce",
            inner.describe("the authorization server requires a DPoP nonce"),
        )
        .into_response();
        if let Ok(value) = http::HeaderValue::from_str(nonce) {
            response.headers_mut().insert("dpop-nonce", value);
        }
        return Err(Box::new(response));
    }
    Ok(Some(info.jkt))
}

fn authorization_code(
    shared: &AsShared,
    inner: &mut AsInner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<Value, OAuthError> {
    let (client, _) = authenticate_client(&inner.clients, headers, params, &shared.audiences())?;
    let code = params
        .get("code")
        .ok_or_else(|| OAuthError::invalid_request("code is required"))?;
    // One-time: the code is gone whatever happens next.
    let grant = inner
        .codes
        .remove(code)
        .ok_or_else(|| OAuthError::invalid_grant("unknown, used or revoked authorization code"))?;
    if Instant::now() >= grant.expires_at {
        return Err(OAuthError::invalid_grant("authorization code expired"));
    }
    if grant.client_id != client.client_id {
        return Err(OAuthError::invalid_grant(
            "authorization code was issued to another client",
        ));
    }
    if params.get("redirect_uri") != Some(&grant.redirect_uri) {
        return Err(OAuthError::invalid_grant(
            "redirect_uri differs from the authorization request",
        ));
    }
    verifier_matches(params.get("code_verifier"), &grant.challenge)?;
    if let (Some(asked), Some(granted)) = (params.get("resource"), &grant.resource)
        && asked != granted
    {
        return Err(OAuthError::new(
            "invalid_target",
            "resource differs from the authorization request",
        ));
    }
    let resource = grant.resource.or_else(|| params.get("resource").cloned());
    let refresh = inner.options.refresh_tokens;
    Ok(inner.issue(
        &client.client_id,
        grant.scopes,
        resource,
        "authorization_code",
        refresh,
    ))
}

fn refresh(
    shared: &AsShared,
    inner: &mut AsInner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<Value, OAuthError> {
    let (client, _) = authenticate_client(&inner.clients, headers, params, &shared.audiences())?;
    let token = params
        .get("refresh_token")
        .ok_or_else(|| OAuthError::invalid_request("refresh_token is required"))?;
    if inner.fail_refreshes > 0 {
        inner.fail_refreshes -= 1;
        inner.refresh.remove(token);
        return Err(OAuthError::invalid_grant(
            "refresh token revoked (injected)",
        ));
    }
    let grant =
        inner.refresh.get(token).cloned().ok_or_else(|| {
            OAuthError::invalid_grant("unknown, rotated or revoked refresh token")
        })?;
    if grant.client_id != client.client_id {
        return Err(OAuthError::invalid_grant(
            "refresh token was issued to another client",
        ));
    }
    let scopes = match params.get("scope") {
        Some(_) => {
            let asked = inner
                .scopes(params.get("scope"))
                .map_err(|why| OAuthError::new("invalid_scope", why))?;
            if let Some(extra) = asked.iter().find(|s| !grant.scopes.contains(s)) {
                return Err(OAuthError::new(
                    "invalid_scope",
                    format!("scope {extra} was not granted originally"),
                ));
            }
            asked
        }
        None => grant.scopes.clone(),
    };
    let rotate = inner.options.rotate_refresh_tokens;
    if rotate {
        inner.refresh.remove(token);
    }
    let body = inner.issue(
        &client.client_id,
        scopes,
        grant.resource,
        "refresh_token",
        rotate,
    );
    // The refreshed tokens are the login's, whoever logs in now.
    let issued = |field: &str| body[field].as_str().unwrap_or_default().to_owned();
    if let Some(info) = inner.access.get_mut(&issued("access_token")) {
        info.subject.clone_from(&grant.subject);
        info.groups.clone_from(&grant.groups);
    }
    if let Some(next) = inner.refresh.get_mut(&issued("refresh_token")) {
        next.subject = grant.subject;
        next.groups = grant.groups;
    }
    Ok(body)
}

fn client_credentials(
    shared: &AsShared,
    inner: &mut AsInner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<Value, OAuthError> {
    let (client, _) = authenticate_client(&inner.clients, headers, params, &shared.audiences())?;
    if !client.is_confidential() {
        return Err(OAuthError::new(
            "unauthorized_client",
            format!(
                "client {} is public: client_credentials needs a secret or a key",
                client.client_id
            ),
        ));
    }
    let scopes = inner
        .scopes(params.get("scope"))
        .map_err(|why| OAuthError::new("invalid_scope", why))?;
    Ok(inner.issue(
        &client.client_id,
        scopes,
        params.get("resource").cloned(),
        "client_credentials",
        false,
    ))
}

fn jwt_bearer(
    shared: &AsShared,
    inner: &mut AsInner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<Value, OAuthError> {
    // Client authentication is optional for this grant; when present it must hold.
    let authenticated = if headers.contains_key(http::header::AUTHORIZATION)
        || params.contains_key("client_id")
        || params.contains_key("client_assertion")
    {
        Some(authenticate_client(&inner.clients, headers, params, &shared.audiences())?.0)
    } else {
        None
    };
    let assertion = params
        .get("assertion")
        .ok_or_else(|| OAuthError::invalid_request("assertion is required"))?;
    let header = jsonwebtoken::decode_header(assertion)
        .map_err(|_| OAuthError::invalid_grant("assertion is not a JWT"))?;
    if header.typ.as_deref() != Some(ID_JAG_TYP)
        && !inner.options.trusted_workload_issuers.is_empty()
    {
        let client_id = super::workload::verify(
            assertion,
            &inner.options.trusted_workload_issuers,
            &shared.audiences(),
        )
        .map_err(OAuthError::invalid_grant)?;
        let client_id = authenticated.map_or(client_id, |c| c.client_id);
        let scopes = inner
            .scopes(params.get("scope"))
            .map_err(|why| OAuthError::new("invalid_scope", why))?;
        inner.counters.workload_grants += 1;
        let resource = params.get("resource").cloned();
        return Ok(inner.issue(&client_id, scopes, resource, "workload", false));
    }
    if header.typ.as_deref() != Some(ID_JAG_TYP) {
        return Err(OAuthError::invalid_grant(format!(
            "assertion typ must be {ID_JAG_TYP}"
        )));
    }
    if inner.options.trusted_idps.is_empty() {
        return Err(OAuthError::invalid_grant(
            "no trusted IdP (AuthServerOptions::with_trusted_idp)",
        ));
    }
    let key = jsonwebtoken::DecodingKey::from_rsa_pem(TEST_RSA_PUBLIC_KEY_PEM.as_bytes())
        .map_err(|_| OAuthError::new("server_error", "test key unreadable"))?;
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&shared.audiences());
    validation.set_issuer(&inner.options.trusted_idps);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let claims = jsonwebtoken::decode::<Value>(assertion, &key, &validation)
        .map_err(|e| OAuthError::invalid_grant(format!("ID-JAG rejected: {e}")))?
        .claims;
    let client_id = claims
        .get("client_id")
        .and_then(Value::as_str)
        .ok_or_else(|| OAuthError::invalid_grant("ID-JAG has no client_id claim"))?
        .to_owned();
    if let Some(client) = &authenticated
        && client.client_id != client_id
    {
        return Err(OAuthError::invalid_grant(
            "ID-JAG was issued for another client",
        ));
    }
    let resource = claims
        .get("resource")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(resource) = &resource {
        inner.last_resource = Some(resource.clone());
    }
    let scope = claims
        .get("scope")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(scope) = &scope {
        inner.last_scope = Some(scope.clone());
    }
    let scopes = inner
        .scopes(scope.as_ref())
        .map_err(|why| OAuthError::new("invalid_scope", why))?;
    Ok(inner.issue(&client_id, scopes, resource, "jwt_bearer", false))
}

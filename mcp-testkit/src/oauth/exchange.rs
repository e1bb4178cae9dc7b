//! RFC 8693 token exchange at the token endpoint of [`crate::FakeAuthServer`]: a gateway
//! trades a caller's token (one this server issued, or a JWT of a trusted issuer) for a
//! token whose audience is an upstream server, with the caller's subject. Every exchange
//! is recorded ([`TokenExchangeRecord`]) and may be refused or cut short
//! ([`ExchangeFault`]).

use http::HeaderMap;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::as_state::{AsInner, AsShared};
use super::common::{OAuthError, Params, authenticate_client};
use super::keys::{TEST_EC_PUBLIC_KEY_PEM, TEST_RSA_PUBLIC_KEY_PEM};

/// `urn:ietf:params:oauth:token-type:access_token`: an access token, as a subject token
/// and as the type of the token an exchange issues.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
/// `urn:ietf:params:oauth:token-type:jwt`: a JWT subject token.
pub const JWT_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:jwt";

/// What the token exchange of a [`crate::FakeAuthServer`] does instead of its job
/// ([`crate::FakeAuthServer::set_exchange_fault`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExchangeFault {
    /// Answer every exchange with `invalid_grant` (the subject token is not accepted).
    Refuse,
    /// Issue the token with its usual `expires_in`, but already expired on the server:
    /// the upstream refuses it at once (401), before the client thinks it has expired.
    ExpireEarly,
    /// Issue the token without `expires_in` (it is optional in RFC 6749), valid for the
    /// server's usual lifetime: the client must pick a lifetime of its own.
    OmitExpiresIn,
}

/// One token exchange request, as the server saw it and what it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenExchangeRecord {
    /// The authenticated client, `None` when client authentication failed.
    pub client_id: Option<String>,
    /// `subject_token`, as sent (this is a fake: tests compare it).
    pub subject_token: String,
    /// `subject_token_type`.
    pub subject_token_type: Option<String>,
    /// `audience`.
    pub audience: Option<String>,
    /// `resource`.
    pub resource: Option<String>,
    /// `scope`.
    pub scope: Option<String>,
    /// `requested_token_type`.
    pub requested_token_type: Option<String>,
    /// The subject of the subject token, when it was accepted.
    pub subject: Option<String>,
    /// The access token issued, or the OAuth error code of the answer.
    pub outcome: Result<String, String>,
}

/// Handles `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`: records the
/// request, then issues or refuses.
pub(crate) fn token_exchange(
    shared: &AsShared,
    inner: &mut AsInner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<Value, OAuthError> {
    let get = |name: &str| params.get(name).cloned();
    let mut record = TokenExchangeRecord {
        client_id: None,
        subject_token: get("subject_token").unwrap_or_default(),
        subject_token_type: get("subject_token_type"),
        audience: get("audience"),
        resource: get("resource"),
        scope: get("scope"),
        requested_token_type: get("requested_token_type"),
        subject: None,
        outcome: Err(String::new()),
    };
    let result = exchange(shared, inner, headers, params, &mut record);
    record.outcome = match &result {
        Ok(body) => Ok(body["access_token"].as_str().unwrap_or_default().to_owned()),
        Err(error) => Err(error.code.to_owned()),
    };
    inner.exchanges.push(record);
    result
}

fn exchange(
    shared: &AsShared,
    inner: &mut AsInner,
    headers: &HeaderMap,
    params: &Params,
    record: &mut TokenExchangeRecord,
) -> Result<Value, OAuthError> {
    let (client, _) = authenticate_client(&inner.clients, headers, params, &shared.audiences())?;
    record.client_id = Some(client.client_id.clone());
    let subject_token = params
        .get("subject_token")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| OAuthError::invalid_request("subject_token is required"))?;
    let token_type = params
        .get("subject_token_type")
        .ok_or_else(|| OAuthError::invalid_request("subject_token_type is required"))?;
    if token_type != ACCESS_TOKEN_TYPE && token_type != JWT_TOKEN_TYPE {
        return Err(OAuthError::invalid_request(format!(
            "subject_token_type {token_type:?} is not supported: use {ACCESS_TOKEN_TYPE} or \
             {JWT_TOKEN_TYPE}"
        )));
    }
    if let Some(requested) = params.get("requested_token_type")
        && requested != ACCESS_TOKEN_TYPE
    {
        return Err(OAuthError::invalid_request(format!(
            "requested_token_type {requested:?} is not supported: only {ACCESS_TOKEN_TYPE}"
        )));
    }
    if params.contains_key("actor_token") {
        return Err(OAuthError::invalid_request(
            "actor_token (delegation) is not supported",
        ));
    }
    let audience = params
        .get("resource")
        .or_else(|| params.get("audience"))
        .cloned()
        .ok_or_else(|| {
            OAuthError::new(
                "invalid_target",
                "name the token's audience: audience and/or resource",
            )
        })?;
    let (subject, groups) = subject_of(inner, subject_token)?;
    record.subject = Some(subject.clone());
    if inner.exchange_fault == Some(ExchangeFault::Refuse) {
        return Err(OAuthError::invalid_grant(
            "the subject token is not accepted for exchange (injected)",
        ));
    }
    let scopes = inner
        .scopes(params.get("scope"))
        .map_err(|why| OAuthError::new("invalid_scope", why))?;
    let mut body = inner.issue(
        &client.client_id,
        scopes,
        Some(audience),
        "token_exchange",
        false,
    );
    let issued = body["access_token"].as_str().unwrap_or_default().to_owned();
    let early = inner.exchange_fault == Some(ExchangeFault::ExpireEarly);
    if let Some(info) = inner.access.get_mut(&issued) {
        info.subject = subject;
        info.groups = groups;
        if early {
            info.expires_at = Instant::now();
        }
    }
    body["issued_token_type"] = json!(ACCESS_TOKEN_TYPE);
    if inner.exchange_fault == Some(ExchangeFault::OmitExpiresIn)
        && let Some(fields) = body.as_object_mut()
    {
        fields.remove("expires_in");
    }
    Ok(body)
}

/// The subject and groups of a subject token: a live access token this server issued, or
/// a JWT signed with the testkit's RSA or EC key by one of the trusted subject issuers.
fn subject_of(inner: &AsInner, token: &str) -> Result<(String, Vec<String>), OAuthError> {
    if let Some(info) = inner.live(token) {
        return Ok((info.subject.clone(), info.groups.clone()));
    }
    if inner.access.contains_key(token) {
        return Err(OAuthError::invalid_grant("the subject token has expired"));
    }
    let issuers = &inner.options.trusted_subject_issuers;
    if issuers.is_empty() {
        return Err(OAuthError::invalid_grant(
            "unknown, expired or revoked subject token",
        ));
    }
    let header = jsonwebtoken::decode_header(token)
        .map_err(|_| OAuthError::invalid_grant("the subject token is not a JWT"))?;
    let key = match header.alg {
        jsonwebtoken::Algorithm::RS256 => {
            jsonwebtoken::DecodingKey::from_rsa_pem(TEST_RSA_PUBLIC_KEY_PEM.as_bytes())
        }
        jsonwebtoken::Algorithm::ES256 => {
            jsonwebtoken::DecodingKey::from_ec_pem(TEST_EC_PUBLIC_KEY_PEM.as_bytes())
        }
        other => {
            return Err(OAuthError::invalid_grant(format!(
                "subject token algorithm {other:?} is not accepted"
            )));
        }
    }
    .map_err(|_| OAuthError::new("server_error", "test key unreadable"))?;
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_issuer(issuers);
    validation.validate_aud = false;
    validation.leeway = 0;
    validation.set_required_spec_claims(&["exp", "iss", "sub"]);
    let claims = jsonwebtoken::decode::<Value>(token, &key, &validation)
        .map_err(|e| OAuthError::invalid_grant(format!("subject token rejected: {e}")))?
        .claims;
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .ok_or_else(|| OAuthError::invalid_grant("subject token has no sub"))?
        .to_owned();
    let groups = claims
        .get(super::GROUPS_CLAIM)
        .and_then(Value::as_array)
        .map(|groups| {
            groups
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok((subject, groups))
}

//! Workload identity federation: a workload (CI job, container, cloud VM) trades the
//! identity token its platform gives it for an access token with the JWT-bearer grant
//! (RFC 7523 section 2.1). No browser and no refresh token: when the access token expires
//! or is rejected, the grant runs again with the platform token read afresh (platforms
//! rotate the file).

use mcp_key::Secret;

use super::discovery::{map_rmcp, new_manager};
use super::dpop::{self, DpopKey};
use super::grant::{ClientAuth, GrantOutcome, request_token};
use super::http::{self as oauth_http, now_unix};
use super::state::CredentialState;
use super::workload::WorkloadIdentity;
use crate::error::AuthError;
use crate::store::StoredCredentials;

/// The JWT-bearer grant type (RFC 7523).
pub(crate) const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The workload login of
/// [`OAuthCredentials::login_workload_identity`](super::OAuthCredentials::login_workload_identity).
pub(super) async fn workload_identity_login(
    creds: &CredentialState,
    identity: &WorkloadIdentity,
) -> Result<(), AuthError> {
    let server = creds.server().clone();
    let manager = new_manager(&server, creds.url(), creds.settings()).await?;
    let metadata = manager
        .resolve_metadata()
        .await
        .map_err(|e| map_rmcp(&server, e))?
        .metadata;
    let assertion = identity.read_token(creds.server()).await?;
    let resource = creds
        .settings()
        .resource
        .clone()
        .unwrap_or_else(|| creds.url().to_owned());
    let scopes = if identity.scopes.is_empty() {
        creds.settings().scopes.join(" ")
    } else {
        identity.scopes.join(" ")
    };
    let mut form: Vec<(&str, &str)> = vec![
        ("grant_type", JWT_BEARER_GRANT),
        ("assertion", assertion.expose()),
        ("resource", &resource),
    ];
    if !scopes.is_empty() {
        form.push(("scope", &scopes));
    }
    let dpop_key = if creds.settings().dpop && dpop::supported_by(&metadata) {
        Some(DpopKey::generate()?)
    } else {
        None
    };
    let http = oauth_http::client(&server)?;
    let token = match request_token(
        &server,
        &http,
        &metadata.token_endpoint,
        form,
        ClientAuth::None(identity.client_id.as_deref()),
        dpop_key.as_ref(),
    )
    .await?
    {
        GrantOutcome::Issued(token) => token,
        GrantOutcome::Refused(code) => {
            return Err(AuthError::TokenEndpoint { server, code });
        }
    };
    let mut record = StoredCredentials::new(identity.client_id.clone().unwrap_or_default())
        .with_access_token(Secret::new(token.access_token.clone()))
        .with_token_endpoint(metadata.token_endpoint.clone())
        .with_token_endpoint_auth_method(JWT_BEARER_GRANT)
        .with_resource(resource.clone())
        .with_scopes(
            token
                .scope
                .as_deref()
                .unwrap_or(&scopes)
                .split_whitespace()
                .map(str::to_owned),
        );
    if let Some(issuer) = &metadata.issuer {
        record = record.with_issuer(issuer.clone());
    }
    if let Some(expires_in) = token.expires_in {
        record = record.with_expires_at(now_unix().saturating_add(expires_in));
    }
    if let (Some(key), true) = (dpop_key, token.is_dpop()) {
        record = record.with_dpop_key(key);
    }
    tracing::debug!(server = %server, "workload identity token redeemed");
    creds.persist(&record).await
}

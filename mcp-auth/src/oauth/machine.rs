//! Logins without a user: the client-credentials grant (client secret or
//! `private_key_jwt`, SEP-1046) and enterprise-managed authorization (RFC 8693 token
//! exchange for an ID-JAG, then an RFC 7523 JWT-bearer grant), both through rmcp.

use mcp_key::Secret;
use oauth2::ClientSecret;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    ClientCredentialsConfig, JwtSigningAlgorithm, default_oauth_http_client,
};

use super::discovery::{map_rmcp, new_manager};
use super::http::now_unix;
use super::login::{TokenContext, record_from_token};
use super::state::CredentialState;
use crate::error::AuthError;
use crate::store::StoredCredentials;

/// A machine client's identity for the client-credentials grant.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ClientCredentials {
    /// A client secret (sent as HTTP Basic when that is all the server supports, else in
    /// the body).
    Secret {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: Secret,
    },
    /// A private key signing an RFC 7523 client assertion.
    PrivateKeyJwt {
        /// The client id.
        client_id: String,
        /// The PEM-encoded private key.
        private_key_pem: Secret,
        /// `RS256`, `RS384`, `RS512`, `ES256` or `ES384`.
        algorithm: String,
    },
}

impl ClientCredentials {
    /// A client secret.
    pub fn secret(client_id: impl Into<String>, client_secret: Secret) -> Self {
        Self::Secret {
            client_id: client_id.into(),
            client_secret,
        }
    }

    /// A private key (PEM) and its JWS algorithm.
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        private_key_pem: Secret,
        algorithm: impl Into<String>,
    ) -> Self {
        Self::PrivateKeyJwt {
            client_id: client_id.into(),
            private_key_pem,
            algorithm: algorithm.into(),
        }
    }
}

/// What enterprise-managed authorization needs: the IdP, the user's ID token from the
/// enterprise login, and the client registered at the MCP server's authorization server.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct EnterpriseGrant {
    /// The IdP's issuer.
    pub idp_issuer: String,
    /// The IdP's token endpoint.
    pub idp_token_endpoint: String,
    /// Our client id at the IdP.
    pub idp_client_id: String,
    /// Our client secret at the IdP, if confidential.
    pub idp_client_secret: Option<Secret>,
    /// The exchange's subject: the user's ID token from the enterprise login, or (when
    /// `subject_is_refresh_token`) the IdP refresh token.
    pub id_token: Secret,
    /// `id_token` holds the IdP refresh token instead of an ID token.
    pub subject_is_refresh_token: bool,
    /// Our client id at the MCP server's authorization server.
    pub client_id: String,
    /// Our client secret there (`client_secret_basic`), if confidential.
    pub client_secret: Option<Secret>,
    /// Scopes to request (none: omitted).
    pub scopes: Vec<String>,
}

impl EnterpriseGrant {
    /// A grant for a public client at both servers; add secrets with the setters.
    pub fn new(
        idp_issuer: impl Into<String>,
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: Secret,
        client_id: impl Into<String>,
    ) -> Self {
        Self {
            idp_issuer: idp_issuer.into(),
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            idp_client_secret: None,
            id_token,
            subject_is_refresh_token: false,
            client_id: client_id.into(),
            client_secret: None,
            scopes: Vec::new(),
        }
    }

    /// A grant whose exchange subject is the IdP refresh token (RFC 8693
    /// `urn:ietf:params:oauth:token-type:refresh_token`).
    pub fn with_idp_refresh_token(
        idp_issuer: impl Into<String>,
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        refresh_token: Secret,
        client_id: impl Into<String>,
    ) -> Self {
        let mut grant = Self::new(
            idp_issuer,
            idp_token_endpoint,
            idp_client_id,
            refresh_token,
            client_id,
        );
        grant.subject_is_refresh_token = true;
        grant
    }

    /// Our client secret at the IdP.
    #[must_use]
    pub fn with_idp_client_secret(mut self, secret: Secret) -> Self {
        self.idp_client_secret = Some(secret);
        self
    }

    /// Our client secret at the MCP server's authorization server.
    #[must_use]
    pub fn with_client_secret(mut self, secret: Secret) -> Self {
        self.client_secret = Some(secret);
        self
    }

    /// Scopes to request.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

fn algorithm(name: &str) -> Option<JwtSigningAlgorithm> {
    Some(match name {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        _ => return None,
    })
}

/// The client-credentials login of [`OAuthCredentials::login_client_credentials`](super::OAuthCredentials::login_client_credentials).
pub(super) async fn client_credentials_login(
    creds: &CredentialState,
    grant: ClientCredentials,
) -> Result<(), AuthError> {
    let server = creds.server().clone();
    let resource = creds.resource();
    let scopes = creds.settings().scopes.clone();
    let (config, client_id, secret, method) = match grant {
        ClientCredentials::Secret {
            client_id,
            client_secret,
        } => (
            ClientCredentialsConfig::ClientSecret {
                client_id: client_id.clone(),
                client_secret: client_secret.expose().to_owned(),
                scopes,
                resource: Some(resource.clone()),
            },
            client_id,
            Some(client_secret),
            "client_secret",
        ),
        ClientCredentials::PrivateKeyJwt {
            client_id,
            private_key_pem,
            algorithm: alg,
        } => {
            let signing_algorithm = algorithm(&alg).ok_or_else(|| AuthError::Config {
                server: server.clone(),
                detail: format!("unsupported private_key_jwt algorithm `{alg}`; use RS256, RS384, RS512, ES256 or ES384"),
            })?;
            (
                ClientCredentialsConfig::PrivateKeyJwt {
                    client_id: client_id.clone(),
                    signing_key: private_key_pem.expose().as_bytes().to_vec(),
                    signing_algorithm,
                    token_endpoint_audience: None,
                    scopes,
                    resource: Some(resource.clone()),
                },
                client_id,
                None,
                "private_key_jwt",
            )
        }
    };
    let mut manager = new_manager(&server, creds.url(), creds.settings()).await?;
    let metadata = manager
        .resolve_metadata()
        .await
        .map_err(|e| map_rmcp(&server, e))?
        .metadata;
    manager.set_metadata(metadata.clone());
    manager
        .validate_client_credentials_metadata(&config)
        .map_err(|e| map_rmcp(&server, e))?;
    manager
        .configure_client_credentials(&config)
        .map_err(|e| map_rmcp(&server, e))?;
    let token = manager
        .exchange_client_credentials(&config)
        .await
        .map_err(|e| match e {
            rmcp::transport::auth::AuthError::TokenExchangeFailed(_)
            | rmcp::transport::auth::AuthError::ClientCredentialsError(_) => {
                AuthError::TokenEndpoint {
                    server: server.clone(),
                    code: "client_credentials_rejected".to_owned(),
                }
            }
            other => map_rmcp(&server, other),
        })?;
    let record = record_from_token(
        client_id,
        &token,
        &metadata,
        TokenContext {
            client_secret: secret,
            auth_method: method.to_owned(),
            resource: Some(resource),
            requested_scopes: Vec::new(),
        },
    );
    creds.persist(&record).await
}

/// The enterprise-managed login of [`OAuthCredentials::login_enterprise`](super::OAuthCredentials::login_enterprise).
pub(super) async fn enterprise_login(
    creds: &CredentialState,
    grant: EnterpriseGrant,
) -> Result<(), AuthError> {
    let server = creds.server().clone();
    let resource = creds.resource();
    let manager = new_manager(&server, creds.url(), creds.settings()).await?;
    let metadata = manager
        .resolve_metadata()
        .await
        .map_err(|e| map_rmcp(&server, e))?
        .metadata;
    let issuer = metadata
        .issuer
        .clone()
        .ok_or_else(|| AuthError::Discovery {
            server: server.clone(),
            detail: "the authorization server metadata names no issuer".to_owned(),
            source: None,
        })?;
    if issuer == grant.idp_issuer {
        return Err(AuthError::Config {
            server,
            detail: "the enterprise IdP and the MCP server's authorization server must differ"
                .to_owned(),
        });
    }
    let mut idp = EmaAuthorizationServer::new(
        grant.idp_issuer.clone(),
        grant.idp_token_endpoint.clone(),
        grant.idp_client_id.clone(),
    );
    if let Some(s) = &grant.idp_client_secret {
        idp = idp.with_client_authentication(EmaClientAuthentication::ClientSecretBasic(
            ClientSecret::new(s.expose().to_owned()),
        ));
    }
    let mut resource_as = EmaAuthorizationServer::new(
        issuer.clone(),
        metadata.token_endpoint.clone(),
        grant.client_id.clone(),
    );
    if let Some(s) = &grant.client_secret {
        resource_as = resource_as.with_client_authentication(
            EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(s.expose().to_owned())),
        );
    }
    let http = default_oauth_http_client().map_err(|e| map_rmcp(&server, e))?;
    let refresh_token = oauth2::RefreshToken::new(grant.id_token.expose().to_owned());
    let request = if grant.subject_is_refresh_token {
        EmaExchangeRequest::new(idp, resource_as, &resource, &refresh_token)
    } else {
        EmaExchangeRequest::new_with_id_token(idp, resource_as, &resource, grant.id_token.expose())
    };
    let token = request
        .with_scopes(grant.scopes.clone())
        .exchange(&http, &http)
        .await
        .map_err(|e| match e {
            EmaError::InvalidGrant(_) => AuthError::ReloginRequired {
                server: server.clone(),
            },
            EmaError::OAuthRejected { code, .. } => AuthError::TokenEndpoint {
                server: server.clone(),
                code: code.to_owned(),
            },
            EmaError::RequestFailed(_) => AuthError::Http {
                server: server.clone(),
                what: "the enterprise token exchange".to_owned(),
                source: Some(Box::new(e)),
            },
            other => AuthError::TokenEndpoint {
                server: server.clone(),
                code: format!("invalid_ema_response ({other})"),
            },
        })?;
    let mut scopes: Vec<String> = token.scopes.iter().cloned().collect();
    scopes.sort();
    let mut record = StoredCredentials::new(grant.client_id)
        .with_access_token(Secret::new(token.access_token.secret().clone()))
        .with_scopes(scopes)
        .with_token_endpoint(metadata.token_endpoint.clone())
        .with_issuer(issuer)
        .with_resource(resource)
        .with_token_endpoint_auth_method("urn:ietf:params:oauth:grant-type:jwt-bearer");
    if let Some(expires_in) = token.expires_in {
        record = record.with_expires_at(now_unix().saturating_add(expires_in.as_secs()));
    }
    creds.persist(&record).await
}

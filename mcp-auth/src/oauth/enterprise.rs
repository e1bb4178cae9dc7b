//! [`EnterpriseIdp`]: the one interactive login to the enterprise identity provider that
//! enterprise-managed authorization builds on.

use std::sync::Arc;

use mcp_key::{McpServerKey, Secret};

use super::credentials::OAuthCredentials;
use super::http::now_unix;
use super::login::{IdTokenRule, PendingLogin};
use super::machine::EnterpriseGrant;
use super::settings::OAuthSettings;
use crate::error::AuthError;
use crate::status::AuthStatus;
use crate::store::{CredentialStore, StoreKey};

/// The pseudo-server name the IdP login reports in errors and logs.
pub const ENTERPRISE_IDP_NAME: &str = "enterprise-idp";

/// The enterprise identity provider: an OpenID Connect login (authorization code + PKCE,
/// scopes `openid offline_access`) whose ID token and refresh token are kept in the store
/// under [`StoreKey::enterprise_idp`]. [`EnterpriseIdp::grant`] then gives each MCP server
/// what [`OAuthCredentials::login_enterprise`] needs, without a browser.
///
/// The ID token is validated when it arrives: its signature against the IdP's JWKS (`alg`
/// not `none`), issuer exactly the configured one, audience this client, not expired.
#[derive(Clone, Debug)]
pub struct EnterpriseIdp {
    creds: OAuthCredentials,
    issuer: String,
    client_id: String,
    client_secret: Option<Secret>,
}

impl EnterpriseIdp {
    /// The IdP `issuer` (exact), where this host is registered as `client_id` with
    /// `settings` (callback port, timeout; the client id is set from `client_id`).
    pub fn new(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        settings: OAuthSettings,
        store: Arc<dyn CredentialStore>,
    ) -> Result<Self, AuthError> {
        let issuer = issuer.into();
        let client_id = client_id.into();
        let server: McpServerKey = ENTERPRISE_IDP_NAME.parse().map_err(|_| AuthError::Agent {
            detail: "internal: invalid enterprise IdP name".to_owned(),
        })?;
        let mut settings = settings.with_client_id(client_id.clone());
        let client_secret = settings.client_secret.clone();
        if settings.scopes.is_empty() {
            settings = settings.with_scopes(["openid", "offline_access"]);
        }
        let key = StoreKey::enterprise_idp(&issuer);
        Ok(Self {
            creds: OAuthCredentials::with_key(server, issuer.clone(), key, settings, store),
            issuer,
            client_id,
            client_secret,
        })
    }

    /// The IdP of a configuration's `[ema]` table, with the configuration's
    /// `oauth_callback_port` and the host's `client_name`: the one translation from
    /// configuration to the IdP's settings, as [`OAuthSettings::from_config`] is for a
    /// server's. Every host (the connection set, mcpctl) builds its IdP here, so the login
    /// listens where the configuration says whoever runs it.
    pub fn from_config(
        ema: &mcp_catalog::EmaConfig,
        callback_port: Option<u16>,
        client_name: impl Into<String>,
        store: Arc<dyn CredentialStore>,
    ) -> Result<Self, AuthError> {
        let settings = OAuthSettings::new().with_client_name(client_name);
        let settings = match callback_port {
            Some(port) => settings.with_callback_port(port),
            None => settings,
        };
        Self::new(ema.issuer(), ema.client_id(), settings, store)
    }

    /// The settings the IdP login runs with (its client id and scopes filled in).
    pub fn settings(&self) -> &OAuthSettings {
        self.creds.settings()
    }

    /// Starts the interactive IdP login; see [`OAuthCredentials::begin_login`].
    ///
    /// # Cancel safety
    /// Cancel-safe: nothing is stored before [`PendingLogin::complete`].
    pub async fn begin_login(&self) -> Result<PendingLogin, AuthError> {
        self.creds
            .begin_id_token_login(
                self.creds.settings().scopes.clone(),
                IdTokenRule {
                    issuer: self.issuer.clone(),
                    client_id: self.client_id.clone(),
                },
            )
            .await
    }

    /// Logged in (a valid ID token or a refresh token), login required, or re-login required.
    ///
    /// # Cancel safety
    /// Cancel-safe: it only reads the store.
    pub async fn status(&self) -> AuthStatus {
        self.creds.status().await
    }

    /// Forgets the enterprise login, and stops every login of it still pending, in this
    /// process or another sharing the store: they store nothing when their callback comes.
    ///
    /// # Cancel safety
    /// Cancel-safe: the record is deleted entirely or not at all; dropped between the
    /// marker and the deletion, pending logins are stopped and the record stays.
    pub async fn logout(&self) -> Result<(), AuthError> {
        self.creds.logout_everywhere().await
    }

    /// What [`OAuthCredentials::login_enterprise`] needs to authorize one MCP server whose
    /// authorization server knows this host as `client_id`: the ID token while it is valid,
    /// else the IdP refresh token as the exchange's subject.
    ///
    /// # Cancel safety
    /// Cancel-safe: an IdP refresh interrupted before it persisted leaves the old record.
    pub async fn grant(&self, client_id: impl Into<String>) -> Result<EnterpriseGrant, AuthError> {
        let record = self
            .creds
            .load_record()
            .await?
            .ok_or_else(|| AuthError::LoginRequired {
                server: self.creds.server().clone(),
            })?;
        let idp_token_endpoint =
            record
                .token_endpoint
                .clone()
                .ok_or_else(|| AuthError::ReloginRequired {
                    server: self.creds.server().clone(),
                })?;
        let fresh_id_token = record
            .access_token
            .clone()
            .filter(|_| !record.expires_within(30, now_unix()));
        let mut grant = match (fresh_id_token, record.refresh_token.clone()) {
            (Some(id_token), _) => EnterpriseGrant::new(
                &self.issuer,
                idp_token_endpoint,
                &self.client_id,
                id_token,
                client_id,
            ),
            (None, Some(refresh)) => EnterpriseGrant::with_idp_refresh_token(
                &self.issuer,
                idp_token_endpoint,
                &self.client_id,
                refresh,
                client_id,
            ),
            (None, None) => {
                return Err(AuthError::ReloginRequired {
                    server: self.creds.server().clone(),
                });
            }
        };
        if let Some(secret) = &self.client_secret {
            grant = grant.with_idp_client_secret(secret.clone());
        }
        Ok(grant)
    }
}

//! Enterprise-managed authorization from configuration (`auth = "ema"` with an `[ema]`
//! table): after one enterprise login (the IdP record in the credential store, shared by
//! every server of that IdP), each server's access token comes from the ID-JAG token
//! exchange at the IdP and the JWT-bearer grant at the server's authorization server,
//! without interaction. The token is kept in the store until it expires; an expired or
//! rejected token is exchanged again. When the IdP refuses, the server reports
//! [`FailureReason::EnterpriseReloginRequired`](crate::FailureReason::EnterpriseReloginRequired).

use std::sync::Arc;

use mcp_auth::{AuthError, CredentialStore, EnterpriseIdp, OAuthCredentials, OAuthSettings};
use mcp_key::{McpServerKey, Secret};

use mcp_client::BoxFuture;
use mcp_client::{AuthHeaderProvider, CredentialsError};

/// The extension a client announces for servers it authorizes this way.
pub(crate) const EMA_EXTENSION: &str = "io.modelcontextprotocol/enterprise-managed-authorization";

/// Tokens of one EMA server.
pub(crate) struct EmaProvider {
    creds: OAuthCredentials,
    idp: EnterpriseIdp,
    /// Our client id at the server's authorization server.
    client_id: String,
    /// One exchange at a time.
    gate: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for EmaProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmaProvider")
            .field("credentials", &self.creds)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl EmaProvider {
    /// The provider of a configured EMA server: its OAuth settings and its IdP's, both
    /// from the configuration ([`OAuthSettings::from_config`], [`EnterpriseIdp::from_config`])
    /// with the catalog's `callback_port` and the host's `client_name`, as every host
    /// builds them. An error when the IdP settings are unusable.
    pub(crate) fn for_server(
        key: &McpServerKey,
        spec: &mcp_catalog::HttpConfig,
        ema: &mcp_catalog::EmaConfig,
        (callback_port, client_name): (Option<u16>, &str),
        store: Arc<dyn CredentialStore>,
    ) -> Result<Self, AuthError> {
        let idp = EnterpriseIdp::from_config(ema, callback_port, client_name, Arc::clone(&store))?;
        let settings = OAuthSettings::from_config(spec, callback_port, client_name);
        let client_id = spec
            .oauth()
            .map_or_else(|| ema.client_id().to_owned(), |o| o.client_id().to_owned());
        Ok(Self {
            creds: OAuthCredentials::new(key.clone(), spec.url(), settings, store),
            idp,
            client_id,
            gate: tokio::sync::Mutex::new(()),
        })
    }

    /// Exchanges again unless another task already replaced `seen`.
    async fn exchange(
        &self,
        server: &McpServerKey,
        seen: Option<&Secret>,
    ) -> Result<Secret, CredentialsError> {
        let _one = self.gate.lock().await;
        if let Ok(token) = self.creds.access_token().await
            && Some(&token) != seen
        {
            return Ok(token);
        }
        let grant = self
            .idp
            .grant(self.client_id.clone())
            .await
            .map_err(|e| convert(server, e))?;
        self.creds
            .login_enterprise(grant)
            .await
            .map_err(|e| convert(server, e))?;
        tracing::debug!(server = %server, "enterprise-managed access token exchanged");
        self.creds
            .access_token()
            .await
            .map_err(|e| convert(server, e))
    }
}

/// An IdP that refuses (or an enterprise login that is missing or expired) needs the
/// enterprise login again; other failures are retryable.
fn convert(server: &McpServerKey, e: AuthError) -> CredentialsError {
    if e.is_auth_required() {
        CredentialsError::EnterpriseReloginRequired {
            server: server.clone(),
            source: Some(Arc::new(e)),
        }
    } else {
        CredentialsError::Unavailable {
            server: server.clone(),
            detail: e.to_string(),
            source: Some(Arc::new(e)),
        }
    }
}

impl AuthHeaderProvider for EmaProvider {
    fn authorization<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            match self.creds.access_token().await {
                Ok(token) => Ok(Some(token)),
                // None stored, or expired (no refresh token): exchange.
                Err(e) if e.is_auth_required() => self.exchange(server, None).await.map(Some),
                Err(e) => Err(convert(server, e)),
            }
        })
    }

    fn refresh_after_unauthorized<'a>(
        &'a self,
        server: &'a McpServerKey,
        rejected: Option<&'a Secret>,
        _challenge: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move { self.exchange(server, rejected).await.map(Some) })
    }

    fn dpop_proof<'a>(
        &'a self,
        server: &'a McpServerKey,
        method: &'a str,
        url: &'a str,
        token: &'a Secret,
        nonce: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            self.creds
                .dpop_proof(method, url, token, nonce)
                .await
                .map_err(|e| convert(server, e))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::sync::Arc;

    use mcp_auth::MemoryStore;
    use mcp_catalog::{AuthMode, EmaConfig, HttpConfig};

    use super::EmaProvider;

    #[test]
    fn the_idp_gets_the_catalogs_callback_port_and_the_hosts_client_name() {
        let ema = EmaConfig::new("https://idp.example", "idp-client");
        let spec = HttpConfig::new("https://tickets.example/mcp")
            .with_auth(AuthMode::Ema)
            .with_ema(ema.clone());
        let key = "tickets".parse().unwrap();
        let store = Arc::new(MemoryStore::new());
        let provider =
            EmaProvider::for_server(&key, &spec, &ema, (Some(8765), "host-app"), store).unwrap();
        let idp = provider.idp.settings();
        assert_eq!(idp.callback_port, Some(8765));
        assert_eq!(idp.client_name, "host-app");
        assert_eq!(idp.client_id.as_deref(), Some("idp-client"));
        let server = provider.creds.settings();
        assert_eq!(server.callback_port, Some(8765));
        assert_eq!(server.client_name, "host-app");
    }
}

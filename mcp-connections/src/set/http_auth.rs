//! What a set needs to connect to an HTTP server of its catalog: the target (URL,
//! headers) and where its `Authorization` header comes from (the host's provider, a bearer
//! token variable, stored OAuth credentials, enterprise-managed authorization).

use std::sync::Arc;

use mcp_catalog::HttpConfig;
use mcp_client::{AuthHeaderProvider, BearerEnvVar, HttpTarget, StartupFailure};
use mcp_key::McpServerKey;

impl crate::set::inner::SetInner {
    /// The target of HTTP server `key`: its catalog entry with this set's credentials.
    pub(crate) fn http_target(
        &self,
        key: &McpServerKey,
        spec: &HttpConfig,
        legacy_sse: bool,
    ) -> Result<HttpTarget, StartupFailure> {
        Ok(HttpTarget::from_config(key, spec, &self.options.env)?
            .with_auth(self.auth_provider(key, spec))
            .with_legacy_sse(legacy_sse))
    }

    pub(crate) fn auth_provider(
        &self,
        key: &McpServerKey,
        spec: &HttpConfig,
    ) -> Option<Arc<dyn AuthHeaderProvider>> {
        if let Some(p) = self.options.auth.get(key) {
            return Some(Arc::clone(p));
        }
        if let Some(var) = spec.bearer_token_env_var() {
            return Some(Arc::new(BearerEnvVar::with_lookup(
                var.to_owned(),
                self.options.env.clone(),
            )));
        }
        // A configured Authorization header is sent as is.
        if spec
            .http_headers()
            .keys()
            .chain(spec.env_http_headers().keys())
            .any(|h| h.eq_ignore_ascii_case("authorization"))
        {
            return None;
        }
        // Enterprise-managed authorization: exchanged per server after one IdP login.
        #[cfg(feature = "oauth")]
        if let (mcp_catalog::AuthMode::Ema, Some(ema), Some(store)) =
            (spec.auth(), spec.ema(), &self.options.credential_store)
        {
            match crate::auth::ema::EmaProvider::for_server(
                key,
                spec,
                ema,
                (
                    self.catalog.oauth_callback_port(),
                    &self.options.client.client_info().name,
                ),
                Arc::clone(store),
            ) {
                Ok(provider) => return Some(Arc::new(provider)),
                Err(e) => {
                    tracing::warn!(server = %key, "enterprise-managed authorization unusable: {e}");
                    return None;
                }
            }
        }
        // Stored OAuth credentials, unless `auth` is `none` or `ema`.
        #[cfg(feature = "oauth")]
        {
            let oauth = matches!(
                spec.auth(),
                mcp_catalog::AuthMode::Auto | mcp_catalog::AuthMode::OAuth
            );
            match (&self.options.credential_store, oauth) {
                (Some(store), true) => {
                    let settings = mcp_auth::OAuthSettings::from_config(
                        spec,
                        self.catalog.oauth_callback_port(),
                        self.options.client.client_info().name.clone(),
                    );
                    Some(Arc::new(crate::auth::oauth::OAuthProvider::for_server(
                        key,
                        spec.url(),
                        settings,
                        Arc::clone(store),
                        self.options.login_agent.clone(),
                    )))
                }
                _ => None,
            }
        }
        // Without the OAuth client a server that wants a login answers 401: `login_required`.
        #[cfg(not(feature = "oauth"))]
        None
    }
}

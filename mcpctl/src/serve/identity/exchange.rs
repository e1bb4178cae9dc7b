//! [`ExchangeAuth`]: an `exchange` server's `Authorization` for one set: the caller's
//! latest gateway token exchanged (RFC 8693) through the hub's exchanger of that server.
//! [`forget_caller`]: an administrator's revocation of a caller drops the exchanged
//! tokens cached for the caller's latest token, so none obtained before it goes upstream
//! again (the next call exchanges anew, and fails if the token endpoint no longer takes
//! the caller's token).

use std::sync::Arc;

use mcp_auth::TokenExchanger;
use mcp_connections::{AuthHeaderProvider, BoxFuture, CredentialsError};
use mcp_key::{McpServerKey, Secret};

use super::{CallerSource, Tokens, unavailable};

/// The exchanged token of the set's caller for one `exchange` server.
pub(crate) struct ExchangeAuth {
    exchanger: Result<TokenExchanger, String>,
    caller: CallerSource,
    tokens: Arc<Tokens>,
}

impl ExchangeAuth {
    /// Exchanges through `exchanger` (or fails with why it could not be made) the latest
    /// token in `tokens` of the caller `caller` names.
    pub(crate) fn new(
        exchanger: Result<TokenExchanger, String>,
        caller: CallerSource,
        tokens: Arc<Tokens>,
    ) -> Self {
        Self {
            exchanger,
            caller,
            tokens,
        }
    }

    /// The exchanger and the caller's latest token, or why there are none.
    async fn parts(
        &self,
        server: &McpServerKey,
    ) -> Result<(&TokenExchanger, Secret), CredentialsError> {
        let exchanger = self.exchanger.as_ref().map_err(|why| {
            unavailable(server, format!("its token exchange cannot be used: {why}"))
        })?;
        let caller = self.caller.caller(&self.tokens, server).await?;
        let token = self.tokens.latest(caller.id()).ok_or_else(|| {
            unavailable(
                server,
                "upstream_identity = \"exchange\" needs the caller's own access token, and this caller presented none (serve with [gateway.oauth])",
            )
        })?;
        Ok((exchanger, token))
    }
}

/// Drops, in every exchanger of `exchangers`, the exchanged tokens cached for the latest
/// token of the caller `caller` (by id) in `tokens`. Tokens it presented before its latest
/// one are not known here (the hub keeps one per caller); their cached exchanges expire
/// with them.
pub(crate) fn forget_caller(exchangers: &[TokenExchanger], tokens: &Tokens, caller: &str) {
    let Some(token) = tokens.latest(caller) else {
        return;
    };
    for exchanger in exchangers {
        exchanger.invalidate(&token);
    }
}

/// An exchange failure of `server`, naming the token endpoint's answer (never a token).
fn failed(server: &McpServerKey, e: mcp_auth::AuthError) -> CredentialsError {
    let detail = if e.is_caller_token_rejected() {
        "the token endpoint refused the caller's token: sign in to the gateway again, then retry"
            .to_owned()
    } else if e.is_exchange_refused() {
        "the token endpoint refused the exchange: check [mcp_servers.X.token_exchange]".to_owned()
    } else {
        "the token exchange failed; check that its token endpoint is up, then retry".to_owned()
    };
    CredentialsError::Unavailable {
        server: server.clone(),
        detail,
        source: Some(Arc::new(e)),
    }
}

impl AuthHeaderProvider for ExchangeAuth {
    fn authorization<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            let (exchanger, token) = self.parts(server).await?;
            exchanger
                .exchange(&token)
                .await
                .map(Some)
                .map_err(|e| failed(server, e))
        })
    }

    fn refresh_after_unauthorized<'a>(
        &'a self,
        server: &'a McpServerKey,
        rejected: Option<&'a Secret>,
        _challenge: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            let (exchanger, token) = self.parts(server).await?;
            let fresh = match rejected {
                Some(rejected) => exchanger.after_unauthorized(&token, rejected).await,
                None => exchanger.exchange(&token).await,
            };
            fresh.map(Some).map_err(|e| failed(server, e))
        })
    }
}

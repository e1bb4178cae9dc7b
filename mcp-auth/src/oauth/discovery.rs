//! Discovery: protected-resource metadata, then authorization-server metadata, through
//! rmcp's [`AuthorizationManager`], with the legacy issuer rule of [`super::legacy`].

use mcp_key::McpServerKey;
use rmcp::transport::auth::{
    AuthError as RmcpAuthError, AuthorizationManager, AuthorizationMetadata,
    ProtectedResourceMetadataInvalidReason,
};
use url::Url;

use super::http::check_advertised_endpoint;
use super::legacy::accept_legacy_issuer;
use super::settings::OAuthSettings;
use crate::error::AuthError;

/// An rmcp manager with metadata set, and what we need to remember from discovery.
pub(crate) struct Discovered {
    pub(crate) manager: AuthorizationManager,
    pub(crate) metadata: AuthorizationMetadata,
}

/// Maps an rmcp error to ours without copying its text into our message.
pub(crate) fn map_rmcp(server: &McpServerKey, err: RmcpAuthError) -> AuthError {
    match err {
        RmcpAuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        } => AuthError::IssuerMismatch {
            server: server.clone(),
            expected: expected_issuer,
            received: received_issuer,
        },
        RmcpAuthError::ProtectedResourceMetadataInvalid { ref reason, .. }
            if matches!(
                **reason,
                ProtectedResourceMetadataInvalidReason::ResourceMismatch { .. }
            ) =>
        {
            AuthError::ResourceMismatch {
                server: server.clone(),
                source: Some(Box::new(err)),
            }
        }
        RmcpAuthError::RegistrationFailed(_) => AuthError::Registration {
            server: server.clone(),
            detail: "the authorization server did not register this client".to_owned(),
            source: Some(Box::new(err)),
        },
        RmcpAuthError::HttpError(_) | RmcpAuthError::DiscoveryRequestFailed { .. } => {
            AuthError::Http {
                server: server.clone(),
                what: "an OAuth endpoint".to_owned(),
                source: Some(Box::new(err)),
            }
        }
        RmcpAuthError::PkceUnsupported => AuthError::Discovery {
            server: server.clone(),
            detail: "the authorization server does not support PKCE with S256".to_owned(),
            source: Some(Box::new(err)),
        },
        RmcpAuthError::TokenRefreshRejected(_) => AuthError::ReloginRequired {
            server: server.clone(),
        },
        other => AuthError::Discovery {
            server: server.clone(),
            detail: "no usable OAuth metadata".to_owned(),
            source: Some(Box::new(other)),
        },
    }
}

/// A fresh rmcp manager for `url`.
pub(crate) async fn new_manager(
    server: &McpServerKey,
    url: &str,
    settings: &OAuthSettings,
) -> Result<AuthorizationManager, AuthError> {
    let manager = if settings.allow_private_addresses {
        AuthorizationManager::new_allowing_private_addresses(url).await
    } else {
        AuthorizationManager::new(url).await
    };
    manager.map_err(|e| map_rmcp(server, e))
}

/// Runs discovery for `url` (starting from the 401 `challenge` when there is one).
pub(crate) async fn discover(
    server: &McpServerKey,
    http: &reqwest::Client,
    url: &str,
    challenge: Option<&str>,
    settings: &OAuthSettings,
) -> Result<Discovered, AuthError> {
    let mcp_url = Url::parse(url).map_err(|_| AuthError::Config {
        server: server.clone(),
        detail: format!("`{url}` is not a valid URL"),
    })?;
    let mut manager = new_manager(server, url, settings).await?;
    let metadata = match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => resolution.metadata,
        Err(RmcpAuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) => {
            accept_legacy_issuer(
                server,
                http,
                &mcp_url,
                challenge,
                &expected_issuer,
                &received_issuer,
            )
            .await?
        }
        Err(e) => return Err(map_rmcp(server, e)),
    };
    let advertised = |what: &str, endpoint: &str| {
        check_advertised_endpoint(
            server,
            what,
            endpoint,
            &mcp_url,
            settings.allow_private_addresses,
        )
    };
    advertised("authorization endpoint", &metadata.authorization_endpoint)?;
    advertised("token endpoint", &metadata.token_endpoint)?;
    if let Some(registration) = &metadata.registration_endpoint {
        advertised("registration endpoint", registration)?;
    }
    manager.set_metadata(metadata.clone());
    Ok(Discovered { manager, metadata })
}

/// The token endpoint auth method rmcp uses for a client with a secret, given the
/// server's metadata: `client_secret_post` only when the server supports post but not
/// basic.
pub(crate) fn secret_auth_method(metadata: &AuthorizationMetadata) -> &'static str {
    let methods: Vec<&str> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|m| m.as_str()).collect())
        .unwrap_or_default();
    if methods.contains(&"client_secret_post") && !methods.contains(&"client_secret_basic") {
        "client_secret_post"
    } else {
        "client_secret_basic"
    }
}

/// Does the server accept client ID metadata document URLs (SEP-991)?
pub(crate) fn supports_client_metadata_documents(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

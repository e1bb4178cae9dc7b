//! [`StoredCredentials`]: the record kept for one server (its OAuth credentials, or a
//! host's [`StoredSecret`]).

use mcp_key::Secret;
use serde::{Deserialize, Serialize};

use crate::store::{DpopKey, StoredSecret};

/// What is stored for one server: its OAuth client identity and tokens.
///
/// Every token field is a [`Secret`], so `Debug` never shows one. The serialized form (JSON
/// in the file and keyring stores) holds the plain values: keep it out of logs. Absent
/// optional fields are omitted when serialized; unknown fields are ignored when read.
///
/// ```
/// use mcp_auth::StoredCredentials;
/// use mcp_key::Secret;
///
/// let creds = StoredCredentials::new("client-1")
///     .with_access_token(Secret::new("at-secret"))
///     .with_expires_at(1_000);
/// assert!(creds.expires_within(30, 980));
/// assert!(!creds.expires_within(30, 900));
/// assert!(!format!("{creds:?}").contains("at-secret"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredCredentials {
    /// The OAuth client id (configured, from a metadata document, or registered).
    pub client_id: String,
    /// The client secret, when registration returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// The current access token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token: Option<Secret>,
    /// The refresh token, when the server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// Scopes granted (or requested, when the server did not say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// When the access token expires, in absolute unix seconds; `None` when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// Token endpoint used to refresh, so refreshing needs no rediscovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The authorization server's issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// How the client authenticates at the token endpoint (`none`, `client_secret_basic`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The resource indicator (RFC 8707) the tokens were issued for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The DPoP key (RFC 9449) the tokens are bound to; `None` for Bearer tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<DpopKey>,
    /// On a logout marker ([`crate::StoreKey::logout_marker`]): when the logout happened, in
    /// milliseconds since the Unix epoch. A login begun before it stores nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logged_out_at_ms: Option<u64>,
    /// Set only on a record that keeps a host's [`StoredSecret`] instead of OAuth
    /// credentials ([`StoredSecret::to_record`]); such a record has no token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_secret: Option<StoredSecret>,
}

impl StoredCredentials {
    /// A record with only a client id.
    pub fn new(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            access_token: None,
            refresh_token: None,
            scopes: Vec::new(),
            expires_at: None,
            token_endpoint: None,
            issuer: None,
            token_endpoint_auth_method: None,
            resource: None,
            dpop_key: None,
            logged_out_at_ms: None,
            stored_secret: None,
        }
    }

    /// A logout marker: the logout happened at `unix_ms`.
    #[must_use]
    pub fn logout_marker(unix_ms: u64) -> Self {
        let mut marker = Self::new("");
        marker.logged_out_at_ms = Some(unix_ms);
        marker
    }

    /// Binds the tokens to a DPoP key.
    #[must_use]
    pub fn with_dpop_key(mut self, key: DpopKey) -> Self {
        self.dpop_key = Some(key);
        self
    }

    /// Sets the client secret.
    #[must_use]
    pub fn with_client_secret(mut self, secret: Secret) -> Self {
        self.client_secret = Some(secret);
        self
    }

    /// Sets the access token.
    #[must_use]
    pub fn with_access_token(mut self, token: Secret) -> Self {
        self.access_token = Some(token);
        self
    }

    /// Sets the refresh token.
    #[must_use]
    pub fn with_refresh_token(mut self, token: Secret) -> Self {
        self.refresh_token = Some(token);
        self
    }

    /// Sets the scopes.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the absolute expiry time (unix seconds).
    #[must_use]
    pub fn with_expires_at(mut self, unix_secs: u64) -> Self {
        self.expires_at = Some(unix_secs);
        self
    }

    /// Sets the token endpoint.
    #[must_use]
    pub fn with_token_endpoint(mut self, url: impl Into<String>) -> Self {
        self.token_endpoint = Some(url.into());
        self
    }

    /// Sets the issuer.
    #[must_use]
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets the token endpoint authentication method.
    #[must_use]
    pub fn with_token_endpoint_auth_method(mut self, method: impl Into<String>) -> Self {
        self.token_endpoint_auth_method = Some(method.into());
        self
    }

    /// Sets the resource indicator.
    #[must_use]
    pub fn with_resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// True when the access token expires within `secs` seconds of `now_unix` (or already
    /// has). A record without an expiry time never "expires within".
    pub fn expires_within(&self, secs: u64, now_unix: u64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_unix.saturating_add(secs))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn json_omits_absent_fields_and_round_trips() {
        let creds = StoredCredentials::new("c")
            .with_access_token(Secret::new("at"))
            .with_scopes(["read", "write"])
            .with_expires_at(42);
        let json = serde_json::to_value(&creds).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "client_id": "c", "access_token": "at", "scopes": ["read", "write"], "expires_at": 42
            })
        );
        let back: StoredCredentials = serde_json::from_value(json).unwrap();
        assert_eq!(back, creds);
    }

    #[test]
    fn reads_records_with_unknown_fields() {
        let back: StoredCredentials =
            serde_json::from_str(r#"{"client_id":"c","from_the_future":1}"#).unwrap();
        assert_eq!(back, StoredCredentials::new("c"));
    }

    #[test]
    fn expiry_window() {
        let creds = StoredCredentials::new("c").with_expires_at(100);
        assert!(creds.expires_within(0, 100));
        assert!(creds.expires_within(30, 70));
        assert!(!creds.expires_within(30, 69));
        assert!(creds.expires_within(u64::MAX, u64::MAX));
        assert!(!StoredCredentials::new("c").expires_within(30, 1_000));
    }

    #[test]
    fn debug_redacts_every_secret() {
        let creds = StoredCredentials::new("c")
            .with_client_secret(Secret::new("planted-cs"))
            .with_access_token(Secret::new("planted-at"))
            .with_refresh_token(Secret::new("planted-rt"));
        let text = format!("{creds:?} {creds:#?}");
        assert!(!text.contains("planted"), "{text}");
    }
}

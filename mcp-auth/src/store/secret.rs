//! [`StoredSecret`]: a value a host keeps for one configuration entry (an API key typed
//! at install time, say), in a credential store beside OAuth records but never one.

use mcp_key::Secret;
use serde::{Deserialize, Serialize};

use crate::store::StoredCredentials;

/// The `client_id` of the records older hosts kept a secret in before [`StoredSecret`]
/// existed: an OAuth-shaped record with the value as its `access_token`.
/// [`StoredSecret::from_record`] still reads them.
pub const LEGACY_SECRET_CLIENT_ID: &str = "mcpctl-secret";

/// A secret kept for one server's configuration entry (the value of an environment
/// variable the entry refers to, as mcpctl's `${secret:NAME}`), with the configuration
/// file it is bound to: a host gives it only to the entry of that file, never to another
/// file naming a server the same (a cloned project, a copied entry).
///
/// It is not an OAuth credential: it has no client and no token, and it travels in a
/// [`StoredCredentials`] record of its own kind ([`StoredSecret::to_record`], read back
/// with [`StoredSecret::from_record`]). `Debug` never shows the value; the serialized form
/// (JSON in the file and keyring stores) holds it plain, like every stored token.
///
/// ```
/// use mcp_auth::StoredSecret;
/// use mcp_key::Secret;
///
/// let secret = StoredSecret::new(Secret::new("api-key-1"), "/work/project/mcp.toml");
/// let record = secret.to_record();
/// assert_eq!(record.access_token, None);
/// assert_eq!(StoredSecret::from_record(&record, "/work/project/mcp.toml"), Some(secret));
/// assert_eq!(StoredSecret::from_record(&record, "/work/clone/mcp.toml"), None);
/// assert!(!format!("{record:?}").contains("api-key-1"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredSecret {
    /// The value.
    pub value: Secret,
    /// The configuration file whose entry refers to the secret, as the host names it (an
    /// absolute path, say): compared as text by [`StoredSecret::from_record`].
    pub config_file: String,
}

impl StoredSecret {
    /// The secret `value` for the entry of `config_file`.
    pub fn new(value: Secret, config_file: impl Into<String>) -> Self {
        Self {
            value,
            config_file: config_file.into(),
        }
    }

    /// The record that keeps this secret in a [`crate::CredentialStore`]: an empty client
    /// id, no token, only the secret (in [`StoredCredentials::stored_secret`]).
    pub fn to_record(&self) -> StoredCredentials {
        let mut record = StoredCredentials::new("");
        record.stored_secret = Some(self.clone());
        record
    }

    /// The secret `record` keeps for the entry of `config_file`: one written by
    /// [`StoredSecret::to_record`] for that file, or an older record
    /// ([`LEGACY_SECRET_CLIENT_ID`] with the value as its access token, bound to its file
    /// by its key alone; read as bound to `config_file`). `None` for a secret of another
    /// file, an OAuth record, or a record without a value.
    pub fn from_record(record: &StoredCredentials, config_file: &str) -> Option<Self> {
        if let Some(secret) = &record.stored_secret {
            return (secret.config_file == config_file).then(|| secret.clone());
        }
        if record.client_id == LEGACY_SECRET_CLIENT_ID {
            let value = record.access_token.clone()?;
            return Some(Self::new(value, config_file));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn its_record_is_a_kind_of_its_own_and_round_trips_as_json() {
        let secret = StoredSecret::new(Secret::new("v-1"), "/p/mcp.toml");
        let json = serde_json::to_value(secret.to_record()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "client_id": "",
                "stored_secret": {"value": "v-1", "config_file": "/p/mcp.toml"}
            })
        );
        let back: StoredCredentials = serde_json::from_value(json).unwrap();
        assert_eq!(
            StoredSecret::from_record(&back, "/p/mcp.toml"),
            Some(secret)
        );
    }

    #[test]
    fn an_older_record_is_read_and_an_oauth_record_is_not_a_secret() {
        let legacy: StoredCredentials =
            serde_json::from_str(r#"{"client_id": "mcpctl-secret", "access_token": "old-value"}"#)
                .unwrap();
        assert_eq!(
            StoredSecret::from_record(&legacy, "/p/mcp.toml"),
            Some(StoredSecret::new(Secret::new("old-value"), "/p/mcp.toml"))
        );
        let without_value = StoredCredentials::new(LEGACY_SECRET_CLIENT_ID);
        assert_eq!(
            StoredSecret::from_record(&without_value, "/p/mcp.toml"),
            None
        );
        let oauth = StoredCredentials::new("client-1").with_access_token(Secret::new("at"));
        assert_eq!(StoredSecret::from_record(&oauth, "/p/mcp.toml"), None);
    }

    #[test]
    fn debug_never_shows_the_value() {
        let secret = StoredSecret::new(Secret::new("planted-value"), "/p/mcp.toml");
        let text = format!("{secret:?} {secret:#?} {:?}", secret.to_record());
        assert!(!text.contains("planted"), "{text}");
        assert!(text.contains("/p/mcp.toml"), "{text}");
    }
}

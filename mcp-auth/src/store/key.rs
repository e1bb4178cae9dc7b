//! [`StoreKey`]: which record in a credential store belongs to which server.

use std::fmt;

use mcp_key::{Fingerprint, McpServerKey};

/// Hash domain for server URLs; changing it orphans every stored record.
const URL_DOMAIN: &str = "mcp-auth/store-key/url/v1";

/// Number of hex digits of the URL hash kept in the key.
const URL_HASH_LEN: usize = 8;

/// Identifies one server's credentials in a store: the server key plus a short hash of its
/// URL, so two servers with the same name and different URLs never share tokens.
///
/// Text form ([`StoreKey::as_str`]), used as the keyring account and the file's map key:
/// `name|hash` for host-wide servers and `name@environment|hash` for environment-scoped
/// ones. Server names contain neither `@` nor `|`, so a scoped key never equals an unscoped
/// one. The URL is hashed exactly as configured (no normalization): editing it means
/// logging in again.
///
/// ```
/// use mcp_auth::StoreKey;
/// use mcp_key::McpServerKey;
///
/// let local = StoreKey::new(&"tickets".parse::<McpServerKey>()?, "https://t.example/mcp");
/// let devbox = StoreKey::new(&"tickets@devbox".parse::<McpServerKey>()?, "https://t.example/mcp");
/// assert!(local.as_str().starts_with("tickets|"));
/// assert!(devbox.as_str().starts_with("tickets@devbox|"));
/// assert_ne!(local, devbox);
/// # Ok::<(), mcp_key::KeyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoreKey(String);

impl StoreKey {
    /// The key for `server` reached at `url`.
    pub fn new(server: &McpServerKey, url: &str) -> Self {
        Self(format!("{server}|{}", url_hash(url)))
    }

    /// The reserved key for an enterprise identity provider's login (enterprise-managed
    /// authorization), identified by its issuer URL. Text form `#enterprise|hash`: `#` never
    /// occurs in server names, so it cannot collide with a server's key.
    pub fn enterprise_idp(issuer: &str) -> Self {
        Self(format!("#enterprise|{}", url_hash(issuer)))
    }

    /// The key of this record's logout marker: written by a logout that must also stop
    /// logins still pending in other processes (`logout --enterprise`). Text form
    /// `#logout|` followed by this key's text; `#` never occurs in server names.
    #[must_use]
    pub fn logout_marker(&self) -> Self {
        Self(format!("#logout|{}", self.0))
    }

    /// The text form.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StoreKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn url_hash(url: &str) -> String {
    let mut hex = Fingerprint::builder(URL_DOMAIN)
        .str("url", url)
        .finish()
        .to_hex();
    hex.truncate(URL_HASH_LEN);
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(server: &str, url: &str) -> StoreKey {
        StoreKey::new(&server.parse().unwrap(), url)
    }

    #[test]
    fn text_form_is_name_then_url_hash() {
        let k = key("tickets", "https://t.example/mcp");
        let (name, hash) = k.as_str().split_once('|').unwrap();
        assert_eq!(name, "tickets");
        assert_eq!(hash.len(), URL_HASH_LEN);
        assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(k.to_string(), k.as_str());
        // Stable across runs: stored records must stay findable.
        assert_eq!(k, key("tickets", "https://t.example/mcp"));
    }

    #[test]
    fn url_name_and_environment_all_matter() {
        let base = key("tickets", "https://t.example/mcp");
        assert_ne!(base, key("tickets", "https://t.example/mcp2"));
        assert_ne!(base, key("other", "https://t.example/mcp"));
        assert_ne!(base, key("tickets@local", "https://t.example/mcp"));
        assert_ne!(
            key("tickets@a", "https://t.example/mcp"),
            key("tickets@b", "https://t.example/mcp")
        );
        assert!(
            key("tickets@devbox", "u")
                .as_str()
                .starts_with("tickets@devbox|")
        );
    }

    #[test]
    fn enterprise_key_is_reserved() {
        let k = StoreKey::enterprise_idp("https://idp.example");
        assert!(k.as_str().starts_with("#enterprise|"));
        assert_ne!(k, StoreKey::enterprise_idp("https://idp2.example"));
    }
}

//! The gateway's sealing keys ([`VaultKey`], [`VaultKeys`]) and the AES-256-GCM sealing of
//! one row.

use std::fmt;

use aes_gcm::Aes256Gcm;
use aes_gcm::aead::{Aead, KeyInit, Payload};

use super::error::VaultError;

/// Bytes in a [`VaultKey`] (AES-256).
pub const VAULT_KEY_LEN: usize = 32;

/// Bytes in a row's nonce (96 bits, random per write).
pub const VAULT_NONCE_LEN: usize = 12;

/// Longest key id, in bytes.
pub const MAX_KEY_ID_LEN: usize = 64;

/// The domain of the associated data, so a ciphertext of another protocol or version
/// never opens as a row.
const AAD_DOMAIN: &[u8] = b"mcp-auth credential vault v1";

/// One AES-256 key of the gateway, with the id stored beside each row it seals.
///
/// `Debug` shows the id only.
///
/// ```
/// use mcp_auth::VaultKey;
///
/// let key = VaultKey::new("2026-12", [7; 32])?;
/// assert_eq!(key.id(), "2026-12");
/// assert!(!format!("{key:?}").contains("7, 7"));
/// assert!(VaultKey::from_slice("short", &[1; 16]).unwrap_err().to_string().contains("32 bytes"));
/// assert!(VaultKey::new("no spaces", [7; 32]).is_err());
/// # Ok::<(), mcp_auth::VaultError>(())
/// ```
#[derive(Clone)]
pub struct VaultKey {
    id: String,
    key: [u8; VAULT_KEY_LEN],
}

impl fmt::Debug for VaultKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VaultKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl VaultKey {
    /// A key from its 32 bytes. The id is 1 to [`MAX_KEY_ID_LEN`] ASCII letters, digits,
    /// `.`, `_` or `-` (e.g. the month it was made).
    ///
    /// # Errors
    /// [`VaultError::Invalid`] for an invalid id.
    pub fn new(id: impl Into<String>, key: [u8; VAULT_KEY_LEN]) -> Result<Self, VaultError> {
        let id = id.into();
        check_key_id(&id)?;
        Ok(Self { id, key })
    }

    /// A key from a slice that must hold exactly [`VAULT_KEY_LEN`] bytes.
    ///
    /// # Errors
    /// [`VaultError::Invalid`] for an invalid id or a slice of another length.
    pub fn from_slice(id: impl Into<String>, key: &[u8]) -> Result<Self, VaultError> {
        let id = id.into();
        let key: [u8; VAULT_KEY_LEN] = key.try_into().map_err(|_| VaultError::Invalid {
            detail: format!(
                "key `{id}` has {} bytes; an AES-256 key has 32 bytes",
                key.len()
            ),
        })?;
        Self::new(id, key)
    }

    /// A new random key from the operating system's generator.
    ///
    /// # Errors
    /// [`VaultError::Invalid`] for an invalid id; [`VaultError::Random`] when the
    /// generator fails.
    pub fn generate(id: impl Into<String>) -> Result<Self, VaultError> {
        let mut key = [0; VAULT_KEY_LEN];
        getrandom::fill(&mut key).map_err(|_| VaultError::Random)?;
        Self::new(id, key)
    }

    /// The key id stored beside each row this key seals.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The key's bytes (to save a generated key where the gateway keeps its secrets).
    pub fn expose_bytes(&self) -> &[u8; VAULT_KEY_LEN] {
        &self.key
    }

    fn cipher(&self) -> Result<Aes256Gcm, VaultError> {
        Aes256Gcm::new_from_slice(&self.key).map_err(|_| VaultError::Invalid {
            detail: format!("key `{}` is not an AES-256 key", self.id),
        })
    }
}

fn check_key_id(id: &str) -> Result<(), VaultError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_KEY_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(VaultError::Invalid {
            detail: format!(
                "key id `{}` is not valid: use 1 to {MAX_KEY_ID_LEN} ASCII letters, digits, \
                 `.`, `_` or `-`",
                id.escape_debug()
            ),
        })
    }
}

/// The gateway's keys: the current one, which seals every write, and previous ones, which
/// still open rows sealed before a rotation (until [`CredentialVault::reseal`] or the next
/// write of each row moves it to the current key).
///
/// [`CredentialVault::reseal`]: crate::CredentialVault::reseal
///
/// ```
/// use mcp_auth::{VaultKey, VaultKeys};
///
/// let keys = VaultKeys::new(VaultKey::new("k2", [2; 32])?)
///     .with_previous(VaultKey::new("k1", [1; 32])?)?;
/// assert_eq!(keys.current_id(), "k2");
/// assert_eq!(keys.ids().collect::<Vec<_>>(), ["k2", "k1"]);
/// // One id, one key.
/// assert!(keys.with_previous(VaultKey::new("k1", [3; 32])?).is_err());
/// # Ok::<(), mcp_auth::VaultError>(())
/// ```
#[derive(Clone, Debug)]
pub struct VaultKeys {
    current: VaultKey,
    previous: Vec<VaultKey>,
}

impl VaultKeys {
    /// One key, current.
    pub fn new(current: VaultKey) -> Self {
        Self {
            current,
            previous: Vec::new(),
        }
    }

    /// Add a previous key (rows it sealed stay readable).
    ///
    /// # Errors
    /// [`VaultError::Invalid`] when a key with that id is already present.
    pub fn with_previous(mut self, key: VaultKey) -> Result<Self, VaultError> {
        if self.ids().any(|id| id == key.id) {
            return Err(VaultError::Invalid {
                detail: format!(
                    "two keys have the id `{}`; give each key its own id",
                    key.id
                ),
            });
        }
        self.previous.push(key);
        Ok(self)
    }

    /// The id of the key that seals writes.
    pub fn current_id(&self) -> &str {
        &self.current.id
    }

    /// Every key id, current first.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.current.id.as_str()).chain(self.previous.iter().map(|k| k.id.as_str()))
    }

    fn find(&self, id: &str) -> Option<&VaultKey> {
        std::iter::once(&self.current)
            .chain(&self.previous)
            .find(|key| key.id == id)
    }
}

/// Where a row lives: what its associated data binds.
#[derive(Clone, Copy, Debug)]
pub(super) struct RowKey<'a> {
    pub(super) caller: &'a str,
    pub(super) server: &'a str,
    pub(super) environment: &'a str,
}

impl RowKey<'_> {
    fn label(&self) -> String {
        if self.environment.is_empty() {
            self.server.to_owned()
        } else {
            format!("{}@{}", self.server, self.environment)
        }
    }

    /// The associated data: domain, key id, caller, server, environment, each with its
    /// length, so no two rows (or key ids) share one.
    fn aad(&self, key_id: &str) -> Vec<u8> {
        let mut aad = Vec::with_capacity(128);
        for part in [
            AAD_DOMAIN,
            key_id.as_bytes(),
            self.caller.as_bytes(),
            self.server.as_bytes(),
            self.environment.as_bytes(),
        ] {
            aad.extend_from_slice(&u32::try_from(part.len()).unwrap_or(u32::MAX).to_be_bytes());
            aad.extend_from_slice(part);
        }
        aad
    }

    pub(super) fn unknown_key(&self, key_id: &str) -> VaultError {
        VaultError::UnknownKey {
            caller: self.caller.to_owned(),
            server: self.label(),
            key_id: key_id.to_owned(),
        }
    }

    pub(super) fn corrupt(&self, detail: impl Into<String>) -> VaultError {
        VaultError::Corrupt {
            caller: self.caller.to_owned(),
            server: self.label(),
            detail: detail.into(),
        }
    }
}

/// A sealed row: the key id, the nonce and the ciphertext (with its tag).
#[derive(Debug)]
pub(super) struct Sealed {
    pub(super) key_id: String,
    pub(super) nonce: Vec<u8>,
    pub(super) ciphertext: Vec<u8>,
}

impl VaultKeys {
    /// Seal `plaintext` for `row` under the current key with a fresh random nonce.
    pub(super) fn seal(&self, row: RowKey<'_>, plaintext: &[u8]) -> Result<Sealed, VaultError> {
        let key = &self.current;
        let mut nonce = [0; VAULT_NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|_| VaultError::Random)?;
        let aad = row.aad(&key.id);
        let ciphertext = key
            .cipher()?
            .encrypt(
                &nonce.into(),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .map_err(|_| row.corrupt("the record could not be encrypted"))?;
        Ok(Sealed {
            key_id: key.id.clone(),
            nonce: nonce.to_vec(),
            ciphertext,
        })
    }

    /// Open a row sealed under `sealed.key_id`.
    pub(super) fn open(&self, row: RowKey<'_>, sealed: &Sealed) -> Result<Vec<u8>, VaultError> {
        let key = self
            .find(&sealed.key_id)
            .ok_or_else(|| row.unknown_key(&sealed.key_id))?;
        let nonce: [u8; VAULT_NONCE_LEN] = sealed.nonce.as_slice().try_into().map_err(|_| {
            row.corrupt(format!(
                "its nonce has {} bytes instead of {VAULT_NONCE_LEN}",
                sealed.nonce.len()
            ))
        })?;
        let aad = row.aad(&key.id);
        key.cipher()?
            .decrypt(
                &nonce.into(),
                Payload {
                    msg: &sealed.ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| VaultError::Decrypt {
                caller: row.caller.to_owned(),
                server: row.label(),
                key_id: key.id.clone(),
            })
    }
}

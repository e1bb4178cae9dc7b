//! Sign-ins in progress, shared by every gateway instance that opens the same vault: a
//! browser may open a sign-in's start page on one instance and bring its callback to
//! another.
//!
//! - A sign-in's state travels sealed ([`CredentialVault::seal_sign_in_state`]): opaque,
//!   URL-safe text that any instance holding the vault's keys opens
//!   ([`CredentialVault::open_sign_in_state`]), sealed with the same AES-256-GCM as the
//!   credential rows under the current key, its key id beside it. Nothing is written.
//! - What the start page sets up for the callback (a PKCE verifier, the registered client)
//!   is kept in a row sealed like a credential row ([`CredentialVault::start_sign_in`]):
//!   once per sign-in, whichever instance is first.
//! - The callback takes it ([`CredentialVault::finish_sign_in`]): once, whichever
//!   instance is first; a replay on any instance finds nothing.
//!
//! Rows are forgotten an hour after they expire.

use mcp_key::{hex_decode, hex_encode as hex};

use super::{CredentialVault, RowKey, Sealed, VaultError, now_ms, on_pool};

/// How long after its expiry a sign-in's row is kept (so instances whose clocks lag still
/// find it spent rather than new), in seconds.
const SIGN_IN_GRACE_SECS: u64 = 3600;

/// Longest sealed state [`CredentialVault::open_sign_in_state`] reads, in bytes.
const MAX_SIGN_IN_STATE_LEN: usize = 4096;

/// Longest sign-in id, in bytes.
const MAX_SIGN_IN_ID_LEN: usize = 128;

/// The associated data's "caller" of sealed states: a control character, so no credential
/// row (whose caller has none) shares it.
const STATE_DOMAIN: &str = "\u{1}sign-in state";
/// The same for the rows of started sign-ins (the row's "server" is the sign-in id).
const ROW_DOMAIN: &str = "\u{1}sign-in";

impl CredentialVault {
    /// Seal `body` (what a sign-in's state must carry) as URL-safe text that any gateway
    /// instance with this vault's keys opens with [`Self::open_sign_in_state`]. The body
    /// is encrypted and authenticated; it says nothing to whoever carries it.
    ///
    /// # Errors
    /// [`VaultError::Random`] when no nonce can be drawn; [`VaultError::Invalid`] when the
    /// sealed text would exceed 4096 bytes.
    pub fn seal_sign_in_state(&self, body: &[u8]) -> Result<String, VaultError> {
        let sealed = self.keys.seal(state_row(), body)?;
        let mut text = hex(&sealed.nonce);
        text.push_str(&hex(&sealed.ciphertext));
        text.push('.');
        text.push_str(&sealed.key_id);
        if text.len() > MAX_SIGN_IN_STATE_LEN {
            return Err(VaultError::Invalid {
                detail: format!(
                    "a sign-in state of {} bytes would exceed {MAX_SIGN_IN_STATE_LEN}",
                    body.len()
                ),
            });
        }
        Ok(text)
    }

    /// The body [`Self::seal_sign_in_state`] sealed into `state`, with this vault's keys
    /// (the current one or a previous one).
    ///
    /// # Errors
    /// [`VaultError::Invalid`] when `state` is not one this vault's keys sealed (altered,
    /// made up, sealed by a gateway with other keys, or too long).
    pub fn open_sign_in_state(&self, state: &str) -> Result<Vec<u8>, VaultError> {
        let invalid = || VaultError::Invalid {
            detail: "the sign-in state was not sealed with this vault's keys (altered, made up, \
                     or from a gateway with other keys)"
                .to_owned(),
        };
        if state.len() > MAX_SIGN_IN_STATE_LEN {
            return Err(invalid());
        }
        let (sealed, key_id) = state.split_once('.').ok_or_else(invalid)?;
        let bytes = hex_decode(sealed).ok_or_else(invalid)?;
        if bytes.len() < super::VAULT_NONCE_LEN {
            return Err(invalid());
        }
        let (nonce, ciphertext) = bytes.split_at(super::VAULT_NONCE_LEN);
        let sealed = Sealed {
            key_id: key_id.to_owned(),
            nonce: nonce.to_vec(),
            ciphertext: ciphertext.to_vec(),
        };
        self.keys.open(state_row(), &sealed).map_err(|_| invalid())
    }

    /// Record that the sign-in `id` started, keeping `payload` (what its callback needs)
    /// sealed until [`Self::finish_sign_in`] takes it or `expires_at` (unix seconds)
    /// passes. True when recorded; false when `id` was started before, on any instance
    /// (the first start owns the sign-in). Rows expired more than an hour ago are
    /// forgotten first.
    ///
    /// # Errors
    /// [`VaultError::Invalid`] for an empty `id`, one over 128 bytes or with control
    /// characters; [`VaultError::Unreachable`] or [`VaultError::Database`] when the write
    /// fails.
    pub async fn start_sign_in(
        &self,
        id: &str,
        expires_at: u64,
        payload: &[u8],
    ) -> Result<bool, VaultError> {
        check_id(id)?;
        self.forget_old_sign_ins().await?;
        let sealed = self.keys.seal(sign_in_row(id), payload)?;
        const SQL: &str = "INSERT INTO mcp_vault_sign_ins \
             (id, expires_at, key_id, nonce, ciphertext, finished_at_ms) \
             VALUES ($1, $2, $3, $4, $5, NULL) ON CONFLICT (id) DO NOTHING";
        let done = on_pool!(self, pool => sqlx::query(SQL)
            .bind(id)
            .bind(i64::try_from(expires_at).unwrap_or(i64::MAX))
            .bind(&sealed.key_id)
            .bind(&sealed.nonce)
            .bind(&sealed.ciphertext)
            .execute(pool)
            .await
            .map_err(|e| self.db_error("recording a sign-in", e))?
            .rows_affected());
        Ok(done > 0)
    }

    /// Take the payload of the sign-in `id` for its callback: once, across every instance.
    /// `None` when it was never started, was taken already, or was forgotten. Whether it
    /// expired is for the caller to check (its state says when).
    ///
    /// # Errors
    /// [`VaultError::Invalid`] for an empty or overlong `id`; [`VaultError::UnknownKey`]
    /// or [`VaultError::Decrypt`] when the row does not open; [`VaultError::Unreachable`]
    /// or [`VaultError::Database`] when the write fails.
    pub async fn finish_sign_in(&self, id: &str) -> Result<Option<Vec<u8>>, VaultError> {
        check_id(id)?;
        const SQL: &str = "UPDATE mcp_vault_sign_ins SET finished_at_ms = $2 \
             WHERE id = $1 AND finished_at_ms IS NULL \
             RETURNING key_id, nonce, ciphertext";
        let found: Option<(String, Vec<u8>, Vec<u8>)> = on_pool!(self, pool => sqlx::query_as(SQL)
            .bind(id)
            .bind(now_ms())
            .fetch_optional(pool)
            .await
            .map_err(|e| self.db_error("taking a sign-in", e))?);
        found
            .map(|(key_id, nonce, ciphertext)| {
                let sealed = Sealed {
                    key_id,
                    nonce,
                    ciphertext,
                };
                self.keys.open(sign_in_row(id), &sealed)
            })
            .transpose()
    }

    /// How many sign-ins are started, not taken and unexpired (to bound them).
    ///
    /// # Errors
    /// [`VaultError::Unreachable`] or [`VaultError::Database`] when the read fails.
    pub async fn open_sign_ins(&self) -> Result<u64, VaultError> {
        const SQL: &str = "SELECT COUNT(*) FROM mcp_vault_sign_ins \
             WHERE finished_at_ms IS NULL AND expires_at >= $1";
        let (count,): (i64,) = on_pool!(self, pool => sqlx::query_as(SQL)
            .bind(now_secs())
            .fetch_one(pool)
            .await
            .map_err(|e| self.db_error("counting sign-ins", e))?);
        Ok(u64::try_from(count).unwrap_or_default())
    }

    async fn forget_old_sign_ins(&self) -> Result<(), VaultError> {
        const SQL: &str = "DELETE FROM mcp_vault_sign_ins WHERE expires_at < $1";
        let before = now_secs().saturating_sub(i64::try_from(SIGN_IN_GRACE_SECS).unwrap_or(0));
        on_pool!(self, pool => sqlx::query(SQL)
            .bind(before)
            .execute(pool)
            .await
            .map_err(|e| self.db_error("forgetting old sign-ins", e))
            .map(|_| ()))
    }
}

fn state_row() -> RowKey<'static> {
    RowKey {
        caller: STATE_DOMAIN,
        server: "",
        environment: "",
    }
}

fn sign_in_row(id: &str) -> RowKey<'_> {
    RowKey {
        caller: ROW_DOMAIN,
        server: id,
        environment: "",
    }
}

fn check_id(id: &str) -> Result<(), VaultError> {
    if id.is_empty() || id.len() > MAX_SIGN_IN_ID_LEN || id.chars().any(char::is_control) {
        return Err(VaultError::Invalid {
            detail: format!(
                "a sign-in id must be 1 to {MAX_SIGN_IN_ID_LEN} bytes without control \
                 characters (got {} bytes)",
                id.len()
            ),
        });
    }
    Ok(())
}

fn now_secs() -> i64 {
    now_ms() / 1000
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::{VaultKey, VaultKeys};

    async fn vault(dir: &tempfile::TempDir, keys: VaultKeys) -> CredentialVault {
        CredentialVault::open_sqlite(dir.path().join("v.db"), keys)
            .await
            .unwrap()
    }

    fn keys(id: &str, byte: u8) -> VaultKeys {
        VaultKeys::new(VaultKey::new(id, [byte; 32]).unwrap())
    }

    #[tokio::test]
    async fn a_state_opens_with_the_same_keys_only() {
        let dir = tempfile::tempdir().unwrap();
        let a = vault(&dir, keys("k1", 1)).await;
        let state = a.seal_sign_in_state(b"alice tickets").unwrap();
        assert!(!state.contains("alice"), "{state}");
        assert!(
            state
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
        );
        assert_ne!(state, a.seal_sign_in_state(b"alice tickets").unwrap());
        assert_eq!(a.open_sign_in_state(&state).unwrap(), b"alice tickets");
        // Another instance with the same key (here: after a rotation, as a previous key).
        let dir2 = tempfile::tempdir().unwrap();
        let rotated = VaultKeys::new(VaultKey::new("k2", [2; 32]).unwrap())
            .with_previous(VaultKey::new("k1", [1; 32]).unwrap())
            .unwrap();
        let b = vault(&dir2, rotated).await;
        assert_eq!(b.open_sign_in_state(&state).unwrap(), b"alice tickets");
        // Other keys, an altered or a made-up state: refused.
        let dir3 = tempfile::tempdir().unwrap();
        let other = vault(&dir3, keys("k1", 3)).await;
        let mut altered = state.clone().into_bytes();
        altered[30] = if altered[30] == b'0' { b'1' } else { b'0' };
        let altered = String::from_utf8(altered).unwrap();
        for bad in [
            other.open_sign_in_state(&state),
            a.open_sign_in_state(&altered),
            a.open_sign_in_state("0123"),
            a.open_sign_in_state(""),
            a.open_sign_in_state(&"a".repeat(MAX_SIGN_IN_STATE_LEN + 1)),
        ] {
            assert!(
                matches!(bad, Err(VaultError::Invalid { .. })),
                "{bad:?} was opened"
            );
        }
        // A credential row's sealing is not a state's.
        let row = a.keys.seal(sign_in_row("x"), b"payload").unwrap();
        let forged = format!("{}{}.k1", hex(&row.nonce), hex(&row.ciphertext));
        assert!(a.open_sign_in_state(&forged).is_err());
    }

    #[tokio::test]
    async fn a_sign_in_starts_once_and_finishes_once_across_instances() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.db");
        let a = CredentialVault::open_sqlite(&path, keys("k1", 1))
            .await
            .unwrap();
        let b = CredentialVault::open_sqlite(&path, keys("k1", 1))
            .await
            .unwrap();
        let later = u64::try_from(now_secs()).unwrap() + 600;
        assert!(a.start_sign_in("n1", later, b"verifier").await.unwrap());
        assert_eq!(a.open_sign_ins().await.unwrap(), 1);
        // The second start, on the other instance, is refused and changes nothing.
        assert!(!b.start_sign_in("n1", later, b"other").await.unwrap());
        // A sign-in never started finishes with nothing.
        assert_eq!(b.finish_sign_in("n2").await.unwrap(), None);
        assert_eq!(
            b.finish_sign_in("n1").await.unwrap().as_deref(),
            Some(&b"verifier"[..])
        );
        assert_eq!(a.finish_sign_in("n1").await.unwrap(), None, "a replay");
        assert_eq!(b.finish_sign_in("n1").await.unwrap(), None, "a replay");
        assert_eq!(a.open_sign_ins().await.unwrap(), 0);
        // Still spent: it cannot start again while its state could be presented.
        assert!(!a.start_sign_in("n1", later, b"again").await.unwrap());
        // Long expired rows are forgotten at the next start.
        let past = u64::try_from(now_secs()).unwrap() - SIGN_IN_GRACE_SECS - 10;
        assert!(a.start_sign_in("old", past, b"x").await.unwrap());
        assert!(a.start_sign_in("n3", later, b"y").await.unwrap());
        assert_eq!(a.finish_sign_in("old").await.unwrap(), None);
        assert!(matches!(
            a.start_sign_in("", later, b"x").await,
            Err(VaultError::Invalid { .. })
        ));
        a.close().await;
        b.close().await;
    }
}

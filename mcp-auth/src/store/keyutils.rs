//! Linux: the kernel key store (keyutils), used directly through `linux-keyutils`.
//!
//! Why not the keyring crate's own keyutils backend (feature `linux-native`): it takes the
//! session keyring and then asks for the persistent keyring with `KEYCTL_GET_PERSISTENT`,
//! which, in a thread without a session keyring (every daemon, container and CI job),
//! silently installs a fresh anonymous session keyring. Keys written before that land in
//! the user-session keyring and become unsearchable for that thread, and a later process
//! never sees them; linking into the persistent keyring is also refused (`EACCES`) on such
//! machines. Entries here therefore live in the **user keyring** (`@u`, shared by every
//! process of the user, no login session needed; it lasts until reboot), and each key
//! grants the owning user (not only possessors) all permissions, so any process of the
//! same user can read it whatever its session keyring. Key description:
//! `keyring-rs:<account>@<service>`, the keyring crate's format.

use std::any::Any;
use std::fmt;

use keyring::Entry;
use keyring::credential::CredentialApi;
use linux_keyutils::{KeyError, KeyPermissionsBuilder, KeyRing, KeyRingIdentifier, Permission};

/// One account's key in the user keyring.
#[derive(Debug)]
struct UserKey {
    description: String,
}

impl UserKey {
    fn ring() -> keyring::Result<KeyRing> {
        KeyRing::from_special_id(KeyRingIdentifier::User, false).map_err(decode)
    }
}

impl CredentialApi for UserKey {
    fn set_secret(&self, secret: &[u8]) -> keyring::Result<()> {
        if secret.is_empty() {
            return Err(keyring::Error::Invalid(
                "value".to_owned(),
                "cannot be empty".to_owned(),
            ));
        }
        // Replaces the payload of an existing key with this description in place.
        let key = Self::ring()?
            .add_key(&self.description, secret)
            .map_err(decode)?;
        let perms = KeyPermissionsBuilder::builder()
            .posessor(Permission::ALL)
            .user(Permission::ALL)
            .build();
        key.set_perms(perms).map_err(decode)
    }

    fn get_secret(&self) -> keyring::Result<Vec<u8>> {
        let key = Self::ring()?.search(&self.description).map_err(decode)?;
        key.read_to_vec().map_err(decode)
    }

    fn delete_credential(&self) -> keyring::Result<()> {
        let ring = Self::ring()?;
        let key = ring.search(&self.description).map_err(decode)?;
        // Unlinking makes it unfindable at once; invalidating frees it (asynchronously).
        ring.unlink_key(key).map_err(decode)?;
        let _ = key.invalidate();
        Ok(())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn debug_fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

fn decode(err: KeyError) -> keyring::Error {
    match err {
        // A key being revoked or expired is, for us, a key that is gone.
        KeyError::KeyDoesNotExist | KeyError::KeyRevoked | KeyError::KeyExpired => {
            keyring::Error::NoEntry
        }
        KeyError::QuotaExceeded => keyring::Error::PlatformFailure(
            "the kernel key quota of this user is exhausted (see /proc/sys/kernel/keys/maxbytes)"
                .into(),
        ),
        other => keyring::Error::PlatformFailure(format!("keyutils: {other:?}").into()),
    }
}

/// The keyring entry of `service`/`account`.
pub(super) fn entry(service: &str, account: &str) -> keyring::Result<Entry> {
    // Fail early (as the probe needs) when the kernel refuses keyctl altogether.
    UserKey::ring()?;
    Ok(Entry::new_with_credential(Box::new(UserKey {
        description: format!("keyring-rs:{account}@{service}"),
    })))
}

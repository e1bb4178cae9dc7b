//! The OS keyring calls behind [`KeyringStore`](super::KeyringStore) (feature `keyring`).

use keyring::Entry;

use super::error::KeyringFailure;
use super::{StoreError, StoreKey};

/// Account name used by [`probe`]; never written.
const PROBE_ACCOUNT: &str = "#probe";

/// Looks up an entry that never exists: `Ok` when the keyring answers.
pub(super) fn probe(service: &str) -> Result<(), StoreError> {
    let unavailable = |err: &keyring::Error| StoreError::Unavailable {
        reason: describe(err),
    };
    let entry = new_entry(service, PROBE_ACCOUNT).map_err(|e| unavailable(&e))?;
    match entry.get_password() {
        Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(err) => Err(unavailable(&err)),
    }
}

/// The stored text, `None` when there is no entry. Blocking.
pub(super) fn get(service: &str, key: &StoreKey) -> Result<Option<String>, StoreError> {
    match entry(service, key)?.get_password() {
        Ok(text) => Ok(Some(text)),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(keyring::Error::BadEncoding(_)) => Err(StoreError::CorruptEntry {
            location: format!("the OS keyring (service {service:?})"),
            key: key.to_string(),
            detail: "the value is not UTF-8".to_owned(),
        }),
        Err(err) => Err(failure(service, key, &err)),
    }
}

/// Replaces the entry's text. Blocking.
pub(super) fn set(service: &str, key: &StoreKey, text: &str) -> Result<(), StoreError> {
    entry(service, key)?
        .set_password(text)
        .map_err(|e| failure(service, key, &e))
}

/// Removes the entry; a missing one is not an error. Blocking.
pub(super) fn delete(service: &str, key: &StoreKey) -> Result<(), StoreError> {
    match entry(service, key)?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(err) => Err(failure(service, key, &err)),
    }
}

fn entry(service: &str, key: &StoreKey) -> Result<Entry, StoreError> {
    new_entry(service, key.as_str()).map_err(|e| failure(service, key, &e))
}

/// The platform's entry; on Linux the kernel key store (see `keyutils.rs`).
fn new_entry(service: &str, account: &str) -> keyring::Result<Entry> {
    #[cfg(target_os = "linux")]
    return super::keyutils::entry(service, account);
    #[cfg(not(target_os = "linux"))]
    return Entry::new(service, account);
}

fn failure(service: &str, key: &StoreKey, err: &keyring::Error) -> StoreError {
    StoreError::Keyring {
        service: service.to_owned(),
        account: key.to_string(),
        source: KeyringFailure::new(describe(err)),
    }
}

/// The keyring error as text that never includes a stored value (`BadEncoding` carries the
/// raw bytes, so its payload is dropped).
fn describe(err: &keyring::Error) -> String {
    use keyring::Error as E;
    match err {
        E::PlatformFailure(inner) => format!("platform failure: {inner}"),
        E::NoStorageAccess(inner) => format!("no access to the secure storage: {inner}"),
        E::NoEntry => "no such entry".to_owned(),
        E::BadEncoding(_) => "the stored value is not UTF-8".to_owned(),
        E::TooLong(what, limit) => format!("{what} is longer than the platform limit {limit}"),
        E::Invalid(what, why) => format!("{what} is invalid: {why}"),
        E::Ambiguous(found) => format!("{} entries match", found.len()),
        _ => "unknown keyring error".to_owned(),
    }
}

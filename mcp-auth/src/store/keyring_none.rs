//! [`KeyringStore`](super::KeyringStore) without the `keyring` feature: every call reports
//! [`StoreError::Unavailable`], as on a machine without a keyring, so
//! [`AutoStore`](super::AutoStore) pins the file.

use super::{StoreError, StoreKey};

fn unavailable() -> StoreError {
    StoreError::Unavailable {
        reason: "mcp-auth was built without its `keyring` feature".to_owned(),
    }
}

pub(super) fn probe(_service: &str) -> Result<(), StoreError> {
    Err(unavailable())
}

pub(super) fn get(_service: &str, _key: &StoreKey) -> Result<Option<String>, StoreError> {
    Err(unavailable())
}

pub(super) fn set(_service: &str, _key: &StoreKey, _text: &str) -> Result<(), StoreError> {
    Err(unavailable())
}

pub(super) fn delete(_service: &str, _key: &StoreKey) -> Result<(), StoreError> {
    Err(unavailable())
}

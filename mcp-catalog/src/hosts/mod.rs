//! What a host does with configuration files on disk: where other clients keep theirs
//! ([`client_config_paths`](crate::client_config_paths)), finding and loading a host's
//! files in one call ([`Discovery`](crate::Discovery)), and trust in a project's files
//! ([`TrustStore`](crate::TrustStore), [`review_file`](crate::review_file)).
//!
//! The top of the crate: may import `resolve`, `formats`, `model` and the root's shared
//! modules. Nothing else in the crate imports `hosts`.

pub(crate) mod clients;
pub(crate) mod discover;
pub(crate) mod trust;

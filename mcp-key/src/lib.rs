//! Work in progress: see the crate's issue.

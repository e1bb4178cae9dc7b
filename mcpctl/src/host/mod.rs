//! What a command runs on: finding the configuration (`config`), the trust its project
//! files need (`trust`), the embedded demo when there is none (`demo`), credentials, the
//! data directory and how each server authenticates (`auth`), and from these the catalog,
//! the connection set options and the running set of one command (`session`).
//!
//! Must never import `commands` or `serve`: they build on what is set up here, never the
//! other way round. It writes only to stderr (configuration warnings, the trust prompt,
//! the demo notice), styled by `term`; what a command prints as its result is the
//! command's.

pub(crate) mod auth;
pub(crate) mod config;
pub(crate) mod demo;
pub(crate) mod session;
pub(crate) mod trust;

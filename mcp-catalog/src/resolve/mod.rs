//! Resolution: registrations from every [`Source`](crate::Source) (user configurations,
//! plugins, built-in and run-time servers) merged by [`Tier`](crate::Tier) precedence and
//! vetoes into one [`ResolvedCatalog`](crate::ResolvedCatalog). Owns the
//! [`CatalogBuilder`](crate::CatalogBuilder), the merge rules (`merge.rs`), plugins and
//! their installation per environment.
//!
//! Imports `model`, `formats` (to read a plugin's declaration file) and the crate root's
//! shared modules: never `hosts` or `export`.

pub(crate) mod builder;
pub(crate) mod builder_plugins;
pub(crate) mod merge;
pub(crate) mod plugin;
pub(crate) mod resolved;
pub(crate) mod source;

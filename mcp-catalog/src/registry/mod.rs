//! The MCP Registry's `server.json` (schema 2025-12-11, and the dated camelCase schemas
//! before it back to 2025-09-16) read into a pinned server configuration: nothing run, and
//! no I/O but the record file beside a configuration (`record_file`).
//! [`RegistryServer::from_json_str`] parses and validates the text (every error with its
//! line, column, field and what to do); [`RegistryServer::install_plan`] turns one
//! package or remote into a [`ServerConfig`](crate::ServerConfig) with the command line VS
//! Code's mapping gives, the inputs the caller must supply, secrets kept as environment
//! variable references, the version pinned, and the [`Provenance`](crate::Provenance) a
//! host records beside the entry. An `mcpb` bundle becomes a [`McpbBundle`](crate::McpbBundle)
//! whose bytes are checked against `fileSha256` before anything runs; its `manifest.json`
//! ([`McpbManifest`](crate::McpbManifest)) says how the unpacked bundle starts. A host records the
//! provenance beside the entry it writes ([`Provenance::to_json`](crate::Provenance::to_json)),
//! reads it back and says what changed ([`Provenance::changes_to`](crate::Provenance::changes_to)),
//! in one record file beside the configuration file
//! ([`Provenance::record`](crate::Provenance::record),
//! [`Provenance::recorded`](crate::Provenance::recorded)).
//!
//! Imports `model`, `formats` (the JSON locator) and the crate root's shared modules only.

pub(crate) mod convert;
pub(crate) mod digest;
pub(crate) mod document;
pub(crate) mod inputs;
pub(crate) mod mcpb;
pub(crate) mod plan;
pub(crate) mod reader;
pub(crate) mod record;
pub(crate) mod record_file;
pub(crate) mod version;

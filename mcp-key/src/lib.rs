//! Identities for MCP servers: validated server names, environment ids and server keys,
//! model-safe tool names that map back to their server, configuration fingerprints, and a
//! redacting secret wrapper.
//!
//! Everything here is a value type: validated on construction, cheap to clone,
//! `Hash + Eq + Ord`, with `Display` and `FromStr` that round-trip and serde that validates.
//! The crate does no I/O.
//!
//! ```
//! use mcp_key::{EnvironmentId, McpServerKey, NamingOptions, ServerName, ToolNamer};
//!
//! // Two servers with the same name in two environments are two servers.
//! let local = McpServerKey::unscoped(ServerName::new("files")?);
//! let devbox = McpServerKey::in_environment(EnvironmentId::new("devbox")?, ServerName::new("files")?);
//! assert_ne!(local, devbox);
//! assert_eq!(devbox.to_string(), "files@devbox");
//! assert_eq!("files@devbox".parse::<McpServerKey>()?, devbox);
//!
//! // Model-visible tool names, and the way back.
//! let namer = ToolNamer::new(NamingOptions::new());
//! let table = namer.qualify([(&local, "read.file"), (&devbox, "read.file")]);
//! assert_eq!(table.qualified_name(&local, "read.file"), Some("mcp__files__read_file"));
//! assert_eq!(table.qualified_name(&devbox, "read.file"), Some("mcp__files__devbox__read_file"));
//! assert_eq!(table.resolve("mcp__files__devbox__read_file"), Some((&devbox, "read.file")));
//!
//! // Bad names are rejected with a message that says what to fix.
//! let err = ServerName::new("my srv").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "invalid server name `my srv`: character ' ' at position 2 is not allowed (use A-Z a-z 0-9 _ -)"
//! );
//! # Ok::<(), mcp_key::KeyError>(())
//! ```

mod environment;
mod error;
mod fingerprint;
mod hex;
mod naming;
mod redact;
mod secret;
mod secret_text;
mod server_key;
mod server_name;
mod text_impls;

pub use environment::EnvironmentId;
pub use error::{KeyError, KeyPart, NameProblem};
pub use fingerprint::{Fingerprint, FingerprintBuilder};
pub use hex::{hex_decode, hex_encode};
pub use naming::{
    DEFAULT_MAX_TOOL_NAME_LEN, DEFAULT_TOOL_PREFIX, MIN_MAX_TOOL_NAME_LEN, NamingOptions,
    ToolNameTable, ToolNamer, edit_distance,
};
pub use redact::{REDACTED, error_chain, redact_secrets, redact_url, redact_urls};
pub use secret::Secret;
pub use secret_text::is_secret_name;
pub use server_key::McpServerKey;
pub use server_name::{MAX_NAME_LEN, ServerName};

// The README's example, compiled and run as a doc test (not part of the rendered docs).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

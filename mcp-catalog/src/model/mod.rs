//! The configuration model: what a parsed configuration is made of, independent of the
//! file it came from. [`Config`](crate::Config) and [`LoadedConfig`](crate::LoadedConfig),
//! environments and their ssh settings, the settings servers inherit from the catalog, the gateway's `[gateway]` table, one server ([`ServerConfig`](crate::ServerConfig))
//! with its [`Transport`](crate::Transport), tool filters, log levels, workload identity, the gateway's upstream identity, the
//! [`ConfigFormat`](crate::ConfigFormat) names, connection fingerprints and the remote line
//! of an ssh server.
//!
//! Imports only the crate root's shared modules (`diagnostic`, `env`): never `formats`
//! (no parser is called from here; `formats` builds these values), `resolve`, `hosts` or
//! `export`.

pub(crate) mod config;
pub(crate) mod defaults;
pub(crate) mod filter;
pub(crate) mod fingerprint;
pub(crate) mod format;
pub(crate) mod gateway;
pub(crate) mod log_level;
pub(crate) mod policy;
pub(crate) mod remote_line;
pub(crate) mod server;
pub(crate) mod ssh;
pub(crate) mod transport;
pub(crate) mod upstream_identity;
pub(crate) mod workload;

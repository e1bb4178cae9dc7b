//! The gateway acting as each caller upstream (`upstream_identity` of
//! `[mcp_servers.X]`): the credential vault the gateway keeps per-caller credentials in
//! ([`vault`]).
//!
//! `gateway` servers see the gateway's own credentials, as before; `caller` and `exchange`
//! servers need the vault (`caller`) or a token exchange, and fail with a clear error when
//! what they need is not there, while `gateway` servers go on.

pub(crate) mod vault;

//! Opening a connection and the protocol eras: the handshake of each era (MCP
//! 2025-11-25's `initialize`, 2026-07-28's `server/discover`) with the probe and its
//! fallbacks and the first `tools/list` ([`connect`]); the era a connection speaks, the
//! plan from the server's `protocol` setting and the checks of what a handshake answered
//! ([`era`], a leaf); and the rmcp handler every transport serves, which hands what the
//! server sends and asks to the connection's state ([`handler`]). Above the state and the
//! transports, below the face ([`crate::client`]).

pub(crate) mod connect;
pub(crate) mod era;
pub(crate) mod handler;

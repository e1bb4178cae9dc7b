//! The transports of one connection: how its messages reach the server and come back.
//! It owns the stdio process ([`stdio`]), streamable HTTP with its own HTTP client, its
//! credentials per request and the refresh after a 401 ([`http`], [`http_client`],
//! [`http_dpop`]), the legacy HTTP+SSE transport ([`sse`]), and what every transport does
//! to the bytes it reads: replies checked before rmcp parses them ([`reply_check`]),
//! log and progress notifications handled in the server's order ([`read_order`]), pipes
//! lent to a probe and taken back ([`lend`]), the stdio lines read
//! with a fast path for a tool call's reply ([`stdio_lines`]), and idempotent reads sent again when a
//! 2026-era response stream breaks ([`reissue`]). The transports use the connection's
//! shared state ([`crate::state`]); nothing here knows of calls, listings or tasks beyond
//! the raw bytes it hands them.

pub(crate) mod call_reply;
#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "http")]
pub(crate) mod http_call_reply;
#[cfg(feature = "http")]
pub(crate) mod http_client;
#[cfg(feature = "http")]
pub(crate) mod http_dpop;
pub(crate) mod lend;
pub(crate) mod read_order;
pub(crate) mod reissue;
pub(crate) mod reply_check;
#[cfg(feature = "http")]
pub(crate) mod sse;
pub(crate) mod stdio;
pub(crate) mod stdio_lines;

//! What a server asks of, and sends to, the host on one connection: the trait a host
//! implements to answer elicitations and sampling ([`server_requests`]), the checks of a
//! sampling request and of the host's answer ([`sampling`]), the roots the host announces
//! ([`roots`]), and the server's log messages, rate-limited and handed on ([`server_log`]).
//! These are leaves: the connection's state ([`crate::state`]) carries them and the rmcp
//! handler ([`crate::handshake::handler`]) dispatches to them.

pub(crate) mod roots;
pub(crate) mod sampling;
pub(crate) mod server_log;
pub(crate) mod server_requests;

//! Credentials for MCP servers: credential stores and an OAuth 2.1 client.
//!
//! Work in progress: see the auth issue. Module owners: `store` (credential stores),
//! `oauth` (discovery, registration, login, refresh, status).

mod oauth;
mod store;

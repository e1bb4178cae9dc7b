//! Where an HTTP server's credentials come from when the catalog says OAuth: stored
//! OAuth credentials ([`oauth`]) and enterprise-managed authorization ([`ema`]), both
//! `mcp-client` auth providers. Never imports the set or its policy.

#[cfg(feature = "oauth")]
pub(crate) mod ema;
#[cfg(feature = "oauth")]
pub(crate) mod oauth;

//! [`NamingOptions`]: how the namer shapes tool names.

use std::collections::BTreeSet;

use crate::ServerName;

/// The default longest model-visible tool name, in bytes (what OpenAI and Anthropic accept).
pub const DEFAULT_MAX_TOOL_NAME_LEN: usize = 64;

/// The smallest `max_len` the namer honours; smaller values are raised to this, so that a
/// hash suffix (`_` + 8 or more hex digits) always fits beside some of the readable name.
pub const MIN_MAX_TOOL_NAME_LEN: usize = 16;

/// The prefix put before every qualified tool name unless turned off or exempted.
pub const DEFAULT_TOOL_PREFIX: &str = "mcp__";

/// How [`ToolNamer`](crate::ToolNamer) builds model-visible names.
///
/// Defaults ([`NamingOptions::new`]): prefix on, no exemptions, `max_len` 64, environment
/// namespaces on. With these, a tool `search` on the unscoped server `github` is
/// `mcp__github__search`, and on `github@devbox` it is `mcp__github__devbox__search`.
///
/// ```
/// use mcp_key::{NamingOptions, ServerName};
///
/// let opts = NamingOptions::new()
///     .with_max_len(128)
///     .with_prefix_exempt(ServerName::new("builtin")?);
/// assert_eq!(opts.max_len, 128);
/// # Ok::<(), mcp_key::KeyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NamingOptions {
    /// Put [`DEFAULT_TOOL_PREFIX`] (`mcp__`) before every name. Default `true`.
    pub prefix: bool,
    /// Servers whose tools never get the prefix, even when `prefix` is on: their tools are
    /// named `<server>__<tool>`. Default empty.
    pub prefix_exempt: BTreeSet<ServerName>,
    /// The longest name produced, in bytes. Default [`DEFAULT_MAX_TOOL_NAME_LEN`]; values
    /// below [`MIN_MAX_TOOL_NAME_LEN`] are treated as that minimum.
    pub max_len: usize,
    /// Put the environment into names of environment-scoped servers
    /// (`mcp__<server>__<env>__<tool>`). When off, a scoped server is named like an
    /// unscoped one, and servers that then share a name are told apart by hash suffixes.
    /// Default `true`.
    pub environment_namespaces: bool,
}

impl NamingOptions {
    /// The defaults described on the type.
    pub fn new() -> Self {
        Self {
            prefix: true,
            prefix_exempt: BTreeSet::new(),
            max_len: DEFAULT_MAX_TOOL_NAME_LEN,
            environment_namespaces: true,
        }
    }

    /// Turns the `mcp__` prefix on or off for all servers.
    #[must_use]
    pub fn with_prefix(mut self, prefix: bool) -> Self {
        self.prefix = prefix;
        self
    }

    /// Exempts one more server from the prefix.
    #[must_use]
    pub fn with_prefix_exempt(mut self, server: ServerName) -> Self {
        self.prefix_exempt.insert(server);
        self
    }

    /// Sets the longest name produced (raised to [`MIN_MAX_TOOL_NAME_LEN`] when smaller).
    #[must_use]
    pub fn with_max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }

    /// Turns environment namespaces for scoped servers on or off.
    #[must_use]
    pub fn with_environment_namespaces(mut self, on: bool) -> Self {
        self.environment_namespaces = on;
        self
    }
}

impl Default for NamingOptions {
    fn default() -> Self {
        Self::new()
    }
}

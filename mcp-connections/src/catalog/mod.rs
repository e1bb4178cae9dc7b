//! What the set knows of its servers without running them: each server's spec from the
//! catalog ([`spec`]), the merged tool catalog and its names ([`tool_info`]), the
//! persisted tool cache ([`tool_cache`]), the search index over the tools ([`search`])
//! and the search mode's two tools ([`search_mode`]), the UI of tools for hosts that
//! render MCP Apps ([`apps`]), and the servers' skills named like tools ([`skills`]).
//! Never imports the set or its policy.

pub(crate) mod apps;
pub(crate) mod search;
pub(crate) mod search_mode;
pub(crate) mod skills;
pub(crate) mod spec;
pub(crate) mod tool_cache;
pub(crate) mod tool_info;

//! The connection set's view of one configured server ([`ServerSpec`]): the catalog's own
//! entry ([`mcp_catalog::ServerConfig`], held once and read where it is needed: timeouts,
//! tool filter, `required`, parallel calls, transport) and only what the set derives from
//! it: the key, and why the server's environment cannot be used.

use std::sync::Arc;

use mcp_catalog::{HttpConfig, ServerConfig, Transport};
use mcp_key::{EnvironmentId, McpServerKey};

/// Everything the set needs to start and use one server.
#[derive(Debug, Clone)]
pub(crate) struct ServerSpec {
    pub(crate) key: McpServerKey,
    /// The catalog's entry of the server.
    pub(crate) config: Arc<ServerConfig>,
    /// Set when the server's environment cannot be used; startup fails with reason
    /// `environment`.
    pub(crate) environment_problem: Option<String>,
}

impl ServerSpec {
    /// The spec of `key`, configured as `config`.
    pub(crate) fn new(key: McpServerKey, config: &ServerConfig) -> Self {
        Self {
            key,
            config: Arc::new(config.clone()),
            environment_problem: None,
        }
    }

    /// The environment the server runs in, when it is not `local`.
    pub(crate) fn environment(&self) -> Option<&EnvironmentId> {
        Some(self.config.environment()).filter(|id| !id.is_local())
    }

    /// The HTTP settings of a streamable HTTP or legacy SSE server.
    pub(crate) fn http(&self) -> Option<&HttpConfig> {
        self.config.transport().as_http()
    }

    /// Why this set cannot start the server from its entry, if it cannot: an entry the
    /// catalog found unusable (its located errors), or a transport this version of the
    /// set does not know. Startup fails with reason `config`.
    pub(crate) fn unusable(&self) -> Option<String> {
        match self.config.transport() {
            Transport::Stdio(_) | Transport::StreamableHttp(_) | Transport::Sse(_) => None,
            Transport::Unusable(unusable) => Some(format!(
                "its configuration entry cannot be used: {unusable}"
            )),
            other => Some(format!(
                "the {} transport is not supported by this connection set",
                other.kind_name()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_spec_reads_the_catalogs_entry_held_once() {
        let config = ServerConfig::stdio("srv")
            .with_startup_timeout(Duration::from_secs(7))
            .with_tool_timeout(Duration::from_secs(9))
            .with_required(true)
            .with_supports_parallel_tool_calls(true)
            .with_environment("box".parse().unwrap_or_else(|_| unreachable!()));
        let key: McpServerKey = "srv@box".parse().unwrap_or_else(|_| unreachable!());
        let spec = ServerSpec::new(key, &config);
        // The entry itself, not field copies: what the catalog says is what the set reads.
        assert_eq!(*spec.config, config);
        // Clones (one per start) share the one entry.
        let start = spec.clone();
        assert!(Arc::ptr_eq(&spec.config, &start.config));
        assert_eq!(spec.environment().map(EnvironmentId::as_str), Some("box"));
        assert_eq!(spec.http(), None);
        assert_eq!(spec.unusable(), None);

        let local = ServerSpec::new(
            "web".parse().unwrap_or_else(|_| unreachable!()),
            &ServerConfig::http("http://127.0.0.1:9/mcp"),
        );
        assert_eq!(local.environment(), None);
        assert_eq!(
            local.http().map(HttpConfig::url),
            Some("http://127.0.0.1:9/mcp")
        );
    }
}

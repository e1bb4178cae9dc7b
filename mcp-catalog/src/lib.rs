//! Configuration for MCP servers (WIP).

mod collect;
mod config;
mod diagnostic;
mod env;
mod filter;
mod server;
mod toml_parse;
mod toml_server;
mod toml_values;
mod transport;
mod json_parse {
    pub(crate) fn parse(
        _text: &str,
        _origin: &str,
        _env: &dyn crate::env::EnvLookup,
    ) -> Result<crate::config::LoadedConfig, crate::diagnostic::ConfigErrors> {
        Err(crate::diagnostic::ConfigErrors::new(Vec::new()))
    }
}

pub use config::{Config, CredentialsStore, EnvironmentConfig, LoadedConfig, PluginRef};
pub use diagnostic::{ConfigError, ConfigErrorKind, ConfigErrors, ConfigWarning, Location};
pub use env::{EmptyEnv, EnvLookup, ProcessEnv};
pub use filter::ToolFilter;
pub use server::{ApprovalMode, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ServerConfig};
pub use transport::{AuthMode, EmaConfig, HttpConfig, OAuthConfig, StdioConfig, Transport};

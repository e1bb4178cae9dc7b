//! Connection fingerprints: what forces a new connection when it changes.

use mcp_key::Fingerprint;

use crate::env::EnvLookup;
use crate::model::config::{CredentialsStore, EnvironmentConfig};
use crate::model::server::ServerConfig;
use crate::model::transport::Transport;

/// Domain string of connection fingerprints (bump the version when the inputs change).
pub const CONNECTION_FINGERPRINT_DOMAIN: &str = "mcp-catalog/connection/v1";

/// The fingerprint of the connection `server` would open.
///
/// Includes the transport (command, args, literal env, cwd, URL, headers), the *current*
/// values of referenced variables (`env_vars`, `bearer_token_env_var`, `env_http_headers`,
/// read through `env`, so a rotated token changes it), the environment id with its
/// wrapper or ssh settings, working directory and variables, the auth mode, OAuth/EMA client settings and
/// scopes, a gateway's upstream identity (`upstream_identity` with its token exchange
/// settings, when not the default), and the credential store mode. Excludes the server's name, tool filters, call
/// timeouts, startup timeout, `required`, approval modes, the description and
/// the settings a server inherits from the catalog
/// ([`ServerConfig::overrides`](crate::ServerConfig::overrides): `startup`, `protocol`,
/// `tool_drift`, `log_level`) (they change nothing of how the server is reached; `mcp-connections`
/// keys shared connections by it).
pub fn connection_fingerprint(
    server: &ServerConfig,
    environment: Option<&EnvironmentConfig>,
    credentials_store: CredentialsStore,
    env: &dyn EnvLookup,
) -> Fingerprint {
    let mut b = Fingerprint::builder(CONNECTION_FINGERPRINT_DOMAIN)
        .str("environment", server.environment().as_str())
        .bool("environment.declared", environment.is_some())
        .list(
            "environment.wrapper",
            environment.map_or(&[][..], |e| e.wrapper()),
        )
        .opt_str(
            "environment.cwd",
            environment
                .and_then(|e| e.cwd())
                .map(|p| p.to_string_lossy())
                .as_deref(),
        )
        .map(
            "environment.env",
            environment.into_iter().flat_map(|e| e.env()),
        )
        .str("credentials_store", credentials_store.as_str());
    // Only ssh environments have the field, so other fingerprints stay as they were.
    if let Some(ssh) = environment.and_then(EnvironmentConfig::ssh) {
        b = b.list("environment.ssh", ssh.ssh_argv());
    }
    match server.transport() {
        Transport::Stdio(stdio) => {
            let vars: Vec<(&str, String)> = stdio
                .env_vars()
                .iter()
                .map(|name| (name.as_str(), value_of(env, name)))
                .collect();
            b = b
                .str("transport", "stdio")
                .str("command", stdio.command())
                .list("args", stdio.args())
                .map("env", stdio.env())
                .opt_str("cwd", stdio.cwd().map(|p| p.to_string_lossy()).as_deref())
                .map("env_vars", vars);
        }
        Transport::StreamableHttp(http) | Transport::Sse(http) => {
            let kind = if server.transport().is_sse() {
                "sse"
            } else {
                "streamable-http"
            };
            let bearer = http.bearer_token_env_var().map(|name| value_of(env, name));
            let env_headers: Vec<(&str, String)> = http
                .env_http_headers()
                .iter()
                .map(|(header, var)| (header.as_str(), format!("{var}\0{}", value_of(env, var))))
                .collect();
            b = b
                .str("transport", kind)
                .str("url", http.url())
                .map("http_headers", http.http_headers())
                .opt_str("bearer_token_env_var", http.bearer_token_env_var())
                .opt_str("bearer_token", bearer.as_deref())
                .map("env_http_headers", env_headers)
                .str("auth", http.auth().as_str())
                .opt_str("oauth.client_id", http.oauth().map(|o| o.client_id()))
                .opt_str("oauth_resource", http.oauth_resource())
                .list("scopes", http.scopes())
                .opt_str("ema.issuer", http.ema().map(|e| e.issuer()))
                .opt_str("ema.client_id", http.ema().map(|e| e.client_id()))
                .opt_str("dpop", http.dpop().then_some("true"))
                .opt_str(
                    "workload_identity",
                    http.workload_identity()
                        .map(|w| format!("{w:?}"))
                        .as_deref(),
                );
            // Only servers with the setting have the field, so others stay as they were.
            if let Some(identity) = http.upstream_identity().fingerprint_input() {
                b = b.str("upstream_identity", &identity);
            }
        }
        Transport::Unusable(unusable) => {
            b = b
                .str("transport", "unusable")
                .str("errors", &unusable.to_string());
        }
    }
    b.finish()
}

/// A variable's value, with "unset" kept distinct from every possible value.
fn value_of(env: &dyn EnvLookup, name: &str) -> String {
    match env.get(name) {
        Some(value) => format!("set:{value}"),
        None => "unset".to_owned(),
    }
}

//! Turning a resolved catalog into the set's server specs.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_catalog::{ResolvedCatalog, ServerConfig, Transport};
use mcp_key::{EnvironmentId, Fingerprint, McpServerKey, NamingOptions, ServerName};

use mcp_client::{Environment, WrapperEnvironment};

use crate::catalog::spec::{ServerSpec, TransportSpec};
use crate::set::options::ConnectionSetOptions;
use crate::set::pool::ConnectionKey;

/// The specs of every exposed, enabled server, in key order.
pub(crate) fn specs(catalog: &ResolvedCatalog, _options: &ConnectionSetOptions) -> Vec<ServerSpec> {
    catalog
        .exposed_keys()
        .filter_map(|key| {
            let config = catalog.get(key)?;
            config
                .enabled()
                .then(|| spec(key, config, catalog.tool_drift(key)))
        })
        .collect()
}

fn spec(
    key: &McpServerKey,
    config: &ServerConfig,
    tool_drift: mcp_catalog::ToolDriftPolicy,
) -> ServerSpec {
    let env_id = config.environment();
    let transport = match config.transport() {
        Transport::Stdio(s) => TransportSpec::Stdio(s.clone()),
        Transport::StreamableHttp(h) => TransportSpec::Http(h.clone()),
        Transport::Sse(h) => TransportSpec::Sse(h.clone()),
        Transport::Unusable(unusable) => TransportSpec::Invalid(format!(
            "its configuration entry cannot be used: {unusable}"
        )),
        other => TransportSpec::Unsupported(format!(
            "the {} transport is not supported by this connection set",
            other.kind_name()
        )),
    };
    ServerSpec {
        key: key.clone(),
        transport,
        startup_timeout: config.startup_timeout(),
        tool_timeout: config.tool_timeout(),
        filter: config.tool_filter().clone(),
        required: config.required(),
        parallel_tool_calls: config.supports_parallel_tool_calls(),
        environment: (!env_id.is_local()).then(|| env_id.clone()),
        environment_problem: None,
        tool_drift,
    }
}

/// Whether a connection to `key` announces the elicitation capability: when the host
/// gave a handler or a reviewer, unless the owning environment declines elicitation.
pub(crate) fn announces_elicitation(
    catalog: &ResolvedCatalog,
    options: &ConnectionSetOptions,
    key: &McpServerKey,
) -> bool {
    (options.elicitation.is_some() || options.authority.reviewer.is_some())
        && !matches!(
            catalog.elicitation_policy(key),
            Some(mcp_catalog::ElicitationPolicy::Decline)
        )
}

/// Whether connections announce the sampling capability: when the host gave a handler.
pub(crate) fn announces_sampling(options: &ConnectionSetOptions) -> bool {
    options.sampling.is_some()
}

/// The pool key of `key`'s connection: the catalog's connection fingerprint (transport,
/// current values of referenced variables, environment, auth) plus what the set announces
/// in `initialize` (client identity, protocol version, elicitation and sampling capabilities, roots)
/// and the log level it asks for. Sets that
/// agree on all of it share one connection.
pub(crate) fn connection_key(
    catalog: &ResolvedCatalog,
    options: &ConnectionSetOptions,
    key: &McpServerKey,
) -> ConnectionKey {
    let catalog_fingerprint = catalog
        .fingerprint(key, &*options.env)
        .map_or_else(String::new, |f| f.to_hex());
    let elicitation = announces_elicitation(catalog, options, key);
    let fingerprint = Fingerprint::builder("mcp-connections/connection")
        .str("server", &key.to_string())
        .str("catalog", &catalog_fingerprint)
        .str("client_name", &options.client.name)
        .str("client_version", &options.client.version)
        .str("protocol", options.protocol_version.as_str())
        .str("protocol_choice", catalog.protocol(key).as_str())
        .bool("elicitation", elicitation)
        .bool("sampling", announces_sampling(options))
        .bool("apps", options.apps)
        .str(
            "log_level",
            catalog.log_level(key).map_or("", |level| level.as_str()),
        )
        .str("roots", &roots_text(&options.roots))
        .finish();
    ConnectionKey {
        server: key.clone(),
        fingerprint,
    }
}

/// The roots as one unambiguous text (JSON) for the fingerprint; empty without roots.
fn roots_text(roots: &[mcp_client::Root]) -> String {
    if roots.is_empty() {
        return String::new();
    }
    let pairs: Vec<(&str, Option<&str>)> = roots
        .iter()
        .map(|r| (r.uri.as_str(), r.name.as_deref()))
        .collect();
    serde_json::to_string(&pairs).unwrap_or_default()
}

/// The environments stdio servers can run in: the catalog's `[environments.*]` as ssh
/// environments (an `ssh` entry) or wrapper environments, overlaid by the host's own.
pub(crate) fn environments(
    catalog: &ResolvedCatalog,
    options: &ConnectionSetOptions,
) -> BTreeMap<EnvironmentId, Arc<dyn Environment>> {
    let mut out: BTreeMap<EnvironmentId, Arc<dyn Environment>> = catalog
        .environments()
        .iter()
        .map(|(id, config)| {
            let environment: Arc<dyn Environment> =
                match crate::environments::ssh_environment::SshEnvironment::from_catalog(id, config)
                {
                    Some(ssh) => Arc::new(ssh),
                    None => Arc::new(WrapperEnvironment::from_config(id, config)),
                };
            (id.clone(), environment)
        })
        .collect();
    out.extend(
        options
            .environments
            .iter()
            .map(|(k, v)| (k.clone(), Arc::clone(v))),
    );
    out
}

/// Marks servers whose environment is unknown (startup then fails with reason
/// `environment`, for that server only).
pub(crate) fn check_environments(
    specs: &mut [ServerSpec],
    environments: &BTreeMap<EnvironmentId, Arc<dyn Environment>>,
) {
    for spec in specs {
        if let Some(env) = &spec.environment
            && !environments.contains_key(env)
        {
            spec.environment_problem = Some(format!(
                "MCP server `{}` runs in environment `{env}`, which is not configured; add [environments.{env}] with a wrapper, register a host environment, or change the server's environment",
                spec.key
            ));
        }
    }
}

/// The namer options the catalog asks for.
pub(crate) fn naming(catalog: &ResolvedCatalog) -> NamingOptions {
    NamingOptions::new()
        .with_prefix(catalog.tool_name_prefix())
        .with_environment_namespaces(catalog.multi_environment())
}

/// Name-only lookups: for each server name, the key that answers for it.
pub(crate) fn legacy_names(
    catalog: &ResolvedCatalog,
    specs: &[ServerSpec],
) -> BTreeMap<ServerName, McpServerKey> {
    let mut out = BTreeMap::new();
    for spec in specs {
        let name = spec.key.name();
        if out.contains_key(name) {
            continue;
        }
        if let Some(key) = catalog.resolve_server_name(name)
            && specs.iter().any(|s| &s.key == key)
        {
            out.insert(name.clone(), key.clone());
        }
    }
    out
}

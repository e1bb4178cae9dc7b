//! Turning a resolved catalog into the set's server specs.

use std::collections::BTreeMap;

use mcp_catalog::{ResolvedCatalog, ServerConfig, Transport};
use mcp_key::{McpServerKey, NamingOptions, ServerName};

use crate::options::ConnectionSetOptions;
use crate::spec::{HttpSpec, ServerSpec, StdioSpec, TransportSpec};

/// The specs of every exposed, enabled server, in key order.
pub(crate) fn specs(catalog: &ResolvedCatalog, _options: &ConnectionSetOptions) -> Vec<ServerSpec> {
    catalog
        .exposed_keys()
        .filter_map(|key| {
            let config = catalog.get(key)?;
            config.enabled().then(|| spec(catalog, key, config))
        })
        .collect()
}

fn spec(catalog: &ResolvedCatalog, key: &McpServerKey, config: &ServerConfig) -> ServerSpec {
    let env_id = config.environment();
    let environment = if env_id.is_local() {
        None
    } else {
        catalog.environment(env_id)
    };
    let environment_problem = (!env_id.is_local() && environment.is_none()).then(|| {
        format!(
            "MCP server `{key}` runs in environment `{env_id}`, which is not configured; add [environments.{env_id}] or change the server's environment"
        )
    });
    let transport = match config.transport() {
        Transport::Stdio(s) => {
            let mut env: BTreeMap<String, String> =
                environment.map(|e| e.env().clone()).unwrap_or_default();
            env.extend(s.env().iter().map(|(k, v)| (k.clone(), v.clone())));
            TransportSpec::Stdio(StdioSpec {
                program: s.command().to_owned(),
                args: s.args().to_vec(),
                env,
                env_vars: s.env_vars().to_vec(),
                cwd: s
                    .cwd()
                    .map(ToOwned::to_owned)
                    .or_else(|| environment.and_then(|e| e.cwd().map(ToOwned::to_owned))),
                wrapper: environment
                    .map(|e| e.wrapper().to_vec())
                    .unwrap_or_default(),
            })
        }
        Transport::StreamableHttp(h) => TransportSpec::Http(HttpSpec {
            url: h.url().to_owned(),
            bearer_token_env_var: h.bearer_token_env_var().map(ToOwned::to_owned),
            headers: h.http_headers().clone(),
            env_headers: h.env_http_headers().clone(),
        }),
        other => TransportSpec::Unsupported(other.kind_name().to_owned()),
    };
    ServerSpec {
        key: key.clone(),
        transport,
        startup_timeout: config.startup_timeout(),
        tool_timeout: config.tool_timeout(),
        filter: config.tool_filter().clone(),
        required: config.required(),
        parallel_tool_calls: config.supports_parallel_tool_calls(),
        environment_problem,
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

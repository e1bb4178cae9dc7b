//! Turning a resolved catalog into the set's server specs, and each server's connection
//! settings ([`ClientSettings`]) and pool key ([`ConnectionKey`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_catalog::ResolvedCatalog;
use mcp_key::{EnvironmentId, Fingerprint, McpServerKey, NamingOptions, ServerName};

use mcp_client::{ClientSettings, Environment, WrapperEnvironment};

use crate::catalog::spec::ServerSpec;
use crate::set::options::ConnectionSetOptions;
use crate::set::pool::ConnectionKey;

/// The specs of every exposed, enabled server, in key order.
pub(crate) fn specs(catalog: &ResolvedCatalog) -> Vec<ServerSpec> {
    catalog
        .exposed_keys()
        .filter_map(|key| {
            let config = catalog.get(key)?;
            config
                .enabled()
                .then(|| ServerSpec::new(key.clone(), config))
        })
        .collect()
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

/// The extensions the client announces to `spec`'s server: enterprise-managed
/// authorization for a server that uses it (feature `oauth`).
fn announced_extensions(spec: &ServerSpec) -> Vec<String> {
    #[cfg(feature = "oauth")]
    if spec
        .http()
        .is_some_and(|http| http.auth() == mcp_catalog::AuthMode::Ema)
    {
        return vec![crate::auth::ema::EMA_EXTENSION.to_owned()];
    }
    let _ = spec;
    Vec::new()
}

/// The settings of every connection to `spec`'s server that this set starts: the set's
/// client settings ([`ConnectionSetOptions::with_client`]: what it announces, how long it
/// waits, how much it holds) with the server's own parts filled in (startup timeout,
/// variable lookup, roots, capabilities, log level, extensions). Each start adds only its
/// handshake (from the era the server spoke last) and where its cleanup runs. Computed once
/// per server; the pool key is derived from it ([`connection_key`]), so two sets share a
/// connection only when they would open it alike.
pub(crate) fn client_settings(
    catalog: &ResolvedCatalog,
    options: &ConnectionSetOptions,
    spec: &ServerSpec,
) -> ClientSettings {
    let key = &spec.key;
    let settings = options
        .client
        .clone()
        .with_startup_timeout(spec.config.startup_timeout())
        .with_env(options.env.clone())
        .with_roots(Arc::clone(&options.roots))
        .with_elicitation(announces_elicitation(catalog, options, key))
        .with_sampling(announces_sampling(options));
    let settings = match catalog.log_level(key) {
        Some(level) => settings.with_log_level(Some(level)),
        None => settings,
    };
    let settings = announced_extensions(spec)
        .into_iter()
        .fold(settings, |settings, id| {
            settings.with_extension(id, rmcp::model::JsonObject::new())
        });
    if options.apps {
        settings.with_extension(
            crate::catalog::apps::APPS_EXTENSION,
            crate::catalog::apps::extension_settings(),
        )
    } else {
        settings
    }
}

/// The pool key of `spec`'s connection: the catalog's connection fingerprint (transport,
/// current values of referenced variables, environment, auth), the configured protocol
/// (what each start's handshake is chosen from) and every setting of the connection
/// ([`ClientSettings::fingerprint`]: what it announces and how long it waits, how much it
/// holds), and the identity the set connects as ([`ConnectionSetOptions::with_identity_auth`]).
/// Sets that agree on all of it share one connection, and a connection is never
/// held to another set's settings.
pub(crate) fn connection_key(
    catalog: &ResolvedCatalog,
    options: &ConnectionSetOptions,
    spec: &ServerSpec,
    settings: &ClientSettings,
) -> ConnectionKey {
    let key = &spec.key;
    let catalog_fingerprint = catalog
        .fingerprint(key, &*options.env)
        .map_or_else(String::new, |f| f.to_hex());
    let mut fingerprint = Fingerprint::builder("mcp-connections/connection/v2")
        .str("server", &key.to_string())
        .str("catalog", &catalog_fingerprint)
        .str("protocol_choice", catalog.protocol(key).as_str())
        .str("settings", &settings.fingerprint().to_hex());
    // A connection opened as one user is never shared with another user's set.
    if let Some(identity) = options.identities.get(key) {
        fingerprint = fingerprint.str("identity", identity);
    }
    let fingerprint = fingerprint.finish();
    ConnectionKey {
        server: key.clone(),
        fingerprint,
    }
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
        if let Some(env) = spec.environment().cloned()
            && !environments.contains_key(&env)
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

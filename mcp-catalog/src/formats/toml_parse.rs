//! The TOML document: top-level settings, `[environments]`, `[mcp_servers]`, `[[plugins]]`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_key::EnvironmentId;
use toml::de::DeTable;

use crate::diagnostic::{ConfigErrorKind, ConfigErrors, Scope};
use crate::formats::collect::{Collector, Role};
use crate::formats::toml_defaults::{read_default, server_key_of};
use crate::formats::toml_gateway::parse_gateway;
use crate::formats::toml_server::parse_server;
use crate::formats::toml_values::{Reader, Value, type_name};
use crate::model::config::{
    Config, CredentialsStore, ElicitationPolicy, EnvironmentConfig, LoadedConfig, PluginRef,
};
use crate::model::format::ConfigFormat;

const TOP_KEYS: &[&str] = &[
    "credentials_store",
    "oauth_callback_port",
    "mcp_oauth_credentials_store",
    "mcp_oauth_callback_port",
    "tool_name_prefix",
    "multi_environment",
    "mcp_startup",
    "mcp_protocol",
    "tool_drift",
    "log_level",
    "tool_exposure",
    "gateway",
    "environments",
    "mcp_servers",
    "plugins",
];
const ENVIRONMENT_KEYS: &[&str] = &[
    "wrapper",
    "ssh",
    "cwd",
    "env",
    "default_tools_approval_mode",
    "elicitation",
];
const PLUGIN_KEYS: &[&str] = &["path", "environments"];

pub(crate) fn parse(text: &str, origin: &str) -> Result<LoadedConfig, ConfigErrors> {
    parse_format(text, origin, ConfigFormat::Toml)
}

/// [`parse`] for one of the TOML formats: `format`'s defaults
/// ([`ConfigFormat::default_timeouts`]) for what a server leaves out.
pub(crate) fn parse_format(
    text: &str,
    origin: &str,
    format: ConfigFormat,
) -> Result<LoadedConfig, ConfigErrors> {
    parse_in(text, origin, Role::Config, format)
}

/// Parses a user configuration, or (for [`Role::Plugin`]) a plugin's `mcp.toml`, in which
/// only `[mcp_servers]` counts: other top-level keys and `environment` are ignored with a
/// warning.
pub(crate) fn parse_as(text: &str, origin: &str, role: Role) -> Result<LoadedConfig, ConfigErrors> {
    parse_in(text, origin, role, ConfigFormat::Toml)
}

fn parse_in(
    text: &str,
    origin: &str,
    role: Role,
    format: ConfigFormat,
) -> Result<LoadedConfig, ConfigErrors> {
    let mut cx = Collector::new(text, origin);
    let (document, syntax_errors) = DeTable::parse_recoverable(text);
    if !syntax_errors.is_empty() {
        for error in &syntax_errors {
            let offset = error.span().map_or(0, |span| span.start);
            cx.error(
                &Scope::Document,
                None,
                offset,
                ConfigErrorKind::Syntax,
                format!("invalid TOML: {}", error.message()),
                Some("fix the syntax at this position".to_owned()),
            );
        }
        return Err(cx
            .finish()
            .err()
            .unwrap_or_else(|| ConfigErrors::new(Vec::new())));
    }
    let document = document.get_ref();
    let mut config = Config::new();
    let mut r = Reader {
        cx: &mut cx,
        scope: Scope::Document,
    };

    // Environments first: servers and plugins refer to them.
    if let Some(value) = document.get("environments")
        && role == Role::Config
    {
        config.environments = parse_environments(&mut r, value);
    }
    for (key, value) in document {
        let field = key.get_ref().as_ref();
        if role == Role::Plugin && field != "mcp_servers" {
            if TOP_KEYS.contains(&field) {
                r.cx.ignored_in_plugin(&Scope::Document, field, key.span().start);
            } else {
                r.unknown_key(key, &["mcp_servers"]);
            }
            continue;
        }
        // The catalog-wide values of the settings servers inherit.
        if let Some(server_key) = server_key_of(field) {
            read_default(&mut r, server_key, field, value, &mut config.defaults);
            continue;
        }
        match field {
            // Codex spells both top-level settings with an `mcp_oauth_` prefix.
            "credentials_store" | "mcp_oauth_credentials_store" => {
                if let Some(s) = r.string(field, value) {
                    match CredentialsStore::parse(&s) {
                        Some(store) => config.credentials_store = Some(store),
                        None => r.error(
                            field,
                            value.span().start,
                            ConfigErrorKind::InvalidValue,
                            format!("unknown credentials store `{s}`"),
                            Some("use one of `auto`, `keyring`, `file`".to_owned()),
                        ),
                    }
                }
            }
            "oauth_callback_port" | "mcp_oauth_callback_port" => {
                config.oauth_callback_port = parse_port(&mut r, field, value);
            }
            "tool_name_prefix" => config.tool_name_prefix = r.bool(field, value),
            "multi_environment" => config.multi_environment = r.bool(field, value),
            "tool_exposure" => config.tool_exposure = r.tool_exposure(field, value),
            "gateway" => config.gateway = parse_gateway(&mut r, value),
            "environments" => {}
            "mcp_servers" => {
                let Some(servers) = r.table(field, value) else {
                    continue;
                };
                for (name, server) in servers {
                    let parsed = parse_server(
                        r.cx,
                        name.get_ref(),
                        name.span().start,
                        server,
                        (role == Role::Config).then_some(&config.environments),
                        format.default_timeouts(),
                    );
                    if let Some((name, server)) = parsed {
                        config.servers.insert(name, server);
                    }
                }
            }
            "plugins" => config.plugins = parse_plugins(&mut r, value, &config.environments),
            _ => r.unknown_key(key, TOP_KEYS),
        }
    }
    let (warnings, unusable) = cx.finish_per_server()?;
    config.mark_unusable(unusable);
    Ok(LoadedConfig {
        origin: origin.to_owned(),
        config,
        warnings,
        format: Some(format),
    })
}

fn parse_port(r: &mut Reader<'_, '_>, field: &str, value: &Value<'_>) -> Option<u16> {
    let port = match value.get_ref().as_integer() {
        Some(i) => i64::from_str_radix(i.as_str(), i.radix()).ok(),
        None => {
            r.error(
                field,
                value.span().start,
                ConfigErrorKind::WrongType,
                format!("expected a port number, found {}", type_name(value)),
                Some(format!("write it as `{field} = 8765`")),
            );
            return None;
        }
    };
    let port = port.and_then(|p| u16::try_from(p).ok()).filter(|p| *p != 0);
    if port.is_none() {
        r.error(
            field,
            value.span().start,
            ConfigErrorKind::InvalidValue,
            "port must be between 1 and 65535",
            Some("remove it to use a random port".to_owned()),
        );
    }
    port
}

fn parse_environments(
    r: &mut Reader<'_, '_>,
    value: &Value<'_>,
) -> BTreeMap<EnvironmentId, EnvironmentConfig> {
    let mut out = BTreeMap::new();
    let Some(table) = r.table("environments", value) else {
        return out;
    };
    for (raw_id, settings) in table {
        let scope = Scope::Environment(raw_id.get_ref().to_string());
        let mut er = Reader { cx: r.cx, scope };
        let id = match EnvironmentId::new(raw_id.get_ref().as_ref()) {
            Ok(id) => Some(id),
            Err(err) => {
                er.cx.error(
                    &er.scope,
                    None,
                    raw_id.span().start,
                    ConfigErrorKind::UnknownEnvironment,
                    err.to_string(),
                    Some("rename the `[environments.<id>]` table".to_owned()),
                );
                None
            }
        };
        let Some(settings) = er.section(settings, &format!("[environments.{}]", raw_id.get_ref()))
        else {
            continue;
        };
        let mut environment = EnvironmentConfig::new();
        for (key, value) in settings {
            let field = key.get_ref().as_ref();
            match field {
                "wrapper" => environment.wrapper = er.string_list(field, value).unwrap_or_default(),
                "ssh" => {
                    environment.ssh = crate::formats::toml_ssh::parse_ssh(&mut er, value);
                    if environment.ssh.is_some() && settings.get("wrapper").is_some() {
                        er.error(
                            field,
                            value.span().start,
                            ConfigErrorKind::ConflictingTransport,
                            "sets both `ssh` and `wrapper`",
                            Some("keep one: `ssh` quotes the command for the remote shell and binds its lifetime to the connection; `wrapper` runs the command behind a prefix as written".to_owned()),
                        );
                    }
                }
                "cwd" => environment.cwd = er.non_empty_string(field, value).map(PathBuf::from),
                "env" => environment.env = er.string_map(field, value).unwrap_or_default(),
                "default_tools_approval_mode" => {
                    environment.default_approval_mode = er.approval_mode(field, value);
                }
                "elicitation" => {
                    let Some(policy) = er.string(field, value) else {
                        continue;
                    };
                    environment.elicitation = ElicitationPolicy::parse(&policy);
                    if environment.elicitation.is_none() {
                        er.error(
                            field,
                            value.span().start,
                            ConfigErrorKind::InvalidValue,
                            format!("unknown elicitation policy `{policy}`"),
                            Some("use `ask` or `decline`".to_owned()),
                        );
                    }
                }
                _ => er.unknown_key(key, ENVIRONMENT_KEYS),
            }
        }
        if let Some(id) = id {
            out.insert(id, environment);
        }
    }
    out
}

fn parse_plugins(
    r: &mut Reader<'_, '_>,
    value: &Value<'_>,
    environments: &BTreeMap<EnvironmentId, EnvironmentConfig>,
) -> Vec<PluginRef> {
    let mut out = Vec::new();
    let Some(items) = value.get_ref().as_array() else {
        r.error(
            "plugins",
            value.span().start,
            ConfigErrorKind::WrongType,
            format!("expected an array of tables, found {}", type_name(value)),
            Some("write each plugin as a `[[plugins]]` table with `path = \"...\"`".to_owned()),
        );
        return out;
    };
    for (index, item) in items.iter().enumerate() {
        let mut pr = Reader {
            cx: r.cx,
            scope: Scope::Plugin(index),
        };
        let Some(table) = pr.section(item, "[[plugins]]") else {
            continue;
        };
        let mut path = None;
        let mut envs = Vec::new();
        for (key, value) in table {
            let field = key.get_ref().as_ref();
            match field {
                "path" => path = pr.non_empty_string(field, value).map(PathBuf::from),
                "environments" => {
                    for raw in pr.string_list(field, value).unwrap_or_default() {
                        match EnvironmentId::new(raw.as_str()) {
                            Ok(id) if id.is_local() || environments.contains_key(&id) => {
                                envs.push(id);
                            }
                            _ => pr.error(
                                field,
                                value.span().start,
                                ConfigErrorKind::UnknownEnvironment,
                                format!("unknown environment `{raw}`"),
                                Some(
                                    "use `local` or declare it in `[environments.<id>]`".to_owned(),
                                ),
                            ),
                        }
                    }
                }
                _ => pr.unknown_key(key, PLUGIN_KEYS),
            }
        }
        match path {
            Some(path) => out.push(PluginRef::new(path).with_environments(envs)),
            None if table.get("path").is_none() => pr.error(
                "path",
                item.span().start,
                ConfigErrorKind::MissingField,
                "`path` is missing",
                Some("add `path = \"...\"` pointing at the plugin".to_owned()),
            ),
            None => {}
        }
    }
    out
}

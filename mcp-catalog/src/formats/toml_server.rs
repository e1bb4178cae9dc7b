//! Validation of one `[mcp_servers.<name>]` table.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_key::{EnvironmentId, ServerName};
use toml::de::DeTable;

use crate::diagnostic::{ConfigErrorKind, Scope};
use crate::formats::collect::{
    Collector, env_var_name_ok, header_name_ok, header_value_ok, url_problem,
};
use crate::formats::toml_defaults::read_default;
use crate::formats::toml_values::{Reader, TimeUnit, Value};
use crate::model::config::EnvironmentConfig;
use crate::model::filter::ToolFilter;
use crate::model::policy::ProtocolChoice;
use crate::model::server::ServerConfig;
use crate::model::transport::{
    AuthMode, EmaConfig, HttpConfig, OAuthConfig, StdioConfig, Transport,
};

const STDIO_KEYS: &[&str] = &["command", "args", "env", "env_vars", "cwd"];
const HTTP_KEYS: &[&str] = &[
    "url",
    "transport",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
    "scopes",
    "oauth",
    "oauth_resource",
    "auth",
    "ema",
    "allow_plain_http",
    "dpop",
    "workload_identity",
    "upstream_identity",
    "token_exchange",
];
const COMMON_KEYS: &[&str] = &[
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled_tools",
    "disabled_tools",
    "required",
    "enabled",
    "environment",
    "supports_parallel_tool_calls",
    "default_tools_approval_mode",
    "tools",
    "description",
    "startup",
    "protocol",
    "tool_drift",
    "log_level",
    "tool_cache",
    "always_load",
    "always_load_tools",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdio,
    Http,
    Unknown,
}

/// Validates one server table; `None` if its name is invalid or it is not a table. With
/// other errors the server comes back with the settings that parsed, for the caller to mark
/// unusable. `environments` are the declared
/// ones that `environment` may name; `None` in a plugin file, where `environment` is
/// ignored with a warning.
pub(crate) fn parse_server(
    cx: &mut Collector<'_>,
    raw_name: &str,
    name_offset: usize,
    value: &Value<'_>,
    environments: Option<&BTreeMap<EnvironmentId, EnvironmentConfig>>,
    (startup_timeout, tool_timeout): (std::time::Duration, std::time::Duration),
) -> Option<(ServerName, ServerConfig)> {
    let scope = Scope::Server(raw_name.to_owned());
    let mut r = Reader { cx, scope };
    let name = parse_name(&mut r, raw_name, name_offset);
    let table = r.section(value, &format!("[mcp_servers.{raw_name}]"))?;
    let kind = transport_kind(&mut r, table, name_offset);

    let mut draft = Draft::new();
    // The file format's defaults, for the keys the table leaves out.
    draft.server.startup_timeout = startup_timeout;
    draft.server.tool_timeout = tool_timeout;
    for (key, value) in table {
        let field = key.get_ref().as_ref();
        let offset = key.span().start;
        if wrong_transport_field(&mut r, kind, field, offset, raw_name) {
            continue;
        }
        let read = draft.read_stdio_key(&mut r, field, value)
            || draft.read_http_key(&mut r, field, offset, value)
            || draft.read_common_key(&mut r, field, offset, value, environments.is_none());
        if !read {
            let known: Vec<&str> = STDIO_KEYS
                .iter()
                .chain(HTTP_KEYS)
                .chain(COMMON_KEYS)
                .copied()
                .collect();
            r.unknown_key(key, &known);
        }
    }
    if kind == Kind::Http {
        draft.http.upstream_identity =
            crate::formats::toml_identity::parse_upstream_identity(&mut r, table);
    }
    let server = draft.finish(&mut r, kind, environments);
    // With errors, the settings that did parse (`enabled`, `required`, ...) are kept and the
    // caller replaces the transport with the entry's errors (`Config::mark_unusable`).
    Some((name?, server))
}

/// The server's name, or `None` (with an error suggesting a valid one).
fn parse_name(r: &mut Reader<'_, '_>, raw_name: &str, name_offset: usize) -> Option<ServerName> {
    match ServerName::new(raw_name) {
        Ok(name) => Some(name),
        Err(err) => {
            r.cx.error(
                &r.scope,
                None,
                name_offset,
                ConfigErrorKind::InvalidServerName,
                err.to_string(),
                Some(format!(
                    "rename the table, e.g. `[mcp_servers.{}]`",
                    suggest_name(raw_name)
                )),
            );
            None
        }
    }
}

/// Stdio with `command`, HTTP with `url`; both or neither is an error.
fn transport_kind(r: &mut Reader<'_, '_>, table: &DeTable<'_>, name_offset: usize) -> Kind {
    let has = |key: &str| table.get(key).is_some();
    match (has("command"), has("url")) {
        (true, false) => Kind::Stdio,
        (false, true) => Kind::Http,
        (true, true) => {
            let offset = table.get("url").map_or(name_offset, |v| v.span().start);
            r.error(
                "url",
                offset,
                ConfigErrorKind::ConflictingTransport,
                "both `command` and `url` are set",
                Some(
                    "keep `command` for a local stdio server or `url` for a streamable HTTP \
                     server"
                        .to_owned(),
                ),
            );
            Kind::Unknown
        }
        (false, false) => {
            r.cx.error(
                &r.scope,
                None,
                name_offset,
                ConfigErrorKind::MissingTransport,
                "neither `command` nor `url` is set",
                Some(
                    "add `command = \"...\"` for a stdio server or `url = \"https://...\"` \
                     for a streamable HTTP server"
                        .to_owned(),
                ),
            );
            Kind::Unknown
        }
    }
}

/// Records an error when `field` belongs to the other transport; true if it did.
fn wrong_transport_field(
    r: &mut Reader<'_, '_>,
    kind: Kind,
    field: &str,
    offset: usize,
    raw_name: &str,
) -> bool {
    if !((kind == Kind::Http && STDIO_KEYS.contains(&field))
        || (kind == Kind::Stdio && HTTP_KEYS.contains(&field)))
    {
        return false;
    }
    let (transport, other) = if kind == Kind::Http {
        ("streamable HTTP", "replace `url` with `command` to make")
    } else {
        ("stdio", "replace `command` with `url` to make")
    };
    let message = format!("`{field}` is not supported for {transport} server `{raw_name}`");
    r.error(
        field,
        offset,
        ConfigErrorKind::WrongTransportField,
        message,
        Some(format!(
            "remove it, or {other} `{raw_name}` a {} server",
            other_kind(kind)
        )),
    );
    true
}

/// What one server table's keys set so far, before the transport is known to be valid.
struct Draft<'v, 'i> {
    stdio: StdioConfig,
    http: HttpConfig,
    server: ServerConfig,
    enabled_tools: Option<Vec<String>>,
    disabled_tools: Vec<String>,
    /// `always_load_tools` and where it was written.
    always_load_tools: Option<(Vec<String>, usize)>,
    environment_value: Option<&'v Value<'i>>,
    sse: bool,
    auth_offset: Option<usize>,
    ema_offset: Option<usize>,
    protocol_offset: Option<usize>,
}

impl<'v, 'i> Draft<'v, 'i> {
    fn new() -> Self {
        Self {
            stdio: StdioConfig::new(""),
            http: HttpConfig::new(""),
            server: ServerConfig::stdio(""),
            enabled_tools: None,
            disabled_tools: Vec::new(),
            always_load_tools: None,
            environment_value: None,
            sse: false,
            auth_offset: None,
            ema_offset: None,
            protocol_offset: None,
        }
    }

    /// Reads a stdio key (`command`, `args`, ...); false if `field` is not one.
    fn read_stdio_key(&mut self, r: &mut Reader<'_, '_>, field: &str, value: &Value<'_>) -> bool {
        let stdio = &mut self.stdio;
        match field {
            "command" => {
                if let Some(command) = r.non_empty_string(field, value) {
                    stdio.command = command;
                }
            }
            "args" => stdio.args = r.string_list(field, value).unwrap_or_default(),
            "env" => stdio.env = r.string_map(field, value).unwrap_or_default(),
            "env_vars" => {
                for var in r.string_list(field, value).unwrap_or_default() {
                    check_var_name(r, field, value.span().start, &var);
                    stdio.env_vars.push(var);
                }
            }
            "cwd" => stdio.cwd = r.non_empty_string(field, value).map(PathBuf::from),
            _ => return false,
        }
        true
    }

    /// Reads an HTTP key (`url`, headers, authorization, ...); false if `field` is not one.
    fn read_http_key(
        &mut self,
        r: &mut Reader<'_, '_>,
        field: &str,
        offset: usize,
        value: &Value<'_>,
    ) -> bool {
        let http = &mut self.http;
        match field {
            "url" => {
                if let Some(url) = r.string(field, value) {
                    check_url(r, field, value.span().start, &url);
                    http.url = url;
                }
            }
            "transport" => match r.string(field, value).as_deref() {
                Some("sse") => self.sse = true,
                Some("streamable_http") | None => {}
                Some(other) => r.error(
                    field,
                    value.span().start,
                    ConfigErrorKind::InvalidValue,
                    format!("unknown HTTP transport `{other}`"),
                    Some(
                        "use `streamable_http` (the default) or `sse` for the legacy HTTP+SSE \
                         transport"
                            .to_owned(),
                    ),
                ),
            },
            "bearer_token_env_var" => {
                if let Some(var) = r.string(field, value) {
                    check_var_name(r, field, value.span().start, &var);
                    http.bearer_token_env_var = Some(var);
                }
            }
            "http_headers" => {
                let headers = r.string_map(field, value).unwrap_or_default();
                for (name, header_value) in &headers {
                    check_header(r, field, value.span().start, name, Some(header_value));
                }
                http.http_headers = headers;
            }
            "env_http_headers" => {
                let headers = r.string_map(field, value).unwrap_or_default();
                for (name, var) in &headers {
                    check_header(r, field, value.span().start, name, None);
                    check_var_name(r, field, value.span().start, var);
                }
                http.env_http_headers = headers;
            }
            "scopes" => http.scopes = r.string_list(field, value).unwrap_or_default(),
            "allow_plain_http" => http.allow_plain_http = r.bool(field, value).unwrap_or(false),
            "dpop" => http.dpop = r.bool(field, value).unwrap_or(false),
            "workload_identity" => {
                http.workload_identity =
                    crate::formats::toml_workload::parse_workload_identity(r, value);
            }
            // Read with the whole table, after it (`toml_identity`).
            "upstream_identity" | "token_exchange" => {}
            _ => return self.read_auth_key(r, field, offset, value),
        }
        true
    }

    /// Reads an authorization key (`oauth`, `auth`, `ema`, ...), and rejects an inline
    /// `bearer_token`; false if `field` is none of them.
    fn read_auth_key(
        &mut self,
        r: &mut Reader<'_, '_>,
        field: &str,
        offset: usize,
        value: &Value<'_>,
    ) -> bool {
        let http = &mut self.http;
        match field {
            "oauth" => http.oauth = parse_oauth(r, value),
            "oauth_resource" => {
                if let Some(resource) = r.string(field, value) {
                    check_url(r, field, value.span().start, &resource);
                    http.oauth_resource = Some(resource);
                }
            }
            "auth" => {
                self.auth_offset = Some(value.span().start);
                if let Some(mode) = r.string(field, value) {
                    match AuthMode::parse(&mode) {
                        Some(mode) => http.auth = mode,
                        None => r.error(
                            field,
                            value.span().start,
                            ConfigErrorKind::InvalidValue,
                            format!("unknown auth mode `{mode}`"),
                            Some("use one of `oauth`, `ema`, `none`".to_owned()),
                        ),
                    }
                }
            }
            "ema" => {
                self.ema_offset = Some(value.span().start);
                http.ema = parse_ema(r, value);
            }
            "bearer_token" => r.error(
                field,
                offset,
                ConfigErrorKind::InlineSecret,
                "inline secrets are not accepted",
                Some(
                    "put the token in an environment variable and set \
                     `bearer_token_env_var = \"NAME\"`"
                        .to_owned(),
                ),
            ),
            _ => return false,
        }
        true
    }

    /// Reads a key of either transport (timeouts, tools, policies, ...); false if `field`
    /// is not one. `in_plugin`: `environment` is ignored with a warning.
    fn read_common_key(
        &mut self,
        r: &mut Reader<'_, '_>,
        field: &str,
        offset: usize,
        value: &'v Value<'i>,
        in_plugin: bool,
    ) -> bool {
        let server = &mut self.server;
        match field {
            "startup_timeout_sec" => {
                if let Some(d) = r.seconds(field, value) {
                    server.startup_timeout = d;
                }
            }
            // Codex's millisecond form of the same setting.
            "startup_timeout_ms" => {
                if let Some(d) = r.duration(field, value, TimeUnit::Millis) {
                    server.startup_timeout = d;
                }
            }
            "tool_timeout_sec" => {
                if let Some(d) = r.seconds(field, value) {
                    server.tool_timeout = d;
                }
            }
            "enabled_tools" => self.enabled_tools = r.string_list(field, value),
            "disabled_tools" => {
                self.disabled_tools = r.string_list(field, value).unwrap_or_default();
            }
            "required" => server.required = r.bool(field, value).unwrap_or(false),
            "enabled" => server.enabled = r.bool(field, value).unwrap_or(true),
            "supports_parallel_tool_calls" => {
                server.supports_parallel_tool_calls = r.bool(field, value).unwrap_or(false);
            }
            "environment" if in_plugin => r.cx.ignored_in_plugin(&r.scope, field, offset),
            "environment" => self.environment_value = Some(value),
            _ => return self.read_policy_key(r, field, value),
        }
        true
    }

    /// Reads a per-server policy or description (`tools`, `protocol`, `startup`, ...);
    /// false if `field` is none of them.
    fn read_policy_key(&mut self, r: &mut Reader<'_, '_>, field: &str, value: &Value<'_>) -> bool {
        let server = &mut self.server;
        match field {
            "default_tools_approval_mode" => {
                if let Some(mode) = r.approval_mode(field, value) {
                    server.default_approval_mode = mode;
                }
            }
            "tools" => parse_tools(r, value, server),
            "description" => server.description = r.string(field, value),
            "tool_cache" => server.tool_cache = r.bool(field, value).unwrap_or(true),
            "always_load" => server.always_load = r.bool(field, value).unwrap_or(false),
            "always_load_tools" => {
                if let Some(tools) = r.string_list(field, value) {
                    self.always_load_tools = Some((tools, value.span().start));
                }
            }
            _ => {
                if field == "protocol" {
                    self.protocol_offset = Some(value.span().start);
                }
                // Its own values of the settings it otherwise inherits from the catalog.
                return read_default(r, field, field, value, &mut server.overrides);
            }
        }
        true
    }

    /// The checks that need the whole table, then the server with its transport.
    fn finish(
        mut self,
        r: &mut Reader<'_, '_>,
        kind: Kind,
        environments: Option<&BTreeMap<EnvironmentId, EnvironmentConfig>>,
    ) -> ServerConfig {
        if let Some(value) = self.environment_value
            && let Some(environments) = environments
            && let Some(environment) = parse_environment_ref(r, value, environments)
        {
            self.server.environment = environment;
        }

        if kind == Kind::Http {
            check_auth(r, self.http.auth, self.auth_offset, self.ema_offset);
        }
        if self.sse
            && self.server.overrides.protocol == Some(ProtocolChoice::V2026_07_28)
            && let Some(offset) = self.protocol_offset
        {
            r.error(
                "protocol",
                offset,
                ConfigErrorKind::InvalidValue,
                "the legacy SSE transport speaks only the `initialize` era (2025-11-25 and older)",
                Some(
                    "remove `protocol`, or use the server's streamable HTTP endpoint for \
                     2026-07-28"
                        .to_owned(),
                ),
            );
        }

        let mut filter = ToolFilter::new().with_disabled_tools(self.disabled_tools);
        if let Some(enabled) = self.enabled_tools {
            filter = filter.with_enabled_tools(enabled);
        }
        let mut server = self.server;
        if let Some((tools, offset)) = self.always_load_tools {
            check_always_load(r, &server, &filter, &tools, offset);
            server.always_load_tools = tools.into_iter().collect();
        }
        server.tool_filter = filter;
        server.transport = match kind {
            Kind::Stdio => Transport::Stdio(self.stdio),
            Kind::Http if self.sse => Transport::Sse(self.http),
            Kind::Http => Transport::StreamableHttp(self.http),
            // An error was recorded: the caller replaces the transport.
            Kind::Unknown => Transport::Stdio(StdioConfig::new("")),
        };
        server
    }
}

/// `always_load_tools` names tools, each one the server's filter lets through, and says
/// something `always_load = true` does not already say.
fn check_always_load(
    r: &mut Reader<'_, '_>,
    server: &ServerConfig,
    filter: &ToolFilter,
    tools: &[String],
    offset: usize,
) {
    const FIELD: &str = "always_load_tools";
    if server.always_load && !tools.is_empty() {
        r.error(
            FIELD,
            offset,
            ConfigErrorKind::InvalidValue,
            "`always_load = true` already loads every tool of the server",
            Some("remove `always_load_tools`, or set `always_load = false`".to_owned()),
        );
    }
    for tool in tools {
        if tool.trim().is_empty() {
            r.error(
                FIELD,
                offset,
                ConfigErrorKind::InvalidValue,
                "an empty tool name",
                Some("write the tool's raw name as the server lists it".to_owned()),
            );
        } else if !filter.allows(tool) {
            r.error(
                FIELD,
                offset,
                ConfigErrorKind::InvalidValue,
                format!("`{tool}` is hidden by `enabled_tools` or `disabled_tools`"),
                Some(format!(
                    "remove `{tool}` from `always_load_tools`, or let the filter allow it"
                )),
            );
        }
    }
}

/// `auth = "ema"` needs an `ema` table; an `ema` table conflicts with other modes.
fn check_auth(
    r: &mut Reader<'_, '_>,
    auth: AuthMode,
    auth_offset: Option<usize>,
    ema_offset: Option<usize>,
) {
    match (auth, ema_offset, auth_offset) {
        (AuthMode::Ema, None, Some(offset)) => r.error(
            "auth",
            offset,
            ConfigErrorKind::MissingField,
            "`auth = \"ema\"` needs an `ema` table",
            Some(format!(
                "add `[mcp_servers.{}.ema]` with `issuer` and `client_id`",
                r.scope_name()
            )),
        ),
        (AuthMode::OAuth | AuthMode::None, Some(at), _) => r.error(
            "ema",
            at,
            ConfigErrorKind::InvalidValue,
            format!("an `ema` table conflicts with `auth = \"{auth}\"`"),
            Some("set `auth = \"ema\"` or remove the `ema` table".to_owned()),
        ),
        _ => {}
    }
}

fn parse_environment_ref(
    r: &mut Reader<'_, '_>,
    value: &Value<'_>,
    environments: &BTreeMap<EnvironmentId, EnvironmentConfig>,
) -> Option<EnvironmentId> {
    let raw = r.string("environment", value)?;
    let offset = value.span().start;
    let hint = || {
        let mut known: Vec<String> = vec!["local".to_owned()];
        known.extend(environments.keys().map(|id| id.as_str().to_owned()));
        Some(format!(
            "use `local` or declare it in `[environments.<id>]`; known: {}",
            known.join(", ")
        ))
    };
    match EnvironmentId::new(raw.as_str()) {
        Ok(id) if id.is_local() || environments.contains_key(&id) => Some(id),
        Ok(_) => {
            let message = format!("unknown environment `{raw}`");
            r.error(
                "environment",
                offset,
                ConfigErrorKind::UnknownEnvironment,
                message,
                hint(),
            );
            None
        }
        Err(err) => {
            r.error(
                "environment",
                offset,
                ConfigErrorKind::UnknownEnvironment,
                err.to_string(),
                hint(),
            );
            None
        }
    }
}

fn parse_tools(r: &mut Reader<'_, '_>, value: &Value<'_>, server: &mut ServerConfig) {
    let Some(tools) = r.table("tools", value) else {
        return;
    };
    for (tool, settings) in tools {
        let tool_name = tool.get_ref().as_ref();
        let path = format!("tools.{tool_name}");
        let Some(settings) = r.table(&path, settings) else {
            continue;
        };
        for (key, item) in settings {
            if key.get_ref().as_ref() == "approval_mode" {
                let path = format!("tools.{tool_name}.approval_mode");
                if let Some(mode) = r.approval_mode(&path, item) {
                    server
                        .tool_approval_modes
                        .insert(tool_name.to_owned(), mode);
                }
            } else {
                r.unknown_key(key, &["approval_mode"]);
            }
        }
    }
}

fn required_string(
    r: &mut Reader<'_, '_>,
    table: &DeTable<'_>,
    parent: &str,
    key: &str,
    at: usize,
) -> Option<String> {
    let path = format!("{parent}.{key}");
    match table.get(key) {
        Some(value) => r.non_empty_string(&path, value),
        None => {
            r.error(
                &path,
                at,
                ConfigErrorKind::MissingField,
                format!("`{path}` is missing"),
                Some(format!("add `{key} = \"...\"` to `{parent}`")),
            );
            None
        }
    }
}

fn parse_oauth(r: &mut Reader<'_, '_>, value: &Value<'_>) -> Option<OAuthConfig> {
    let table = r.table("oauth", value)?;
    for (key, _) in table {
        if key.get_ref().as_ref() != "client_id" {
            r.unknown_key(key, &["client_id"]);
        }
    }
    let client_id = required_string(r, table, "oauth", "client_id", value.span().start)?;
    Some(OAuthConfig::new(client_id))
}

fn parse_ema(r: &mut Reader<'_, '_>, value: &Value<'_>) -> Option<EmaConfig> {
    let table = r.table("ema", value)?;
    for (key, _) in table {
        if !["issuer", "client_id"].contains(&key.get_ref().as_ref()) {
            r.unknown_key(key, &["issuer", "client_id"]);
        }
    }
    let at = value.span().start;
    let issuer = required_string(r, table, "ema", "issuer", at);
    if let (Some(issuer), Some(v)) = (&issuer, table.get("issuer")) {
        check_url(r, "ema.issuer", v.span().start, issuer);
    }
    let client_id = required_string(r, table, "ema", "client_id", at);
    Some(EmaConfig::new(issuer?, client_id?))
}

pub(crate) fn check_url(r: &mut Reader<'_, '_>, field: &str, offset: usize, url: &str) {
    if let Some(problem) = url_problem(url) {
        r.error(
            field,
            offset,
            ConfigErrorKind::InvalidUrl,
            format!("`{url}` {problem}"),
            Some("use an absolute URL such as `https://example.com/mcp`".to_owned()),
        );
    }
}

fn check_var_name(r: &mut Reader<'_, '_>, field: &str, offset: usize, var: &str) {
    if !env_var_name_ok(var) {
        let message = if var.is_empty() {
            "the environment variable name is empty".to_owned()
        } else {
            format!("`{var}` is not a valid environment variable name")
        };
        r.error(
            field,
            offset,
            ConfigErrorKind::InvalidValue,
            message,
            Some("use a non-empty name without `=`".to_owned()),
        );
    }
}

fn check_header(
    r: &mut Reader<'_, '_>,
    field: &str,
    offset: usize,
    name: &str,
    value: Option<&str>,
) {
    if !header_name_ok(name) {
        r.error(
            field,
            offset,
            ConfigErrorKind::InvalidValue,
            format!("`{name}` is not a valid HTTP header name"),
            Some("use letters, digits and `-`".to_owned()),
        );
    }
    if value.is_some_and(|v| !header_value_ok(v)) {
        r.error(
            field,
            offset,
            ConfigErrorKind::InvalidValue,
            format!("the value of header `{name}` contains a line break"),
            Some("remove CR/LF characters from the value".to_owned()),
        );
    }
}

fn other_kind(kind: Kind) -> &'static str {
    if kind == Kind::Http {
        "stdio"
    } else {
        "streamable HTTP"
    }
}

/// A valid server name close to `raw`: invalid bytes become `_`, at most 64 bytes.
pub(crate) fn suggest_name(raw: &str) -> String {
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        name.push_str("server");
    }
    name
}

//! The JSON forms: Claude Code's `.mcp.json` (`{"mcpServers": {"name": {...}}}`) and the
//! files of other clients ([`ConfigFormat`]), mapped to the same model.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use mcp_key::ServerName;
use serde_json::{Map, Value};

use crate::diagnostic::{ConfigErrorKind, ConfigErrors, Scope, json_type_name};
use crate::env::EnvLookup;
use crate::formats::client_env::{ClientEnv, braced, input_variable};
use crate::formats::collect::{Collector, Role, header_name_ok, header_value_ok, url_problem};
use crate::formats::expand::{ExpandError, expand};
use crate::model::config::{Config, LoadedConfig};
use crate::model::filter::ToolFilter;
use crate::model::format::ConfigFormat;
use crate::model::server::{ApprovalMode, ServerConfig};
use crate::model::transport::{HttpConfig, StdioConfig, Transport};

const STDIO_KEYS: &[&str] = &["command", "args", "env", "cwd", "envFile"];
const HTTP_KEYS: &[&str] = &["url", "httpUrl", "serverUrl", "headers"];

/// The server keys each format documents (others are unknown-key warnings).
fn known_keys(format: ConfigFormat) -> &'static [&'static str] {
    match format {
        ConfigFormat::Cursor => &[
            "type", "command", "args", "env", "envFile", "url", "headers",
        ],
        ConfigFormat::VsCode => &[
            "type", "command", "args", "env", "envFile", "cwd", "url", "headers", "dev",
        ],
        ConfigFormat::Gemini => &[
            "command",
            "args",
            "env",
            "cwd",
            "url",
            "httpUrl",
            "headers",
            "timeout",
            "trust",
            "includeTools",
            "excludeTools",
            "description",
        ],
        ConfigFormat::Windsurf => &["command", "args", "env", "serverUrl", "url", "headers"],
        ConfigFormat::Zed => &["source", "command", "args", "env", "url", "headers"],
        ConfigFormat::Toml
        | ConfigFormat::Codex
        | ConfigFormat::Goose
        | ConfigFormat::McpJson
        | ConfigFormat::ClaudeDesktop => {
            &["type", "command", "args", "env", "cwd", "url", "headers"]
        }
    }
}

/// Keys holding a streamable HTTP URL, and the key holding a legacy SSE URL.
fn url_keys(format: ConfigFormat) -> (&'static [&'static str], Option<&'static str>) {
    match format {
        ConfigFormat::Gemini => (&["httpUrl"], Some("url")),
        ConfigFormat::Windsurf => (&["serverUrl", "url"], None),
        _ => (&["url"], None),
    }
}

pub(crate) fn parse(
    text: &str,
    origin: &str,
    env: &dyn EnvLookup,
    format: ConfigFormat,
) -> Result<LoadedConfig, ConfigErrors> {
    parse_format(text, origin, env, Role::Config, format)
}

/// Parses `.mcp.json` text; for [`Role::Plugin`], an `environment` key of a server is
/// ignored with a warning that says the installation decides.
pub(crate) fn parse_as(
    text: &str,
    origin: &str,
    env: &dyn EnvLookup,
    role: Role,
) -> Result<LoadedConfig, ConfigErrors> {
    parse_format(text, origin, env, role, ConfigFormat::McpJson)
}

fn parse_format(
    text: &str,
    origin: &str,
    env: &dyn EnvLookup,
    role: Role,
    format: ConfigFormat,
) -> Result<LoadedConfig, ConfigErrors> {
    let mut cx = Collector::new(text, origin);
    // Comments and trailing commas are blanked out: offsets stay those of `text`.
    let stripped = if format.allows_comments() {
        crate::formats::jsonc::strip(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let text: &str = &stripped;
    let env = ClientEnv::new(env, format, origin);
    let env: &dyn EnvLookup = &env;
    let Some(root) = read_root(&mut cx, text, format) else {
        return Err(cx
            .finish()
            .err()
            .unwrap_or_else(|| ConfigErrors::new(Vec::new())));
    };
    check_top_level_keys(&mut cx, text, origin, &root, format);
    let mut config = Config::new();
    let servers = JsonServers {
        text,
        env,
        role,
        format,
    };
    servers.read(&mut cx, &root, &mut config);
    let (warnings, unusable) = cx.finish_per_server()?;
    config.mark_unusable(unusable);
    Ok(LoadedConfig {
        origin: origin.to_owned(),
        config,
        warnings,
        format: Some(format),
    })
}

/// The top-level object; `None` (with an error) when `text` is not JSON or not an object.
fn read_root(
    cx: &mut Collector<'_>,
    text: &str,
    format: ConfigFormat,
) -> Option<Map<String, Value>> {
    let servers_key = format.servers_key();
    let root: Value = match serde_json::from_str(text) {
        Ok(root) => root,
        Err(err) => {
            let offset = offset_of(text, err.line(), err.column());
            cx.error(
                &Scope::Document,
                None,
                offset,
                ConfigErrorKind::Syntax,
                format!("invalid JSON: {}", strip_position(&err.to_string())),
                Some("fix the syntax at this position".to_owned()),
            );
            return None;
        }
    };
    let Value::Object(root) = root else {
        cx.error(
            &Scope::Document,
            None,
            0,
            ConfigErrorKind::WrongType,
            "expected a JSON object",
            Some(format!("write `{{\"{servers_key}\": {{...}}}}`")),
        );
        return None;
    };
    Some(root)
}

/// Warns about top-level keys other than the servers (and VS Code's `inputs`).
fn check_top_level_keys(
    cx: &mut Collector<'_>,
    text: &str,
    origin: &str,
    root: &Map<String, Value>,
    format: ConfigFormat,
) {
    let servers_key = format.servers_key();
    // VS Code's `inputs` are answered from the environment (`${input:id}`).
    let top_known: &[&str] = if format == ConfigFormat::VsCode {
        &["servers", "inputs"]
    } else {
        &[servers_key]
    };
    if is_claude_code_state(origin) {
        // Claude Code's `~/.claude.json` is its state file: only `mcpServers` (the user
        // scope) is configuration; its other keys are not worth a warning each.
        note_local_scope(cx, text, root);
    } else {
        for key in root.keys().filter(|k| !top_known.contains(&k.as_str())) {
            let offset = locate(text, &[key]);
            cx.unknown_key(&Scope::Document, key, offset, top_known);
        }
    }
}

/// What every server entry of one text is read with.
struct JsonServers<'t> {
    text: &'t str,
    env: &'t dyn EnvLookup,
    role: Role,
    format: ConfigFormat,
}

impl JsonServers<'_> {
    /// Reads every entry of the servers object into `config`.
    fn read(&self, cx: &mut Collector<'_>, root: &Map<String, Value>, config: &mut Config) {
        let servers_key = self.format.servers_key();
        match root.get(servers_key) {
            None => {}
            Some(Value::Object(servers)) => {
                for (name, server) in servers {
                    let mut p = JsonServer {
                        cx: &mut *cx,
                        text: self.text,
                        env: self.env,
                        name,
                        role: self.role,
                        format: self.format,
                    };
                    if let Some((name, server)) = p.parse(server) {
                        config.servers.insert(name, server);
                    }
                }
            }
            Some(other) => cx.error(
                &Scope::Document,
                Some(servers_key),
                locate(self.text, &[servers_key]),
                ConfigErrorKind::WrongType,
                format!("expected an object, found {}", json_type_name(other)),
                Some(format!("write `\"{servers_key}\": {{\"name\": {{...}}}}`")),
            ),
        }
    }
}

struct JsonServer<'c, 'a, 't> {
    cx: &'c mut Collector<'a>,
    text: &'t str,
    env: &'t dyn EnvLookup,
    name: &'t str,
    role: Role,
    format: ConfigFormat,
}

/// What one entry's keys set so far.
struct Draft {
    stdio: StdioConfig,
    http: HttpConfig,
    extra: Extra,
    /// The one key the URL is read from (see [`JsonServer::url_key`]).
    url_key: Option<&'static str>,
}

/// The transport an entry declares or implies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdio,
    Http,
    /// The legacy HTTP+SSE transport (`"type": "sse"`, Gemini CLI's `url`).
    Sse,
}

impl JsonServer<'_, '_, '_> {
    fn scope(&self) -> Scope {
        Scope::Server(self.name.to_owned())
    }

    fn offset(&self, field: Option<&str>) -> usize {
        let servers_key = self.format.servers_key();
        let mut path = vec![servers_key, self.name];
        path.extend(field);
        locate_opt(self.text, &path)
            .or_else(|| locate_opt(self.text, &[servers_key, self.name]))
            .unwrap_or(0)
    }

    fn error(&mut self, field: Option<&str>, kind: ConfigErrorKind, message: String, hint: &str) {
        let offset = self.offset(field.map(|f| f.split(['.', '[']).next().unwrap_or(f)));
        let scope = self.scope();
        self.cx
            .error(&scope, field, offset, kind, message, Some(hint.to_owned()));
    }

    fn parse(&mut self, value: &Value) -> Option<(ServerName, ServerConfig)> {
        let before = self.cx.error_count();
        let name = self.server_name();
        let Some(object) = value.as_object() else {
            let message = format!("expected an object, found {}", json_type_name(value));
            self.error(
                None,
                ConfigErrorKind::WrongType,
                message,
                "write `{\"command\": \"...\"}`",
            );
            return None;
        };
        let kind = self.transport_kind(object)?;
        let mut draft = Draft {
            stdio: StdioConfig::new(""),
            http: HttpConfig::new(""),
            extra: Extra::default(),
            url_key: self.url_key(object, kind),
        };
        for (key, value) in object {
            if self.key_fits(key, kind) {
                self.read_key(&mut draft, key, value);
            }
        }
        if self.cx.error_count() != before {
            return None;
        }
        let transport = match kind {
            Kind::Stdio => Transport::Stdio(draft.stdio),
            Kind::Http => Transport::StreamableHttp(draft.http),
            Kind::Sse => Transport::Sse(draft.http),
        };
        Some((name?, draft.extra.apply(ServerConfig::new(transport))))
    }

    /// The entry's name, or `None` (with an error).
    fn server_name(&mut self) -> Option<ServerName> {
        match ServerName::new(self.name) {
            Ok(name) => Some(name),
            Err(err) => {
                let hint = format!("rename the entry in `{}`", self.format.servers_key());
                self.error(
                    None,
                    ConfigErrorKind::InvalidServerName,
                    err.to_string(),
                    &hint,
                );
                None
            }
        }
    }

    /// The one key the URL is read from, when a format has two (Gemini CLI's SSE `url`
    /// beside `httpUrl`, Windsurf's `url` beside `serverUrl`).
    fn url_key(&self, object: &Map<String, Value>, kind: Kind) -> Option<&'static str> {
        let (http_keys, sse_key) = url_keys(self.format);
        http_keys
            .iter()
            .copied()
            .find(|k| object.contains_key(*k))
            .or(sse_key.filter(|_| kind == Kind::Sse))
    }

    /// Whether `key` is read: an unknown key is a warning (an `environment` of a plugin's
    /// server is ignored with one) and a key of the other transport an error.
    fn key_fits(&mut self, key: &str, kind: Kind) -> bool {
        let known = known_keys(self.format);
        if !known.contains(&key) {
            let offset = self.offset(Some(key));
            let scope = self.scope();
            if key == "environment" && self.role == Role::Plugin {
                self.cx.ignored_in_plugin(&scope, key, offset);
            } else {
                let client = (self.format != ConfigFormat::McpJson).then_some(self.format);
                self.cx.unknown_key_of(&scope, key, offset, known, client);
            }
            return false;
        }
        let is_http = kind != Kind::Stdio;
        let wrong = if is_http { STDIO_KEYS } else { HTTP_KEYS };
        if wrong.contains(&key) {
            let (transport, other) = if kind == Kind::Sse {
                ("legacy SSE", "stdio")
            } else if is_http {
                ("streamable HTTP", "stdio")
            } else {
                ("stdio", "HTTP")
            };
            let message = format!(
                "`{key}` is not supported for {transport} server `{}`",
                self.name
            );
            let hint = format!("remove it, or make this an {other} server");
            self.error(
                Some(key),
                ConfigErrorKind::WrongTransportField,
                message,
                &hint,
            );
            return false;
        }
        true
    }

    /// Reads one known key of the entry into `draft`.
    fn read_key(&mut self, draft: &mut Draft, field: &str, value: &Value) {
        match field {
            "type" | "source" => {}
            "command" if value.is_object() && self.format == ConfigFormat::Zed => {
                self.zed_command(value, &mut draft.stdio);
            }
            "command" => {
                if let Some(command) = self.string(field, value) {
                    if command.trim().is_empty() {
                        let message = "`command` is empty".to_owned();
                        let hint = "set the program to run";
                        self.error(Some(field), ConfigErrorKind::InvalidValue, message, hint);
                    }
                    draft.stdio.command = command;
                }
            }
            "args" => draft.stdio.args = self.string_list(field, value),
            "env" => draft.stdio.env = self.string_map(field, value),
            "cwd" => draft.stdio.cwd = self.string(field, value).map(PathBuf::from),
            "url" | "httpUrl" | "serverUrl" if Some(field) != draft.url_key => {
                let offset = self.offset(Some(field));
                let scope = self.scope();
                let used = draft.url_key.unwrap_or("url");
                let message = format!("`{field}` is ignored: `{used}` is used");
                self.cx
                    .warning(&scope, field, offset, message, "keep only one of them");
            }
            "url" | "httpUrl" | "serverUrl" => {
                if let Some(url) = self.string(field, value) {
                    if let Some(problem) = url_problem(&url) {
                        let hint = "use an absolute URL such as `https://example.com/mcp`";
                        let message = format!("`{url}` {problem}");
                        self.error(Some(field), ConfigErrorKind::InvalidUrl, message, hint);
                    }
                    draft.http.url = url;
                }
            }
            "headers" => {
                let headers = self.string_map(field, value);
                for (name, value) in &headers {
                    if !header_name_ok(name) || !header_value_ok(value) {
                        let message = format!("header `{name}` is not a valid HTTP header");
                        let hint = "use a token name and a value without line breaks";
                        self.error(Some(field), ConfigErrorKind::InvalidValue, message, hint);
                    }
                }
                draft.http.http_headers = headers;
            }
            "envFile" | "dev" => {
                let offset = self.offset(Some(field));
                let scope = self.scope();
                let message = format!("`{field}` is not supported and was ignored");
                let hint = if field == "envFile" {
                    "list the variables in `env` instead"
                } else {
                    "it only matters inside VS Code"
                };
                self.cx.warning(&scope, field, offset, message, hint);
            }
            _ => self.extra(field, value, &mut draft.extra),
        }
    }

    /// Gemini CLI's server settings beyond the transport.
    fn extra(&mut self, field: &str, value: &Value, extra: &mut Extra) {
        match field {
            "timeout" => extra.tool_timeout = self.millis(field, value),
            "includeTools" => extra.include = Some(self.string_list(field, value)),
            "excludeTools" => extra.exclude = self.string_list(field, value),
            "description" => extra.description = self.string(field, value),
            "trust" => match value.as_bool() {
                Some(trust) => extra.trust = trust,
                None => {
                    let message = format!("expected a boolean, found {}", json_type_name(value));
                    self.error(
                        Some(field),
                        ConfigErrorKind::WrongType,
                        message,
                        "write `true` or `false`",
                    );
                }
            },
            _ => {}
        }
    }

    /// A positive number of milliseconds.
    fn millis(&mut self, field: &str, value: &Value) -> Option<Duration> {
        let duration = value
            .as_f64()
            .filter(|ms| ms.is_finite() && *ms > 0.0)
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
            .filter(|d| !d.is_zero());
        if duration.is_none() {
            let message = format!("timeout must be a positive number of milliseconds, got {value}");
            let hint = "use e.g. `30000`, or remove it for the default";
            self.error(Some(field), ConfigErrorKind::InvalidTimeout, message, hint);
        }
        duration
    }

    /// Zed's older `"command": {"path": "...", "args": [...], "env": {...}}`.
    fn zed_command(&mut self, value: &Value, stdio: &mut StdioConfig) {
        let Some(object) = value.as_object() else {
            return;
        };
        for (key, item) in object {
            let field = format!("command.{key}");
            match key.as_str() {
                "path" => {
                    if let Some(path) = self.string(&field, item) {
                        stdio.command = path;
                    }
                }
                "args" => stdio.args = self.string_list(&field, item),
                "env" => stdio.env = self.string_map(&field, item),
                _ => {
                    let offset = self.offset(Some("command"));
                    let scope = self.scope();
                    self.cx.unknown_key(
                        &scope,
                        &field,
                        offset,
                        &["command.path", "command.args", "command.env"],
                    );
                }
            }
        }
        if stdio.command.trim().is_empty() {
            let message = "`command.path` is missing or empty".to_owned();
            self.error(
                Some("command"),
                ConfigErrorKind::MissingField,
                message,
                "set `\"path\"` to the program to run",
            );
        }
    }

    /// The entry's transport, `None` after an error.
    fn transport_kind(&mut self, object: &Map<String, Value>) -> Option<Kind> {
        let has_command = object.contains_key("command");
        let (http_keys, sse_key) = url_keys(self.format);
        let http_key = http_keys.iter().copied().find(|k| object.contains_key(*k));
        let sse_key = sse_key.filter(|k| object.contains_key(*k));
        let url_key = http_key.or(sse_key);
        let declared = match object.get("type") {
            None => None,
            Some(Value::String(t)) => match t.as_str() {
                "stdio" => Some(Kind::Stdio),
                "http" | "streamable-http" | "streamable_http" | "streamableHttp" => {
                    Some(Kind::Http)
                }
                "sse" => Some(Kind::Sse),
                other => {
                    let message = format!("unknown transport type `{other}`");
                    let hint = "use `stdio`, `http` or `sse`";
                    self.error(Some("type"), ConfigErrorKind::InvalidValue, message, hint);
                    return None;
                }
            },
            Some(other) => {
                let message = format!("expected a string, found {}", json_type_name(other));
                self.error(
                    Some("type"),
                    ConfigErrorKind::WrongType,
                    message,
                    "use `\"http\"`",
                );
                return None;
            }
        };
        let url_name = url_key.or(http_keys.first().copied()).unwrap_or("url");
        match (declared, has_command, url_key.is_some()) {
            (_, true, true) => {
                let message = format!("both `command` and `{url_name}` are set");
                let hint =
                    format!("keep `command` for a stdio server or `{url_name}` for an HTTP server");
                self.error(
                    Some(url_name),
                    ConfigErrorKind::ConflictingTransport,
                    message,
                    &hint,
                );
                None
            }
            // Gemini CLI's `url` is the legacy SSE endpoint (`httpUrl` is streamable HTTP).
            (None, false, true) if http_key.is_none() => Some(Kind::Sse),
            (Some(Kind::Sse), false, true) => Some(Kind::Sse),
            (Some(Kind::Http), _, true) | (None, false, true) => Some(Kind::Http),
            (Some(Kind::Stdio), true, _) | (None, true, false) => Some(Kind::Stdio),
            (Some(Kind::Http | Kind::Sse), _, false) => {
                let message = format!("`{url_name}` is missing for an HTTP server");
                let hint = format!("add `\"{url_name}\"`");
                self.error(
                    Some(url_name),
                    ConfigErrorKind::MissingField,
                    message,
                    &hint,
                );
                None
            }
            (Some(Kind::Stdio), false, true) => {
                let message = "`command` is missing for a stdio server".to_owned();
                let hint = "add `\"command\"`, or use `\"type\": \"http\"` for a URL";
                self.error(None, ConfigErrorKind::MissingField, message, hint);
                None
            }
            // Zed's extension-provided servers get their command from the extension.
            (None, false, false)
                if self.format == ConfigFormat::Zed
                    && object.get("source").and_then(Value::as_str) == Some("extension") =>
            {
                let message = "the server is provided by a Zed extension, which is not \
                               available here"
                    .to_owned();
                let hint =
                    "give the server's own `\"command\"` with its `\"args\"`, or its `\"url\"`";
                self.error(
                    Some("source"),
                    ConfigErrorKind::MissingTransport,
                    message,
                    hint,
                );
                None
            }
            (Some(Kind::Stdio), false, false) | (None, false, false) => {
                let message = format!("neither `command` nor `{url_name}` is set");
                let hint = format!(
                    "add `\"command\"` for a stdio server or `\"{url_name}\"` for an HTTP server"
                );
                self.error(None, ConfigErrorKind::MissingTransport, message, &hint);
                None
            }
        }
    }

    fn string(&mut self, field: &str, value: &Value) -> Option<String> {
        let Some(raw) = value.as_str() else {
            let message = format!("expected a string, found {}", json_type_name(value));
            self.error(
                Some(field),
                ConfigErrorKind::WrongType,
                message,
                "use a quoted string",
            );
            return None;
        };
        if !self.format.expands_variables() {
            return Some(raw.to_owned());
        }
        let raw = if self.format == ConfigFormat::Gemini {
            braced(raw)
        } else {
            std::borrow::Cow::Borrowed(raw)
        };
        match expand(&raw, self.env) {
            Ok(expanded) => Some(expanded),
            Err(err) => {
                let (kind, message, hint) = match err {
                    ExpandError::Undefined(var) if var.starts_with("input:") => {
                        let id = var.trim_start_matches("input:");
                        let from = input_variable(id);
                        (
                            ConfigErrorKind::UndefinedVariable,
                            format!("input `{id}` has no value"),
                            format!(
                                "set `{from}` in the environment, or run the host on a \
                                 terminal that asks for it"
                            ),
                        )
                    }
                    ExpandError::Undefined(var) if var.starts_with("env:") => {
                        let var = var.trim_start_matches("env:");
                        (
                            ConfigErrorKind::UndefinedVariable,
                            format!("variable `{var}` is not set"),
                            format!("set `{var}` in the environment"),
                        )
                    }
                    ExpandError::Undefined(var) if self.format != ConfigFormat::McpJson => (
                        ConfigErrorKind::UndefinedVariable,
                        format!("variable `{var}` is not set"),
                        format!("set `{var}` in the environment"),
                    ),
                    ExpandError::Undefined(var) => (
                        ConfigErrorKind::UndefinedVariable,
                        format!("variable `{var}` is not set"),
                        format!("set `{var}` in the environment or write `${{{var}:-default}}`"),
                    ),
                    ExpandError::Unterminated => (
                        ConfigErrorKind::InvalidValue,
                        "`${` is not closed".to_owned(),
                        "write `${NAME}` or `${NAME:-default}`".to_owned(),
                    ),
                    ExpandError::EmptyName => (
                        ConfigErrorKind::InvalidValue,
                        "`${}` has no variable name".to_owned(),
                        "write `${NAME}` or `${NAME:-default}`".to_owned(),
                    ),
                };
                self.error(Some(field), kind, message, &hint);
                None
            }
        }
    }

    fn string_list(&mut self, field: &str, value: &Value) -> Vec<String> {
        let Some(items) = value.as_array() else {
            let message = format!(
                "expected an array of strings, found {}",
                json_type_name(value)
            );
            self.error(
                Some(field),
                ConfigErrorKind::WrongType,
                message,
                "write `[\"...\"]`",
            );
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.extend(self.string(&format!("{field}[{i}]"), item));
        }
        out
    }

    fn string_map(&mut self, field: &str, value: &Value) -> BTreeMap<String, String> {
        let Some(entries) = value.as_object() else {
            let message = format!(
                "expected an object of strings, found {}",
                json_type_name(value)
            );
            let hint = "write `{\"NAME\": \"value\"}`";
            self.error(Some(field), ConfigErrorKind::WrongType, message, hint);
            return BTreeMap::new();
        };
        let mut out = BTreeMap::new();
        for (key, item) in entries {
            if let Some(value) = self.string(&format!("{field}.{key}"), item) {
                out.insert(key.clone(), value);
            }
        }
        out
    }
}

/// Server settings of other clients beyond the transport.
#[derive(Default)]
struct Extra {
    tool_timeout: Option<Duration>,
    include: Option<Vec<String>>,
    exclude: Vec<String>,
    trust: bool,
    description: Option<String>,
}

impl Extra {
    fn apply(self, mut server: ServerConfig) -> ServerConfig {
        if let Some(timeout) = self.tool_timeout {
            server.tool_timeout = timeout;
        }
        let mut filter = ToolFilter::new().with_disabled_tools(self.exclude);
        if let Some(include) = self.include {
            filter = filter.with_enabled_tools(include);
        }
        server.tool_filter = filter;
        if self.trust {
            // Gemini CLI's `trust: true`: tool calls are never confirmed.
            server.default_approval_mode = ApprovalMode::Approve;
        }
        server.description = self.description;
        server
    }
}

/// Whether `origin` names Claude Code's user state file (`~/.claude.json`).
fn is_claude_code_state(origin: &str) -> bool {
    std::path::Path::new(origin)
        .file_name()
        .is_some_and(|name| name == ".claude.json")
}

/// One warning when `~/.claude.json` holds local-scope servers (`projects.<path>.mcpServers`,
/// which Claude Code uses in that project only): they are not read.
fn note_local_scope(cx: &mut Collector<'_>, text: &str, root: &Map<String, Value>) {
    let Some(Value::Object(projects)) = root.get("projects") else {
        return;
    };
    let with_servers: Vec<&String> = projects
        .iter()
        .filter(|(_, p)| {
            p.get("mcpServers")
                .and_then(Value::as_object)
                .is_some_and(|servers| !servers.is_empty())
        })
        .map(|(path, _)| path)
        .collect();
    if let Some(first) = with_servers.first() {
        let message = format!(
            "the local-scope servers of {} project(s) in `projects` (e.g. `{first}`) are not read",
            with_servers.len()
        );
        cx.warning(
            &Scope::Document,
            "projects",
            locate(text, &["projects"]),
            message,
            "move them to the project's `.mcp.json` (or run `claude mcp add --scope project`) to use them here",
        );
    }
}

fn locate_opt(text: &str, path: &[&str]) -> Option<usize> {
    crate::formats::json_locate::locate(text, path)
}

fn locate(text: &str, path: &[&str]) -> usize {
    locate_opt(text, path).unwrap_or(0)
}

/// Byte offset of a serde_json (line, column) position, both 1-based.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum::<usize>();
    (line_start + column.saturating_sub(1)).min(text.len())
}

/// serde_json appends " at line X column Y"; the location is shown separately.
fn strip_position(message: &str) -> &str {
    message
        .rsplit_once(" at line ")
        .map_or(message, |(head, _)| head)
}

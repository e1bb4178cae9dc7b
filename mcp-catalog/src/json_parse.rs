//! The `.mcp.json` form: `{"mcpServers": {"name": {...}}}`, mapped to the same model.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_key::ServerName;
use serde_json::{Map, Value};

use crate::collect::{Collector, Role, header_name_ok, header_value_ok, url_problem};
use crate::config::{Config, LoadedConfig};
use crate::diagnostic::{ConfigErrorKind, ConfigErrors, Scope};
use crate::env::EnvLookup;
use crate::expand::{ExpandError, expand};
use crate::server::ServerConfig;
use crate::transport::{HttpConfig, StdioConfig, Transport};

/// What an entry for the legacy HTTP+SSE transport fails with (in every client format).
pub(crate) const SSE_UNSUPPORTED: &str = "the legacy HTTP+SSE transport is not supported yet; \
     use the server's streamable HTTP endpoint if it has one";

const STDIO_KEYS: &[&str] = &["command", "args", "env", "cwd"];
const HTTP_KEYS: &[&str] = &["url", "headers"];
const KNOWN_KEYS: &[&str] = &["type", "command", "args", "env", "cwd", "url", "headers"];

pub(crate) fn parse(
    text: &str,
    origin: &str,
    env: &dyn EnvLookup,
) -> Result<LoadedConfig, ConfigErrors> {
    parse_as(text, origin, env, Role::Config)
}

/// Parses `.mcp.json` text; for [`Role::Plugin`], an `environment` key of a server is
/// ignored with a warning that says the installation decides.
pub(crate) fn parse_as(
    text: &str,
    origin: &str,
    env: &dyn EnvLookup,
    role: Role,
) -> Result<LoadedConfig, ConfigErrors> {
    let mut cx = Collector::new(text, origin);
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
            return Err(cx
                .finish()
                .err()
                .unwrap_or_else(|| ConfigErrors::new(Vec::new())));
        }
    };
    let mut config = Config::new();
    let Some(root) = root.as_object() else {
        cx.error(
            &Scope::Document,
            None,
            0,
            ConfigErrorKind::WrongType,
            "expected a JSON object",
            Some("write `{\"mcpServers\": {...}}`".to_owned()),
        );
        return Err(cx
            .finish()
            .err()
            .unwrap_or_else(|| ConfigErrors::new(Vec::new())));
    };
    for key in root.keys().filter(|k| k.as_str() != "mcpServers") {
        let offset = locate(text, &[key]);
        cx.unknown_key(&Scope::Document, key, offset, &["mcpServers"]);
    }
    match root.get("mcpServers") {
        None => {}
        Some(Value::Object(servers)) => {
            for (name, server) in servers {
                let mut p = JsonServer {
                    cx: &mut cx,
                    text,
                    env,
                    name,
                    role,
                };
                if let Some((name, server)) = p.parse(server) {
                    config.servers.insert(name, server);
                }
            }
        }
        Some(other) => cx.error(
            &Scope::Document,
            Some("mcpServers"),
            locate(text, &["mcpServers"]),
            ConfigErrorKind::WrongType,
            format!("expected an object, found {}", crate::json_type_name(other)),
            Some("write `\"mcpServers\": {\"name\": {...}}`".to_owned()),
        ),
    }
    let (warnings, unusable) = cx.finish_per_server()?;
    for (name, unusable) in unusable {
        let server = ServerConfig::new(Transport::Unusable(unusable));
        config.servers.insert(name, server);
    }
    Ok(LoadedConfig {
        origin: origin.to_owned(),
        config,
        warnings,
    })
}

struct JsonServer<'c, 'a, 't> {
    cx: &'c mut Collector<'a>,
    text: &'t str,
    env: &'t dyn EnvLookup,
    name: &'t str,
    role: Role,
}

impl JsonServer<'_, '_, '_> {
    fn scope(&self) -> Scope {
        Scope::Server(self.name.to_owned())
    }

    fn offset(&self, field: Option<&str>) -> usize {
        let mut path = vec!["mcpServers", self.name];
        path.extend(field);
        locate_opt(self.text, &path)
            .or_else(|| locate_opt(self.text, &["mcpServers", self.name]))
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
        let name = match ServerName::new(self.name) {
            Ok(name) => Some(name),
            Err(err) => {
                let hint = "rename the entry in `mcpServers`";
                self.error(
                    None,
                    ConfigErrorKind::InvalidServerName,
                    err.to_string(),
                    hint,
                );
                None
            }
        };
        let Some(object) = value.as_object() else {
            let message = format!("expected an object, found {}", crate::json_type_name(value));
            self.error(
                None,
                ConfigErrorKind::WrongType,
                message,
                "write `{\"command\": \"...\"}`",
            );
            return None;
        };
        let is_http = self.transport_kind(object)?;
        let mut stdio = StdioConfig::new("");
        let mut http = HttpConfig::new("");
        for (key, value) in object {
            let field = key.as_str();
            let wrong = if is_http { STDIO_KEYS } else { HTTP_KEYS };
            if wrong.contains(&field) {
                let (transport, other) = if is_http {
                    ("streamable HTTP", "stdio")
                } else {
                    ("stdio", "HTTP")
                };
                let message = format!(
                    "`{field}` is not supported for {transport} server `{}`",
                    self.name
                );
                let hint = format!("remove it, or make this an {other} server");
                self.error(
                    Some(field),
                    ConfigErrorKind::WrongTransportField,
                    message,
                    &hint,
                );
                continue;
            }
            match field {
                "type" => {}
                "command" => {
                    if let Some(command) = self.string(field, value) {
                        if command.trim().is_empty() {
                            let message = "`command` is empty".to_owned();
                            let hint = "set the program to run";
                            self.error(Some(field), ConfigErrorKind::InvalidValue, message, hint);
                        }
                        stdio.command = command;
                    }
                }
                "args" => stdio.args = self.string_list(field, value),
                "env" => stdio.env = self.string_map(field, value),
                "cwd" => stdio.cwd = self.string(field, value).map(PathBuf::from),
                "url" => {
                    if let Some(url) = self.string(field, value) {
                        if let Some(problem) = url_problem(&url) {
                            let hint = "use an absolute URL such as `https://example.com/mcp`";
                            let message = format!("`{url}` {problem}");
                            self.error(Some(field), ConfigErrorKind::InvalidUrl, message, hint);
                        }
                        http.url = url;
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
                    http.http_headers = headers;
                }
                "environment" if self.role == Role::Plugin => {
                    let offset = self.offset(Some(field));
                    let scope = self.scope();
                    self.cx.ignored_in_plugin(&scope, field, offset);
                }
                _ => {
                    let offset = self.offset(Some(field));
                    let scope = self.scope();
                    self.cx.unknown_key(&scope, field, offset, KNOWN_KEYS);
                }
            }
        }
        if self.cx.error_count() != before {
            return None;
        }
        let transport = if is_http {
            Transport::StreamableHttp(http)
        } else {
            Transport::Stdio(stdio)
        };
        Some((name?, ServerConfig::new(transport)))
    }

    /// `Some(true)` for HTTP, `Some(false)` for stdio, `None` after an error.
    fn transport_kind(&mut self, object: &Map<String, Value>) -> Option<bool> {
        let has_command = object.contains_key("command");
        let has_url = object.contains_key("url");
        let declared = match object.get("type") {
            None => None,
            Some(Value::String(t)) => match t.as_str() {
                "stdio" => Some(false),
                "http" | "streamable-http" | "streamable_http" | "streamableHttp" => Some(true),
                "sse" => {
                    let message = SSE_UNSUPPORTED.to_owned();
                    let hint = "or use `\"type\": \"http\"` with a streamable HTTP URL";
                    self.error(Some("type"), ConfigErrorKind::InvalidValue, message, hint);
                    return None;
                }
                other => {
                    let message = format!("unknown transport type `{other}`");
                    let hint = "use `stdio` or `http`";
                    self.error(Some("type"), ConfigErrorKind::InvalidValue, message, hint);
                    return None;
                }
            },
            Some(other) => {
                let message = format!("expected a string, found {}", crate::json_type_name(other));
                self.error(
                    Some("type"),
                    ConfigErrorKind::WrongType,
                    message,
                    "use `\"http\"`",
                );
                return None;
            }
        };
        match (declared, has_command, has_url) {
            (_, true, true) => {
                let message = "both `command` and `url` are set".to_owned();
                let hint = "keep `command` for a stdio server or `url` for an HTTP server";
                self.error(
                    Some("url"),
                    ConfigErrorKind::ConflictingTransport,
                    message,
                    hint,
                );
                None
            }
            (Some(true), _, true) | (None, false, true) => Some(true),
            (Some(false), true, _) | (None, true, false) => Some(false),
            (Some(true), _, false) => {
                let message = "`url` is missing for an HTTP server".to_owned();
                self.error(
                    Some("url"),
                    ConfigErrorKind::MissingField,
                    message,
                    "add `\"url\"`",
                );
                None
            }
            (Some(false), false, true) => {
                let message = "`command` is missing for a stdio server".to_owned();
                let hint = "add `\"command\"`, or use `\"type\": \"http\"` for a URL";
                self.error(None, ConfigErrorKind::MissingField, message, hint);
                None
            }
            (Some(false), false, false) | (None, false, false) => {
                let message = "neither `command` nor `url` is set".to_owned();
                let hint = "add `\"command\"` for a stdio server or `\"url\"` for an HTTP server";
                self.error(None, ConfigErrorKind::MissingTransport, message, hint);
                None
            }
        }
    }

    fn string(&mut self, field: &str, value: &Value) -> Option<String> {
        let Some(raw) = value.as_str() else {
            let message = format!("expected a string, found {}", crate::json_type_name(value));
            self.error(
                Some(field),
                ConfigErrorKind::WrongType,
                message,
                "use a quoted string",
            );
            return None;
        };
        match expand(raw, self.env) {
            Ok(expanded) => Some(expanded),
            Err(err) => {
                let (kind, message, hint) = match err {
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
                crate::json_type_name(value)
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
                crate::json_type_name(value)
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

fn locate_opt(text: &str, path: &[&str]) -> Option<usize> {
    crate::json_locate::locate(text, path)
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

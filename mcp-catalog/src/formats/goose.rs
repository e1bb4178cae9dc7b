//! Goose's `config.yaml`: the `extensions:` map, mapped to the same model.
//!
//! `type: stdio` (`cmd`, `args`, `envs`, `env_keys`), `type: streamable_http` and `type:
//! sse` (legacy HTTP+SSE) (`uri`, `headers`), `timeout` in seconds (per tool call),
//! `enabled`, `available_tools`. Goose's own extensions (`builtin`, `platform`, `frontend`,
//! `inline_python`) run inside Goose and are skipped with a warning.

use std::time::Duration;

use mcp_key::ServerName;

use crate::diagnostic::{ConfigErrorKind, ConfigErrors, Scope};
use crate::formats::collect::{Collector, header_name_ok, header_value_ok, url_problem};
use crate::formats::yaml_tree::{Node, YValue};
use crate::model::config::{Config, LoadedConfig};
use crate::model::filter::ToolFilter;
use crate::model::format::ConfigFormat;
use crate::model::server::ServerConfig;
use crate::model::transport::{HttpConfig, StdioConfig, Transport};

const KNOWN_KEYS: &[&str] = &[
    "type",
    "name",
    "display_name",
    "description",
    "enabled",
    "bundled",
    "timeout",
    "available_tools",
    "cmd",
    "args",
    "envs",
    "env_keys",
    "uri",
    "headers",
];
const STDIO_KEYS: &[&str] = &["cmd", "args", "envs", "env_keys"];
const HTTP_KEYS: &[&str] = &["uri", "headers"];
const INTERNAL_TYPES: &[&str] = &["builtin", "platform", "frontend", "inline_python"];

pub(crate) fn parse(text: &str, origin: &str) -> Result<LoadedConfig, ConfigErrors> {
    let mut cx = Collector::new(text, origin);
    let root = match crate::formats::yaml_tree::parse(text) {
        Ok(root) => root,
        Err((offset, message)) => {
            let hint = Some("fix the YAML at this position".to_owned());
            cx.error(
                &Scope::Document,
                None,
                offset,
                ConfigErrorKind::Syntax,
                message,
                hint,
            );
            return Err(cx
                .finish()
                .err()
                .unwrap_or_else(|| ConfigErrors::new(Vec::new())));
        }
    };
    let mut config = Config::new();
    match &root.value {
        YValue::Map(entries) => {
            for (key, key_offset, value) in entries {
                if key == "extensions" {
                    extensions(&mut cx, value, &mut config);
                } else {
                    cx.unknown_key(&Scope::Document, key, *key_offset, &["extensions"]);
                }
            }
        }
        // `null` (a file of comments) has no servers.
        YValue::Scalar { text, plain: true } if text.is_empty() || text == "~" => {}
        other => cx.error(
            &Scope::Document,
            None,
            root.offset,
            ConfigErrorKind::WrongType,
            format!("expected a mapping, found {}", other.type_name()),
            Some("write `extensions:` followed by one entry per server".to_owned()),
        ),
    }
    let (warnings, unusable) = cx.finish_per_server()?;
    config.mark_unusable(unusable);
    Ok(LoadedConfig {
        origin: origin.to_owned(),
        config,
        warnings,
        format: Some(ConfigFormat::Goose),
    })
}

fn extensions(cx: &mut Collector<'_>, value: &Node, config: &mut Config) {
    let YValue::Map(entries) = &value.value else {
        let message = format!("expected a mapping, found {}", value.value.type_name());
        let hint = Some("write one `name:` entry per extension".to_owned());
        let kind = ConfigErrorKind::WrongType;
        cx.error(
            &Scope::Document,
            Some("extensions"),
            value.offset,
            kind,
            message,
            hint,
        );
        return;
    };
    for (name, name_offset, entry) in entries {
        let mut p = Extension {
            cx: &mut *cx,
            scope: Scope::Server(name.clone()),
            name_offset: *name_offset,
        };
        if let Some((name, server)) = p.parse(name, entry) {
            config.servers.insert(name, server);
        }
    }
}

/// What one extension's keys set so far.
struct Draft {
    stdio: StdioConfig,
    http: HttpConfig,
    server: ServerConfig,
    tools: Vec<String>,
}

struct Extension<'c, 'a> {
    cx: &'c mut Collector<'a>,
    scope: Scope,
    name_offset: usize,
}

impl Extension<'_, '_> {
    fn error(
        &mut self,
        field: Option<&str>,
        offset: usize,
        kind: ConfigErrorKind,
        message: String,
        hint: &str,
    ) {
        let hint = Some(hint.to_owned());
        self.cx
            .error(&self.scope, field, offset, kind, message, hint);
    }

    fn parse(&mut self, raw_name: &str, entry: &Node) -> Option<(ServerName, ServerConfig)> {
        let YValue::Map(fields) = &entry.value else {
            let message = format!("expected a mapping, found {}", entry.value.type_name());
            let kind = ConfigErrorKind::WrongType;
            self.error(
                None,
                entry.offset,
                kind,
                message,
                "write `type: stdio` and `cmd: ...`",
            );
            return None;
        };
        let kind = self.extension_type(fields)?;
        let name = self.name(raw_name);
        let is_sse = kind == "sse";
        let is_http = kind == "streamable_http" || is_sse;
        let mut draft = Draft {
            stdio: StdioConfig::new(""),
            http: HttpConfig::new(""),
            server: ServerConfig::new(Transport::Stdio(StdioConfig::new(""))),
            tools: Vec::new(),
        };
        for (key, key_offset, value) in fields {
            let key = key.as_str();
            if self.key_fits(key, *key_offset, kind, is_http) {
                self.read_key(&mut draft, key, value);
            }
        }
        self.check_required(fields, kind, is_http, &draft.stdio);
        let Draft {
            stdio,
            http,
            mut server,
            tools,
        } = draft;
        if !tools.is_empty() {
            server.tool_filter = ToolFilter::new().with_enabled_tools(tools);
        }
        server.transport = if is_sse {
            Transport::Sse(http)
        } else if is_http {
            Transport::StreamableHttp(http)
        } else {
            Transport::Stdio(stdio)
        };
        Some((name?, server))
    }

    /// The extension's `type` when it is an MCP server's; `None` (with an error, or a
    /// warning for Goose's own extensions) otherwise.
    fn extension_type(&mut self, fields: &[(String, usize, Node)]) -> Option<&'static str> {
        let Some((_, _, node)) = fields.iter().find(|(k, _, _)| k == "type") else {
            let message = "`type` is missing".to_owned();
            let hint = "add `type: stdio` or `type: streamable_http`";
            self.error(
                None,
                self.name_offset,
                ConfigErrorKind::MissingField,
                message,
                hint,
            );
            return None;
        };
        match self.string("type", node)?.as_str() {
            "stdio" => Some("stdio"),
            "streamable_http" => Some("streamable_http"),
            "sse" => Some("sse"),
            internal if INTERNAL_TYPES.contains(&internal) => {
                let message = format!("a Goose `{internal}` extension runs inside Goose; skipped");
                self.cx.warning(
                    &self.scope,
                    "type",
                    node.offset,
                    message,
                    "only `stdio`, `streamable_http` and `sse` extensions are MCP servers",
                );
                None
            }
            other => {
                let message = format!("unknown extension type `{other}`");
                let hint = "use `stdio`, `streamable_http` or `sse`";
                self.error(
                    Some("type"),
                    node.offset,
                    ConfigErrorKind::InvalidValue,
                    message,
                    hint,
                );
                None
            }
        }
    }

    /// The server's name, or `None` (with an error).
    fn name(&mut self, raw_name: &str) -> Option<ServerName> {
        match ServerName::new(raw_name) {
            Ok(name) => Some(name),
            Err(err) => {
                let hint = "rename the entry under `extensions`";
                let kind = ConfigErrorKind::InvalidServerName;
                self.error(None, self.name_offset, kind, err.to_string(), hint);
                None
            }
        }
    }

    /// Whether `key` is read: an unknown key is a warning and a key of the other transport
    /// an error.
    fn key_fits(&mut self, key: &str, key_offset: usize, kind: &str, is_http: bool) -> bool {
        if !KNOWN_KEYS.contains(&key) {
            let client = Some(ConfigFormat::Goose);
            self.cx
                .unknown_key_of(&self.scope, key, key_offset, KNOWN_KEYS, client);
            return false;
        }
        let wrong = if is_http { STDIO_KEYS } else { HTTP_KEYS };
        if wrong.contains(&key) {
            let (transport, other) = if is_http {
                (kind, "stdio")
            } else {
                ("stdio", "streamable_http")
            };
            let message = format!("`{key}` is not supported for a `{transport}` extension");
            let hint = format!("remove it, or make this a `{other}` extension");
            self.error(
                Some(key),
                key_offset,
                ConfigErrorKind::WrongTransportField,
                message,
                &hint,
            );
            return false;
        }
        true
    }

    /// Reads one known key of the extension into `draft`.
    fn read_key(&mut self, draft: &mut Draft, key: &str, value: &Node) {
        match key {
            "cmd" => {
                if let Some(command) = self.string(key, value) {
                    if command.trim().is_empty() {
                        let message = "`cmd` is empty".to_owned();
                        let hint = "set the program to run";
                        let kind = ConfigErrorKind::InvalidValue;
                        self.error(Some(key), value.offset, kind, message, hint);
                    }
                    draft.stdio.command = command;
                }
            }
            "args" => draft.stdio.args = self.strings(key, value),
            "envs" => draft.stdio.env = self.string_map(key, value).into_iter().collect(),
            "env_keys" => draft.stdio.env_vars = self.strings(key, value),
            "uri" => {
                let url = self.string(key, value).unwrap_or_default();
                if let Some(problem) = url_problem(&url) {
                    let message = format!("`{url}` {problem}");
                    let hint = "use an absolute URL such as `https://example.com/mcp`";
                    self.error(
                        Some(key),
                        value.offset,
                        ConfigErrorKind::InvalidUrl,
                        message,
                        hint,
                    );
                }
                draft.http.url = url;
            }
            "headers" => {
                for (name, header) in self.string_map(key, value) {
                    if !header_name_ok(&name) || !header_value_ok(&header) {
                        let message = format!("header `{name}` is not a valid HTTP header");
                        let hint = "use a token name and a value without line breaks";
                        self.error(
                            Some(key),
                            value.offset,
                            ConfigErrorKind::InvalidValue,
                            message,
                            hint,
                        );
                    }
                    draft.http.http_headers.insert(name, header);
                }
            }
            "enabled" => draft.server.enabled = self.boolean(key, value).unwrap_or(true),
            "timeout" => {
                if let Some(timeout) = self.seconds(key, value) {
                    draft.server.tool_timeout = timeout;
                }
            }
            "description" => draft.server.description = self.string(key, value),
            "available_tools" => draft.tools = self.strings(key, value),
            // Goose's own labels and flags: nothing to do here.
            _ => {}
        }
    }

    /// A stdio extension needs `cmd`, an HTTP one `uri`.
    fn check_required(
        &mut self,
        fields: &[(String, usize, Node)],
        kind: &str,
        is_http: bool,
        stdio: &StdioConfig,
    ) {
        let field = |key: &str| fields.iter().find(|(k, _, _)| k == key);
        if !is_http && stdio.command.is_empty() && field("cmd").is_none() {
            let message = "`cmd` is missing for a stdio extension".to_owned();
            self.error(
                None,
                self.name_offset,
                ConfigErrorKind::MissingField,
                message,
                "add `cmd: ...`",
            );
        }
        if is_http && field("uri").is_none() {
            let message = format!("`uri` is missing for a {kind} extension");
            self.error(
                None,
                self.name_offset,
                ConfigErrorKind::MissingField,
                message,
                "add `uri: https://...`",
            );
        }
    }

    fn string(&mut self, key: &str, node: &Node) -> Option<String> {
        match &node.value {
            YValue::Scalar { text, .. } => Some(text.clone()),
            other => {
                let message = format!("expected a string, found {}", other.type_name());
                self.error(
                    Some(key),
                    node.offset,
                    ConfigErrorKind::WrongType,
                    message,
                    "write a single value",
                );
                None
            }
        }
    }

    fn strings(&mut self, key: &str, node: &Node) -> Vec<String> {
        let YValue::Seq(items) = &node.value else {
            let message = format!("expected a list, found {}", node.value.type_name());
            self.error(
                Some(key),
                node.offset,
                ConfigErrorKind::WrongType,
                message,
                "write `[a, b]` or one `- item` per line",
            );
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| self.string(&format!("{key}[{i}]"), item))
            .collect()
    }

    fn string_map(&mut self, key: &str, node: &Node) -> Vec<(String, String)> {
        let YValue::Map(entries) = &node.value else {
            let message = format!("expected a mapping, found {}", node.value.type_name());
            self.error(
                Some(key),
                node.offset,
                ConfigErrorKind::WrongType,
                message,
                "write one `NAME: value` per line",
            );
            return Vec::new();
        };
        entries
            .iter()
            .filter_map(|(name, _, value)| {
                let value = self.string(&format!("{key}.{name}"), value)?;
                Some((name.clone(), value))
            })
            .collect()
    }

    fn boolean(&mut self, key: &str, node: &Node) -> Option<bool> {
        match &node.value {
            YValue::Scalar { text, plain: true } if text == "true" => Some(true),
            YValue::Scalar { text, plain: true } if text == "false" => Some(false),
            other => {
                let message = format!("expected `true` or `false`, found {}", other.type_name());
                self.error(
                    Some(key),
                    node.offset,
                    ConfigErrorKind::WrongType,
                    message,
                    "write `true` or `false`",
                );
                None
            }
        }
    }

    fn seconds(&mut self, key: &str, node: &Node) -> Option<Duration> {
        let seconds = match &node.value {
            YValue::Scalar { text, plain: true } => text.parse::<f64>().ok(),
            _ => None,
        };
        let duration = seconds
            .filter(|s| s.is_finite() && *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .filter(|d| !d.is_zero());
        if duration.is_none() {
            let message = "timeout must be a positive number of seconds".to_owned();
            let hint = "use e.g. `timeout: 300`, or remove it for the default";
            self.error(
                Some(key),
                node.offset,
                ConfigErrorKind::InvalidTimeout,
                message,
                hint,
            );
        }
        duration
    }
}

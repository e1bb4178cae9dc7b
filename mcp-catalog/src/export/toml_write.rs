//! Writing configurations back as `mcp.toml`: how another client's files are imported.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use mcp_key::ServerName;

use crate::model::config::{Config, LoadedConfig};
use crate::model::defaults::{KEYS, ServerDefaults};
use crate::model::server::{
    ApprovalMode, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ServerConfig,
};
use crate::model::ssh::SshConfig;
use crate::model::transport::{AuthMode, HttpConfig, StdioConfig, Transport};
use crate::model::upstream_identity::UpstreamIdentity;
use crate::model::workload::WorkloadTokenLocation;

/// The `mcp.toml` equivalent of `files` (lowest precedence first: of two servers with one
/// name the later file's wins), as text that [`Config::from_toml_str`](Config)
/// reads back to the same servers.
///
/// Load the files without expanding variables ([`crate::review_file`]) so that no secret
/// is written out: a value that is exactly `${NAME}` becomes `env_vars` (for an `env`
/// entry named `NAME`), `env_http_headers`, or `bearer_token_env_var` (for
/// `Authorization: Bearer ${NAME}`). Everything that cannot be carried over is a TOML
/// comment: each reader warning (settings of the client that have no equivalent, such as
/// Gemini's `trust` or Cursor's `envFile`), each server that could not be read (with its
/// errors), each value whose `${...}` mcp.toml would not expand, and each server hidden by
/// a later file. Top-level settings and `[environments]` are written; `[[plugins]]` entries
/// are comments (their paths are relative to their own file).
pub fn export_toml(files: &[LoadedConfig]) -> String {
    let mut out = String::new();
    let origins: Vec<&str> = files.iter().map(LoadedConfig::origin).collect();
    let _ = writeln!(out, "# Imported from {}.", origins.join(", "));
    let mut servers: BTreeMap<&ServerName, (&LoadedConfig, &ServerConfig)> = BTreeMap::new();
    let mut notes: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
    for file in files {
        for warning in file.warnings() {
            let server = warning.server().map(str::to_owned);
            notes
                .entry(server)
                .or_default()
                .push(format!("not carried over: {warning}"));
        }
        for (name, server) in file.config().servers() {
            if let Some((earlier, _)) = servers.insert(name, (file, server)) {
                notes
                    .entry(Some(name.to_string()))
                    .or_default()
                    .push(format!(
                        "the server of this name in {} is overridden by {}",
                        earlier.origin(),
                        file.origin()
                    ));
            }
        }
    }
    for note in notes.remove(&None).unwrap_or_default() {
        comment(&mut out, &note);
    }
    write_settings(&mut out, files);
    for (name, (file, server)) in servers {
        // `${NAME}` means a variable only where the file's format expands it; elsewhere it
        // is literal text, which mcp.toml keeps as written too.
        let expands = file
            .format()
            .is_some_and(|f| !f.is_toml() && f.expands_variables());
        let notes = notes.remove(&Some(name.to_string())).unwrap_or_default();
        write_server(&mut out, name, server, expands, notes);
    }
    // Warnings about entries that are not servers here (e.g. a Goose built-in extension).
    let rest: Vec<String> = notes.into_values().flatten().collect();
    if !rest.is_empty() {
        out.push('\n');
        for note in rest {
            comment(&mut out, &note);
        }
    }
    out
}

/// One server's `[mcp_servers.NAME]` table as mcp.toml writes it, with its
/// `[mcp_servers.NAME.tools.TOOL]` approval tables: every setting that differs from its
/// default, secrets only as the variable names they are read from. A server that cannot
/// be used is a comment saying why. `${...}` in values is written as it is (mcp.toml does
/// not expand it).
///
/// ```
/// use mcp_catalog::{HttpConfig, ServerConfig, server_toml};
/// use mcp_key::ServerName;
///
/// let name = ServerName::new("tickets").unwrap();
/// let server = ServerConfig::from(
///     HttpConfig::new("https://tickets.example.com/mcp").with_bearer_token_env_var("TOKEN"),
/// );
/// assert_eq!(
///     server_toml(&name, &server),
///     "[mcp_servers.tickets]\nurl = \"https://tickets.example.com/mcp\"\nbearer_token_env_var = \"TOKEN\"\n"
/// );
/// ```
pub fn server_toml(name: &ServerName, server: &ServerConfig) -> String {
    let mut out = String::new();
    write_server(&mut out, name, server, false, Vec::new());
    out.trim_start_matches('\n').to_owned()
}

/// Writes one server (after a blank line), its notes as comments above it.
fn write_server(
    out: &mut String,
    name: &ServerName,
    server: &ServerConfig,
    expands: bool,
    mut notes: Vec<String>,
) {
    let mut body = String::new();
    match server.transport() {
        Transport::Stdio(stdio) => write_stdio(&mut body, stdio, expands, &mut notes),
        Transport::StreamableHttp(http) => write_http(&mut body, http, expands, &mut notes),
        Transport::Sse(http) => {
            line(&mut body, "transport", &string("sse"));
            write_http(&mut body, http, expands, &mut notes);
        }
        Transport::Unusable(unusable) => {
            out.push('\n');
            comment(out, &format!("server `{name}` was not imported:"));
            for error in unusable.errors().iter() {
                comment(out, &format!("  {error}"));
            }
            for note in notes {
                comment(out, &note);
            }
            return;
        }
    }
    write_common(&mut body, server);
    out.push('\n');
    for note in notes {
        comment(out, &note);
    }
    let _ = writeln!(out, "[mcp_servers.{}]", key(name.as_str()));
    out.push_str(&body);
    for (tool, mode) in server.tool_approval_modes() {
        let _ = writeln!(
            out,
            "[mcp_servers.{}.tools.{}]\napproval_mode = {}",
            key(name.as_str()),
            key(tool),
            string(mode.as_str())
        );
    }
}

/// Top-level settings (the last file that writes one wins, as in
/// [`CatalogBuilder::add_user_config`](crate::CatalogBuilder::add_user_config)),
/// environments, and a comment per plugin.
fn write_settings(out: &mut String, files: &[LoadedConfig]) {
    let last =
        |get: &dyn Fn(&Config) -> Option<String>| files.iter().rev().find_map(|f| get(f.config()));
    let before = [
        (
            "credentials_store",
            last(&|c| c.credentials_store.map(|s| string(s.as_str()))),
        ),
        (
            "oauth_callback_port",
            last(&|c| c.oauth_callback_port.map(|p| p.to_string())),
        ),
        (
            "tool_name_prefix",
            last(&|c| c.tool_name_prefix.map(|b| b.to_string())),
        ),
        (
            "multi_environment",
            last(&|c| c.multi_environment.map(|b| b.to_string())),
        ),
    ];
    write_lines(out, before);
    // The settings servers inherit: a later file's value of each wins, as in the catalog.
    let defaults = files.iter().fold(ServerDefaults::new(), |earlier, file| {
        file.config().server_defaults().inherit(&earlier)
    });
    write_defaults(out, &defaults, |(catalog_key, _)| catalog_key);
    let after = [(
        "tool_exposure",
        last(&|c| c.tool_exposure.map(|e| string(e.as_str()))),
    )];
    write_lines(out, after);
    let mut environments = BTreeMap::new();
    for file in files {
        environments.extend(file.config().environments());
    }
    for (id, environment) in environments {
        let _ = writeln!(out, "\n[environments.{}]", key(id.as_str()));
        if !environment.wrapper.is_empty() {
            line(out, "wrapper", &array(&environment.wrapper));
        }
        if let Some(ssh) = &environment.ssh {
            line(out, "ssh", &ssh_table(ssh));
        }
        if let Some(cwd) = &environment.cwd {
            line(out, "cwd", &string(&cwd.display().to_string()));
        }
        if !environment.env.is_empty() {
            line(out, "env", &inline_table(&environment.env));
        }
        if let Some(mode) = environment.default_approval_mode {
            line(out, "default_tools_approval_mode", &string(mode.as_str()));
        }
        if let Some(policy) = environment.elicitation {
            line(out, "elicitation", &string(policy.as_str()));
        }
    }
    for file in files {
        if file.config().gateway().is_some() {
            comment(
                out,
                &format!(
                    "not carried over: the [gateway] table of {} (copy it by hand)",
                    file.origin()
                ),
            );
        }
        for plugin in file.config().plugins() {
            comment(
                out,
                &format!(
                    "not carried over: [[plugins]] path = {} of {} (its path is relative to that file; add it again)",
                    string(&plugin.path().display().to_string()),
                    file.origin()
                ),
            );
        }
    }
}

fn write_stdio(out: &mut String, stdio: &StdioConfig, expands: bool, notes: &mut Vec<String>) {
    line(out, "command", &string(stdio.command()));
    unexpanded(expands, notes, "command", stdio.command());
    if !stdio.args().is_empty() {
        line(out, "args", &array(stdio.args()));
        for arg in stdio.args() {
            unexpanded(expands, notes, "args", arg);
        }
    }
    let mut env = BTreeMap::new();
    let mut env_vars: Vec<String> = stdio.env_vars().to_vec();
    for (name, value) in stdio.env() {
        if reference(value).filter(|_| expands) == Some(name.as_str()) {
            env_vars.push(name.clone());
        } else {
            unexpanded(expands, notes, &format!("env.{name}"), value);
            env.insert(name.clone(), value.clone());
        }
    }
    if !env.is_empty() {
        line(out, "env", &inline_table(&env));
    }
    if !env_vars.is_empty() {
        env_vars.sort();
        env_vars.dedup();
        line(out, "env_vars", &array(&env_vars));
    }
    if let Some(cwd) = stdio.cwd() {
        let cwd = cwd.display().to_string();
        unexpanded(expands, notes, "cwd", &cwd);
        line(out, "cwd", &string(&cwd));
    }
}

fn write_http(out: &mut String, http: &HttpConfig, expands: bool, notes: &mut Vec<String>) {
    line(out, "url", &string(http.url()));
    unexpanded(expands, notes, "url", http.url());
    let mut bearer = http.bearer_token_env_var().map(str::to_owned);
    let mut headers = BTreeMap::new();
    let mut env_headers = http.env_http_headers().clone();
    for (name, value) in http.http_headers() {
        let bearer_var = value
            .strip_prefix("Bearer ")
            .and_then(reference)
            .filter(|_| expands);
        if name.eq_ignore_ascii_case("authorization") && bearer.is_none() && bearer_var.is_some() {
            bearer = bearer_var.map(str::to_owned);
        } else if let Some(var) = reference(value).filter(|_| expands) {
            env_headers.insert(name.clone(), var.to_owned());
        } else {
            unexpanded(expands, notes, &format!("http_headers.{name}"), value);
            headers.insert(name.clone(), value.clone());
        }
    }
    if let Some(var) = bearer {
        line(out, "bearer_token_env_var", &string(&var));
    }
    if !headers.is_empty() {
        line(out, "http_headers", &inline_table(&headers));
    }
    if !env_headers.is_empty() {
        line(out, "env_http_headers", &inline_table(&env_headers));
    }
    if !http.scopes().is_empty() {
        line(out, "scopes", &array(http.scopes()));
    }
    if let Some(oauth) = http.oauth() {
        line(
            out,
            "oauth",
            &format!("{{ client_id = {} }}", string(oauth.client_id())),
        );
    }
    if let Some(resource) = http.oauth_resource() {
        line(out, "oauth_resource", &string(resource));
    }
    if http.auth() != AuthMode::Auto {
        line(out, "auth", &string(http.auth().as_str()));
    }
    if let Some(ema) = http.ema() {
        line(
            out,
            "ema",
            &format!(
                "{{ issuer = {}, client_id = {} }}",
                string(ema.issuer()),
                string(ema.client_id())
            ),
        );
    }
    if http.allow_plain_http() {
        line(out, "allow_plain_http", "true");
    }
    if http.dpop() {
        line(out, "dpop", "true");
    }
    if let Some(wif) = http.workload_identity() {
        let mut fields = vec![match wif.token() {
            WorkloadTokenLocation::File(path) => format!("token_file = {}", string(path)),
            WorkloadTokenLocation::EnvVar(var) => {
                format!("token_env_var = {}", string(var))
            }
        }];
        if let Some(id) = wif.client_id() {
            fields.push(format!("client_id = {}", string(id)));
        }
        line(
            out,
            "workload_identity",
            &format!("{{ {} }}", fields.join(", ")),
        );
    }
    write_upstream_identity(out, http.upstream_identity());
}

/// `upstream_identity` and its `token_exchange` table, when not the default.
fn write_upstream_identity(out: &mut String, identity: &UpstreamIdentity) {
    if *identity == UpstreamIdentity::Gateway {
        return;
    }
    line(out, "upstream_identity", &string(identity.as_str()));
    if let Some(exchange) = identity.token_exchange() {
        let mut fields = vec![format!(
            "token_endpoint = {}",
            string(exchange.token_endpoint())
        )];
        let optional = [
            ("audience", exchange.audience()),
            ("resource", exchange.resource()),
            ("scope", exchange.scope()),
            ("client_id", exchange.client_id()),
            ("client_secret_env", exchange.client_secret_env()),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                fields.push(format!("{key} = {}", string(value)));
            }
        }
        line(
            out,
            "token_exchange",
            &format!("{{ {} }}", fields.join(", ")),
        );
    }
}

fn write_common(out: &mut String, server: &ServerConfig) {
    if server.startup_timeout() != DEFAULT_STARTUP_TIMEOUT {
        let timeout = server.startup_timeout();
        if timeout.subsec_millis() != 0 && timeout.subsec_nanos().is_multiple_of(1_000_000) {
            line(out, "startup_timeout_ms", &timeout.as_millis().to_string());
        } else {
            line(out, "startup_timeout_sec", &seconds(timeout));
        }
    }
    if server.tool_timeout() != DEFAULT_TOOL_TIMEOUT {
        line(out, "tool_timeout_sec", &seconds(server.tool_timeout()));
    }
    let filter = server.tool_filter();
    if let Some(enabled) = filter.enabled_tools() {
        let tools: Vec<String> = enabled.iter().cloned().collect();
        line(out, "enabled_tools", &array(&tools));
    }
    if !filter.disabled_tools().is_empty() {
        let tools: Vec<String> = filter.disabled_tools().iter().cloned().collect();
        line(out, "disabled_tools", &array(&tools));
    }
    if server.required() {
        line(out, "required", "true");
    }
    if !server.enabled() {
        line(out, "enabled", "false");
    }
    if !server.environment().is_local() {
        line(out, "environment", &string(server.environment().as_str()));
    }
    if server.supports_parallel_tool_calls() {
        line(out, "supports_parallel_tool_calls", "true");
    }
    if server.default_approval_mode() != ApprovalMode::Auto {
        line(
            out,
            "default_tools_approval_mode",
            &string(server.default_approval_mode().as_str()),
        );
    }
    if let Some(description) = server.description() {
        line(out, "description", &string(description));
    }
    write_defaults(out, server.overrides(), |(_, server_key)| server_key);
    if !server.tool_cache() {
        line(out, "tool_cache", "false");
    }
    if server.always_load() {
        line(out, "always_load", "true");
    }
    if !server.always_load_tools().is_empty() {
        let tools: Vec<String> = server.always_load_tools().iter().cloned().collect();
        line(out, "always_load_tools", &array(&tools));
    }
}

/// `field = value` for each written value, in order.
fn write_lines<const N: usize>(out: &mut String, settings: [(&str, Option<String>); N]) {
    for (field, value) in settings {
        if let Some(value) = value {
            line(out, field, &value);
        }
    }
}

/// A line for each inheritable setting `defaults` writes, named by `name` from its
/// (catalog-wide, per-server) keys.
fn write_defaults(
    out: &mut String,
    defaults: &ServerDefaults,
    name: fn((&'static str, &'static str)) -> &'static str,
) {
    for (keys, value) in KEYS.into_iter().zip(defaults.values()) {
        if let Some(value) = value {
            line(out, name(keys), &string(value));
        }
    }
}

/// `NAME` when `value` is exactly `${NAME}` (a plain variable name).
fn reference(value: &str) -> Option<&str> {
    let name = value.strip_prefix("${")?.strip_suffix('}')?;
    let plain = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain.then_some(name)
}

/// Notes a value that still holds `${...}`, which mcp.toml keeps as written (when the
/// source format `expands` variables; otherwise it is literal text there too).
fn unexpanded(expands: bool, notes: &mut Vec<String>, field: &str, value: &str) {
    if expands && value.contains("${") {
        notes.push(format!(
            "`{field}` holds `{value}`, which mcp.toml does not expand: replace it with the value"
        ));
    }
}

fn comment(out: &mut String, text: &str) {
    for l in text.lines() {
        let _ = writeln!(out, "# {l}");
    }
}

fn line(out: &mut String, field: &str, value: &str) {
    let _ = writeln!(out, "{field} = {value}");
}

fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        d.as_secs().to_string()
    } else {
        format!("{:?}", d.as_secs_f64())
    }
}

/// A TOML key: bare when it can be, else quoted.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { k.to_owned() } else { string(k) }
}

/// A TOML basic string.
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn array(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| string(s)).collect();
    format!("[{}]", items.join(", "))
}

fn ssh_table(ssh: &SshConfig) -> String {
    let mut entries = vec![format!("host = {}", string(ssh.host()))];
    if let Some(port) = ssh.port() {
        entries.push(format!("port = {port}"));
    }
    if let Some(user) = ssh.user() {
        entries.push(format!("user = {}", string(user)));
    }
    if let Some(path) = ssh.identity_file() {
        entries.push(format!(
            "identity_file = {}",
            string(&path.display().to_string())
        ));
    }
    if let Some(path) = ssh.known_hosts() {
        entries.push(format!(
            "known_hosts = {}",
            string(&path.display().to_string())
        ));
    }
    if !ssh.options().is_empty() {
        entries.push(format!("options = {}", array(ssh.options())));
    }
    format!("{{ {} }}", entries.join(", "))
}

fn inline_table(entries: &BTreeMap<String, String>) -> String {
    let entries: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{} = {}", key(k), string(v)))
        .collect();
    format!("{{ {} }}", entries.join(", "))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::model::format::ConfigFormat;

    #[test]
    fn strings_and_keys_are_escaped() {
        assert_eq!(string("a\"b\\c\n\u{1}"), r#""a\"b\\c\n\u0001""#);
        assert_eq!(key("plain-key_1"), "plain-key_1");
        assert_eq!(key("X.Y"), "\"X.Y\"");
        assert_eq!(reference("${TOKEN}"), Some("TOKEN"));
        assert_eq!(reference("${1X}"), None);
        assert_eq!(reference("x${TOKEN}"), None);
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5");
    }

    #[test]
    fn references_become_variables_and_the_rest_comments() {
        let text = r#"{"mcpServers": {
            "a": {"command": "tool", "env": {"TOKEN": "${TOKEN}", "OTHER": "x-${TOKEN}"}},
            "b": {"type": "http", "url": "https://h/mcp",
                  "headers": {"Authorization": "Bearer ${B}", "X-Key": "${K}"}}
        }}"#;
        let (loaded, _) = {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(".mcp.json");
            std::fs::write(&path, text).unwrap();
            crate::hosts::trust::review_file(&path).unwrap()
        };
        let written = export_toml(std::slice::from_ref(&loaded));
        let body: String = written.lines().skip(1).map(|l| format!("{l}\n")).collect();
        assert_eq!(
            body,
            "\n# `env.OTHER` holds `x-${TOKEN}`, which mcp.toml does not expand: replace it with the value\n\
             [mcp_servers.a]\ncommand = \"tool\"\nenv = { OTHER = \"x-${TOKEN}\" }\nenv_vars = [\"TOKEN\"]\n\
             \n[mcp_servers.b]\nurl = \"https://h/mcp\"\nbearer_token_env_var = \"B\"\nenv_http_headers = { X-Key = \"K\" }\n"
        );
        let back = crate::Config::from_toml_str(&written, "mcp.toml").unwrap();
        assert_eq!(back.config().servers().len(), 2);
    }

    /// An `mcp.toml` written back is the same configuration.
    #[test]
    fn an_mcp_toml_round_trips_whole() {
        let text = r#"
credentials_store = "file"
oauth_callback_port = 8765
tool_name_prefix = false
multi_environment = true

[environments.devbox]
wrapper = ["ssh", "devbox", "--"]
cwd = "/home/dev"
env = { A = "1" }
default_tools_approval_mode = "prompt"

[mcp_servers.files]
command = "npx"
args = ["-y", "server \"quoted\""]
env = { LOG = "warn" }
env_vars = ["FILES_TOKEN"]
cwd = "/srv"
startup_timeout_ms = 1500
tool_timeout_sec = 2.5
enabled_tools = ["read"]
disabled_tools = ["delete"]
required = true
environment = "devbox"
supports_parallel_tool_calls = true
default_tools_approval_mode = "writes"
description = "Files"
[mcp_servers.files.tools.write]
approval_mode = "prompt"

[mcp_servers.tickets]
url = "https://tickets.example.com/mcp"
bearer_token_env_var = "T"
http_headers = { "X-Team" = "platform" }
env_http_headers = { "X-Tenant" = "TENANT_ID" }
scopes = ["read"]
oauth = { client_id = "registered" }
oauth_resource = "https://tickets.example.com/mcp"
auth = "oauth"
enabled = false
"#;
        let loaded = crate::Config::from_toml_str(text, "mcp.toml").unwrap();
        assert!(loaded.warnings().is_empty(), "{:?}", loaded.warnings());
        let written = export_toml(std::slice::from_ref(&loaded));
        let back = crate::Config::from_toml_str(&written, "out.toml")
            .unwrap_or_else(|e| panic!("{e}\n{written}"));
        assert!(
            back.warnings().is_empty(),
            "{:?}\n{written}",
            back.warnings()
        );
        assert_eq!(
            back.config().servers(),
            loaded.config().servers(),
            "{written}"
        );
        assert_eq!(back.config().environments(), loaded.config().environments());
        assert_eq!(
            back.config().credentials_store,
            loaded.config().credentials_store
        );
        assert_eq!(back.config().oauth_callback_port, Some(8765));
        assert_eq!(back.config().tool_name_prefix, Some(false));
        assert_eq!(back.config().multi_environment, Some(true));
    }

    /// Claude Desktop and mcp.toml expand nothing: `${...}` is literal text in both and
    /// carries over as it is, without a note or a conversion to a variable.
    #[test]
    fn literal_dollar_braces_stay_literal() {
        let text = r#"{"mcpServers": {"a": {"command": "tool", "env": {"TOKEN": "${TOKEN}"}}}}"#;
        let loaded = crate::Config::from_client_str(
            text,
            "claude_desktop_config.json",
            ConfigFormat::ClaudeDesktop,
            &crate::EmptyEnv,
        )
        .unwrap();
        let written = export_toml(std::slice::from_ref(&loaded));
        assert!(!written.contains("does not expand"), "{written}");
        assert!(
            written.contains("env = { TOKEN = \"${TOKEN}\" }"),
            "{written}"
        );
        let back = crate::Config::from_toml_str(&written, "out.toml").unwrap();
        assert_eq!(back.config().servers(), loaded.config().servers());
    }
}

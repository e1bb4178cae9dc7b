//! Valid TOML configurations map to the expected model.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use std::time::Duration;

use mcp_catalog::{
    ApprovalMode, AuthMode, Config, CredentialsStore, DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT, Transport,
};
use mcp_key::{EnvironmentId, ServerName};
use pretty_assertions::assert_eq;

const SPEC_EXAMPLE: &str = r#"
credentials_store = "keyring"
oauth_callback_port = 8765
tool_name_prefix = true
multi_environment = false

[environments.devbox]
wrapper = ["ssh", "devbox", "--"]
cwd = "/home/dev/project"

[mcp_servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { LOG_LEVEL = "warn" }
env_vars = ["FILES_TOKEN"]
cwd = "/srv/app"
startup_timeout_sec = 30
tool_timeout_sec = 300
enabled_tools = ["read_file"]
disabled_tools = ["delete"]
required = false
enabled = true
environment = "local"
supports_parallel_tool_calls = false
default_tools_approval_mode = "auto"
[mcp_servers.files.tools.write_file]
approval_mode = "prompt"

[mcp_servers.tickets]
url = "https://tickets.example.com/mcp"
bearer_token_env_var = "TICKETS_TOKEN"
http_headers = { "X-Team" = "platform" }
env_http_headers = { "X-Tenant" = "TENANT_ID" }
scopes = ["tickets.read"]
oauth = { client_id = "registered-client" }
oauth_resource = "https://tickets.example.com/mcp"
auth = "ema"

[mcp_servers.tickets.ema]
issuer = "https://idp.example.com"
client_id = "agent-host"

[[plugins]]
path = "/opt/plugins/git"
environments = ["local", "devbox"]
"#;

fn name(s: &str) -> ServerName {
    ServerName::new(s).unwrap()
}

#[test]
fn spec_example_maps_every_field() {
    let loaded = Config::from_toml_str(SPEC_EXAMPLE, "config.toml").unwrap();
    assert_eq!(loaded.warnings(), &[]);
    assert_eq!(loaded.origin(), "config.toml");
    let config = loaded.config();
    assert_eq!(config.credentials_store(), CredentialsStore::Keyring);
    assert_eq!(config.oauth_callback_port(), Some(8765));
    assert!(config.tool_name_prefix());
    assert!(!config.multi_environment());

    let devbox = &config.environments()[&EnvironmentId::new("devbox").unwrap()];
    assert_eq!(devbox.wrapper(), ["ssh", "devbox", "--"]);
    assert_eq!(devbox.cwd().unwrap().to_str(), Some("/home/dev/project"));

    let files = &config.servers()[&name("files")];
    let Transport::Stdio(stdio) = files.transport() else {
        panic!("stdio expected")
    };
    assert_eq!(stdio.command(), "npx");
    assert_eq!(
        stdio.args(),
        ["-y", "@modelcontextprotocol/server-filesystem", "."]
    );
    assert_eq!(
        stdio.env().get("LOG_LEVEL").map(String::as_str),
        Some("warn")
    );
    assert_eq!(stdio.env_vars(), ["FILES_TOKEN"]);
    assert_eq!(stdio.cwd().unwrap().to_str(), Some("/srv/app"));
    assert_eq!(files.startup_timeout(), Duration::from_secs(30));
    assert_eq!(files.tool_timeout(), Duration::from_secs(300));
    assert!(files.tool_filter().allows("read_file"));
    assert!(!files.tool_filter().allows("write_file"));
    assert!(!files.tool_filter().allows("delete"));
    assert!(!files.required());
    assert!(files.enabled());
    assert!(files.environment().is_local());
    assert!(!files.supports_parallel_tool_calls());
    assert_eq!(files.default_approval_mode(), ApprovalMode::Auto);
    assert_eq!(files.approval_mode("write_file"), ApprovalMode::Prompt);
    assert_eq!(files.approval_mode("read_file"), ApprovalMode::Auto);

    let tickets = &config.servers()[&name("tickets")];
    let Transport::StreamableHttp(http) = tickets.transport() else {
        panic!("http expected")
    };
    assert_eq!(http.url(), "https://tickets.example.com/mcp");
    assert_eq!(http.bearer_token_env_var(), Some("TICKETS_TOKEN"));
    assert_eq!(
        http.http_headers().get("X-Team").map(String::as_str),
        Some("platform")
    );
    assert_eq!(
        http.env_http_headers().get("X-Tenant").map(String::as_str),
        Some("TENANT_ID")
    );
    assert_eq!(http.scopes(), ["tickets.read"]);
    assert_eq!(
        http.oauth().map(|o| o.client_id()),
        Some("registered-client")
    );
    assert_eq!(
        http.oauth_resource(),
        Some("https://tickets.example.com/mcp")
    );
    assert_eq!(http.auth(), AuthMode::Ema);
    let ema = http.ema().unwrap();
    assert_eq!(
        (ema.issuer(), ema.client_id()),
        ("https://idp.example.com", "agent-host")
    );

    let plugin = &config.plugins()[0];
    assert_eq!(plugin.path().to_str(), Some("/opt/plugins/git"));
    assert_eq!(plugin.environments().len(), 2);
}

#[test]
fn defaults_apply_when_fields_are_absent() {
    let loaded = Config::from_toml_str(
        "[mcp_servers.a]\ncommand = \"a\"\n[mcp_servers.b]\nurl = \"http://127.0.0.1:9/mcp\"\n",
        "c.toml",
    )
    .unwrap();
    let config = loaded.config();
    assert_eq!(config.credentials_store(), CredentialsStore::Auto);
    assert_eq!(config.oauth_callback_port(), None);
    assert!(config.tool_name_prefix());
    assert!(!config.multi_environment());
    let a = &config.servers()[&name("a")];
    assert_eq!(a.startup_timeout(), DEFAULT_STARTUP_TIMEOUT);
    assert_eq!(a.tool_timeout(), DEFAULT_TOOL_TIMEOUT);
    assert!(a.tool_filter().allows_all());
    assert!(a.enabled());
    assert!(!a.required());
    assert_eq!(a.environment(), &EnvironmentId::LOCAL);
    let b = &config.servers()[&name("b")];
    assert_eq!(b.transport().as_http().unwrap().auth(), AuthMode::Auto);
}

#[test]
fn fractional_timeouts_and_empty_allow_list() {
    let loaded = Config::from_toml_str(
        "[mcp_servers.a]\ncommand = \"a\"\nstartup_timeout_sec = 0.5\ntool_timeout_sec = 2.25\n\
         enabled_tools = []\n",
        "c.toml",
    )
    .unwrap();
    let a = &loaded.config().servers()[&name("a")];
    assert_eq!(a.startup_timeout(), Duration::from_millis(500));
    assert_eq!(a.tool_timeout(), Duration::from_millis(2250));
    assert!(!a.tool_filter().allows("anything"));
}

#[test]
fn unknown_keys_are_warnings_with_locations() {
    let text = "model = \"x\"\n[mcp_servers.a]\ncommand = \"a\"\ncomand = \"typo\"\n\
                [mcp_servers.a.tools.t]\napproval_mode = \"writes\"\ncolor = \"red\"\n";
    let loaded = Config::from_toml_str(text, "c.toml").unwrap();
    let warnings: Vec<String> = loaded.warnings().iter().map(ToString::to_string).collect();
    insta::assert_snapshot!(warnings.join("\n"));
    let a = &loaded.config().servers()[&name("a")];
    assert_eq!(a.approval_mode("t"), ApprovalMode::Writes);
}

/// Codex's spellings: `mcp_oauth_credentials_store`, `mcp_oauth_callback_port` and
/// `startup_timeout_ms` mean `credentials_store`, `oauth_callback_port` and
/// `startup_timeout_sec` (in milliseconds), without warnings.
#[test]
fn codex_keys_are_understood() {
    let text = "mcp_oauth_credentials_store = \"file\"\nmcp_oauth_callback_port = 5555\n\n\
                [mcp_servers.docs]\ncommand = \"docs-server\"\nstartup_timeout_ms = 20000\n";
    let loaded = mcp_catalog::Config::from_toml_str(text, "config.toml").unwrap();
    assert_eq!(loaded.warnings(), &[]);
    let config = loaded.config();
    assert_eq!(
        config.credentials_store(),
        mcp_catalog::CredentialsStore::File
    );
    assert_eq!(config.oauth_callback_port(), Some(5555));
    let docs = &config.servers()[&mcp_key::ServerName::new("docs").unwrap()];
    assert_eq!(docs.startup_timeout(), std::time::Duration::from_secs(20));

    let bad = "[mcp_servers.docs]\ncommand = \"d\"\nstartup_timeout_ms = 0\n";
    let errors = mcp_catalog::Config::from_toml_str(bad, "config.toml")
        .and_then(mcp_catalog::LoadedConfig::into_strict)
        .unwrap_err();
    assert_eq!(
        errors.to_string(),
        "config.toml:3:22: server `docs`: field `startup_timeout_ms`: timeout must be a positive \
         number of milliseconds, got 0 (use e.g. `startup_timeout_ms = 30000`, or remove it for \
         the default)"
    );
}

/// `transport = "sse"` makes an HTTP server a legacy HTTP+SSE one, with every HTTP setting
/// kept; `streamable_http` is the default spelled out.
#[test]
fn sse_transport() {
    let text = r#"
[mcp_servers.legacy]
url = "https://legacy.example.com/sse"
transport = "sse"
bearer_token_env_var = "LEGACY_TOKEN"
http_headers = { "X-Team" = "platform" }
protocol = "2025-11-25"

[mcp_servers.modern]
url = "https://modern.example.com/mcp"
transport = "streamable_http"
"#;
    let loaded = Config::from_toml_str(text, "config.toml").unwrap();
    assert!(loaded.warnings().is_empty(), "{:?}", loaded.warnings());
    let servers = loaded.config().servers();
    let legacy = &servers[&ServerName::new("legacy").unwrap()];
    let Transport::Sse(http) = legacy.transport() else {
        panic!("expected SSE: {:?}", legacy.transport());
    };
    assert_eq!(http.url(), "https://legacy.example.com/sse");
    assert_eq!(http.bearer_token_env_var(), Some("LEGACY_TOKEN"));
    assert_eq!(legacy.transport().kind_name(), "legacy SSE");
    assert_eq!(legacy.transport().as_http(), Some(http));
    let modern = &servers[&ServerName::new("modern").unwrap()];
    assert!(matches!(modern.transport(), Transport::StreamableHttp(_)));
}

/// `dpop = true` and a `workload_identity` table (a file or a variable, and an optional
/// client id) reach the HTTP model; two token sources, or none, are errors.
#[test]
fn dpop_and_workload_identity() {
    let text = "[mcp_servers.ci]\nurl = \"https://ci.example/mcp\"\ndpop = true\n\
                [mcp_servers.ci.workload_identity]\ntoken_file = \"/run/token\"\nclient_id = \"agent\"\n\
                [mcp_servers.env]\nurl = \"https://e.example/mcp\"\n\
                workload_identity = { token_env_var = \"WIF_TOKEN\" }\n";
    let loaded = Config::from_toml_str(text, "c.toml").unwrap();
    assert_eq!(loaded.warnings(), &[]);
    let servers = loaded.config().servers();
    let ci = servers[&name("ci")].transport().as_http().unwrap();
    assert!(ci.dpop());
    let wif = ci.workload_identity().unwrap();
    assert_eq!(
        wif.token(),
        &mcp_catalog::WorkloadTokenLocation::File("/run/token".to_owned())
    );
    assert_eq!(wif.client_id(), Some("agent"));
    let env = servers[&name("env")].transport().as_http().unwrap();
    assert!(!env.dpop());
    assert_eq!(
        env.workload_identity().unwrap().token(),
        &mcp_catalog::WorkloadTokenLocation::EnvVar("WIF_TOKEN".to_owned())
    );

    for bad in [
        "[mcp_servers.a]\nurl = \"https://x/mcp\"\nworkload_identity = { client_id = \"c\" }\n",
        "[mcp_servers.a]\nurl = \"https://x/mcp\"\n\
         workload_identity = { token_file = \"/t\", token_env_var = \"T\" }\n",
    ] {
        let loaded = Config::from_toml_str(bad, "c.toml").unwrap();
        let Transport::Unusable(unusable) = loaded.config().servers()[&name("a")].transport()
        else {
            panic!("a server with a broken workload_identity is unusable");
        };
        let err = unusable.to_string();
        assert!(
            err.contains("workload_identity") && err.contains("token_"),
            "{err}"
        );
    }
}

//! The same server name in several execution environments, end to end: environments are
//! implemented by a wrapper script that sets a marker variable and execs the real
//! `mcp-fake-server`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use mcp_catalog::{
    CatalogBuilder, ElicitationPolicy, EnvironmentConfig, Plugin, PluginTier, ResolvedCatalog,
    ServerConfig, Source,
};
use mcp_connections::{
    AcceptDefaults, Approval, BoxFuture, CallHook, CallOptions, ConnectionSet,
    ConnectionSetOptions, Error, FailureReason, HookDenial, ServerState, ToolCall,
};
use mcp_key::{EnvironmentId, McpServerKey, ServerName};
use mcp_testkit::{Behavior, Scenario, TestHome, ToolSpec};
use serde_json::{Value, json};

const ENVS: [&str; 3] = ["local", "devbox", "sandbox"];

fn env(id: &str) -> EnvironmentId {
    EnvironmentId::new(id).unwrap()
}

fn github() -> ServerName {
    ServerName::new("github").unwrap()
}

fn key_in(id: &str) -> McpServerKey {
    McpServerKey::in_environment(env(id), github())
}

/// The "plugin": one server, `github`, with a tool that reports where it runs.
fn plugin_server(home: &TestHome) -> ServerConfig {
    let path = home.join("github.json");
    Scenario::new("github")
        .with_tool(ToolSpec::new("whereami", Behavior::ReportEnv))
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "ask",
            Behavior::ElicitForm {
                message: "Proceed?".to_owned(),
                schema: json!({"type": "object", "properties": {"ok": {"type": "boolean", "default": true}}}),
            },
        ))
        .with_resource(mcp_testkit::ResourceSpec::new("repo://readme", "readme", "hello"))
        .write_json(&path)
        .unwrap();
    ServerConfig::stdio(mcp_testkit::fake_server_bin().to_string_lossy())
        .with_args(["--scenario".to_owned(), path.to_string_lossy().into_owned()])
}

/// `wrapper.sh ENV cmd...`: sets ENV_MARKER=ENV and execs the command, like `ssh devbox --`.
fn wrapper(dir: &Path) -> String {
    let path = dir.join("wrapper.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\nENV_MARKER=\"$1\"\nexport ENV_MARKER\nshift\nexec \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

fn catalog(home: &TestHome, multi: bool, devbox: EnvironmentConfig) -> ResolvedCatalog {
    let script = wrapper(home.path());
    let server = plugin_server(home);
    let mut b = CatalogBuilder::new()
        .with_multi_environment(multi)
        .with_environment(
            env("devbox"),
            devbox.with_wrapper([script.clone(), "devbox".to_owned()]),
        )
        .with_environment(
            env("sandbox"),
            EnvironmentConfig::new().with_wrapper([script, "sandbox".to_owned()]),
        );
    // One plugin, installed in three environments.
    let plugin = Plugin::new("github-plugin").with_server(github(), server);
    let installed: Vec<EnvironmentId> = ENVS.iter().map(|id| env(id)).collect();
    b.add_plugin(PluginTier::Selected, &plugin, &installed);
    b.build()
}

fn options() -> ConnectionSetOptions {
    ConnectionSetOptions::new()
        .with_client(|c| c.with_process_grace(std::time::Duration::from_millis(300)))
}

async fn marker_of(set: &ConnectionSet, qualified: &str) -> Value {
    let r = set
        .call_qualified(qualified, None, CallOptions::new())
        .await
        .unwrap();
    r.structured_content.unwrap()["env"]
        .get("ENV_MARKER")
        .cloned()
        .unwrap_or(Value::Null)
}

/// Shuts the set down and checks that no server of this test (their command lines name the
/// test's own temp dir) is still running.
async fn no_processes_left(set: &ConnectionSet, home: &TestHome) {
    set.shutdown().await;
    let pattern = home.path().to_string_lossy().into_owned();
    let left: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(&pattern))
                .unwrap_or(false)
                && mcp_testkit::process_alive(*pid)
        })
        .collect();
    assert!(left.is_empty(), "server processes left behind: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_plugin_in_three_environments_gives_three_servers_that_run_where_they_say() {
    let home = TestHome::new().unwrap();
    let set = ConnectionSet::start(&catalog(&home, true, EnvironmentConfig::new()), options());
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 3, "{summary:?}");
    let tools = set.tools().await;
    let names: Vec<&str> = tools
        .iter()
        .filter(|t| t.raw_name() == "whereami")
        .map(|t| t.qualified_name.as_str())
        .collect();
    assert_eq!(
        names,
        vec![
            "mcp__github__devbox__whereami",
            "mcp__github__local__whereami",
            "mcp__github__sandbox__whereami"
        ]
    );
    let devbox_tool = tools
        .iter()
        .find(|t| t.qualified_name == "mcp__github__devbox__whereami")
        .unwrap();
    assert!(
        devbox_tool
            .namespace_description
            .as_deref()
            .unwrap()
            .starts_with("Runs in environment devbox."),
        "{devbox_tool:?}"
    );
    assert_eq!(
        marker_of(&set, "mcp__github__devbox__whereami").await,
        json!("devbox")
    );
    assert_eq!(
        marker_of(&set, "mcp__github__sandbox__whereami").await,
        json!("sandbox")
    );
    assert_eq!(
        marker_of(&set, "mcp__github__local__whereami").await,
        Value::Null
    );

    // Resources carry their environment; a bare name is ambiguous; naming one works.
    let listing = set.list_resources().await;
    let envs: Vec<String> = listing
        .items
        .iter()
        .map(|i| i.environment_id.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(envs, vec!["devbox", "local", "sandbox"]);
    let err = set.server_key(&github(), None).unwrap_err();
    assert!(matches!(err, Error::AmbiguousServer { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "MCP server name `github` exists in several environments (github@devbox, github@local, github@sandbox); name the environment, e.g. `github@devbox`"
    );
    let devbox = set.server_key(&github(), Some(&env("devbox"))).unwrap();
    assert_eq!(devbox, key_in("devbox"));
    let read = set.read_resource(&devbox, "repo://readme").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents[0]).unwrap()["text"],
        json!("hello")
    );
    no_processes_left(&set, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_switch_off_only_the_legacy_winner_is_exposed_under_todays_names() {
    let home = TestHome::new().unwrap();
    let set = ConnectionSet::start(&catalog(&home, false, EnvironmentConfig::new()), options());
    let summary = set.wait_startup().await;
    assert_eq!(summary.servers.len(), 1);
    assert_eq!(summary.servers[0].key, key_in("local"));
    let names: Vec<String> = set
        .tools()
        .await
        .into_iter()
        .map(|t| t.qualified_name)
        .collect();
    assert_eq!(
        names,
        vec![
            "mcp__github__ask",
            "mcp__github__echo",
            "mcp__github__whereami"
        ]
    );
    assert_eq!(set.server_key(&github(), None).unwrap(), key_in("local"));
    assert!(
        set.list_resources()
            .await
            .items
            .iter()
            .all(|i| i.environment_id.is_none())
    );
    no_processes_left(&set, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_and_elicitation_policies_are_per_environment() {
    let home = TestHome::new().unwrap();
    let devbox = EnvironmentConfig::new().with_elicitation(ElicitationPolicy::Decline);
    let set = ConnectionSet::start(
        &catalog(&home, true, devbox),
        options().with_elicitation_handler(Arc::new(AcceptDefaults)),
    );
    set.wait_startup().await;
    assert_eq!(
        set.approval(&key_in("devbox"), "echo").unwrap(),
        Approval::Ask
    );
    set.remember_approval(&key_in("devbox"), "echo").unwrap();
    assert_eq!(
        set.approval(&key_in("devbox"), "echo").unwrap(),
        Approval::Remembered
    );
    assert_eq!(
        set.approval(&key_in("local"), "echo").unwrap(),
        Approval::Ask
    );

    let ask = |k: McpServerKey| {
        let set = set.clone();
        async move {
            set.call_tool(&k, "ask", None, CallOptions::new())
                .await
                .unwrap()
                .structured_content
                .unwrap()["action"]
                .clone()
        }
    };
    assert_eq!(ask(key_in("local")).await, json!("accept"));
    assert_eq!(ask(key_in("devbox")).await, json!("decline"));
    no_processes_left(&set, &home).await;
}

struct MoveToLocal;
impl CallHook for MoveToLocal {
    fn before_call(&self, mut call: ToolCall) -> BoxFuture<'_, Result<ToolCall, HookDenial>> {
        call.server = key_in("local");
        Box::pin(async move { Ok(call) })
    }
}

struct AddArgument;
impl CallHook for AddArgument {
    fn before_call(&self, mut call: ToolCall) -> BoxFuture<'_, Result<ToolCall, HookDenial>> {
        let mut args = call.arguments.take().unwrap_or_else(|| json!({}));
        args["hooked"] = json!(true);
        call.arguments = Some(args);
        Box::pin(async move { Ok(call) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_may_rewrite_arguments_but_never_move_a_call() {
    let home = TestHome::new().unwrap();
    let rewriting = ConnectionSet::start(
        &catalog(&home, true, EnvironmentConfig::new()),
        options().with_call_hook(Arc::new(AddArgument)),
    );
    rewriting.wait_startup().await;
    let r = rewriting
        .call_tool(
            &key_in("devbox"),
            "echo",
            Some(json!({"a": 1})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"a": 1, "hooked": true})));
    rewriting.shutdown().await;

    let moving = ConnectionSet::start(
        &catalog(&home, true, EnvironmentConfig::new()),
        options().with_call_hook(Arc::new(MoveToLocal)),
    );
    moving.wait_startup().await;
    let err = moving
        .call_tool(&key_in("devbox"), "echo", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::HookRedirected { .. }), "{err}");
    assert!(
        err.to_string().contains("`github@devbox`")
            && err.to_string().contains("github@local/echo"),
        "{err}"
    );
    no_processes_left(&moving, &home).await;
}

/// `call_hook_fn` makes a hook of a closure: it rewrites one call's arguments and denies
/// another, whose tool the server never sees called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closure_hook_rewrites_and_denies() {
    let home = TestHome::new().unwrap();
    let hook = mcp_connections::call_hook_fn(|mut call: ToolCall| async move {
        match call.arguments.as_ref().and_then(|a| a.get("deny")) {
            Some(_) => Err(HookDenial::new("denied by the closure")),
            None => {
                call.arguments = Some(json!({"from": "closure"}));
                Ok(call)
            }
        }
    });
    let set = ConnectionSet::start(
        &catalog(&home, true, EnvironmentConfig::new()),
        options().with_call_hook(hook),
    );
    set.wait_startup().await;
    let r = set
        .call_tool(
            &key_in("local"),
            "echo",
            Some(json!({"a": 1})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"from": "closure"})));
    let err = set
        .call_tool(
            &key_in("local"),
            "echo",
            Some(json!({"deny": true})),
            CallOptions::new(),
        )
        .await
        .unwrap_err();
    assert!(err.is_denied(), "{err}");
    assert!(err.to_string().contains("denied by the closure"), "{err}");
    no_processes_left(&set, &home).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_environment_fails_only_that_server() {
    let home = TestHome::new().unwrap();
    let server = plugin_server(&home);
    let mut b = CatalogBuilder::new().with_multi_environment(true);
    b.register(Source::user("test"), key_in("local"), server.clone());
    b.register(Source::user("test"), key_in("nowhere"), server);
    let set = ConnectionSet::start(&b.build(), options());
    set.wait_startup().await;
    let status = set.status();
    let nowhere = status.iter().find(|s| s.key == key_in("nowhere")).unwrap();
    let ServerState::Failed(f) = &nowhere.state else {
        panic!("{nowhere:?}")
    };
    assert_eq!(f.reason(), &FailureReason::Environment);
    assert!(
        f.to_string()
            .contains("`github@nowhere` runs in environment `nowhere`"),
        "{f}"
    );
    let local = status.iter().find(|s| s.key == key_in("local")).unwrap();
    assert!(matches!(local.state, ServerState::Ready { .. }));
    no_processes_left(&set, &home).await;
}

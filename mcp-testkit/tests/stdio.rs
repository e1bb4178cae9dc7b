//! The `mcp-fake-server` binary over stdio, driven by a plain rmcp client.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{BIN, call, connect, path_arg, spawn, suite, temp};
use mcp_testkit::{RecordedRequest, Scenario, read_pid_file, wait_gone};
use pretty_assertions::assert_eq;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

#[tokio::test]
async fn every_tool_behaviour_works_over_stdio_from_a_scenario_file() {
    let home = temp();
    let file = home.join("suite.json");
    suite::scenario().write_json(&file).unwrap();
    let mut server = spawn(&["--scenario", &path_arg(&file)], Stdio::null());
    let (client, seen) = connect(server.transport()).await;
    suite::run(&client, &seen).await;
    client.cancel().await.unwrap();
    assert!(server.wait_and_check().await.success());
}

#[tokio::test]
async fn every_tool_behaviour_works_over_stdio_from_inline_json() {
    let json = serde_json::to_string(&suite::scenario()).unwrap();
    let mut server = spawn(&["--scenario-json", &json], Stdio::null());
    let (client, seen) = connect(server.transport()).await;
    suite::run(&client, &seen).await;
    client.cancel().await.unwrap();
    assert!(server.wait_and_check().await.success());
}

#[tokio::test]
async fn toml_scenario_flags_pid_file_and_request_log() {
    let home = temp();
    let file = home.join("s.toml");
    std::fs::write(
        &file,
        r#"
instructions = "from toml"
[server_info]
name = "toml-server"
[[tools]]
name = "from_file"
behavior = { kind = "structured", value = { ok = true } }
"#,
    )
    .unwrap();
    let (pid_file, log) = (home.join("pid"), home.join("requests.jsonl"));
    let mut server = spawn(
        &[
            "--scenario",
            &path_arg(&file),
            "--tool",
            "extra",
            "--pid-file",
            &path_arg(&pid_file),
            "--request-log",
            &path_arg(&log),
            "--instructions",
            "from flag",
        ],
        Stdio::null(),
    );
    let (client, _) = connect(server.transport()).await;
    assert_eq!(read_pid_file(&pid_file), Some(server.pid));
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "toml-server");
    assert_eq!(info.instructions.as_deref(), Some("from flag"));
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["from_file", "extra"]);
    assert_eq!(
        call(&client, "from_file", json!({}))
            .await
            .structured_content,
        Some(json!({"ok": true}))
    );
    assert_eq!(
        call(&client, "extra", json!({"q": "w"}))
            .await
            .structured_content,
        Some(json!({"q": "w"}))
    );
    client.cancel().await.unwrap();
    assert!(server.wait_and_check().await.success());

    let logged = RecordedRequest::read_log(&log);
    let methods: Vec<&str> = logged.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(
        methods,
        ["initialize", "tools/list", "tools/call", "tools/call"]
    );
    assert_eq!(logged[0].params["protocolVersion"], "2025-11-25");
    // Recorded as sent, `_meta` (rmcp's progress token) included.
    assert_eq!(logged[3].params["name"], json!("extra"));
    assert_eq!(logged[3].params["arguments"], json!({"q": "w"}));
    assert!(logged[3].params["_meta"]["progressToken"].is_number());
}

#[tokio::test]
async fn report_env_shows_the_launch_environment_and_cwd() {
    let home = temp();
    let child = tokio::process::Command::new(BIN)
        .args(["--scenario", "/dev/null.json"])
        .output()
        .await
        .unwrap();
    assert_eq!(
        child.status.code(),
        Some(2),
        "a bad scenario path is a startup error"
    );

    let file = home.join("env.json");
    Scenario::new("env")
        .with_tool(mcp_testkit::ToolSpec::new(
            "env",
            mcp_testkit::Behavior::ReportEnv,
        ))
        .write_json(&file)
        .unwrap();
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(["--scenario", &path_arg(&file)])
        .env_clear()
        .env("ONLY_THIS", "yes")
        .current_dir(home.home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    let (client, _) = connect(transport).await;
    let r = call(&client, "env", json!({})).await;
    assert_eq!(
        r.structured_content,
        Some(
            json!({"env": {"ONLY_THIS": "yes"}, "cwd": path_arg(&home.home().canonicalize().unwrap())})
        )
    );
    client.cancel().await.unwrap();
    assert!(wait_gone(pid, Duration::from_secs(10)).await);
}

#[tokio::test]
async fn exit_mid_call_kills_the_process_with_the_code() {
    let home = temp();
    let file = home.join("exit.json");
    Scenario::new("exit")
        .with_tool(mcp_testkit::ToolSpec::new(
            "die",
            mcp_testkit::Behavior::Exit { code: 7 },
        ))
        .write_json(&file)
        .unwrap();
    let mut server = spawn(&["--scenario", &path_arg(&file)], Stdio::null());
    let (client, _) = connect(server.transport()).await;
    client
        .call_tool(CallToolRequestParams::new("die"))
        .await
        .expect_err("no answer");
    assert_eq!(server.wait_and_check().await.code(), Some(7));
}

#[tokio::test]
async fn exit_at_startup_with_code_and_stderr() {
    let out = tokio::process::Command::new(BIN)
        .args(["--exit-at-startup", "42", "--stderr", "boom: bad config"])
        .stdin(Stdio::piped())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(42));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "boom: bad config\n");
    assert!(out.stdout.is_empty());
}

#[tokio::test]
async fn huge_line_garbage_and_stderr_flood() {
    let mut server = spawn(
        &[
            "--garbage-stdout",
            "--huge-line",
            "3000000",
            "--flood-stderr",
            "20000",
            "--tool",
            "e",
        ],
        Stdio::piped(),
    );
    // Drain stderr concurrently: 20 000 lines overflow a pipe buffer.
    let mut stderr = server.child.stderr.take().unwrap();
    let drain = tokio::spawn(async move {
        let mut text = String::new();
        stderr.read_to_string(&mut text).await.unwrap();
        text
    });
    let (stdout, stdin) = server.transport();
    let mut stdout = BufReader::new(stdout);
    let mut line = Vec::new();
    stdout.read_until(b'\n', &mut line).await.unwrap();
    assert_eq!(line, format!("{}\n", mcp_testkit::GARBAGE_LINE).as_bytes());
    line.clear();
    stdout.read_until(b'\n', &mut line).await.unwrap();
    assert_eq!(line.len(), 3_000_001);
    assert!(line[..3_000_000].iter().all(|b| *b == b'x'));
    // The protocol works after the noise.
    let (client, _) = connect((stdout, stdin)).await;
    assert_eq!(
        call(&client, "e", json!({})).await.structured_content,
        Some(json!({}))
    );
    client.cancel().await.unwrap();
    assert!(server.wait_and_check().await.success());
    let text = drain.await.unwrap();
    assert_eq!(text.lines().count(), 20_000);
    assert_eq!(
        text.lines().last(),
        Some("mcp-fake-server stderr flood line 19999")
    );
}

#[tokio::test]
async fn ignore_sigterm_survives_term_and_stdin_close_until_kill() {
    let mut server = spawn(&["--ignore-sigterm", "--tool", "e"], Stdio::null());
    let (client, _) = connect(server.transport()).await;
    client.cancel().await.unwrap(); // closes stdin
    mcp_testkit::terminate_process(server.pid);
    // Still there after a SIGTERM and a closed stdin.
    assert!(!wait_gone(server.pid, Duration::from_millis(500)).await);
    assert!(server.child.try_wait().unwrap().is_none());
    server.kill_and_check().await;
}

#[tokio::test]
async fn grandchild_outlives_the_server_unless_the_group_is_killed() {
    let home = temp();
    let grandchild_file = home.join("grandchild.pid");
    let mut server = spawn(
        &[
            "--spawn-grandchild",
            &path_arg(&grandchild_file),
            "--tool",
            "e",
        ],
        Stdio::null(),
    );
    let (client, _) = connect(server.transport()).await;
    let grandchild =
        read_pid_file(&grandchild_file).expect("grandchild pid written before serving");
    assert!(mcp_testkit::process_alive(grandchild));
    assert_eq!(mcp_testkit::process_group_members(server.pid), {
        let mut v = vec![server.pid, grandchild];
        v.sort_unstable();
        v
    });
    // A careless parent: the server exits on stdin close, the grandchild stays.
    client.cancel().await.unwrap();
    let _ = server.child.wait().await.unwrap();
    assert!(
        mcp_testkit::process_alive(grandchild),
        "the grandchild outlives its parent"
    );
    // Killing the group ends it.
    mcp_testkit::kill_process_group(server.pid);
    assert!(mcp_testkit::wait_group_gone(server.pid, Duration::from_secs(5)).await);
    mcp_testkit::assert_no_process(grandchild);
}

#[tokio::test]
async fn hang_and_slow_initialize_in_the_binary() {
    let mut server = spawn(&["--hang-initialize", "--tool", "e"], Stdio::null());
    let transport = server.transport();
    let handshake = connect(transport);
    assert!(
        tokio::time::timeout(Duration::from_millis(500), handshake)
            .await
            .is_err()
    );
    server.kill_and_check().await;

    let mut server = spawn(&["--init-delay-ms", "300", "--tool", "e"], Stdio::null());
    let start = std::time::Instant::now();
    let (client, _) = connect(server.transport()).await;
    assert!(start.elapsed() >= Duration::from_millis(300));
    client.cancel().await.unwrap();
    assert!(server.wait_and_check().await.success());
}

#[tokio::test]
async fn pagination_flags_in_the_binary() {
    let mut server = spawn(
        &[
            "--tool",
            "a",
            "--tool",
            "b",
            "--tool",
            "c",
            "--page-size",
            "2",
        ],
        Stdio::null(),
    );
    let (client, _) = connect(server.transport()).await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    assert_eq!(client.list_all_tools().await.unwrap().len(), 3);
    client.cancel().await.unwrap();
    assert!(server.wait_and_check().await.success());
}

#[test]
fn fake_server_bin_finds_the_built_binary() {
    let found = mcp_testkit::fake_server_bin();
    assert_eq!(
        found.canonicalize().unwrap(),
        std::path::Path::new(BIN).canonicalize().unwrap()
    );
}

//! The example against `mcp-testkit`'s fake server binary (a real process over stdio).

use std::time::Duration;

use mcp_testkit::{Scenario, TestHome, ToolSpec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_and_calls_one_server_and_leaves_no_process() {
    let home = TestHome::new().expect("temp home");
    let path = home.join("scenario.json");
    Scenario::new("example")
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::echo("again"))
        .write_json(&path)
        .expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let args = vec!["--scenario".to_owned(), path.to_string_lossy().into_owned()];
    let mut arguments = serde_json::Map::new();
    arguments.insert("text".to_owned(), "hi".into());
    let report = one_server::run(&bin.to_string_lossy(), &args, Some(("echo", arguments)))
        .await
        .expect("the example runs");
    assert_eq!(report.tools, ["echo", "again"]);
    assert_eq!(report.era, "2025-11-25");
    assert_eq!(report.called.as_deref(), Some(r#"{"text":"hi"}"#));
    let pid = report.pid.expect("a stdio server has a pid");
    assert!(
        mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await,
        "the server process outlived the example"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_is_an_error_naming_the_server() {
    let err = one_server::run("/nonexistent/mcp-server", &[], None)
        .await
        .expect_err("no such program");
    // The launcher's error, the cause, names the server: the whole chain says which.
    let mut chain = err.to_string();
    let mut cause = err.source();
    while let Some(e) = cause {
        chain.push_str(": ");
        chain.push_str(&e.to_string());
        cause = e.source();
    }
    assert!(chain.contains("`example`"), "{chain}");
}

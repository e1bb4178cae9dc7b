//! The example against `mcp-testkit`'s fake server binary (a real process over stdio).

use std::time::Duration;

use mcp_testkit::{Behavior, Faults, PromptSpec, ResourceSpec, Scenario, TestHome, ToolSpec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_reads_and_calls_one_server_and_leaves_no_process() {
    let home = TestHome::new().expect("temp home");
    let path = home.join("scenario.json");
    // Lists in pages of one: every page must be gathered.
    Scenario::new("example")
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::echo("again"))
        .with_tool(ToolSpec::new("steps", Behavior::Progress { steps: 3 }))
        .with_resource(ResourceSpec::new("file:///a.txt", "a", "alpha"))
        .with_resource(ResourceSpec::new("file:///b.txt", "b", "beta"))
        .with_prompt(PromptSpec::new("greet", "Hello {name}").with_argument("name"))
        .with_prompt(PromptSpec::new("intro", "Introduce yourself"))
        .with_faults(Faults::new().with_page_size(1))
        .write_json(&path)
        .expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let args = vec!["--scenario".to_owned(), path.to_string_lossy().into_owned()];
    let report = one_server::run(
        &bin.to_string_lossy(),
        &args,
        Some(("steps", Default::default())),
    )
    .await
    .expect("the example runs");
    assert_eq!(report.era, "2025-11-25");
    assert_eq!(report.tools, ["echo", "again", "steps"]);
    assert_eq!(report.resources, ["file:///a.txt", "file:///b.txt"]);
    assert_eq!(report.read.as_deref(), Some("alpha"));
    assert_eq!(report.prompts, ["greet", "intro"]);
    // `greet` needs an argument: the first prompt without one is got.
    assert_eq!(report.prompt.as_deref(), Some("Introduce yourself"));
    let called = report.called.expect("the tool was called");
    assert!(called.contains(r#""steps":3"#), "{called}");
    // In order, each with the total; rmcp may drop an update still in flight when the
    // result arrives, so not all three are guaranteed.
    let progress: Vec<(f64, Option<f64>)> = report
        .progress
        .iter()
        .map(|p| (p.progress, p.total))
        .collect();
    assert!(!progress.is_empty(), "no progress reported");
    assert!(progress.windows(2).all(|w| w[0].0 < w[1].0), "{progress:?}");
    assert!(
        progress
            .iter()
            .all(|(p, t)| (1.0..=3.0).contains(p) && *t == Some(3.0)),
        "{progress:?}"
    );
    let pid = report.pid.expect("a stdio server has a pid");
    assert!(
        mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await,
        "the server process outlived the example"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_of_a_tool_the_server_lacks_is_an_error_and_leaves_no_process() {
    let home = TestHome::new().expect("temp home");
    let path = home.join("scenario.json");
    let pid_file = home.join("server.pid");
    Scenario::new("example")
        .with_tool(ToolSpec::echo("echo"))
        .with_record(mcp_testkit::Recording::new().with_pid_file(&pid_file))
        .write_json(&path)
        .expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let args = vec!["--scenario".to_owned(), path.to_string_lossy().into_owned()];
    let err = one_server::run(
        &bin.to_string_lossy(),
        &args,
        Some(("nope", Default::default())),
    )
    .await
    .expect_err("no such tool");
    assert!(err.to_string().starts_with("calling `nope`: "), "{err}");
    let pid = mcp_testkit::read_pid_file(&pid_file).expect("the server wrote its pid");
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

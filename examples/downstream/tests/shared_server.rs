//! The example against mcp-testkit's fake server: two users, one process, none left.

// The workspace's clippy.toml (found in a parent folder) reserves spawning for mcp-pool.
#![allow(
    clippy::disallowed_methods,
    reason = "the test runs the example's binary itself"
)]

use std::time::Duration;

use downstream::{shared_pool, start};
use mcp_testkit::{Scenario, TestHome, ToolSpec};

fn fake_server(home: &TestHome) -> (String, Vec<String>) {
    let scenario = Scenario::new("downstream-fake")
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::echo("shout"));
    let file = home.join("scenario.json");
    scenario.write_json(&file).unwrap();
    // Built from the testkit's own manifest on first use (or $MCP_FAKE_SERVER_BIN).
    let program = mcp_testkit::fake_server_bin().display().to_string();
    (
        program,
        vec!["--scenario".to_owned(), file.display().to_string()],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_users_share_one_process() {
    let home = TestHome::new().unwrap();
    let (program, args) = fake_server(&home);
    let pool = shared_pool();
    let acquire = || {
        let (pool, program, args) = (pool.clone(), program.clone(), args.clone());
        async move {
            pool.acquire("fake".to_owned(), || start(program, args))
                .await
                .unwrap()
        }
    };
    let (a, b) = tokio::join!(acquire(), acquire());
    assert_eq!(a.pid(), b.pid());
    assert_eq!(pool.stats().starts, 1);
    let (tools_a, tools_b) = tokio::join!(a.tool_names(), b.tool_names());
    assert_eq!(tools_a.unwrap(), ["echo", "shout"]);
    assert_eq!(tools_b.unwrap(), ["echo", "shout"]);

    let pid = a.pid();
    drop((a, b));
    pool.shutdown().await;
    assert!(mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await);
}

#[test]
fn the_binary_shares_its_server() {
    let home = TestHome::new().unwrap();
    let (program, args) = fake_server(&home);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_downstream"))
        .arg(program)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("shared: true"), "{stdout}");
    assert!(stdout.contains("starts: 1"), "{stdout}");
    assert!(stdout.contains("tools: echo, shout"), "{stdout}");
}

//! Linux: servers started through the exec helper (`src/launch/exec_helper.rs`) are the
//! server itself, where it was asked to run, with a stdin that only the host holds.
#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use common::*;
use mcp_pool::{LaunchSpec, ProcessExit, launch};
use pretty_assertions::assert_eq;
use tokio::io::AsyncWriteExt;

/// `/proc/<pid>/stat`'s parent and group (after the command name, which may hold spaces).
fn parent_and_group(pid: u32) -> (u32, u32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_ascii_whitespace()
        .collect();
    (fields[1].parse().unwrap(), fields[2].parse().unwrap())
}

#[tokio::test]
async fn the_process_is_the_server_a_child_of_the_host_leading_its_own_group() {
    let mut process = launch(fake(&["--tool", "echo"])).await.unwrap();
    let pid = process.pid();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert_eq!(
        exe,
        std::fs::canonicalize(fake_bin()).unwrap(),
        "the helper must have exec'd the server in place"
    );
    assert_eq!(parent_and_group(pid), (std::process::id(), pid));
    let client = connect(&mut process).await;
    assert_eq!(call(&client, "echo").await.unwrap().is_error, Some(false));
    drop(client);
    assert_eq!(process.shutdown().await, ProcessExit::Exited(0));
    assert_all_gone(&[pid]).await;
    mcp_testkit::assert_no_process_group(pid);
}

#[tokio::test]
async fn the_server_runs_in_the_working_directory_of_its_spec() {
    let dir = tempfile::tempdir().unwrap();
    let spec = LaunchSpec::new("sh")
        .with_args(["-c", "pwd -P >&2; exec cat"])
        .with_cwd(dir.path());
    let process = launch(spec).await.unwrap();
    let pid = process.pid();
    assert_eq!(process.shutdown().await, ProcessExit::Exited(0));
    process.stderr_tail().wait_closed().await;
    assert_eq!(
        process.stderr_tail().snapshot(),
        std::fs::canonicalize(dir.path()).unwrap().to_string_lossy()
    );
    mcp_testkit::assert_no_process_group(pid);
}

/// The host opens the server's stdin pipe for the helper and must close its own read
/// end afterwards: else writes to a dead server would fill the pipe instead of failing.
#[tokio::test]
async fn writing_to_a_server_that_exited_fails() {
    let mut process = launch(fake(&["--exit-at-startup", "0"])).await.unwrap();
    let pid = process.pid();
    assert_eq!(
        process.exit_watcher().wait_exit().await,
        ProcessExit::Exited(0)
    );
    let (_reader, mut writer) = process.take_transport().unwrap();
    let written = async {
        writer.write_all(b"{}\n").await?;
        writer.flush().await
    }
    .await;
    let err = written.expect_err("the server's stdin must have no reader left");
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
    assert_eq!(process.shutdown().await, ProcessExit::Exited(0));
    mcp_testkit::assert_no_process_group(pid);
}

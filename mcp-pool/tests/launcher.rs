//! The launcher against real processes: environment, errors, shutdown, group kill.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use common::*;
use mcp_pool::{ALLOWED_HOST_ENV, LaunchSpec, ProcessExit, launch};
use pretty_assertions::assert_eq;

#[tokio::test]
async fn child_sees_exactly_the_allowed_environment() {
    let dir = tempfile::tempdir().unwrap();
    // Two host variables outside the allow-list: one named, one that must not leak.
    let mut extra: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !ALLOWED_HOST_ENV.contains(&k.as_str()))
        .collect();
    extra.sort();
    assert!(
        extra.len() >= 2,
        "test needs two non-allow-listed host variables"
    );
    let (named, named_value) = extra[0].clone();
    let (leaked, _) = extra[1].clone();

    let spec = fake(&[])
        .with_args(scenario(dir.path(), vec![report_env_tool()]))
        .with_env_var(named.clone())
        .with_env("MCP_POOL_LITERAL", "literal value")
        .with_cwd(dir.path());
    let mut process = launch(spec).await.unwrap();
    let client = connect(&mut process).await;
    let result = call(&client, "report_env").await.unwrap();
    let report = result.structured_content.unwrap();

    let mut want: BTreeMap<String, String> = ALLOWED_HOST_ENV
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), std::env::var(k).ok()?)))
        .collect();
    want.insert(named, named_value);
    want.insert("MCP_POOL_LITERAL".into(), "literal value".into());
    let got: BTreeMap<String, String> = serde_json::from_value(report["env"].clone()).unwrap();
    assert_eq!(got, want);
    assert!(!got.contains_key(&leaked));
    assert_eq!(
        report["cwd"].as_str().unwrap(),
        dir.path().canonicalize().unwrap().to_str().unwrap()
    );

    drop(client);
    let exit = process.shutdown().await;
    assert!(exit.is_success(), "{exit}");
}

#[tokio::test]
async fn spawn_failures_are_classified_and_name_the_command() {
    let dir = tempfile::tempdir().unwrap();

    let err = launch(LaunchSpec::new("mcp-pool-no-such-command").with_label("ghost"))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "server `ghost`: command `mcp-pool-no-such-command` not found in PATH; install it or fix the command"
    );

    let script = dir.path().join("server.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = launch(LaunchSpec::new(script.to_str().unwrap()).with_label("noexec"))
        .await
        .unwrap_err();
    assert!(err.is_not_executable(), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "server `noexec`: command `{}` is not executable; check its permissions (chmod +x) or its format",
            script.display()
        )
    );

    let missing = dir.path().join("missing-dir");
    let err = launch(fake(&[]).with_cwd(&missing)).await.unwrap_err();
    assert!(err.is_bad_cwd(), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "server `fake`: working directory `{}` for command `{}` does not exist or is not a directory",
            missing.display(),
            fake_bin()
        )
    );

    // A wrapper that does not exist is reported as the command that was spawned.
    let err = launch(fake(&[]).with_wrapper(["mcp-pool-no-such-wrapper", "--"]))
        .await
        .unwrap_err();
    assert_eq!(err.command(), Some("mcp-pool-no-such-wrapper"));
}

#[tokio::test]
async fn shutdown_closes_stdin_first_and_a_polite_server_exits_by_itself() {
    let mut process = launch(fake(&["--tool", "echo"])).await.unwrap();
    let client = connect(&mut process).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 1);
    // Exit code 0, not SIGTERM: it left on its own when stdin closed.
    let exit = process.shutdown().await;
    assert_eq!(exit, ProcessExit::Exited(0));
    // Idempotent.
    assert_eq!(process.shutdown().await, ProcessExit::Exited(0));
    assert!(mcp_testkit::wait_gone(process.pid(), GONE).await);
}

#[tokio::test]
async fn a_server_that_ignores_sigterm_is_killed_within_the_grace_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let grandchild = dir.path().join("grandchild.pid");
    let spec =
        fake(&["--ignore-sigterm", "--spawn-grandchild"]).with_args([grandchild.to_str().unwrap()]);
    let mut process = launch(spec).await.unwrap();
    let _client = connect(&mut process).await;
    let grandchild = pid_from(&grandchild).await;
    let started = Instant::now();
    let exit = process.shutdown().await;
    let took = started.elapsed();
    assert_eq!(exit.signal(), Some(9), "{exit}");
    assert!(took >= GRACE * 2, "SIGKILL came too early: {took:?}");
    assert!(
        took < GRACE * 2 + Duration::from_secs(2),
        "too slow: {took:?}"
    );
    assert_all_gone(&[process.pid(), grandchild]).await;
}

#[tokio::test]
async fn exit_at_startup_keeps_stderr_in_the_tail() {
    let process = launch(fake(&[
        "--exit-at-startup",
        "3",
        "--stderr",
        "bad config: no token",
    ]))
    .await
    .unwrap();
    assert_eq!(
        process.exit_watcher().wait_exit().await,
        ProcessExit::Exited(3)
    );
    process.stderr_tail().wait_closed().await;
    assert_eq!(process.stderr_tail().snapshot(), "bad config: no token");
    assert_eq!(process.shutdown().await, ProcessExit::Exited(3));
}

#[tokio::test]
async fn a_wrapper_prefix_runs_the_server_through_it() {
    let spec = fake(&["--tool", "echo"]).with_wrapper(["sh", "-c", "exec \"$@\"", "wrapper"]);
    let mut process = launch(spec).await.unwrap();
    let client = connect(&mut process).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools[0].name, "echo");
    assert!(process.shutdown().await.is_success());
}

/// `sh -c 'fake ... & wait'`: the real server is a grandchild behind a shell, and it
/// starts its own grandchild. fd 3 carries the real stdin past the shell's
/// `/dev/null` for background jobs.
fn wrapped_spec(dir: &std::path::Path) -> (mcp_pool::LaunchSpec, [std::path::PathBuf; 2]) {
    let server_pid = dir.join("server.pid");
    let grandchild_pid = dir.join("grandchild.pid");
    let script =
        r#"exec 3<&0; "$0" --tool echo --pid-file "$1" --spawn-grandchild "$2" <&3 3<&- & wait"#;
    let spec = LaunchSpec::new("sh")
        .with_args([
            "-c",
            script,
            &fake_bin(),
            server_pid.to_str().unwrap(),
            grandchild_pid.to_str().unwrap(),
        ])
        .with_label("wrapped")
        .with_stdin_grace(GRACE)
        .with_term_grace(GRACE);
    (spec, [server_pid, grandchild_pid])
}

async fn start_wrapped(dir: &std::path::Path) -> (mcp_pool::StdioProcess, Client, Vec<u32>) {
    let (spec, files) = wrapped_spec(dir);
    let mut process = launch(spec).await.unwrap();
    let client = connect(&mut process).await;
    assert_eq!(call(&client, "echo").await.unwrap().is_error, Some(false));
    let pids = vec![
        process.pid(),
        pid_from(&files[0]).await,
        pid_from(&files[1]).await,
    ];
    (process, client, pids)
}

#[tokio::test]
async fn wrapper_and_grandchildren_are_gone_after_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let (process, _client, pids) = start_wrapped(dir.path()).await;
    process.shutdown().await;
    assert_all_gone(&pids).await;
    mcp_testkit::assert_no_process_group(process.pid());
}

#[tokio::test]
async fn wrapper_and_grandchildren_are_gone_after_drop() {
    let dir = tempfile::tempdir().unwrap();
    let (process, client, pids) = start_wrapped(dir.path()).await;
    drop(process);
    drop(client);
    assert_all_gone(&pids).await;
    mcp_testkit::assert_no_process_group(pids[0]);
}

#[tokio::test]
async fn wrapper_and_grandchildren_are_gone_after_a_panic_in_the_owner() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let owner = tokio::spawn(async move {
        let (process, client, pids) = start_wrapped(&path).await;
        tx.send(pids).unwrap();
        let _keep = (process, client);
        panic!("the owning task fails");
    });
    let pids = rx.await.unwrap();
    assert!(owner.await.unwrap_err().is_panic());
    assert_all_gone(&pids).await;
    mcp_testkit::assert_no_process_group(pids[0]);
}

#[test]
fn drop_needs_no_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, files) = wrapped_spec(dir.path());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (process, pids) = runtime.block_on(async {
        let mut process = launch(spec).await.unwrap();
        let _client = connect(&mut process).await;
        let pids = vec![
            process.pid(),
            pid_from(&files[0]).await,
            pid_from(&files[1]).await,
        ];
        (process, pids)
    });
    drop(runtime);
    drop(process); // outside any runtime
    let checker = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    checker.block_on(assert_all_gone(&pids));
}

#[tokio::test]
async fn a_server_deaf_to_stdin_gets_sigterm_after_the_stdin_grace() {
    let process = launch(
        LaunchSpec::new("sleep")
            .with_args(["1000"])
            .with_stdin_grace(GRACE)
            .with_term_grace(Duration::from_secs(30)),
    )
    .await
    .unwrap();
    let started = Instant::now();
    let exit = process.shutdown().await;
    let took = started.elapsed();
    assert_eq!(exit, ProcessExit::Signaled(15), "{exit}");
    assert!(
        took >= GRACE,
        "SIGTERM came before the stdin grace: {took:?}"
    );
    assert!(
        took < Duration::from_secs(10),
        "SIGKILL path taken: {took:?}"
    );
    assert_all_gone(&[process.pid()]).await;
}

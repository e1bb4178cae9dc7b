//! The sshd fixture against the real OpenSSH server: a command runs over it with the
//! fixture's key and known_hosts, the log counts the connection, and dropping the fixture
//! leaves no sshd process behind.

#![allow(
    clippy::disallowed_methods,
    reason = "tests run the ssh client directly"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_testkit::SshdFixture;

#[tokio::test]
async fn runs_a_command_and_leaves_no_sshd_behind() {
    let Some(sshd) = SshdFixture::start_or_skip("runs_a_command_and_leaves_no_sshd_behind") else {
        return;
    };
    let argv = sshd.ssh_argv();
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .arg("--")
        .arg("echo hello-from-sshd")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "ssh failed: {}\nsshd log:\n{}",
        String::from_utf8_lossy(&output.stderr),
        sshd.log()
    );
    assert_eq!(stdout, "hello-from-sshd\n");
    assert_eq!(sshd.accepted_connections(), 1, "log:\n{}", sshd.log());

    let listener = sshd.pid();
    drop(sshd);
    assert!(mcp_testkit::wait_gone(listener, Duration::from_secs(2)).await);
}

#[tokio::test]
async fn an_unknown_host_key_is_refused() {
    let Some(sshd) = SshdFixture::start_or_skip("an_unknown_host_key_is_refused") else {
        return;
    };
    std::fs::write(sshd.known_hosts(), "").unwrap();
    let argv = sshd.ssh_argv();
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .arg("--")
        .arg("true")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Host key verification failed"), "{stderr}");
    assert_eq!(sshd.accepted_connections(), 0);
}

#[tokio::test]
async fn killing_sessions_cuts_the_connection() {
    let Some(sshd) = SshdFixture::start_or_skip("killing_sessions_cuts_the_connection") else {
        return;
    };
    let argv = sshd.ssh_argv();
    let mut client = tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .arg("--")
        .arg("exec sleep 60")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // The session exists once the command runs: the `sleep` itself (counting processes is
    // not enough: sshd's own come first, and the user's shell may run its startup files,
    // e.g. a `pyenv init`, before it execs the command).
    let sleeping = || {
        sshd.session_pids().into_iter().find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim_end() == "sleep")
        })
    };
    let started = tokio::time::timeout(Duration::from_secs(10), async {
        while !sshd.log().contains("Accepted publickey") || sleeping().is_none() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(started.is_ok(), "no session: {}", sshd.log());
    let connections = sshd.connection_pids();
    let commands: Vec<u32> = sleeping().into_iter().collect();
    assert!(!connections.is_empty());
    assert!(!connections.contains(&commands[0]));
    sshd.kill_sessions();
    let status = tokio::time::timeout(Duration::from_secs(5), client.wait())
        .await
        .expect("the client noticed the cut connection")
        .unwrap();
    assert!(!status.success());
    for pid in connections {
        assert!(
            mcp_testkit::wait_gone(pid, Duration::from_secs(2)).await,
            "{pid} left"
        );
    }
    // The remote command is not the fixture's to end: sshd leaves it running.
    assert!(mcp_testkit::process_alive(commands[0]));
    mcp_testkit::kill_process(commands[0]);
}

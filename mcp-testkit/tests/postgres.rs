//! The PostgreSQL fixture: a real server on loopback, as an unprivileged user when the
//! tests run as root, answering queries, and no process left once dropped.

#![allow(
    clippy::disallowed_methods,
    reason = "the test runs the psql client directly"
)]

use std::process::Command;

use mcp_testkit::postgres::{PostgresFixture, postgres_bin_dir};

fn psql(fixture: &PostgresFixture, sql: &str) -> std::process::Output {
    let bin = postgres_bin_dir().unwrap_or_else(|| panic!("PostgreSQL vanished"));
    Command::new(bin.join("psql"))
        .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
        .arg(fixture.url())
        .args(["-c", sql])
        .output()
        .unwrap_or_else(|e| panic!("running psql: {e}"))
}

#[test]
fn postgres_answers_on_loopback_and_leaves_no_process() {
    let Some(mut fixture) = PostgresFixture::start_or_skip("postgres fixture") else {
        return;
    };
    let output = psql(
        &fixture,
        "select current_user || ' ' || host(inet_server_addr())",
    );
    assert!(
        output.status.success(),
        "psql failed: {}\nlog:\n{}",
        String::from_utf8_lossy(&output.stderr),
        fixture.log()
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "postgres 127.0.0.1"
    );
    // The server does not run as root (PostgreSQL refuses to), whoever runs the tests.
    let pid = fixture.pid().unwrap_or_else(|| panic!("no postmaster"));
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("reading the postmaster's status: {e}"));
    let uid_line = status
        .lines()
        .find(|line| line.starts_with("Uid:"))
        .unwrap_or_else(|| panic!("no Uid line"));
    assert!(
        uid_line.split_whitespace().skip(1).all(|uid| uid != "0"),
        "postgres runs as root: {uid_line}"
    );
    let pids = fixture.pids();
    assert!(pids.len() > 1, "the postmaster and its workers: {pids:?}");
    fixture.stop();
    assert!(fixture.pids().is_empty());
    let left: Vec<u32> = pids
        .into_iter()
        .filter(|pid| mcp_testkit::process_alive(*pid))
        .collect();
    assert!(left.is_empty(), "PostgreSQL processes left: {left:?}");
    // Stopped: the port refuses.
    let output = psql(&fixture, "select 1");
    assert!(!output.status.success());
    let dir = fixture.dir().to_path_buf();
    drop(fixture);
    assert!(!dir.exists(), "the data folder is removed on drop");
}

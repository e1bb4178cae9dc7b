//! The suite's leftover check counts only the servers of the test that asks: a stray
//! `mcpctl fake-server` of another test, another run or a person's experiment does not
//! fail it.

#![allow(
    clippy::disallowed_methods,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests start mcpctl processes directly"
)]

mod support;

use std::process::{Command, Stdio};

use support::Workdir;

#[test]
fn a_server_of_another_test_is_not_counted_as_left() {
    let other = Workdir::new();
    // Runs until its stdin closes, like a server another test is still using.
    let mut stray = Command::new(env!("CARGO_BIN_EXE_mcpctl"))
        .args(["fake-server", "--scenario-json", "{}"])
        .current_dir(other.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mine = Workdir::new();
    mine.assert_no_server_left();
    let counted = std::panic::catch_unwind(|| other.assert_no_server_left());
    assert!(
        counted.is_err(),
        "the other test's check sees its own server"
    );
    stray.kill().unwrap();
    stray.wait().unwrap();
    other.assert_no_server_left();
}

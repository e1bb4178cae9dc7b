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

use support::{Workdir, assert_no_server_left_in};

#[test]
fn a_server_of_another_test_is_not_counted_as_left() {
    // Another test's (or a person's) folder: Workdirs of one test binary take turns, so it
    // is a plain temporary folder.
    let other = tempfile::tempdir().unwrap();
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
    let counted = std::panic::catch_unwind(|| assert_no_server_left_in(other.path()));
    assert!(counted.is_err(), "the other folder's check sees its server");
    stray.kill().unwrap();
    stray.wait().unwrap();
    assert_no_server_left_in(other.path());
}

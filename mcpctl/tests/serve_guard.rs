//! `mcpctl serve --http` refuses what would silently not work or leak: an any-address
//! bind (every client would get 403 from the Host check), a short `MCPCTL_SERVE_TOKEN`
//! (it used to be replaced by a generated token without a word), a token file other
//! users can read.

#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

mod support;

use support::Workdir;

#[test]
fn an_any_address_bind_is_refused_with_what_to_bind_instead() {
    let wd = Workdir::new();
    let run = wd.run(&["serve", "--http", "0.0.0.0:0", "--allow-remote"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("listens on every address"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("bind the address clients connect to"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_short_token_in_the_environment_is_refused_not_replaced() {
    let mut wd = Workdir::new();
    wd.set_env("MCPCTL_SERVE_TOKEN", Some("short"));
    let run = wd.run(&["serve", "--http", "127.0.0.1:0"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("$MCPCTL_SERVE_TOKEN is shorter than 16 characters"),
        "{}",
        run.stderr
    );
}

#[cfg(unix)]
#[test]
fn a_token_file_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let wd = Workdir::new();
    let path = wd.write("token", "0123456789abcdef0123456789abcdef\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = wd.run(&["serve", "--http", "127.0.0.1:0", "--token-file", "token"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("chmod 600"), "{}", run.stderr);
}

//! A restart of `mcpctl serve --http` with `[gateway.oauth]` keeps each caller's sign-in to
//! an `upstream_identity = "caller"` server: the default credential store is SQLite in
//! the data folder (`gateway/credentials.db`, its key in `gateway/credentials.key`, both
//! 0600), not the gateway's memory. alice and bob sign in through the URL of the -32042
//! error (a browser follows it), call once, the gateway is stopped with SIGTERM and
//! started again on the same data folder, configuration and address, and both call again
//! without signing in: the upstream sees each one's own subject and the authorization
//! server sees no new sign-in. As a control, a restart without `gateway/credentials.db`
//! (what a vault in memory would be) asks alice to sign in again.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod signin;
mod support;
mod team;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use mcp_testkit::FakeProtectedMcpServer;
use pretty_assertions::assert_eq;
use signin::{assert_echoed, call, sign_in_url};
use support::{Served, Workdir};
use team::STATIC_TOKEN;

/// `token`'s call of `tickets` in a new session succeeds, and the upstream served it as
/// `upstream_subject` alone.
async fn calls_as(
    url: &str,
    token: &str,
    tickets: &FakeProtectedMcpServer,
    upstream_subject: &str,
) {
    let before = tickets.subjects().len();
    let session = team::open_session(url, token).await;
    assert_echoed(&call(url, token, &session).await);
    let mut seen = tickets.subjects().split_off(before);
    seen.dedup();
    assert_eq!(seen, [upstream_subject], "who the upstream served");
}

/// The permission bits of `path`, which must exist.
fn mode(path: &Path) -> u32 {
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    meta.permissions().mode() & 0o777
}

/// The `host:port` of a gateway URL `http://host:port/mcp`.
fn address(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

#[test]
fn a_restarted_gateway_keeps_both_sign_ins_in_sqlite() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(signin::tickets_upstream());
    let config = signin::config(&wd, &auth, &tickets);
    let mut served = Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    let alice = team::token(&auth, &url, "alice", &["readers"]);
    let bob = team::token(&auth, &url, "bob", &[]);
    let callers = [(&alice, "alice-upstream"), (&bob, "bob-upstream")];
    runtime.block_on(async {
        for (token, upstream_subject) in callers {
            let session = team::open_session(&url, token).await;
            let page = sign_in_url(&call(&url, token, &session).await);
            let body = signin::sign_in_as(&auth, &page, upstream_subject).await;
            assert!(body.contains("Signed in to tickets"), "{body}");
            calls_as(&url, token, &tickets, upstream_subject).await;
        }
    });
    let status = served.stop();
    assert!(
        status.success(),
        "the gateway stops cleanly on SIGTERM: {status}"
    );
    drop(served);
    wd.assert_no_server_left();

    let data = wd.path().join("home").join("gateway");
    assert_eq!(mode(&data.join("credentials.db")), 0o600, "credentials.db");
    assert_eq!(
        mode(&data.join("credentials.key")),
        0o600,
        "credentials.key"
    );

    // A sign-in now would log in someone else: a call served as alice-upstream or
    // bob-upstream can only come from the stored credentials.
    auth.set_subject("nobody", &[]);
    let signed_in = auth.counters();
    let mut served = Served::start_at(&wd, &config, STATIC_TOKEN, &address(&url), &[], &[]);
    assert_eq!(served.url, url, "the same address, so the same tokens");
    runtime.block_on(async {
        for (token, upstream_subject) in callers {
            calls_as(&url, token, &tickets, upstream_subject).await;
        }
    });
    let after = auth.counters();
    assert_eq!(
        (after.authorize, after.authorization_code),
        (signed_in.authorize, signed_in.authorization_code),
        "nobody signed in again"
    );
    served.stop();
    drop(served);
    wd.assert_no_server_left();

    // The control: without the database (a vault in memory keeps nothing past a stop),
    // the same restart asks alice to sign in again and nothing reaches the upstream.
    std::fs::remove_file(data.join("credentials.db")).unwrap();
    for journal in ["credentials.db-wal", "credentials.db-shm"] {
        let _ = std::fs::remove_file(data.join(journal));
    }
    let served = Served::start_at(&wd, &config, STATIC_TOKEN, &address(&url), &[], &[]);
    runtime.block_on(async {
        let before = tickets.subjects().len();
        let session = team::open_session(&url, &alice).await;
        sign_in_url(&call(&url, &alice, &session).await);
        assert_eq!(tickets.subjects().len(), before, "nothing went upstream");
    });
    signin::stop(&wd, &runtime, served, auth, vec![tickets]);
}

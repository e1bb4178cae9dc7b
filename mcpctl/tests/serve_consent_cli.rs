//! `mcpctl gateway sign-out` and `gateway revoke` refuse, each saying what to give, when
//! they lack the gateway's URL or a token, or when the URL would carry a token unencrypted;
//! a gateway that answers an error is reported with its status and text, its terminal
//! escapes shown escaped; a token from the environment is sent without the spaces and
//! newline around it. The successful runs against a gateway are in `serve_consent.rs`
//! and the consent pages' unit tests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers may panic"
)]

mod support;

use support::Workdir;

fn workdir() -> Workdir {
    let mut wd = Workdir::new();
    for name in [
        "MCPCTL_GATEWAY_URL",
        "MCPCTL_GATEWAY_TOKEN",
        "MCPCTL_GATEWAY_ADMIN_TOKEN",
    ] {
        wd.set_env(name, None);
    }
    wd
}

#[test]
fn sign_out_and_revoke_say_what_they_lack() {
    let mut wd = workdir();
    let run = wd.run(&["gateway", "sign-out", "--server", "tickets"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("which gateway?"), "{}", run.stderr);
    assert!(run.stderr.contains("--url"), "{}", run.stderr);

    let run = wd.run(&[
        "gateway",
        "sign-out",
        "--server",
        "tickets",
        "--url",
        "http://gateway.example.com",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("unencrypted"), "{}", run.stderr);

    wd.set_env("MCPCTL_GATEWAY_URL", Some("http://127.0.0.1:9"));
    let run = wd.run(&["gateway", "sign-out", "--server", "tickets"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no access token"), "{}", run.stderr);
    assert!(
        run.stderr.contains("MCPCTL_GATEWAY_TOKEN"),
        "{}",
        run.stderr
    );

    let run = wd.run(&["gateway", "revoke", "--caller", "sub:bob"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("MCPCTL_GATEWAY_ADMIN_TOKEN"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_gateway_refusal_is_reported_with_its_text() {
    let runtime = support::runtime();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let router = axum::Router::new().route(
        "/connect/callers/{caller}",
        axum::routing::delete(|| async {
            (
                http::StatusCode::UNAUTHORIZED,
                "mcpctl serve: revoking needs the admin token\n",
            )
        }),
    );
    let server = runtime.spawn(async move { axum::serve(listener, router).await });
    let mut wd = workdir();
    wd.set_env(
        "MCPCTL_GATEWAY_ADMIN_TOKEN",
        Some("not-the-admin-token-0123"),
    );
    let url = format!("http://{addr}");
    let run = wd.run(&["gateway", "revoke", "--caller", "sub:bob", "--url", &url]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "the gateway answered HTTP 401: mcpctl serve: revoking needs the admin token"
        ),
        "{}",
        run.stderr
    );
    server.abort();
    wd.assert_no_server_left();
}

/// A gateway on loopback whose `DELETE /connect/...` routes answer `reply` (status, body)
/// when the request's `Authorization` is exactly `Bearer <token>`, and 401 naming what
/// came otherwise; its base URL and the task serving it.
fn fake_gateway(
    runtime: &tokio::runtime::Runtime,
    token: &'static str,
    reply: (http::StatusCode, &'static str),
) -> (String, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let answer = move |headers: http::HeaderMap| async move {
        let presented = headers
            .get(http::header::AUTHORIZATION)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        if presented.as_deref() == Some(&format!("Bearer {token}")) {
            reply
        } else {
            (http::StatusCode::UNAUTHORIZED, "unexpected authorization")
        }
    };
    let router = axum::Router::new()
        .route("/connect/callers/{caller}", axum::routing::delete(answer))
        .route("/connect/servers/{server}", axum::routing::delete(answer));
    let server = runtime.spawn(async move { axum::serve(listener, router).await });
    (format!("http://{addr}"), server)
}

#[test]
fn tokens_from_the_environment_are_sent_trimmed() {
    let runtime = support::runtime();
    let (url, server) = fake_gateway(
        &runtime,
        "admin-token-0123456789abcdef",
        (http::StatusCode::OK, r#"{"removed": 2}"#),
    );
    let mut wd = workdir();
    wd.set_env(
        "MCPCTL_GATEWAY_ADMIN_TOKEN",
        Some("  admin-token-0123456789abcdef\n"),
    );
    let run = wd.run(&["gateway", "revoke", "--caller", "sub:bob", "--url", &url]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "removed 2 credential(s) of sub:bob\n");
    server.abort();

    let (url, server) = fake_gateway(
        &runtime,
        "alice-token",
        (http::StatusCode::OK, r#"{"removed": true}"#),
    );
    wd.set_env("MCPCTL_GATEWAY_TOKEN", Some("alice-token \n"));
    let run = wd.run(&["gateway", "sign-out", "--server", "tickets", "--url", &url]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "signed out of tickets\n");

    // Blank is no token at all.
    wd.set_env("MCPCTL_GATEWAY_TOKEN", Some(" \n"));
    let run = wd.run(&["gateway", "sign-out", "--server", "tickets", "--url", &url]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no access token"), "{}", run.stderr);
    server.abort();
    wd.assert_no_server_left();
}

#[test]
fn a_gateways_terminal_escapes_are_shown_escaped() {
    let runtime = support::runtime();
    let (url, server) = fake_gateway(
        &runtime,
        "admin-token-0123456789abcdef",
        (
            http::StatusCode::FORBIDDEN,
            "\u{1b}]0;owned\u{7}no \u{1b}[2Jway\n",
        ),
    );
    let mut wd = workdir();
    wd.set_env(
        "MCPCTL_GATEWAY_ADMIN_TOKEN",
        Some("admin-token-0123456789abcdef"),
    );
    let run = wd.run(&["gateway", "revoke", "--caller", "sub:bob", "--url", &url]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
    assert!(!run.stderr.contains('\u{7}'), "{:?}", run.stderr);
    assert!(
        run.stderr
            .contains(r"the gateway answered HTTP 403: \e]0;owned\x07no \e[2Jway"),
        "{}",
        run.stderr
    );
    server.abort();
    wd.assert_no_server_left();
}

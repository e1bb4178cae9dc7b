//! Two `mcpctl serve --http` instances with `[gateway.oauth]`, one sealing key, one vault
//! key and one PostgreSQL credential store (`$MCPCTL_CREDENTIAL_STORE`), behind Debian's
//! nginx configured by the documented `deploy/nginx/mcpctl.conf`, share a caller's
//! sign-in to a `upstream_identity = "caller"` server:
//!
//! - alice's call on instance A fails with the sign-in URL (-32042), under the shared
//!   `[gateway] public_url` (nginx);
//! - a browser (reqwest, following each redirect by hand with the consent cookie) opens
//!   it with the start page served by A, and its callback is sent to B: B finishes the
//!   sign-in A began;
//! - alice's retried calls on B, on A and through nginx reach the upstream as her;
//! - the callback replayed, on A or on B, is refused and changes nothing.
//!
//! PostgreSQL is mcp-testkit's fixture on loopback and nginx runs as the test's user on a
//! loopback port: without either the test says it was skipped; under
//! `MCP_REQUIRE_POSTGRES` / `MCP_REQUIRE_NGINX` it fails instead. No process is left.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateways, nginx and PostgreSQL"
)]

mod nginx;
mod support;
mod team;

use mcp_testkit::postgres::PostgresFixture;
use mcp_testkit::{AccessTokenClaims, FakeAuthServer, FakeProtectedMcpServer};
use mcp_testkit::{ProtectedOptions, Scenario, ToolSpec};
use nginx::Nginx;
use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::json;
use support::{Served, Workdir};
use team::{STATIC_TOKEN, bearer, post, request};

/// The sealing key both instances share.
const SEAL_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// The vault key both instances share (another one).
const VAULT_KEY: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

/// The URL clients know the instances by (the tokens' audience).
const RESOURCE: &str = "http://gateway.test/mcp";

/// `tickets` reached as each caller, behind `[gateway.oauth]` for `issuer`, with sign-in
/// links under `public` (nginx).
fn config(wd: &Workdir, issuer: &str, tickets: &str, public: &str) -> std::path::PathBuf {
    wd.write(
        "mcp.toml",
        &format!(
            "[mcp_servers.tickets]\nurl = {}\nupstream_identity = \"caller\"\ndefault_tools_approval_mode = \"approve\"\n\n[gateway]\npublic_url = {}\n\n[gateway.oauth]\nissuer = {}\nscopes = [\"{}\"]\nresource = \"{RESOURCE}\"\n",
            support::toml_str(tickets),
            support::toml_str(public),
            support::toml_str(issuer),
            team::SCOPE,
        ),
    )
}

/// A token of `subject` for the instances.
fn token(auth: &FakeAuthServer, subject: &str) -> String {
    auth.mint_jwt(
        &AccessTokenClaims::new(subject)
            .with_scopes([team::SCOPE])
            .with_audience(RESOURCE),
    )
}

/// The `http://host:port` of a gateway's URL.
fn base(url: &str) -> String {
    url.trim_end_matches("/mcp").to_owned()
}

/// A 2025-era session's call of `tickets`' echo at `url` with `token`, in a new session.
async fn call(url: &str, token: &str) -> team::Answer {
    let session = team::open_session(url, token).await;
    let message = request(
        "tools/call",
        json!({"name": "mcp__tickets__echo", "arguments": {"text": "hi"}}),
    );
    post(url, Some(&bearer(token)), Some(&session), &message).await
}

/// The sign-in page of a call that failed for want of credentials.
fn sign_in_url(answer: &team::Answer) -> String {
    assert_eq!(answer.body["error"]["code"], -32042, "{answer:?}");
    let elicitation = &answer.body["error"]["data"]["elicitations"][0];
    assert_eq!(elicitation["mode"], "url", "{answer:?}");
    elicitation["url"].as_str().unwrap().to_owned()
}

/// A browser: no redirect followed on its own; keeps the cookies pages set.
#[derive(Default)]
struct Browser {
    cookies: Vec<String>,
}

impl Browser {
    /// GET `url` with the cookies kept: the status, the redirect target, the body.
    async fn get(&mut self, url: &str) -> (StatusCode, Option<String>, String) {
        let mut get = team::http().get(url);
        if !self.cookies.is_empty() {
            get = get.header(reqwest::header::COOKIE, self.cookies.join("; "));
        }
        let response = get.send().await.unwrap();
        for set in response.headers().get_all(reqwest::header::SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap().to_owned();
            self.cookies.push(pair);
        }
        let status = response.status();
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .map(|l| l.to_str().unwrap().to_owned());
        (status, location, response.text().await.unwrap())
    }

    /// GET `url`, which must redirect: the target.
    async fn hop(&mut self, url: &str) -> String {
        let (status, location, body) = self.get(url).await;
        assert_eq!(status, StatusCode::FOUND, "{url}: {body}");
        location.unwrap()
    }
}

#[test]
fn a_sign_in_begun_on_one_instance_finishes_on_the_other_behind_nginx() {
    let Some(binary) = nginx::nginx() else {
        return;
    };
    let Some(mut postgres) =
        PostgresFixture::start_or_skip("a_sign_in_begun_on_one_instance_finishes_on_the_other")
    else {
        return;
    };
    let mut postgres_pids = postgres.pids();
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, tickets) = runtime.block_on(async {
        let auth = team::auth_server().await;
        let tickets = FakeProtectedMcpServer::start(
            Scenario::new("tickets").with_tool(ToolSpec::echo("echo")),
            &auth,
            ProtectedOptions::new(),
        )
        .await
        .unwrap();
        (auth, tickets)
    });
    let port = nginx::free_port();
    let public = format!("http://127.0.0.1:{port}");
    let config = config(&wd, &auth.issuer(), &tickets.url(), &public);
    let store = postgres.url();
    let env = [
        ("MCPCTL_SEAL_KEY", SEAL_KEY),
        ("MCPCTL_VAULT_KEY", VAULT_KEY),
        ("MCPCTL_CREDENTIAL_STORE", store.as_str()),
    ];
    let one = Served::start_with_env(&wd, &config, STATIC_TOKEN, &["--instance-id", "gw-1"], &env);
    let two = Served::start_with_env(&wd, &config, STATIC_TOKEN, &["--instance-id", "gw-2"], &env);
    let (a, b) = (base(&one.url), base(&two.url));
    let authority = |base: &str| base.trim_start_matches("http://").to_owned();
    let nginx = Nginx::start(
        &binary,
        wd.path().join("nginx"),
        &authority(&a),
        &authority(&b),
        port,
    );
    let alice = token(&auth, "alice");
    runtime.block_on(async {
        // Alice's call on A: the sign-in URL, under the shared public URL.
        let page = sign_in_url(&call(&one.url, &alice).await);
        assert!(
            page.starts_with(&format!("{public}/connect/start?state=")),
            "{page}"
        );
        // The start page served by A; the authorization server approves as alice's
        // upstream account; the callback sent to B.
        auth.set_subject("alice-upstream", &[]);
        let mut browser = Browser::default();
        let authorize = browser.hop(&page.replacen(&public, &a, 1)).await;
        let callback = browser.hop(&authorize).await;
        assert!(
            callback.starts_with(&format!("{public}/connect/callback?")),
            "{callback}"
        );
        let (status, _, body) = browser.get(&callback.replacen(&public, &b, 1)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains("Signed in to tickets"), "{body}");

        // Alice's retried calls, on B, on A and through nginx, reach tickets as her.
        for url in [&two.url, &one.url, &format!("{public}/mcp")] {
            let answer = call(url, &alice).await;
            assert_eq!(
                answer.body["result"]["structuredContent"],
                json!({"text": "hi"}),
                "{url}: {answer:?}"
            );
        }
        let mut subjects = tickets.subjects();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream"]);

        // The callback replayed, on A, on B: refused, and nothing changes.
        for instance in [&a, &b] {
            let (status, _, body) = browser.get(&callback.replacen(&public, instance, 1)).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{instance}: {body}");
            assert!(body.contains("already used"), "{body}");
        }
        let answer = call(&one.url, &alice).await;
        assert_eq!(
            answer.body["result"]["structuredContent"],
            json!({"text": "hi"}),
            "{answer:?}"
        );
        assert_eq!(tickets.subjects().last().unwrap(), "alice-upstream");
        // Bob has signed in nowhere.
        sign_in_url(&call(&two.url, &token(&auth, "bob")).await);
    });
    nginx.stop();
    for mut served in [one, two] {
        served.stop();
    }
    wd.assert_no_server_left();
    postgres_pids.extend(postgres.pids());
    postgres.stop();
    let left: Vec<u32> = postgres_pids
        .into_iter()
        .filter(|pid| mcp_testkit::process_alive(*pid))
        .collect();
    assert!(left.is_empty(), "PostgreSQL processes left: {left:?}");
    runtime.block_on(async {
        tickets.shutdown().await;
        auth.shutdown().await;
    });
}

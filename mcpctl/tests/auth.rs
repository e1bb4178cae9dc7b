//! OAuth through the real binary: `status`, `auth-status`, `login --headless`, `tools`,
//! `call` and `logout` against the testkit's fake authorization server and token-checking
//! MCP server, served by this test process over loopback. Credentials go to a file under
//! the test's own `MCPCTL_HOME` (`credentials_store = "file"`: the keyring is not touched).

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use insta::assert_snapshot;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario, ToolSpec,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::{Run, Workdir};

/// The fake servers, on a runtime of their own while the test thread runs mcpctl.
struct World {
    rt: tokio::runtime::Runtime,
    auth: Option<FakeAuthServer>,
    mcp: Option<FakeProtectedMcpServer>,
    wd: Workdir,
}

impl World {
    fn start(options: AuthServerOptions) -> Self {
        let wd = Workdir::new();
        let rt = support::runtime();
        let (auth, mcp) = rt.block_on(async {
            let auth = FakeAuthServer::start(options).await.unwrap();
            let scenario = Scenario::new("tickets")
                .with_tool(ToolSpec::echo("echo").with_description("Echo the arguments."));
            let mcp = FakeProtectedMcpServer::start(scenario, &auth, ProtectedOptions::new())
                .await
                .unwrap();
            (auth, mcp)
        });
        Self {
            rt,
            auth: Some(auth),
            mcp: Some(mcp),
            wd,
        }
    }

    fn auth(&self) -> &FakeAuthServer {
        self.auth.as_ref().unwrap()
    }

    fn mcp_url(&self) -> String {
        self.mcp.as_ref().unwrap().url()
    }

    /// Writes `mcp.toml` with the protected server as `tickets`, and `extra` after it.
    fn write_config(&self, extra: &str) {
        self.wd.write_trusted(
            "mcp.toml",
            &format!(
                "credentials_store = \"file\"\n\n[mcp_servers.tickets]\nurl = \"{}\"\n{extra}",
                self.mcp_url()
            ),
        );
    }

    /// Runs mcpctl; ports of the fake servers are replaced by placeholders.
    fn run(&self, args: &[&str]) -> Run {
        let mut run = self.wd.run(args);
        run.stdout = self.clean(&run.stdout);
        run.stderr = self.clean(&run.stderr);
        run
    }

    fn clean(&self, text: &str) -> String {
        text.replace(&self.mcp_url(), "[MCP_URL]")
            .replace(&self.auth().url(), "[AS_URL]")
    }

    fn credential_file(&self) -> PathBuf {
        self.wd.path().join("home").join("credentials.json")
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let (auth, mcp) = (self.auth.take(), self.mcp.take());
        self.rt.block_on(async {
            if let Some(mcp) = mcp {
                mcp.shutdown().await;
            }
            if let Some(auth) = auth {
                auth.shutdown().await;
            }
        });
    }
}

/// The refresh tokens in the credential file.
fn stored_refresh_tokens(world: &World) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(world.credential_file()) else {
        return Vec::new();
    };
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["credentials"]
        .as_object()
        .into_iter()
        .flat_map(|records| records.values())
        .filter_map(|record| record["refresh_token"].as_str().map(str::to_owned))
        .collect()
}

/// No access token the authorization server issued, nor a stored refresh token, appears
/// in any output.
fn assert_no_token(world: &World, runs: &[&Run]) {
    let mut tokens = world.auth().issued_access_tokens();
    tokens.extend(stored_refresh_tokens(world));
    for run in runs {
        for token in &tokens {
            assert!(
                !run.stdout.contains(token.as_str()) && !run.stderr.contains(token.as_str()),
                "an access token was printed:\n{}",
                run.snapshot()
            );
        }
    }
}

#[test]
fn login_then_use_then_logout() {
    let w = World::start(AuthServerOptions::new());
    w.write_config("");

    // Nothing stored: the server answers 401; status says what to do, exit 0 (not required).
    let status = w.run(&["status"]);
    assert_eq!(status.code, 0);
    assert_snapshot!("status_before_login", status.snapshot_sorted_stderr());
    let json = w.run(&["status", "--json"]).json();
    assert_eq!(
        json["servers"][0]["reason"],
        json!({"kind": "login_required"})
    );
    assert_eq!(json["servers"][0]["auth"], json!("login_required"));
    assert_eq!(
        json["servers"][0]["hint"],
        json!("run `mcpctl login tickets`")
    );

    let before = w.run(&["auth-status"]);
    assert_eq!(before.code, 0);
    assert_snapshot!("auth_status_before_login", before.snapshot());
    assert!(!w.credential_file().exists(), "status stores nothing");

    let login = w.run(&["login", "--headless", "tickets"]);
    assert_eq!(login.code, 0, "{}", login.snapshot());
    assert_snapshot!("login_headless", login.snapshot());
    assert_eq!(w.auth().counters().authorization_code, 1);

    let after = w.run(&["auth-status", "--json"]);
    assert_eq!(after.json()["servers"][0]["auth"], json!("oauth"));
    assert_eq!(
        after.json()["store"],
        json!(w.wd.clean(&w.credential_file().display().to_string()))
    );
    let after_human = w.run(&["auth-status"]);
    assert_snapshot!("auth_status_after_login", after_human.snapshot());

    let tools = w.run(&["tools"]);
    assert_eq!(tools.code, 0);
    assert_snapshot!("tools_after_login", tools.snapshot());
    let call = w.run(&["call", "--yes", "mcp__tickets__echo", r#"{"text": "hi"}"#]);
    assert_eq!(call.code, 0, "{}", call.snapshot());
    assert_eq!(call.stdout, "{\n  \"text\": \"hi\"\n}\n");
    let status_after = w.run(&["status"]);
    assert_eq!(status_after.code, 0);
    assert_snapshot!("status_after_login", status_after.snapshot_sorted_stderr());

    // Expired access tokens: the 401 makes mcpctl refresh, persist and retry; no prompt.
    let refresh_tokens = stored_refresh_tokens(&w);
    assert_eq!(refresh_tokens.len(), 1);
    w.auth().expire_access_tokens();
    let refreshed = w.run(&["call", "--yes", "mcp__tickets__echo", r#"{"n": 2}"#]);
    assert_eq!(refreshed.code, 0, "{}", refreshed.snapshot());
    assert_eq!(w.auth().counters().refresh_token, 1);
    let rotated = stored_refresh_tokens(&w);
    assert_eq!(rotated.len(), 1);
    assert_ne!(
        rotated, refresh_tokens,
        "the rotated refresh token was persisted"
    );

    // The file holds the token (so the output checks below can fail) with mode 0600.
    let file = w.credential_file();
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "credential file mode");
    let text = std::fs::read_to_string(&file).unwrap();
    let issued = w.auth().issued_access_tokens();
    assert!(!issued.is_empty());
    assert!(issued.iter().any(|t| text.contains(t.as_str())));
    assert!(stored_refresh_tokens(&w).iter().all(|t| !t.is_empty()));
    assert_no_token(
        &w,
        &[
            &status,
            &before,
            &login,
            &after,
            &after_human,
            &tools,
            &call,
            &status_after,
            &refreshed,
        ],
    );

    let logout = w.run(&["logout", "tickets"]);
    assert_eq!(logout.code, 0);
    assert_snapshot!("logout", logout.snapshot());
    let again = w.run(&["logout", "tickets", "--json"]);
    assert_eq!(again.code, 0);
    assert_eq!(again.json()["removed"], json!(false));
    let final_status = w.run(&["auth-status", "--json"]);
    assert_eq!(
        final_status.json()["servers"][0]["auth"],
        json!("login_required")
    );
    let tools = w.run(&["tools"]);
    assert_eq!(tools.code, 0);
    assert!(
        tools
            .stderr
            .contains("server `tickets` is not ready (login_required)"),
        "{}",
        tools.snapshot()
    );
    assert_no_token(&w, &[&logout, &again, &final_status, &tools]);
}

#[test]
fn rejected_tokens_need_a_new_login() {
    let w = World::start(AuthServerOptions::new());
    w.write_config("required = true\n");
    let login = w.run(&["login", "--headless", "tickets"]);
    assert_eq!(login.code, 0, "{}", login.snapshot());
    // Every token is revoked: the 401's refresh gets invalid_grant; no retry loop.
    w.auth().revoke_all();
    let call = w.run(&["call", "--yes", "--server", "tickets", "echo"]);
    assert_eq!(call.code, 3);
    assert_snapshot!("call_after_revocation", call.snapshot());
    let auth = w.run(&["auth-status"]);
    assert_eq!(auth.code, 0);
    assert_snapshot!("auth_status_after_revocation", auth.snapshot());
    // A required server that needs a login fails `status` with exit 1.
    let status = w.run(&["status"]);
    assert_eq!(status.code, 1);
    assert_snapshot!("status_required_relogin", status.snapshot_sorted_stderr());
    assert_no_token(&w, &[&login, &call, &auth, &status]);
    // Logging in again fixes it.
    let login = w.run(&["login", "--headless", "tickets"]);
    assert_eq!(login.code, 0, "{}", login.snapshot());
    assert_eq!(w.run(&["status"]).code, 0);
}

#[test]
fn login_json_reports_the_store() {
    let w = World::start(AuthServerOptions::new());
    w.write_config("");
    let login = w.run(&["login", "--headless", "tickets", "--json"]);
    assert_eq!(login.code, 0, "{}", login.snapshot());
    assert_eq!(
        login.json(),
        json!({
            "server": "tickets",
            "logged_in": true,
            "store": w.wd.clean(&w.credential_file().display().to_string()),
        })
    );
}

#[test]
fn the_data_dir_defaults_to_xdg_data_home() {
    let mut w = World::start(AuthServerOptions::new());
    let xdg = w.wd.path().join("xdg");
    w.wd.set_env("MCPCTL_HOME", None);
    w.wd.set_env("XDG_DATA_HOME", Some(&xdg.display().to_string()));
    w.write_config("");
    let login = w.run(&["login", "--headless", "tickets"]);
    assert_eq!(login.code, 0, "{}", login.snapshot());
    assert!(xdg.join("mcpctl").join("credentials.json").is_file());
    assert!(!w.credential_file().exists());
    let call = w.run(&["call", "--yes", "mcp__tickets__echo", r#"{"n": 1}"#]);
    assert_eq!(call.code, 0, "{}", call.snapshot());
}

#[test]
fn a_denied_login_stores_nothing_and_exits_1() {
    let w = World::start(AuthServerOptions::new().with_authorize_error("access_denied"));
    w.write_config("");
    let login = w.run(&["login", "--headless", "tickets"]);
    assert_eq!(login.code, 1);
    assert_snapshot!("login_denied", login.snapshot());
    assert!(!w.credential_file().exists());
    let status = w.run(&["auth-status", "--json"]);
    assert_eq!(status.json()["servers"][0]["auth"], json!("login_required"));
}

#[test]
fn ctrl_c_while_waiting_for_the_browser_abandons_the_login() {
    let w = World::start(AuthServerOptions::new());
    w.write_config("");
    let mut child = w.wd.spawn(&["login", "tickets"]);
    // Not a terminal: the URL is printed; wait for the line saying mcpctl waits.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut shown = String::new();
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "mcpctl ended early: {shown}"
        );
        shown.push_str(&line);
        if line.starts_with("Waiting for the login") {
            break;
        }
    }
    let url_line = shown.lines().nth(1).unwrap().trim();
    assert!(
        url_line.starts_with(&format!("{}/authorize?", w.auth().url())),
        "{shown}"
    );
    assert!(url_line.contains("code_challenge_method=S256"), "{shown}");
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(
        rest,
        "error: interrupted; the login was abandoned and nothing was stored\n"
    );
    assert!(!w.credential_file().exists());
}

#[test]
fn auth_status_shows_how_each_server_authenticates_without_starting_it() {
    let wd = Workdir::new();
    wd.write_trusted(
        "mcp.toml",
        r#"credentials_store = "file"

[mcp_servers.local]
command = "mcpctl-test-never-started"

[mcp_servers.with_env]
url = "http://127.0.0.1:9/mcp"
bearer_token_env_var = "TICKETS_TOKEN"

[mcp_servers.with_header]
url = "http://127.0.0.1:9/mcp"
http_headers = { Authorization = "Bearer literal" }

[mcp_servers.open]
url = "http://127.0.0.1:9/mcp"
auth = "none"

[mcp_servers.remote]
url = "http://127.0.0.1:9/mcp"
"#,
    );
    let run = wd.run(&["auth-status"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("auth_status_kinds", run.snapshot());
    let json = wd.run(&["auth-status", "--json"]).json();
    let statuses: Vec<(String, String)> = json["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["server"].as_str().unwrap().to_owned(),
                s["auth"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("local", "unsupported"),
        ("open", "unsupported"),
        ("remote", "login_required"),
        ("with_env", "bearer_token"),
        ("with_header", "bearer_token"),
    ];
    assert_eq!(
        statuses,
        expected.map(|(a, b)| (a.to_owned(), b.to_owned())).to_vec()
    );
}

#[test]
fn login_explains_servers_it_cannot_log_in_to() {
    let wd = Workdir::new();
    wd.write_trusted(
        "mcp.toml",
        r#"credentials_store = "file"

[mcp_servers.local]
command = "mcpctl-test-never-started"

[mcp_servers.with_env]
url = "http://127.0.0.1:9/mcp"
bearer_token_env_var = "TICKETS_TOKEN"
"#,
    );
    let stdio = wd.run(&["login", "local"]);
    assert_eq!(stdio.code, 2);
    assert_snapshot!("login_stdio", stdio.snapshot());
    let bearer = wd.run(&["login", "with_env"]);
    assert_eq!(bearer.code, 2);
    assert_snapshot!("login_bearer", bearer.snapshot());
    let unknown = wd.run(&["login", "tickets"]);
    assert_eq!(unknown.code, 2);
    assert_snapshot!("login_unknown", unknown.snapshot());
    let logout = wd.run(&["logout", "local", "--json"]);
    assert_eq!(logout.code, 2);
    assert_eq!(
        logout.json()["error"]["message"],
        json!("MCP server `local` uses stdio: it has no stored OAuth credentials")
    );
}

#[test]
fn login_to_an_unreachable_server_fails_with_exit_1() {
    let wd = Workdir::new();
    // A port nothing listens on: bind one, note it, close it.
    let port = mcp_testkit::free_loopback_port().unwrap();
    wd.write_trusted(
        "mcp.toml",
        &format!("credentials_store = \"file\"\n\n[mcp_servers.gone]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let run = wd.run(&["login", "gone", "--headless"]);
    assert_eq!(run.code, 1);
    assert_snapshot!("login_unreachable", run.snapshot());
}

#[test]
fn login_to_a_server_that_asks_for_no_credentials_says_so() {
    let wd = Workdir::new();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let open = rt
        .block_on(mcp_testkit::HttpFakeServer::start(
            Scenario::new("open").with_tool(ToolSpec::echo("echo")),
        ))
        .unwrap();
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "credentials_store = \"file\"\n\n[mcp_servers.open]\nurl = \"{}\"\n",
            open.url()
        ),
    );
    let run = wd.run(&["login", "open", "--headless"]);
    let run_text = run.snapshot().replace(&open.url(), "[MCP_URL]");
    assert_eq!(run.code, 1, "{run_text}");
    assert_snapshot!("login_no_oauth", run_text);
    // Stored OAuth tokens are not needed to use it; `status` sees that it let us in.
    let status = wd.run(&["status", "--json"]);
    assert_eq!(status.json()["servers"][0]["state"], json!("ready"));
    assert_eq!(status.json()["servers"][0]["auth"], json!("unsupported"));
    let status = wd.run(&["status"]);
    assert_eq!(
        status.stdout.lines().nth(1).map(str::trim_end),
        Some("  open  streamable_http  ready  1 tool")
    );
    let call = wd.run(&["call", "--yes", "mcp__open__echo", r#"{"n": 1}"#]);
    assert_eq!(call.code, 0, "{}", call.snapshot());
    assert!(!wd.path().join("home").join("credentials.json").exists());
    rt.block_on(open.shutdown());
}

#[test]
fn the_demo_keeps_credentials_in_memory() {
    let wd = Workdir::new();
    for args in [
        &["status"][..],
        &["auth-status"],
        &["login", "weather", "--headless"],
        &["logout", "weather"],
        &[
            "call",
            "--yes",
            "mcp__weather__get_forecast",
            r#"{"city": "Lisbon"}"#,
        ],
    ] {
        let run = wd.run(args);
        assert!(
            run.code == 0 || run.code == 2,
            "{args:?}: {}",
            run.snapshot()
        );
    }
    let login = wd.run(&["login", "weather"]);
    assert_eq!(login.code, 2);
    assert_snapshot!("demo_login", login.snapshot());
    assert!(
        !wd.path().join("home").exists(),
        "the demo created the data directory"
    );
}

#[test]
fn the_help_says_where_credentials_live() {
    let wd = Workdir::new();
    let run = wd.run(&["--help"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains(
            "$MCPCTL_HOME if set, else $XDG_DATA_HOME/mcpctl, else $HOME/.local/share/mcpctl"
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("credentials_store"), "{}", run.stdout);
}

#[test]
fn login_uses_the_configured_client_scopes_and_callback_port() {
    let port = mcp_testkit::free_loopback_port().unwrap();
    let w = World::start(
        AuthServerOptions::new().with_client(mcp_testkit::OAuthClient::public("mcpctl-test")),
    );
    w.wd.write_trusted(
        "mcp.toml",
        &format!(
            "credentials_store = \"file\"\noauth_callback_port = {port}\n\n[mcp_servers.tickets]\nurl = \"{}\"\nscopes = [\"mcp:read\"]\noauth = {{ client_id = \"mcpctl-test\" }}\n",
            w.mcp_url()
        ),
    );
    let login = w.run(&["login", "--headless", "tickets"]);
    assert_eq!(login.code, 0, "{}", login.snapshot());
    assert_eq!(
        w.auth().counters().registrations,
        0,
        "the configured client is used"
    );
    let authorize = w.auth().authorize_requests();
    let request = authorize.last().unwrap();
    assert_eq!(request["client_id"], "mcpctl-test");
    assert_eq!(
        request["redirect_uri"],
        format!("http://127.0.0.1:{port}/callback")
    );
    assert_eq!(request["resource"], w.mcp_url());
    assert_eq!(request["scope"], "mcp:read offline_access");
    let call = w.run(&["call", "--yes", "mcp__tickets__echo", r#"{"n": 1}"#]);
    assert_eq!(call.code, 0, "{}", call.snapshot());
}

#[test]
fn a_login_nobody_finishes_times_out() {
    let w = World::start(AuthServerOptions::new());
    w.write_config("");
    // Not a terminal and not headless: the URL is printed and nobody opens it.
    let run = w.run(&["login", "tickets", "--timeout", "0.5"]);
    assert_eq!(run.code, 1, "{}", run.snapshot());
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines[0], "Open this URL in a browser to log in:");
    assert!(
        lines[1].starts_with("  [AS_URL]/authorize?"),
        "{}",
        run.stderr
    );
    assert_eq!(
        lines[2..],
        [
            "Waiting for the login to `tickets` to finish (up to 0.5 s; Ctrl-C to stop)...",
            "error: MCP server `tickets`: the login did not complete in time",
            "hint: run `mcpctl login tickets` again and finish in the browser in time (or pass a larger --timeout)",
        ]
    );
    assert_eq!(w.auth().counters().authorization_code, 0);
    assert!(!w.credential_file().exists());
}

/// Security warnings from mcp-auth reach the user without `-v`, once, as a plain line;
/// nothing else is logged by default. A refused credential file is one of them (its status
/// alone would only say "unknown").
#[test]
fn security_warnings_are_shown_without_verbose() {
    let wd = Workdir::new();
    wd.write(
        "mcp.toml",
        r#"credentials_store = "file"

[mcp_servers.remote]
url = "http://127.0.0.1:9/mcp"

[mcp_servers.other]
url = "http://127.0.0.1:9/other"
"#,
    );
    let home = wd.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();

    let run = wd.run(&["auth-status", "--config", "mcp.toml"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    assert_eq!(
        run.stderr,
        " WARN mcp_auth::security: the credential directory [TMP]/home (mode 777) is \
         writable by other users; restrict it: chmod 700 [TMP]/home\n"
    );

    // A credential file open to other users is refused, and said so once.
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let file = home.join("credentials.json");
    std::fs::write(&file, r#"{"version": 1, "credentials": {}}"#).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = wd.run(&["auth-status", "--config", "mcp.toml"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    assert_eq!(
        run.stderr,
        " WARN mcp_auth::security: refusing to use the credential file \
         [TMP]/home/credentials.json: its mode 644 lets other users read or change it; run \
         `chmod 600 [TMP]/home/credentials.json` (and consider its tokens leaked: log out and \
         log in again)\n"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

/// A host waiting on a `login_required` server (here a connection set in this test
/// process) brings it up by itself once another process (`mcpctl login`) stores
/// credentials for it, without a restart of the host.
#[test]
fn a_login_in_another_process_brings_a_waiting_server_up() {
    use std::sync::Arc;
    use std::time::Duration;

    use mcp_connections::{ConnectionEvent, ConnectionSet, ConnectionSetOptions, ServerState};

    let w = World::start(AuthServerOptions::new());
    w.write_config("");
    let config = std::fs::read_to_string(w.wd.path().join("mcp.toml")).unwrap();
    let loaded = mcp_catalog::Config::from_toml_str(&config, "mcp.toml").unwrap();
    let catalog = mcp_catalog::CatalogBuilder::new()
        .with_user_config(loaded)
        .build();
    let store: Arc<dyn mcp_auth::CredentialStore> =
        Arc::new(mcp_auth::FileStore::new(w.credential_file()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let set = w.rt.block_on(async {
        let set = ConnectionSet::start(
            &catalog,
            ConnectionSetOptions::new()
                .with_credential_store(store)
                .with_login_poll_interval(Duration::from_millis(100))
                .with_events(tx),
        );
        set.wait_startup().await;
        set
    });
    let state = set.status()[0].state.clone();
    let ServerState::Failed(failure) = state else {
        panic!("{state:?}")
    };
    assert_eq!(failure.reason().label(), "login_required");

    let login = w.run(&["login", "--headless", "tickets"]);
    assert_eq!(login.code, 0, "{}", login.snapshot());

    w.rt.block_on(async {
        let ready = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(event) = rx.recv().await {
                if matches!(event, ConnectionEvent::Ready { .. }) {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(
            ready,
            Ok(true),
            "the server did not come up after the login"
        );
        let key = set.servers().next().unwrap().clone();
        let result = set
            .call_tool(&key, "echo", Some(json!({"n": 1})), Default::default())
            .await
            .unwrap();
        assert_eq!(result.structured_content, Some(json!({"n": 1})));
        set.shutdown().await;
    });
}

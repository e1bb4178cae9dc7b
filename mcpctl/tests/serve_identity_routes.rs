//! Bob cannot use alice's upstream credentials for an `upstream_identity = "caller"`
//! server by any route of `mcpctl serve --http`: alice's credentials for `tickets` are in
//! the gateway's vault, bob has none, and
//!
//! - a task-augmented 2026-era call by bob gets the sign-in error, and nothing reaches
//!   the upstream with alice's token; bob's `tasks/get`, `tasks/update` and
//!   `tasks/cancel` of alice's task are refused;
//! - alice's 2026-era `requestState` (the approval question of her call) replayed with
//!   bob's token is refused, while alice's own answer runs as her;
//! - bob's `GET /connect/servers` and status page (`/status.json`, `/status`) never show
//!   alice's rows.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod support;
mod team;

use mcp_testkit::{FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Served, Workdir};
use team::{STATIC_TOKEN, bearer, post, request};

/// The vault key the gateway is given (hex), and the same as bytes.
const KEY_BYTE: u8 = 0xcd;

/// Both callers may use `notes` and `tickets` (so neither has everything: the status page
/// shows each only their own clients).
const GRANTS: &str =
    "[[gateway.grants]]\nsubjects = [\"alice\", \"bob\"]\nservers = [\"notes\", \"tickets\"]\n";

/// Stores `token` for `caller` and `tickets` in the gateway's vault (SQLite in its data
/// directory), as a finished sign-in does.
async fn store(wd: &Workdir, caller: &str, token: &str) {
    let keys =
        mcp_auth::VaultKeys::new(mcp_auth::VaultKey::from_slice("k1", &[KEY_BYTE; 32]).unwrap());
    let vault =
        mcp_auth::CredentialVault::open_sqlite(wd.path().join("home/gateway/credentials.db"), keys)
            .await
            .unwrap();
    let mut creds = mcp_auth::StoredCredentials::new("tickets-client");
    creds.access_token = Some(mcp_key::Secret::new(token.to_owned()));
    vault
        .put(caller, &"tickets".parse().unwrap(), &creds)
        .await
        .unwrap();
    vault.close().await;
}

/// The gateway with `tickets` (a `caller` server whose tools always ask for approval)
/// and alice's upstream credentials for it in the vault, with [`GRANTS`] when `grants`:
/// the gateway, alice's upstream token, and the upstream.
fn start(
    wd: &Workdir,
    runtime: &tokio::runtime::Runtime,
    grants: bool,
) -> (Served, String, FakeAuthServer, FakeProtectedMcpServer) {
    let auth = runtime.block_on(team::auth_server());
    let tickets = runtime
        .block_on(FakeProtectedMcpServer::start(
            Scenario::new("tickets")
                .with_tool(ToolSpec::echo("echo"))
                .with_tool(build())
                .with_capabilities(mcp_testkit::CapabilityFlags::default().with_tasks(true)),
            &auth,
            ProtectedOptions::new(),
        ))
        .unwrap();
    let rest = format!(
        "[gateway]\npublic_url = \"http://127.0.0.1:8931\"\n\n[mcp_servers.tickets]\nurl = {}\nupstream_identity = \"caller\"\ndefault_tools_approval_mode = \"prompt\"\n\n{}",
        support::toml_str(&tickets.url()),
        if grants { GRANTS } else { "" },
    );
    let config = team::config(wd, &auth.issuer(), "", &rest);
    auth.set_subject("alice-upstream", &[]);
    let upstream_token = auth.mint_token("tickets-client", &["mcp:read"], Some(&tickets.url()));
    runtime.block_on(store(wd, "sub:alice", &upstream_token));
    let key: String = format!("{KEY_BYTE:02x}").repeat(32);
    let served = Served::start_with_env(
        wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[("MCPCTL_VAULT_KEY", &key)],
    );
    (served, upstream_token, auth, tickets)
}

fn stop(
    wd: &Workdir,
    runtime: &tokio::runtime::Runtime,
    mut served: Served,
    auth: FakeAuthServer,
    tickets: FakeProtectedMcpServer,
) {
    served.stop();
    drop(served);
    wd.assert_no_server_left();
    runtime.block_on(async {
        tickets.shutdown().await;
        auth.shutdown().await;
    });
}

/// `build`: work that becomes a task for a client that declared the extension, and never
/// ends on its own.
fn build() -> ToolSpec {
    serde_json::from_value(json!({"name": "build", "behavior": {
        "kind": "task", "work_ms": 0, "end": "never", "poll_interval_ms": 20,
    }}))
    .unwrap()
}

/// The `_meta` of a 2026-era request from a client that answers elicitations and, with
/// `tasks`, declares the tasks extension.
fn meta(tasks: bool) -> Value {
    let mut meta = team::modern_meta();
    if tasks {
        meta["io.modelcontextprotocol/clientCapabilities"]["extensions"] =
            json!({"io.modelcontextprotocol/tasks": {}});
    }
    meta
}

/// A 2026-era call of `tickets`' `echo` with `token`; a retry when `state` is given,
/// answering the question `key` with a yes.
async fn call(url: &str, token: &str, tasks: bool, retry: Option<(&str, &str)>) -> team::Answer {
    call_tool(url, token, "mcp__tickets__echo", tasks, retry).await
}

/// A 2026-era call of `name` with `token`, as [`call`].
async fn call_tool(
    url: &str,
    token: &str,
    name: &str,
    tasks: bool,
    retry: Option<(&str, &str)>,
) -> team::Answer {
    let mut params = json!({
        "name": name,
        "arguments": {"text": "hi"},
        "_meta": meta(tasks),
    });
    if let Some((state, key)) = retry {
        params["requestState"] = json!(state);
        params["inputResponses"] = json!({key: {"action": "accept", "content": {"approve": true}}});
    }
    post(
        url,
        Some(&bearer(token)),
        None,
        &request("tools/call", params),
    )
    .await
}

/// The approval question of an `input_required` answer: its state and the question's key.
fn question(answer: &team::Answer) -> (String, String) {
    let result = &answer.body["result"];
    assert_eq!(result["resultType"], "input_required", "{answer:?}");
    let state = result["requestState"].as_str().unwrap().to_owned();
    let (key, asked) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(asked["method"], "elicitation/create", "{answer:?}");
    (state, key.clone())
}

/// How many `tools/call` requests reached the upstream.
fn calls(tickets: &FakeProtectedMcpServer) -> usize {
    tickets
        .requests()
        .iter()
        .filter(|r| r.method == "tools/call")
        .count()
}

/// Whether the answer is the sign-in error (the URL elicitation error) for `tickets`.
fn is_sign_in_error(answer: &team::Answer) -> bool {
    answer.body["error"]["code"] == -32042
        && answer.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.ends_with(" to sign in to tickets, then retry"))
}

#[test]
fn a_replayed_request_state_never_runs_as_its_first_caller() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (served, upstream_token, auth, tickets) = start(&wd, &runtime, false);
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &[]);
        let bob = team::token(&auth, &url, "bob", &[]);
        // Alice's call asks her approval first: the question and its sealed state.
        let asked = call(&url, &alice, false, None).await;
        let (state, key) = question(&asked);
        // Bob answers it as his: refused, or run as bob (who has no credentials); never
        // alice's call upstream.
        let replayed = call(&url, &bob, false, Some((&state, &key))).await;
        let refused = replayed.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("belongs to a call of another caller"));
        assert!(refused || is_sign_in_error(&replayed), "{replayed:?}");
        assert_ne!(
            replayed.body["result"]["structuredContent"],
            json!({"text": "hi"}),
            "{replayed:?}"
        );
        assert_eq!(calls(&tickets), 0, "bob's replay called the upstream");
        // Alice's own answer (to a fresh question) runs, as her.
        let asked = call(&url, &alice, false, None).await;
        let (state, key) = question(&asked);
        let answered = call(&url, &alice, false, Some((&state, &key))).await;
        assert_eq!(
            answered.body["result"]["structuredContent"],
            json!({"text": "hi"}),
            "{answered:?}"
        );
        assert_eq!(calls(&tickets), 1);
        let presented = tickets.presented_tokens();
        assert!(
            presented.iter().all(|t| *t == upstream_token),
            "{presented:?}"
        );
        let mut subjects = tickets.subjects();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream"]);
    });
    stop(&wd, &runtime, served, auth, tickets);
}

#[test]
fn a_task_augmented_call_of_bob_asks_him_to_sign_in() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (served, _upstream_token, auth, tickets) = start(&wd, &runtime, false);
    let url = served.url.clone();
    runtime.block_on(async {
        let bob = team::token(&auth, &url, "bob", &[]);
        // The approval question first (a task-declaring client is asked too); his yes
        // leads to the sign-in error, never to alice's credentials.
        let asked = call_tool(&url, &bob, "mcp__tickets__build", true, None).await;
        let failed = match asked.body["result"]["resultType"].as_str() {
            Some("input_required") => {
                let (state, key) = question(&asked);
                call_tool(
                    &url,
                    &bob,
                    "mcp__tickets__build",
                    true,
                    Some((&state, &key)),
                )
                .await
            }
            _ => asked,
        };
        assert!(is_sign_in_error(&failed), "{failed:?}");
        assert_eq!(calls(&tickets), 0, "bob's task called the upstream");
        assert!(
            tickets.presented_tokens().is_empty(),
            "nothing went upstream for bob"
        );
        // No task of bob's holds a result made with alice's credentials.
        let listed = post(
            &url,
            Some(&bearer(&bob)),
            None,
            &request("tasks/list", json!({"_meta": meta(true)})),
        )
        .await;
        assert!(!listed.body.to_string().contains("\"hi\""), "{listed:?}");
    });
    stop(&wd, &runtime, served, auth, tickets);
}

/// A `tasks/*` request `method` for the task `id` with `token`.
async fn task_request(url: &str, token: &str, method: &str, id: &str) -> team::Answer {
    let mut params = json!({"taskId": id, "_meta": meta(true)});
    if method == "tasks/update" {
        params["inputResponses"] = json!({"input": {"action": "accept", "content": {}}});
    }
    post(url, Some(&bearer(token)), None, &request(method, params)).await
}

#[test]
fn alices_task_is_hers_alone() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (served, upstream_token, auth, tickets) = start(&wd, &runtime, false);
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &[]);
        let bob = team::token(&auth, &url, "bob", &[]);
        // Alice approves her call of `build`, which becomes a task upstream, as her.
        let asked = call_tool(&url, &alice, "mcp__tickets__build", true, None).await;
        let (state, key) = question(&asked);
        let created = call_tool(
            &url,
            &alice,
            "mcp__tickets__build",
            true,
            Some((&state, &key)),
        )
        .await;
        let result = &created.body["result"];
        let id = result["task"]["taskId"]
            .as_str()
            .or_else(|| result["taskId"].as_str())
            .unwrap_or_else(|| panic!("no task: {created:?}"))
            .to_owned();
        let mut subjects = tickets.subjects();
        subjects.dedup();
        assert_eq!(subjects, ["alice-upstream"]);
        // Hers to look at.
        let hers = task_request(&url, &alice, "tasks/get", &id).await;
        assert!(hers.body["result"].is_object(), "{hers:?}");
        // Bob naming her task is refused, whatever he asks of it, and nothing goes
        // upstream for him.
        let before = tickets.requests().len();
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let refused = task_request(&url, &bob, method, &id).await;
            let message = refused.body["error"]["message"]
                .as_str()
                .unwrap_or_default();
            assert!(
                message.contains("belongs to another caller"),
                "{method}: {refused:?}"
            );
            assert!(!refused.body.to_string().contains(&upstream_token));
        }
        // The gateway may follow alice's task upstream meanwhile (`tasks/get`), but
        // nothing bob asked (an answer, a cancel) went there.
        let after: Vec<String> = tickets.requests()[before..]
            .iter()
            .filter(|r| r.method != "tasks/get")
            .map(|r| format!("{} {}", r.method, r.params))
            .collect();
        assert!(
            after.is_empty(),
            "bob's requests reached the upstream: {after:?}"
        );
        // Still alice's, still running.
        let hers = task_request(&url, &alice, "tasks/get", &id).await;
        assert_eq!(hers.body["result"]["status"], "working", "{hers:?}");
        let cancelled = task_request(&url, &alice, "tasks/cancel", &id).await;
        assert!(cancelled.body["error"].is_null(), "{cancelled:?}");
    });
    stop(&wd, &runtime, served, auth, tickets);
}

#[test]
fn bob_never_sees_alices_sign_ins_or_clients() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (served, upstream_token, auth, tickets) = start(&wd, &runtime, true);
    let url = served.url.clone();
    let base = url.trim_end_matches("/mcp").to_owned();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &[]);
        let bob = team::token(&auth, &url, "bob", &[]);
        // Alice has a session (a client of hers on the status page).
        let _session = team::open_session(&url, &alice).await;
        let get = |path: &str, token: &str| {
            let address = format!("{base}{path}");
            let token = token.to_owned();
            async move {
                let response = team::http()
                    .get(address)
                    .header("authorization", bearer(&token))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), 200);
                response.text().await.unwrap()
            }
        };
        let alices: Value = serde_json::from_str(&get("/connect/servers", &alice).await).unwrap();
        assert_eq!(alices["caller"], "sub:alice", "{alices}");
        assert_eq!(alices["servers"][0]["signed_in"], true, "{alices}");
        // Bob's view: his own row only, even when he names alice.
        for path in [
            "/connect/servers",
            "/connect/servers?caller=sub:alice",
            "/connect/servers?caller=alice",
        ] {
            let text = get(path, &bob).await;
            let bobs: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(bobs["caller"], "sub:bob", "{path}: {bobs}");
            assert_eq!(bobs["servers"][0]["server"], "tickets", "{path}: {bobs}");
            assert_eq!(bobs["servers"][0]["signed_in"], false, "{path}: {bobs}");
            assert!(!text.contains("alice"), "{path}: {text}");
            assert!(!text.contains(&upstream_token), "{path}: {text}");
        }
        // The status page, as JSON and as HTML: nothing of alice's.
        for path in ["/status.json", "/status"] {
            let text = get(path, &bob).await;
            assert!(!text.contains("alice"), "{path}: {text}");
            assert!(!text.contains(&upstream_token), "{path}: {text}");
        }
        // Alice's status page does show her (so the check above can fail).
        let hers = get("/status.json", &alice).await;
        assert!(hers.contains("sub:alice"), "{hers}");
    });
    stop(&wd, &runtime, served, auth, tickets);
}

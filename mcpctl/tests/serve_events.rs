//! Events through `mcpctl serve --http` from a server that delivers them only by webhook:
//! a server built on the Python SDK with PyPI's `mcp-webhook-events` 0.2.0
//! (tests/gateway/webhook_events_server.py), which POSTs signed deliveries (Standard
//! Webhooks) to the callback URL the gateway gave it under `[gateway] public_url`, after
//! verifying that callback with a signed challenge. A Python SDK client
//! (tests/gateway/py_events_client.py) lists the event types through the gateway, polls
//! the gateway with its cursor and gets each event once; forged deliveries (401), a
//! replayed one (409) and one signed ten minutes ago (400), POSTed by the test, are
//! refused, counted (`GET /events/relay`), and never reach the client. No server process
//! is left.
//!
//! And the grants, with `mcpctl fake-server` upstream (push and poll) and `[gateway.oauth]`
//! callers: a caller lists and polls the event types of the servers it may use only, and
//! gets the events a tool call emits through its own subscription.
//!
//! And push: mcp-client's `EventStream` (`events/stream`) through `mcpctl serve --http`, in
//! both eras, from a fake server upstream offering push and poll: each event once, in
//! order; a stream dropped and opened again from its last cursor loses nothing and
//! repeats nothing; a caller without the grant is refused; the gateway stops with a
//! stream open, and no server process is left. A quiet stream stays open on the gateway's
//! heartbeats, and one from a cursor older than the subscription's buffer says
//! `truncated`, then delivers what the buffer kept.
//!
//! The Python programs run in the virtual environment `scripts/webhook-events-server.sh`
//! installs (target/webhook-events/venv, pinned `mcp-webhook-events` and `mcp`); without
//! it that test says so on stderr and does nothing, and under
//! `MCP_REQUIRE_WEBHOOK_EVENTS=1` it fails.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the skip notice goes to stderr; the test runs Python programs as a person would"
)]

mod support;
mod team;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Served, Workdir};

const TOKEN: &str = "events-test-token";

/// Set (by scripts/test.sh, once scripts/webhook-events-server.sh installed it): the
/// Python test fails instead of skipping when the install is missing.
const REQUIRE_ENV: &str = "MCP_REQUIRE_WEBHOOK_EVENTS";

/// The venv's Python, or `None` (test skipped) when it is not installed.
fn python() -> Option<PathBuf> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/webhook-events/venv/bin/python");
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os(REQUIRE_ENV).is_none(),
        "mcp-webhook-events is not installed at {}: run scripts/webhook-events-server.sh",
        path.display()
    );
    eprintln!(
        "SKIPPED: mcp-webhook-events is not installed at {}; run scripts/webhook-events-server.sh",
        path.display()
    );
    None
}

/// One HTTP/1.1 request to the gateway: (status, body).
fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"));
    let body = answer
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    (status, body)
}

/// Re-POSTs `delivery` (as the server sent it) with `body` instead of its own.
fn post_delivery(port: u16, delivery: &Value, body: &str) -> u16 {
    let url = delivery["url"].as_str().unwrap();
    let path = &url[url.find("/events/").unwrap()..];
    let headers: Vec<(&str, &str)> = delivery["headers"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap()))
        .collect();
    http(port, "POST", path, &headers, body).0
}

/// Runs the client with `args`; its JSON.
fn client(python: &Path, port: u16, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gateway/py_events_client.py");
    let run = Command::new(python)
        .arg(script)
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .arg(TOKEN)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "the Python client failed: {stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

/// The pids of processes running `script` (the Python server) whose working directory is
/// `dir` or below.
fn servers_in(dir: &Path, script: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(script))
        })
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir))
        })
        .collect()
}

#[test]
fn a_python_client_polls_the_gateway_for_the_webhook_events_of_a_python_server_each_once() {
    let Some(python) = python() else { return };
    let wd = Workdir::new();
    let dir = wd.path().canonicalize().unwrap();
    let server = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/gateway/webhook_events_server.py")
        .canonicalize()
        .unwrap();
    let port = mcp_testkit::free_loopback_port().unwrap();
    let args = [
        server.display().to_string(),
        dir.join("events.sqlite3").display().to_string(),
    ];
    let config = wd.write(
        "mcp.toml",
        &format!(
            "[gateway]\npublic_url = \"http://127.0.0.1:{port}/\"\n\n[mcp_servers.tickets]\ncommand = {}\nargs = {}\ndefault_tools_approval_mode = \"approve\"\n",
            support::toml_str(&python.display().to_string()),
            serde_json::to_string(&args).unwrap()
        ),
    );
    let address = format!("127.0.0.1:{port}");
    let mut gateway = Served::start_at(&wd, &config, TOKEN, &address, &[], &[]);

    let seen = client(&python, port, &["start"]);
    assert_eq!(
        seen["listed"],
        json!([{
            "name": "mcp__tickets__ticket_updated",
            "description": "A support ticket was updated.",
            "delivery": ["poll", "push"],
            "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}}, "additionalProperties": false},
            "payloadSchema": {
                "type": "object",
                "properties": {"ticket_id": {"type": "string"}, "summary": {"type": "string"}},
                "required": ["ticket_id", "summary"],
                "additionalProperties": false,
            },
        }])
    );
    assert_eq!(
        seen["first"]["events"],
        json!([]),
        "a poll without a cursor starts from now"
    );
    // The server's own account: each event delivered to the gateway at the first try.
    for published in seen["published"].as_array().unwrap() {
        assert_eq!(
            published,
            &json!({"queued": 1, "delivered": 1, "retrying": 0, "failed": 0})
        );
    }
    let data: Vec<&Value> = seen["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["data"])
        .collect();
    assert_eq!(
        data,
        [
            &json!({"ticket_id": "T-1", "summary": "first"}),
            &json!({"ticket_id": "T-1", "summary": "second"})
        ],
        "each event once, in order: {seen}"
    );
    assert_eq!(seen["again"]["events"], json!([]), "nothing twice: {seen}");
    assert_eq!(seen["again"]["truncated"], json!(false));

    // A replay of the last delivery, as sent, and a forgery of it (another body under its
    // signature) and of a new one (a new id, a made-up signature).
    let last = &seen["last_delivery"];
    let body = last["body"].as_str().unwrap();
    assert_eq!(post_delivery(port, last, body), 409, "a replay is refused");
    let forged = body.replace("second", "forged");
    assert_eq!(
        post_delivery(port, last, &forged),
        401,
        "a forged body is refused"
    );
    let mut made_up = last.clone();
    made_up["headers"]["webhook-id"] = json!("evt_made_up");
    made_up["headers"]["webhook-signature"] = json!("v1,bm90IGEgc2lnbmF0dXJl");
    assert_eq!(
        post_delivery(
            port,
            &made_up,
            &forged.replace(
                last["headers"]["webhook-id"].as_str().unwrap(),
                "evt_made_up"
            )
        ),
        401
    );
    assert_eq!(
        post_delivery(port, &seen["stale_copy"], body),
        400,
        "a delivery signed long ago is refused"
    );
    let (status, counts) = http(
        port,
        "GET",
        "/events/relay",
        &[("Authorization", &format!("Bearer {TOKEN}"))],
        "",
    );
    assert_eq!(status, 200, "{counts}");
    let counts: Value = serde_json::from_str(&counts).unwrap();
    // Accepted: the callback verification and the two events.
    assert_eq!(
        counts,
        json!({"webhook": {"accepted": 3, "forged": 2, "replayed": 1, "stale": 1, "unknown": 0}, "subscriptions": 1})
    );
    let (status, _) = http(port, "GET", "/events/relay", &[], "");
    assert_eq!(status, 401, "the counts need the token");
    let (status, _) = http(port, "POST", "/events/webhook/nobody", &[], "{}");
    assert_eq!(status, 404, "an unknown callback");

    // Nothing refused reached the client.
    let after = client(
        &python,
        port,
        &[
            "poll",
            "mcp__tickets__ticket_updated",
            seen["cursor"].as_str().unwrap(),
        ],
    );
    assert_eq!(after["events"], json!([]), "{after}");

    gateway.stop();
    drop(gateway);
    let deadline = Instant::now() + Duration::from_secs(5);
    let script = server.display().to_string();
    while !servers_in(&dir, &script).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the Python server outlived the gateway"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A fake server emitting `mail` (push and poll) when its tool `send` is called.
fn mail_server(name: &str) -> String {
    let scenario = mcp_testkit::Scenario::new(name)
        .with_events(
            mcp_testkit::EventsSpec::new()
                .with_type(mcp_testkit::EventTypeSpec::new("mail").with_description("A new mail"))
                .with_heartbeat_ms(100)
                .with_next_poll_ms(50),
        )
        .with_tool(mcp_testkit::ToolSpec::new(
            "send",
            mcp_testkit::Behavior::EmitEvent {
                name: "mail".into(),
                data: json!({"to": name}),
            },
        ));
    format!(
        "\n[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n",
        support::toml_str(&serde_json::to_string(&scenario).unwrap())
    )
}

#[test]
fn a_caller_lists_and_polls_the_events_of_the_servers_it_may_use_only() {
    use team::{STATIC_TOKEN, bearer, post, request};
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let rest = format!(
        "\n[[gateway.grants]]\ngroups = [\"readers\"]\nservers = [\"inbox\"]\n{}{}",
        mail_server("inbox"),
        mail_server("outbox")
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let served = support::Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let eve = team::token(&auth, &url, "eve", &["strangers"]);
        let ask = |token: &str, method: &'static str, mut params: Value| {
            params["_meta"] = team::modern_meta();
            let message = request(method, params);
            let (url, token) = (url.clone(), token.to_owned());
            async move { post(&url, Some(&bearer(&token)), None, &message).await.body }
        };
        let listed = |answer: Value| -> Vec<String> {
            answer["result"]["events"]
                .as_array()
                .unwrap_or_else(|| panic!("no events: {answer}"))
                .iter()
                .map(|e| e["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(
            listed(ask(&alice, "events/list", json!({})).await),
            ["mcp__inbox__mail"]
        );
        assert!(listed(ask(&eve, "events/list", json!({})).await).is_empty());
        let poll = |token: &str, name: &str, cursor: Value| {
            ask(
                token,
                "events/poll",
                json!({"name": name, "arguments": {}, "cursor": cursor}),
            )
        };
        for (token, name) in [(&alice, "mcp__outbox__mail"), (&eve, "mcp__inbox__mail")] {
            let refused = poll(token, name, Value::Null).await;
            let message = refused["error"]["message"]
                .as_str()
                .unwrap_or_else(|| panic!("{refused}"));
            assert!(message.contains(&format!("`{name}`")), "{message}");
        }
        let first = poll(&alice, "mcp__inbox__mail", Value::Null).await;
        assert_eq!(first["result"]["events"], json!([]), "{first}");
        let mut cursor = first["result"]["cursor"].clone();
        let sent = ask(
            &alice,
            "tools/call",
            json!({"name": "mcp__inbox__send", "arguments": {}}),
        )
        .await;
        assert!(sent["result"].is_object(), "{sent}");
        let mut events = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while events.is_empty() {
            assert!(Instant::now() < deadline, "no event came");
            let batch = poll(&alice, "mcp__inbox__mail", cursor.clone()).await;
            events.extend(
                batch["result"]["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["data"].clone()),
            );
            cursor = batch["result"]["cursor"].clone();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(events, [json!({"to": "inbox"})]);
        let again = poll(&alice, "mcp__inbox__mail", cursor).await;
        assert_eq!(again["result"]["events"], json!([]), "each event once");
    });
    drop(served);
    wd.assert_no_server_left();
}

#[test]
fn over_stdio_a_webhook_only_event_type_is_not_listed_and_refused_naming_what_to_do() {
    use rmcp::model::{ClientRequest, CustomRequest, ServerResult};
    let wd = Workdir::new();
    let scenario = mcp_testkit::Scenario::new("inbox").with_events(
        mcp_testkit::EventsSpec::new()
            .with_type(mcp_testkit::EventTypeSpec::new("hook").with_delivery(["webhook"])),
    );
    let config = wd.write(
        "mcp.toml",
        &format!(
            "[gateway]\npublic_url = \"https://gw.example\"\n\n[mcp_servers.inbox]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\n",
            support::toml_str(&serde_json::to_string(&scenario).unwrap())
        ),
    );
    support::runtime().block_on(async {
        let client = support::serve_stdio(&wd, &config, &[]).await;
        let ask = |method: &str, params: Value| {
            let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
            client.send_request(request)
        };
        let listed = ask("events/list", json!({})).await.unwrap();
        let ServerResult::CustomResult(listed) = listed else {
            panic!("{listed:?}")
        };
        assert_eq!(listed.0, json!({"events": []}), "not listed");
        let refused = ask(
            "events/poll",
            json!({"name": "mcp__inbox__hook", "arguments": {}, "cursor": null}),
        )
        .await
        .unwrap_err()
        .to_string();
        for part in [
            "`inbox`",
            "`hook`",
            "only by webhook",
            "receives only over HTTP",
            "--http",
        ] {
            assert!(refused.contains(part), "no {part} in {refused}");
        }
        client.cancel().await.unwrap();
    });
    wd.assert_no_server_left();
}

/// The next event of `stream` (other items skipped), within a bound.
async fn next_event(stream: &mut mcp_client::EventStream) -> mcp_client::EventOccurrence {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let item = tokio::time::timeout_at(deadline, stream.next())
            .await
            .expect("an event within 30s")
            .expect("the stream goes on");
        match item {
            mcp_client::StreamItem::Event(event) => return event,
            mcp_client::StreamItem::Ended(e) => panic!("the stream ended: {e}"),
            _ => {}
        }
    }
}

/// Calls `mcp__inbox__send` with `{"n": n}`: an event with `n` in its data.
async fn send(client: &mcp_client::Client, n: u64) {
    client
        .call_tool(
            "mcp__inbox__send",
            json!({ "n": n }).as_object().cloned(),
            mcp_client::CallSettings::new(Duration::from_secs(30)),
        )
        .await
        .unwrap_or_else(|e| panic!("send {n}: {e}"));
}

#[test]
fn a_rust_client_streams_the_events_of_its_subscription_through_the_gateway_in_both_eras() {
    use mcp_client::{
        Client, ClientSettings, DeclineRequests, EventSubscription, Handshake, HttpTarget,
        StreamSettings, Target,
    };
    use team::STATIC_TOKEN;
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let rest = format!(
        "\n[[gateway.grants]]\ngroups = [\"readers\"]\nservers = [\"inbox\"]\n{}{}",
        mail_server("inbox"),
        mail_server("outbox")
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let mut served = support::Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let eve = team::token(&auth, &url, "eve", &["strangers"]);
        let connect = |token: &str, handshake: Handshake| {
            let target = Target::Http(HttpTarget::new(url.clone()).with_headers(vec![(
                "Authorization".to_owned(),
                mcp_key::Secret::new(format!("Bearer {token}")),
            )]));
            let settings = ClientSettings::new().with_handshake(handshake);
            async move {
                Client::connect(
                    "gateway".parse().unwrap(),
                    target,
                    settings,
                    std::sync::Arc::new(DeclineRequests),
                )
                .await
                .unwrap_or_else(|e| panic!("{handshake:?}: {e}"))
            }
        };
        let mail = EventSubscription::new("mcp__inbox__mail");
        let data = |n: u64| json!({"to": "inbox", "n": n});
        let mut open_at_stop = Vec::new();
        for (era, handshake, spoken) in [
            ("2025", Handshake::Initialize, mcp_client::Era::V2025_11_25),
            ("2026", Handshake::Discover, mcp_client::Era::V2026_07_28),
        ] {
            let client = connect(&alice, handshake).await;
            assert_eq!(client.era(), spoken);
            let listed = client.list_event_types().await.unwrap();
            let delivery: Vec<Vec<String>> = listed
                .iter()
                .map(|t| t.delivery.iter().map(|m| m.to_string()).collect())
                .collect();
            assert_eq!(delivery, [["poll", "push"]], "era {era}");

            let mut stream = client
                .stream_events(mail.clone(), None, StreamSettings::new())
                .await
                .unwrap_or_else(|e| panic!("era {era}: {e}"));
            for n in 1..=3 {
                send(&client, n).await;
            }
            let mut seen = Vec::new();
            for _ in 1..=3 {
                seen.push(next_event(&mut stream).await.data);
            }
            assert_eq!(seen, [data(1), data(2), data(3)], "era {era}: in order");
            let cursor = stream.cursor().map(str::to_owned);
            assert!(
                cursor.as_deref().is_some_and(|c| c.starts_with('g')),
                "era {era}: the gateway's own cursor: {cursor:?}"
            );
            // Dropped: two more happen meanwhile; a stream from the last cursor gets
            // them, and then the next one, each once.
            drop(stream);
            for n in 4..=5 {
                send(&client, n).await;
            }
            let mut stream = client
                .stream_events(mail.clone(), cursor, StreamSettings::new())
                .await
                .unwrap_or_else(|e| panic!("era {era}: {e}"));
            let mut again = Vec::new();
            for _ in 4..=5 {
                again.push(next_event(&mut stream).await.data);
            }
            send(&client, 6).await;
            again.push(next_event(&mut stream).await.data);
            assert_eq!(
                again,
                [data(4), data(5), data(6)],
                "era {era}: nothing lost, nothing twice"
            );

            // The grants of poll: a server alice may not use, and eve none.
            let refused = client
                .stream_events(
                    EventSubscription::new("mcp__outbox__mail"),
                    None,
                    StreamSettings::new(),
                )
                .await
                .expect_err("outbox is not alice's")
                .to_string();
            assert!(
                refused.contains("mcp__outbox__mail"),
                "era {era}: {refused}"
            );
            let stranger = connect(&eve, handshake).await;
            let refused = stranger
                .stream_events(mail.clone(), None, StreamSettings::new())
                .await
                .expect_err("eve may use no server")
                .to_string();
            assert!(refused.contains("mcp__inbox__mail"), "era {era}: {refused}");
            stranger.shutdown().await;
            // Left open, in both eras: the gateway stops with them.
            open_at_stop.push((client, stream));
        }
        let status = served.stop();
        assert!(
            status.success(),
            "mcpctl serve stops with a stream open in each era: {status}"
        );
        // Each client is told its stream broke (after the events the other era's round
        // caused, for the first).
        for (client, mut stream) in open_at_stop {
            let told = loop {
                let item = tokio::time::timeout(Duration::from_secs(30), stream.next())
                    .await
                    .expect("told within 30s");
                if !matches!(item, Some(mcp_client::StreamItem::Event(_))) {
                    break item;
                }
            };
            assert!(
                matches!(
                    told,
                    Some(mcp_client::StreamItem::Lost { .. } | mcp_client::StreamItem::Ended(_))
                ),
                "{told:?}"
            );
            drop(stream);
            drop(client);
        }
    });
    drop(served);
    wd.assert_no_server_left();
}

#[test]
fn a_stream_through_the_gateway_keeps_alive_with_heartbeats_and_says_truncated_when_its_cursor_fell_out()
 {
    use mcp_client::{
        Client, ClientSettings, DeclineRequests, EventSubscription, HttpTarget, StreamItem,
        StreamSettings, Target,
    };
    let wd = Workdir::new();
    let config = wd.write("mcp.toml", &mail_server("inbox"));
    let served = support::Served::start(&wd, &config, TOKEN, &[]);
    support::runtime().block_on(async {
        let target = Target::Http(HttpTarget::new(served.url.clone()).with_headers(vec![(
            "Authorization".to_owned(),
            mcp_key::Secret::new(format!("Bearer {TOKEN}")),
        )]));
        let client = Client::connect(
            "gateway".parse().unwrap(),
            target,
            ClientSettings::new(),
            std::sync::Arc::new(DeclineRequests),
        )
        .await
        .unwrap();
        let mail = EventSubscription::new("mcp__inbox__mail");
        // Taken for dead after 25s of silence: the gateway's heartbeats (every 15s) keep
        // it open while nothing happens.
        let settings = StreamSettings::new().with_stall(Duration::from_secs(25));
        let mut stream = client
            .stream_events(mail.clone(), None, settings.clone())
            .await
            .unwrap();
        let quiet = tokio::time::timeout(Duration::from_secs(32), stream.next()).await;
        assert!(quiet.is_err(), "nothing while nothing happens: {quiet:?}");
        send(&client, 0).await;
        let first = next_event(&mut stream).await;
        assert_eq!(first.data["n"], json!(0));
        let cursor = stream.cursor().map(str::to_owned);
        drop(stream);

        // More than the subscription's buffer (256) happen meanwhile: the stream from the
        // old cursor says so, then delivers what the buffer kept, in order.
        let total = 258;
        for n in 1..=total {
            send(&client, n).await;
        }
        let mut stream = client.stream_events(mail, cursor, settings).await.unwrap();
        let item = tokio::time::timeout(Duration::from_secs(30), stream.next())
            .await
            .unwrap();
        assert!(
            matches!(item, Some(StreamItem::Truncated { .. })),
            "{item:?}"
        );
        let kept: Vec<u64> = {
            let mut kept = Vec::new();
            for _ in 0..256 {
                kept.push(next_event(&mut stream).await.data["n"].as_u64().unwrap());
            }
            kept
        };
        assert_eq!(kept, (total - 255..=total).collect::<Vec<u64>>());
        stream.shutdown().await;
        client.shutdown().await;
    });
    drop(served);
    wd.assert_no_server_left();
}

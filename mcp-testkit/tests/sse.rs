//! The legacy HTTP+SSE runner, spoken by hand with reqwest: the endpoint event, `202` for
//! posted messages and answers as `message` events, `404` for an unknown session, bearer
//! enforcement, a dropped stream that ends its session (or not, when kept), and the
//! binary's `--http ADDR --sse` mode.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]
#![allow(
    clippy::disallowed_methods,
    reason = "the binary's SSE mode is tested as a process"
)]

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use mcp_testkit::{MESSAGES_PATH, Scenario, SseFakeServer, SseOptions, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const BOUND: Duration = Duration::from_secs(20);

/// An open event stream, read event by event.
struct Stream {
    response: reqwest::Response,
    buffer: String,
}

/// One event: (name, data, id).
type Event = (String, String, String);

impl Stream {
    async fn open(url: &str, token: Option<&str>, last_event_id: Option<&str>) -> Self {
        let mut request = reqwest::Client::new().get(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Self {
            response,
            buffer: String::new(),
        }
    }

    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let field = |name: &str| {
                    block
                        .lines()
                        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
                        .unwrap_or_default()
                        .to_owned()
                };
                return Some((field("event"), field("data"), field("id")));
            }
            let chunk = tokio::time::timeout(BOUND, self.response.chunk())
                .await
                .expect("an event within the bound")
                .unwrap()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

async fn post(server: &SseFakeServer, endpoint: &str, token: Option<&str>, body: Value) -> u16 {
    post_to(&server.addr().to_string(), endpoint, token, body).await
}

async fn post_to(authority: &str, endpoint: &str, token: Option<&str>, body: Value) -> u16 {
    let mut request = reqwest::Client::new()
        .post(format!("http://{authority}{endpoint}"))
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap().status().as_u16()
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_over_the_legacy_transport() {
    let scenario = Scenario::new("legacy").with_tool(ToolSpec::echo("echo"));
    let server = SseFakeServer::start_with(scenario, SseOptions::new().with_bearer_token("t"))
        .await
        .unwrap();
    let refused = reqwest::get(server.url()).await.unwrap();
    assert_eq!(refused.status(), 401);

    let mut stream = Stream::open(&server.url(), Some("t"), None).await;
    let (event, endpoint, id) = stream.next().await.unwrap();
    assert_eq!(event, "endpoint");
    assert_eq!(endpoint, format!("{MESSAGES_PATH}?session_id=s1"));
    assert_eq!(id, "s1-0");

    assert_eq!(post(&server, &endpoint, None, initialize(1)).await, 401);
    assert_eq!(
        post(&server, &endpoint, Some("t"), initialize(1)).await,
        202
    );
    let (event, data, _) = stream.next().await.unwrap();
    assert_eq!(event, "message");
    let answer: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(answer["id"], json!(1));
    assert_eq!(answer["result"]["serverInfo"]["name"], json!("legacy"));

    let unknown = format!("{MESSAGES_PATH}?session_id=nope");
    assert_eq!(post(&server, &unknown, Some("t"), initialize(2)).await, 404);

    // Without kept sessions, a dropped stream ends its session.
    server.drop_streams();
    assert_eq!(stream.next().await, None);
    let counters = tokio::time::timeout(BOUND, server.wait_for_counters(|c| c.sessions_ended == 1))
        .await
        .unwrap();
    assert_eq!(counters.streams_closed, 1);
    assert_eq!(
        post(&server, &endpoint, Some("t"), initialize(3)).await,
        404
    );
    assert_eq!(server.counters().unknown_session, 2);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_session_resumes_with_last_event_id_and_keeps_its_messages() {
    let server = SseFakeServer::start_with(
        Scenario::new("kept"),
        SseOptions::new().with_keep_sessions(true),
    )
    .await
    .unwrap();
    let mut stream = Stream::open(&server.url(), None, None).await;
    let (_, endpoint, last_id) = stream.next().await.unwrap();
    server.drop_streams();
    assert_eq!(stream.next().await, None);
    tokio::time::timeout(BOUND, server.wait_for_counters(|c| c.streams_closed == 1))
        .await
        .unwrap();

    // Sent while no stream is open: delivered on the resumed one.
    assert_eq!(post(&server, &endpoint, None, initialize(7)).await, 202);
    let mut resumed = Stream::open(&server.url(), None, Some(&last_id)).await;
    let (event, again, _) = resumed.next().await.unwrap();
    assert_eq!(
        (event.as_str(), again.as_str()),
        ("endpoint", endpoint.as_str())
    );
    let (_, data, _) = resumed.next().await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&data).unwrap()["id"],
        json!(7)
    );
    let counters = server.counters();
    assert_eq!(
        (counters.sessions, counters.resumed, counters.streams),
        (1, 1, 2)
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_mode_of_the_binary() {
    let home = mcp_testkit::TestHome::new().unwrap();
    let pid_file = home.join("pid");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-fake-server"))
        .args([
            "--http",
            "127.0.0.1:0",
            "--sse",
            "--tool",
            "e",
            "--bearer-token",
            "b",
        ])
        .arg("--pid-file")
        .arg(&pid_file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .await
        .unwrap();
    let url = first.trim().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/sse"),
        "{url}"
    );
    assert_eq!(mcp_testkit::read_pid_file(&pid_file), Some(pid));
    let authority = reqwest::Url::parse(&url).unwrap();
    let authority = format!("127.0.0.1:{}", authority.port().unwrap());

    let mut stream = Stream::open(&url, Some("b"), None).await;
    let (_, endpoint, _) = stream.next().await.unwrap();
    assert_eq!(
        post_to(&authority, &endpoint, Some("b"), initialize(1)).await,
        202
    );
    let (_, data, _) = stream.next().await.unwrap();
    let answer: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(answer["id"], json!(1), "{answer}");
    drop(stream);

    mcp_testkit::terminate_process(pid);
    let status = tokio::time::timeout(BOUND, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(mcp_testkit::wait_gone(pid, BOUND).await);
}

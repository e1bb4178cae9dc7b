//! Streamable-HTTP answers that misbehave in their bodies: one that trickles forever (the
//! call ends at its deadline), one larger than the JSON limit (a protocol error at once,
//! not a timeout) and an `initialize` answer naming a protocol version nobody speaks
//! (refused at once, naming it). Against a tiny hand-written HTTP/1.1 server on loopback
//! in this file: the testkit's fake answers whole, well-formed bodies. The counterparts,
//! at the client level, of `mcp-connections/tests/{http_bodies,http_protocol_version}.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, FailureReason, HttpTarget, RequestError,
    Target,
};
use serde_json::{Value, json};
use support::key;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// Bytes of the oversized answer: above rmcp's 16 MiB `max_json_response_size`.
const HUGE: usize = 20 * 1024 * 1024;

/// What the hand-written server answers `initialize` with as `protocolVersion`: the
/// client's own (`None`) or this one.
#[derive(Clone, Copy)]
struct Answers {
    version: Option<&'static str>,
}

/// A minimal stateless MCP server over streamable HTTP (one request per connection):
/// `trickle` answers headers at once, then a byte of the body every 200 ms, forever;
/// `huge` answers a JSON body of [`HUGE`] bytes. Every connection's task ends with it.
struct BadServer {
    url: String,
    tasks: JoinSet<()>,
}

impl BadServer {
    async fn start(answers: Answers) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let mut tasks = JoinSet::new();
        tasks.spawn(async move {
            let mut connections = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                connections.spawn(serve(stream, answers));
            }
        });
        Self { url, tasks }
    }

    fn target(&self) -> Target {
        Target::Http(HttpTarget::new(self.url.clone()))
    }

    /// Stops the server and every connection (the accept loop owns them).
    async fn shutdown(mut self) {
        self.tasks.shutdown().await;
    }
}

/// Reads one request (head and `Content-Length` body) and answers it.
async fn serve(mut stream: TcpStream, answers: Answers) {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 8192];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_lowercase();
    if !head.starts_with("post ") {
        let _ = write_response(&mut stream, "405 Method Not Allowed", "", b"").await;
        return;
    }
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let request: Value =
        serde_json::from_slice(&buffer[head_end..head_end + length]).unwrap_or(Value::Null);
    let Some(id) = request.get("id").cloned() else {
        // A notification.
        let _ = write_response(&mut stream, "202 Accepted", "", b"").await;
        return;
    };
    let result = match request["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": answers.version.map_or_else(
                || request["params"]["protocolVersion"].clone(),
                Value::from,
            ),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bad-bodies", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [
            {"name": "trickle", "inputSchema": {"type": "object"}},
            {"name": "huge", "inputSchema": {"type": "object"}},
        ]}),
        "tools/call" if request["params"]["name"] == "trickle" => {
            trickle(&mut stream, &id).await;
            return;
        }
        "tools/call" if request["params"]["name"] == "huge" => {
            json!({"content": [{"type": "text", "text": "x".repeat(HUGE)}]})
        }
        "ping" => json!({}),
        _ => {
            let error = json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"},
            });
            let body = error.to_string();
            let _ =
                write_response(&mut stream, "200 OK", "application/json", body.as_bytes()).await;
            return;
        }
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let _ = write_response(&mut stream, "200 OK", "application/json", body.as_bytes()).await;
}

async fn write_response(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !content_type.is_empty() {
        head.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await
}

/// Headers at once (a chunked body, so no length to refuse it by), the start of the
/// answer, then a space every 200 ms until the client goes away.
async fn trickle(stream: &mut TcpStream, id: &Value) {
    let prefix = json!({"jsonrpc": "2.0", "id": id}).to_string();
    let head = prefix.trim_end_matches('}');
    let start = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{head}\r\n",
        head.len()
    );
    if stream.write_all(start.as_bytes()).await.is_err() {
        return;
    }
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if stream.write_all(b"1\r\n \r\n").await.is_err() || stream.flush().await.is_err() {
            return;
        }
    }
}

async fn connect(server: &BadServer) -> Client {
    Client::connect(
        key("bad"),
        server.target(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await
    .expect("the hand-written server connects")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_forever_times_out_at_the_call_deadline() {
    let server = BadServer::start(Answers { version: None }).await;
    let client = connect(&server).await;
    let names: Vec<String> = client.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["trickle", "huge"]);

    let deadline = Duration::from_secs(2);
    let started = Instant::now();
    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        client.call_tool("trickle", None, CallSettings::new(deadline)),
    )
    .await
    .expect("the call ends at its deadline instead of hanging");
    let elapsed = started.elapsed();
    assert_eq!(
        outcome.unwrap_err(),
        RequestError::Timeout { after: deadline }
    );
    // Not before the deadline, and nowhere near the 30 s bound (a generous bound for a
    // shared machine, not a measurement).
    assert!(elapsed >= deadline, "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}");
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_json_limit_fails_at_once_as_a_protocol_error() {
    let server = BadServer::start(Answers { version: None }).await;
    let client = connect(&server).await;
    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        client.call_tool("huge", None, CallSettings::new(Duration::from_secs(120))),
    )
    .await
    .expect("the call fails instead of waiting for its 120 s deadline");
    let err = outcome.unwrap_err();
    assert!(!err.is_timeout(), "{err:?}");
    let RequestError::Protocol { detail } = &err else {
        panic!("what the server sent is at fault: {err:?}");
    };
    // Classified by rmcp's body limit, counted before parsing (so memory is bounded).
    assert!(detail.contains("exceeded the maximum size"), "{detail}");
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_protocol_version_over_http_is_refused_at_once() {
    let server = BadServer::start(Answers {
        version: Some("1999-01-01"),
    })
    .await;
    let started = Instant::now();
    let failure = Client::connect(
        key("past"),
        server.target(),
        ClientSettings::new().with_startup_timeout(Duration::from_secs(60)),
        Arc::new(DeclineRequests),
    )
    .await
    .unwrap_err();
    let took = started.elapsed();
    assert_eq!(failure.reason(), &FailureReason::Protocol, "{failure}");
    assert!(failure.to_string().contains("1999-01-01"), "{failure}");
    assert!(
        took < Duration::from_secs(20),
        "refused at once, not at the 60 s timeout: {took:?}"
    );
    server.shutdown().await;
}

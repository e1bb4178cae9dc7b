//! Against the reference server `@modelcontextprotocol/server-everything` (npm, pinned by
//! `scripts/reference-servers.sh`) over streamable HTTP: killed and started again on the
//! same port mid-run, it answers our old session with `400` and a JSON-RPC error without an
//! id; calls must recover instead of hanging.
//!
//! The server is installed by `scripts/reference-servers.sh` (CI runs it first and sets
//! `MCP_REQUIRE_REFERENCE_SERVERS=1`, which makes a missing install a failure). Without the
//! install and without that variable, the test says so on stderr and does nothing.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "tests; the skip notice goes to stderr"
)]

mod common;

use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Fixture;
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, ServerState};
use mcp_key::McpServerKey;
use serde_json::json;

const HANG: Duration = Duration::from_secs(30);

fn install_dir() -> PathBuf {
    std::env::var_os("MCP_REFERENCE_SERVERS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/reference-servers"),
        PathBuf::from,
    )
}

/// The server's entry point and the loopback preload, if installed.
fn everything() -> Option<(PathBuf, PathBuf)> {
    let dir = install_dir();
    let entry = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let preload = dir.join("loopback-only.cjs");
    if entry.is_file() && preload.is_file() {
        return Some((entry, preload));
    }
    assert!(
        std::env::var_os("MCP_REQUIRE_REFERENCE_SERVERS").is_none(),
        "server-everything is not installed in {}: run scripts/reference-servers.sh",
        dir.display()
    );
    eprintln!(
        "SKIPPED: server-everything is not installed in {}; run scripts/reference-servers.sh",
        dir.display()
    );
    None
}

/// A running `server-everything streamableHttp`; killed on drop.
struct Everything {
    child: Child,
}

impl Everything {
    fn start(entry: &PathBuf, preload: &PathBuf, port: u16) -> Self {
        let child = Command::new("node")
            .arg("--require")
            .arg(preload)
            .arg(entry)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start node");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + HANG;
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, as a crash would, and reap.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_and_restarted_server_everything_is_recovered() {
    let Some((entry, preload)) = everything() else {
        return;
    };
    let port = mcp_testkit::free_loopback_port().unwrap();
    let first = Everything::start(&entry, &preload, port);
    let mut pids = vec![first.pid()];
    let mut fx = Fixture::new();
    fx.add(
        "everything",
        ServerConfig::from(HttpConfig::new(format!("http://127.0.0.1:{port}/mcp"))),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let state = set.status().into_iter().next().unwrap().state;
    assert!(matches!(state, ServerState::Ready { .. }), "{state:?}");
    let key = McpServerKey::unscoped("everything".parse().unwrap());
    let echo = |n: u32| {
        let set = &set;
        let key = &key;
        async move {
            tokio::time::timeout(
                HANG,
                set.call_tool(
                    key,
                    "echo",
                    Some(json!({ "message": format!("hello {n}") })),
                    CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(120))),
                ),
            )
            .await
            .expect("the call hung")
        }
    };
    let text = |r: rmcp::model::CallToolResult| serde_json::to_string(&r.content).unwrap();

    assert!(text(echo(1).await.unwrap()).contains("hello 1"));
    first.kill();
    let down = echo(2).await.unwrap_err();
    assert!(!down.is_timeout(), "{down}");

    let second = Everything::start(&entry, &preload, port);
    pids.push(second.pid());
    for n in 3..6 {
        let mut r = echo(n).await;
        // The first call after the restart may go out on a keep-alive connection the
        // killed server had open: it fails at once as `Disconnected` (retryable), as a
        // host would see, and is tried again.
        if n == 3 && matches!(r, Err(mcp_connections::Error::Disconnected { .. })) {
            r = echo(n).await;
        }
        let r = r.unwrap_or_else(|e| panic!("call {n}: {e}"));
        assert!(text(r).contains(&format!("hello {n}")));
    }
    set.shutdown().await;
    second.kill();
    for pid in pids {
        assert!(
            mcp_testkit::wait_gone(pid, Duration::from_secs(5)).await,
            "server-everything {pid} outlived the test"
        );
    }
}

/// The protocol era a real server of the other SDK negotiates under `protocol = "auto"`,
/// over stdio and streamable HTTP, and that calls work in it. The era is whatever the
/// server speaks; the test pins it so a change is noticed (and reported in the issue).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_under_auto_over_stdio_and_http() {
    let Some((entry, preload)) = everything() else {
        return;
    };
    let port = mcp_testkit::free_loopback_port().unwrap();
    let _http = Everything::start(&entry, &preload, port);
    let mut fx = Fixture::new();
    fx.add(
        "http",
        ServerConfig::from(HttpConfig::new(format!("http://127.0.0.1:{port}/mcp"))),
    );
    fx.add(
        "stdio",
        ServerConfig::stdio("node").with_args([
            "--require".to_owned(),
            preload.display().to_string(),
            entry.display().to_string(),
            "stdio".to_owned(),
        ]),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 2, "{summary:?}");
    let eras: Vec<(String, Option<String>)> = set
        .status()
        .into_iter()
        .map(|s| (s.key.to_string(), s.protocol_version))
        .collect();
    assert_eq!(
        eras,
        vec![
            ("http".to_owned(), Some(EVERYTHING_ERA.to_owned())),
            ("stdio".to_owned(), Some(EVERYTHING_ERA.to_owned())),
        ]
    );
    for name in ["http", "stdio"] {
        let result = tokio::time::timeout(
            HANG,
            set.call_tool(
                &name.parse().unwrap(),
                "echo",
                Some(json!({ "message": "era" })),
                CallOptions::new(),
            ),
        )
        .await
        .expect("the call hung")
        .unwrap();
        assert_ne!(result.is_error, Some(true), "{name}: {result:?}");
    }
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// What server-everything 2026.8.31 negotiates under `auto`.
const EVERYTHING_ERA: &str = "2025-11-25";

/// What server-everything asks of a host, answered by this host: its sampling tool (listed
/// only because the set announces sampling) reaches the host's model with `maxTokens`
/// unchanged; its simulated logs arrive as events at the configured level or above; its
/// completable prompt completes, the second argument narrowed by the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    deprecated,
    reason = "rmcp marks sampling and logging deprecated (SEP-2577)"
)]
async fn server_everything_samples_logs_and_completes_through_the_host() {
    use mcp_connections::model::{
        ArgumentInfo, CompletionContext, CreateMessageResult, LoggingLevel, Reference,
        SamplingMessage,
    };
    use mcp_connections::{ConnectionEvent, sampling_fn};
    let Some((entry, preload)) = everything() else {
        return;
    };
    let mut fx = Fixture::new();
    fx.add(
        "everything",
        ServerConfig::stdio("node")
            .with_args([
                "--require".to_owned(),
                preload.display().to_string(),
                entry.display().to_string(),
                "stdio".to_owned(),
            ])
            .with_log_level(Some(mcp_catalog::LogLevel::Info)),
    );
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&asked);
    let model = sampling_fn(move |request| {
        seen.lock().unwrap().push(request.max_tokens());
        async {
            Ok(CreateMessageResult::new(
                SamplingMessage::assistant_text("a haiku about loopback"),
                "test-model".to_owned(),
            ))
        }
    });
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = ConnectionSetOptions::new()
        .with_sampling_handler(model)
        .with_events(tx);
    let set = ConnectionSet::start(&fx.catalog(), options);
    assert_eq!(set.wait_startup().await.ready(), 1);
    let server: McpServerKey = "everything".parse().unwrap();

    let result = set
        .call_tool(
            &server,
            "trigger-sampling-request",
            Some(json!({"prompt": "write a haiku", "maxTokens": 42})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("a haiku about loopback"), "{text}");
    assert!(text.contains("test-model"), "{text}");
    assert_eq!(*asked.lock().unwrap(), [42]);

    set.call_tool(
        &server,
        "toggle-simulated-logging",
        None,
        CallOptions::new(),
    )
    .await
    .unwrap();
    // One message every 5 s, of a random level: the first at info or above comes soon.
    let event = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if let Some(ConnectionEvent::ServerLog { level, .. }) = rx.recv().await {
                return level;
            }
        }
    })
    .await
    .expect("a log message within 60 s");
    assert_ne!(event, LoggingLevel::Debug, "below the configured level");

    let department = set
        .complete(
            &server,
            Reference::for_prompt("completable-prompt"),
            ArgumentInfo::new("department", "E"),
            None,
        )
        .await
        .unwrap();
    assert_eq!(department.values, ["Engineering"]);
    let context = CompletionContext::with_arguments(
        [("department".to_owned(), "Engineering".to_owned())]
            .into_iter()
            .collect(),
    );
    let name = set
        .complete(
            &server,
            Reference::for_prompt("completable-prompt"),
            ArgumentInfo::new("name", "A"),
            Some(context),
        )
        .await
        .unwrap();
    assert_eq!(name.values, ["Alice"]);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

fn everything_stdio(fx: &mut Fixture, entry: &std::path::Path, preload: &std::path::Path) {
    fx.add(
        "everything",
        ServerConfig::stdio("node").with_args([
            "--require".to_owned(),
            preload.display().to_string(),
            entry.display().to_string(),
            "stdio".to_owned(),
        ]),
    );
}

/// server-everything's `simulate-research-query` must run as a task (MCP 2025-11-25,
/// `taskSupport: required`): a plain call through the set is driven to its result, the
/// task's status messages reach the host as they change, and the clarification the task
/// asks for mid-way (an elicitation sent with `tasks/result`) reaches the host's handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everythings_research_task_runs_to_its_result_through_the_set() {
    use mcp_connections::elicitation_fn;
    use mcp_connections::model::{ElicitResult, ElicitationAction};
    let Some((entry, preload)) = everything() else {
        return;
    };
    let mut fx = Fixture::new();
    everything_stdio(&mut fx, &entry, &preload);
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&asked);
    let handler = elicitation_fn(move |request| {
        seen.lock().unwrap().push(request.message().to_owned());
        async {
            ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"interpretation": "programming"}))
        }
    });
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_elicitation_handler(handler),
    );
    assert_eq!(set.wait_startup().await.ready(), 1);
    let server: McpServerKey = "everything".parse().unwrap();
    let states = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = std::sync::Arc::clone(&states);
    let options = CallOptions::new().with_call(|c| {
        c.with_timeout(Duration::from_secs(60))
            .with_task_state(Some(std::sync::Arc::new(
                move |state: &mcp_client::TaskState| {
                    into.lock().unwrap().push(state.clone());
                },
            )))
    });
    let result = set
        .call_tool(
            &server,
            "simulate-research-query",
            Some(json!({"topic": "python", "ambiguous": true})),
            options,
        )
        .await
        .unwrap();
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(
        text.contains("Research Report: python (programming)"),
        "{text}"
    );
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("multiple interpretations"), "{asked:?}");
    let messages: Vec<String> = states
        .lock()
        .unwrap()
        .iter()
        .filter_map(|s| s.message.clone())
        .collect();
    assert!(
        messages.iter().any(|m| m.starts_with("Gathering sources")),
        "{messages:?}"
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// A research task kept by its handle and cancelled: the server reports it cancelled, and
/// waiting for it then says so instead of waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_research_task_is_cancelled_on_server_everything() {
    use mcp_client::{CallSettings, Client, ClientSettings, DeclineRequests, Started, Target};
    let Some((entry, preload)) = everything() else {
        return;
    };
    let config = mcp_catalog::StdioConfig::new("node").with_args([
        "--require".to_owned(),
        preload.display().to_string(),
        entry.display().to_string(),
        "stdio".to_owned(),
    ]);
    let client = Client::connect(
        "everything".parse().unwrap(),
        Target::stdio(config),
        ClientSettings::new(),
        std::sync::Arc::new(DeclineRequests),
    )
    .await
    .unwrap();
    let started = client
        .start_tool_task(
            "simulate-research-query",
            Some(json!({"topic": "rust"}).as_object().unwrap().clone()),
            CallSettings::new(Duration::from_secs(30)),
        )
        .await
        .unwrap();
    let Started::Task(task) = started else {
        panic!("server-everything makes a task of its research tool");
    };
    assert!(!task.id().is_empty());
    task.cancel(&client).await.unwrap();
    let err = task
        .result(&client, CallSettings::new(Duration::from_secs(30)))
        .await
        .unwrap_err();
    assert!(err.is_task_lost(), "{err}");
    assert_eq!(task.state().phase, mcp_client::TaskPhase::Cancelled);
    let pid = client.pid().unwrap();
    client.shutdown().await;
    assert!(mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await);
}

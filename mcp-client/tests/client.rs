//! One `Client` against real servers: the testkit's `mcp-fake-server` binary over stdio
//! and its streamable-HTTP server on loopback, in both protocol eras, with no connection
//! set, catalog or pool around it.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_catalog::StdioConfig;
use mcp_client::{
    BoxFuture, CallSettings, Client, ClientSettings, DeclineRequests, Era, FailureReason,
    Handshake, HttpTarget, Progress, RequestError, ServerRequests, Target,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, HttpFakeServer, Scenario, TestHome, ToolSpec};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value, json};

const CALL: Duration = Duration::from_secs(20);

fn key(name: &str) -> McpServerKey {
    name.parse().unwrap()
}

/// A server of the 2025-11-25 era (the fake server's default) with four tools.
fn scenario() -> Scenario {
    Scenario::new("one")
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new("steps", Behavior::Progress { steps: 3 }))
        .with_tool(ToolSpec::new("slow", Behavior::Sleep { ms: 60_000 }))
        .with_tool(ToolSpec::new(
            "ask",
            Behavior::ElicitForm {
                message: "Your name?".to_owned(),
                schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            },
        ))
}

/// [`scenario`] speaking the 2026-07-28 era.
fn modern() -> Scenario {
    let mut faults = mcp_testkit::Faults::default();
    faults.protocol_version = Some("2026-07-28".to_owned());
    scenario().with_faults(faults)
}

/// The fake server binary running `scenario`, its pid written into the home.
fn stdio_target(home: &TestHome, scenario: Scenario) -> (Target, std::path::PathBuf) {
    let (config, pid_file) = stdio_config(home, scenario);
    (Target::stdio(config), pid_file)
}

/// The command running the fake server on `scenario`, and where its pid is written.
fn stdio_config(home: &TestHome, scenario: Scenario) -> (StdioConfig, std::path::PathBuf) {
    let pid_file = home.join("server.pid");
    let mut record = mcp_testkit::Recording::default();
    record.pid_file = Some(pid_file.clone());
    let path = home.join("scenario.json");
    scenario.with_record(record).write_json(&path).unwrap();
    let bin = mcp_testkit::fake_server_bin();
    let config = StdioConfig::new(bin.to_string_lossy())
        .with_args(["--scenario".to_owned(), path.to_string_lossy().into_owned()]);
    (config, pid_file)
}

fn args(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Answers every elicitation with `{"name": "Ada"}` and counts them.
#[derive(Default)]
struct Accept {
    seen: Mutex<Vec<String>>,
}

impl ServerRequests for Accept {
    fn elicit<'a>(
        &'a self,
        server: &'a McpServerKey,
        _request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        self.seen.lock().unwrap().push(server.to_string());
        Box::pin(async {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}))
        })
    }
}

/// A client of server `one` at `target`, connected or the test fails.
async fn connect(
    target: Target,
    settings: ClientSettings,
    requests: Arc<dyn ServerRequests>,
) -> Client {
    Client::connect(key("one"), target, settings, requests)
        .await
        .expect("the fake server connects")
}

/// `closed()` resolves (the process is gone), then a call fails as disconnected.
async fn assert_closed_then_disconnected(client: &Client) {
    tokio::time::timeout(Duration::from_secs(10), client.closed())
        .await
        .expect("closed() resolves once the process is gone");
    assert_echo_disconnected(client).await;
}

/// A call of `echo` fails as disconnected.
async fn assert_echo_disconnected(client: &Client) {
    let err = client
        .call_tool("echo", None, CallSettings::new(CALL))
        .await
        .unwrap_err();
    assert!(err.is_disconnected(), "{err:?}");
}

async fn assert_process_gone(pid_file: &std::path::Path) {
    let pid = mcp_testkit::read_pid_file(pid_file).expect("the server wrote its pid");
    assert!(
        mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await,
        "server process {pid} outlived its client"
    );
    mcp_testkit::assert_no_process_group(pid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_is_probed_called_with_progress_and_stopped() {
    let home = TestHome::new().unwrap();
    let (target, pid_file) = stdio_target(&home, modern());
    let client = connect(target, ClientSettings::new(), Arc::new(DeclineRequests)).await;
    assert_eq!(
        client.era(),
        Era::V2026_07_28,
        "the probe finds the 2026 era"
    );
    let names: Vec<String> = client.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["echo", "steps", "slow", "ask"]);
    assert!(client.pid().is_some());

    let result = client
        .call_tool("echo", args(json!({"text": "hi"})), CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"text": "hi"})));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&seen);
    let progress = Arc::new(move |p: Progress| into.lock().unwrap().push(p.progress));
    client
        .call_tool(
            "steps",
            None,
            CallSettings::new(CALL).with_progress(Some(progress)),
        )
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);

    client.shutdown().await;
    assert!(!client.is_alive());
    assert_process_gone(&pid_file).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_server_answers_the_probe_and_its_elicitation_reaches_the_host() {
    let home = TestHome::new().unwrap();
    let (target, pid_file) = stdio_target(&home, scenario());
    let requests = Arc::new(Accept::default());
    let client = connect(
        target,
        ClientSettings::new().with_elicitation(true),
        Arc::clone(&requests) as Arc<dyn ServerRequests>,
    )
    .await;
    assert_eq!(client.era(), Era::V2025_11_25);
    assert_eq!(client.protocol_version().as_str(), "2025-11-25");
    let result = client
        .call_tool("ask", None, CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"action": "accept", "content": {"name": "Ada"}}))
    );
    assert_eq!(*requests.seen.lock().unwrap(), ["one"]);
    client.shutdown().await;
    assert_process_gone(&pid_file).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_input_request_goes_to_the_calls_own_requests() {
    let home = TestHome::new().unwrap();
    let (target, pid_file) = stdio_target(&home, modern());
    let connection_wide = Arc::new(Accept::default());
    let this_call = Arc::new(Accept::default());
    let client = connect(
        target,
        ClientSettings::new().with_elicitation(true),
        Arc::clone(&connection_wide) as Arc<dyn ServerRequests>,
    )
    .await;
    assert_eq!(client.era(), Era::V2026_07_28);
    let result = client
        .call_tool(
            "ask",
            None,
            CallSettings::new(CALL)
                .with_requests(Some(Arc::clone(&this_call) as Arc<dyn ServerRequests>)),
        )
        .await
        .unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"action": "accept", "content": {"name": "Ada"}}))
    );
    assert_eq!(this_call.seen.lock().unwrap().len(), 1);
    assert!(connection_wide.seen.lock().unwrap().is_empty());
    client.shutdown().await;
    assert_process_gone(&pid_file).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_times_out_and_a_dead_process_is_reported() {
    let home = TestHome::new().unwrap();
    let (target, pid_file) = stdio_target(&home, scenario());
    let client = connect(target, ClientSettings::new(), Arc::new(DeclineRequests)).await;
    let timeout = Duration::from_millis(300);
    let err = client
        .call_tool("slow", None, CallSettings::new(timeout))
        .await
        .unwrap_err();
    assert_eq!(err, RequestError::Timeout { after: timeout });

    let pid = client.pid().unwrap();
    mcp_testkit::kill_process_group(pid);
    assert_closed_then_disconnected(&client).await;
    let death = client.death().await;
    assert!(
        matches!(death.reason(), FailureReason::Exited { .. }),
        "{death:?}"
    );
    client.shutdown().await;
    assert_process_gone(&pid_file).await;
}

/// A server whose process exits while one it started keeps both its pipes open (its
/// stdout never reaches end-of-file, and requests still fit in its stdin): a call made
/// after the exit fails as disconnected shortly after, not at the end of its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_fails_as_disconnected_when_the_server_exited_and_left_its_pipes_open() {
    let home = TestHome::new().unwrap();
    let (server, pid_file) = stdio_config(&home, scenario());
    // `sh` starts `sleep` with the server's stdin and stdout, then becomes the server.
    // (A job started with `&` gets `/dev/null` for stdin unless redirected, and `<&0`
    // would duplicate that: stdin goes through fd 3.)
    let mut args = vec![
        "-c".to_owned(),
        "exec 3<&0; sleep 1000 <&3 3<&- & exec \"$0\" \"$@\" 3<&-".to_owned(),
        server.command().to_owned(),
    ];
    args.extend(server.args().iter().cloned());
    let target = Target::stdio(StdioConfig::new("sh").with_args(args));
    let client = connect(target, ClientSettings::new(), Arc::new(DeclineRequests)).await;
    let pid = client.pid().unwrap();
    assert_eq!(mcp_testkit::read_pid_file(&pid_file), Some(pid));
    let group = mcp_testkit::process_group_members(pid);
    assert_eq!(
        group.len(),
        2,
        "the server and the `sleep` it left: {group:?}"
    );

    mcp_testkit::kill_process(pid);
    // Before the fix the call waited for its whole timeout and failed as `Timeout`.
    assert_closed_then_disconnected(&client).await;
    // Later calls fail at once: the process's end is on record.
    assert_echo_disconnected(&client).await;
    assert!(
        mcp_testkit::process_alive(group.iter().copied().find(|&p| p != pid).unwrap()),
        "the `sleep` still holds the pipes while the call fails"
    );
    client.shutdown().await;
    assert!(mcp_testkit::wait_group_gone(pid, Duration::from_secs(10)).await);
    mcp_testkit::assert_no_process_group(pid);
}

/// The other side of failing calls once the process is gone: an answer the server wrote
/// just before it exited reaches the caller (it is in the pipe before the exit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_written_just_before_the_exit_reaches_the_caller() {
    let home = TestHome::new().unwrap();
    let last = ToolSpec::new("last", Behavior::AnswerThenExit { code: 0 });
    let (target, pid_file) = stdio_target(&home, scenario().with_tool(last));
    let client = connect(target, ClientSettings::new(), Arc::new(DeclineRequests)).await;
    let result = client
        .call_tool("last", None, CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"exited": 0})));
    // The process did exit: the connection ends, and later calls fail.
    assert_closed_then_disconnected(&client).await;
    client.shutdown().await;
    assert_process_gone(&pid_file).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_does_not_exist_fails_to_spawn_with_the_servers_name() {
    let target = Target::stdio(StdioConfig::new("/nonexistent/mcp-server-xyz"));
    let err = Client::connect(
        key("missing"),
        target,
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await
    .unwrap_err();
    assert_eq!(err.reason(), &FailureReason::SpawnFailed, "{err}");
    // The launcher's error (the cause) names the server, once in the whole chain.
    let chain = mcp_key::error_chain(&err);
    assert_eq!(chain.matches("`missing`").count(), 1, "{chain}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_servers_of_both_eras_are_served() {
    for (scenario, handshake, era) in [
        (modern(), Handshake::Probe, Era::V2026_07_28),
        (modern(), Handshake::Discover, Era::V2026_07_28),
        (scenario(), Handshake::Probe, Era::V2025_11_25),
        (scenario(), Handshake::Initialize, Era::V2025_11_25),
    ] {
        let server = HttpFakeServer::start(scenario).await.unwrap();
        let client = Client::connect(
            key("web"),
            Target::Http(HttpTarget::new(server.url())),
            ClientSettings::new().with_handshake(handshake),
            Arc::new(DeclineRequests),
        )
        .await
        .unwrap();
        assert_eq!(client.era(), era);
        assert_eq!(client.tools().len(), 4);
        assert!(client.pid().is_none());
        let result = client
            .call_tool("echo", args(json!({"n": 1})), CallSettings::new(CALL))
            .await
            .unwrap();
        assert_eq!(result.structured_content, Some(json!({"n": 1})));
        client.shutdown().await;
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_that_is_not_there_is_a_transport_failure() {
    // A port that was free a moment ago: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = Client::connect(
        key("gone"),
        Target::Http(HttpTarget::new(format!("http://127.0.0.1:{port}/mcp"))),
        ClientSettings::new().with_startup_timeout(Duration::from_secs(10)),
        Arc::new(DeclineRequests),
    )
    .await
    .unwrap_err();
    assert_eq!(err.reason(), &FailureReason::Transport, "{err}");
    assert!(err.to_string().contains("`gone`"), "{err}");
}

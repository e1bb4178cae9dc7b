//! A plain rmcp client for the testkit's own tests.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData as McpError, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;

pub(crate) mod suite;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_mcp-fake-server");

/// What the client saw from the server, besides responses.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    pub(crate) progress: Mutex<Vec<ProgressNotificationParam>>,
    pub(crate) elicitations: Mutex<Vec<ElicitRequestParams>>,
    pub(crate) list_changed: Notify,
    pub(crate) progress_arrived: Notify,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct TestClient {
    pub(crate) seen: Arc<Seen>,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}, "url": {}}})).unwrap();
        ClientConfig::new(capabilities, Implementation::new("testkit-tests", "1.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let answer = match &request {
            ElicitRequestParams::FormElicitationParams { .. } => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}))
            }
            _ => ElicitResult::new(ElicitationAction::Accept),
        };
        self.seen.elicitations.lock().unwrap().push(request);
        Ok(answer)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.progress.lock().unwrap().push(params);
        self.seen.progress_arrived.notify_one();
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.seen.list_changed.notify_one();
    }
}

impl TestClient {
    /// Connect over streamable HTTP, returning the initialize error instead of panicking.
    pub(crate) async fn serve_http(
        self,
        url: &str,
        token: Option<&str>,
    ) -> Result<Client, rmcp::service::ClientInitializeError> {
        let mut config =
            rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                url.to_owned(),
            );
        if let Some(token) = token {
            config = config.auth_header(token.to_owned());
        }
        let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
            reqwest::Client::new(),
            config,
        );
        self.serve(transport).await
    }
}

pub(crate) type Client = RunningService<RoleClient, TestClient>;

pub(crate) async fn connect<T, E, A>(transport: T) -> (Client, Arc<Seen>)
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let handler = TestClient::default();
    let seen = Arc::clone(&handler.seen);
    let client = handler.serve(transport).await.expect("initialize");
    (client, seen)
}

pub(crate) fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap()
}

pub(crate) async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args(arguments)))
        .await
        .expect("tools/call")
}

/// A spawned `mcp-fake-server` with piped stdio, in its own process group.
pub(crate) struct Spawned {
    pub(crate) child: tokio::process::Child,
    pub(crate) pid: u32,
}

pub(crate) fn spawn(extra: &[&str], stderr: Stdio) -> Spawned {
    let child = tokio::process::Command::new(BIN)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mcp-fake-server");
    let pid = child.id().unwrap();
    Spawned { child, pid }
}

impl Spawned {
    /// The (stdout, stdin) transport; takes the pipes.
    pub(crate) fn transport(
        &mut self,
    ) -> (tokio::process::ChildStdout, tokio::process::ChildStdin) {
        (
            self.child.stdout.take().unwrap(),
            self.child.stdin.take().unwrap(),
        )
    }

    /// Kill the whole group and check nothing of it is left.
    pub(crate) async fn kill_and_check(mut self) {
        mcp_testkit::kill_process_group(self.pid);
        let _ = self.child.wait().await;
        assert!(mcp_testkit::wait_group_gone(self.pid, Duration::from_secs(5)).await);
    }

    /// Wait for a normal exit and check nothing of the group is left.
    pub(crate) async fn wait_and_check(mut self) -> std::process::ExitStatus {
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("server exits")
            .unwrap();
        assert!(mcp_testkit::wait_group_gone(self.pid, Duration::from_secs(5)).await);
        status
    }
}

pub(crate) fn temp() -> mcp_testkit::TestHome {
    mcp_testkit::TestHome::new().unwrap()
}

pub(crate) fn path_arg(p: &std::path::Path) -> String {
    p.to_str().unwrap().to_owned()
}

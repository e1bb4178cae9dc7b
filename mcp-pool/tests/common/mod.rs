//! Helpers shared by the integration tests: the real fake server, an rmcp client.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_pool::{LaunchSpec, StdioProcess};
use mcp_testkit::{Behavior, Scenario, ToolSpec};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};

/// Grace periods short enough for tests, long enough for a loaded 2-core machine.
pub(crate) const GRACE: Duration = Duration::from_millis(500);

/// How long a killed process may take to disappear.
pub(crate) const GONE: Duration = Duration::from_secs(5);

pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

pub(crate) fn fake_bin() -> String {
    mcp_testkit::fake_server_bin()
        .to_string_lossy()
        .into_owned()
}

/// The fake server with `args`, fast graces.
pub(crate) fn fake(args: &[&str]) -> LaunchSpec {
    LaunchSpec::new(fake_bin())
        .with_args(args.iter().copied())
        .with_label("fake")
        .with_stdin_grace(GRACE)
        .with_term_grace(GRACE)
}

/// Writes a scenario with the given tools and returns `--scenario FILE` args.
pub(crate) fn scenario(dir: &Path, tools: Vec<ToolSpec>) -> Vec<String> {
    let mut s = Scenario::new("fake");
    for tool in tools {
        s = s.with_tool(tool);
    }
    let path = dir.join("scenario.json");
    s.write_json(&path).unwrap();
    vec!["--scenario".into(), path.to_string_lossy().into_owned()]
}

pub(crate) fn report_env_tool() -> ToolSpec {
    ToolSpec::new("report_env", Behavior::ReportEnv)
}

pub(crate) fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcp-pool-tests", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

/// Initializes an rmcp client over the process's pipes.
pub(crate) async fn connect(process: &mut StdioProcess) -> Client {
    let transport = process.take_transport().unwrap();
    client_config().serve(transport).await.unwrap()
}

pub(crate) async fn call(
    client: &Client,
    tool: &str,
) -> Result<CallToolResult, rmcp::ServiceError> {
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()))
        .await
}

/// Waits (bounded) until the pid file exists and returns the pid in it.
pub(crate) async fn pid_from(path: &PathBuf) -> u32 {
    let deadline = tokio::time::Instant::now() + GONE;
    loop {
        if let Some(pid) = mcp_testkit::read_pid_file(path) {
            return pid;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no pid in {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Asserts that every pid disappears within [`GONE`].
pub(crate) async fn assert_all_gone(pids: &[u32]) {
    for pid in pids {
        assert!(
            mcp_testkit::wait_gone(*pid, GONE).await,
            "process {pid} survived"
        );
    }
}

//! What the integration tests of this crate share: the fake server binary on stdio, with
//! its pid file and request log, and the check that it is gone.

#![allow(dead_code, reason = "each test binary uses part of it")]

use std::path::PathBuf;
use std::time::Duration;

use mcp_catalog::StdioConfig;
use mcp_client::Target;
use mcp_testkit::{RecordedRequest, Scenario, TestHome};

/// How long a test waits for what a fake server received.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// The fake server binary running a scenario, with its pid file and request log.
pub(crate) struct Stdio {
    pub(crate) target: Target,
    pub(crate) pid_file: PathBuf,
    pub(crate) log: PathBuf,
}

/// The fake server binary running `scenario`, recording its pid and requests under `home`.
pub(crate) fn stdio(home: &TestHome, scenario: Scenario) -> Stdio {
    let pid_file = home.join("server.pid");
    let log = home.join("requests.jsonl");
    let mut record = mcp_testkit::Recording::default();
    record.pid_file = Some(pid_file.clone());
    record.request_log = Some(log.clone());
    let path = home.join("scenario.json");
    scenario.with_record(record).write_json(&path).unwrap();
    let bin = mcp_testkit::fake_server_bin();
    let config = StdioConfig::new(bin.to_string_lossy())
        .with_args(["--scenario".to_owned(), path.to_string_lossy().into_owned()]);
    Stdio {
        target: Target::stdio(config),
        pid_file,
        log,
    }
}

impl Stdio {
    /// The server's `method` requests so far.
    pub(crate) fn requests(&self, method: &str) -> Vec<RecordedRequest> {
        RecordedRequest::read_log(&self.log)
            .into_iter()
            .filter(|r| r.method == method)
            .collect()
    }

    /// The server's `method` requests, once it received at least `count`.
    pub(crate) async fn wait_for_count(&self, method: &str, count: usize) -> Vec<RecordedRequest> {
        let waited = tokio::time::timeout(PATIENCE, async {
            loop {
                let seen = self.requests(method);
                if seen.len() >= count {
                    return seen;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        waited
            .await
            .unwrap_or_else(|_| panic!("the server never received {count} {method}"))
    }

    /// Waits until the server received a `method` request.
    pub(crate) async fn wait_for(&self, method: &str) -> Vec<RecordedRequest> {
        self.wait_for_count(method, 1).await
    }

    /// Checks that the server process and its group are gone.
    pub(crate) async fn assert_gone(&self) {
        let pid = mcp_testkit::read_pid_file(&self.pid_file).expect("the server wrote its pid");
        assert!(
            mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await,
            "server process {pid} outlived its client"
        );
        mcp_testkit::assert_no_process_group(pid);
    }
}

/// The key of server `name`.
pub(crate) fn key(name: &str) -> mcp_key::McpServerKey {
    name.parse().expect("a valid server name")
}

/// A JSON object as call or prompt arguments (`None` for anything else).
pub(crate) fn args(value: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    match value {
        serde_json::Value::Object(map) => Some(map),
        _ => None,
    }
}

/// `scenario` speaking the 2026-07-28 era (its other faults kept).
pub(crate) fn modern(mut scenario: Scenario) -> Scenario {
    scenario.faults.protocol_version = Some("2026-07-28".to_owned());
    scenario
}

/// `scenario` in the era `era` names (`None`: the fake server's default, 2025-11-25).
pub(crate) fn in_era(scenario: Scenario, era: Option<&str>) -> Scenario {
    match era {
        Some("2026-07-28") => modern(scenario),
        Some(other) => panic!("no scenario for era {other}"),
        None => scenario,
    }
}

/// Connects server `name` at `target`, or the test fails.
pub(crate) async fn connect(
    name: &str,
    target: Target,
    settings: mcp_client::ClientSettings,
    requests: std::sync::Arc<dyn mcp_client::ServerRequests>,
) -> mcp_client::Client {
    mcp_client::Client::connect(key(name), target, settings, requests)
        .await
        .unwrap_or_else(|e| panic!("server `{name}` connects: {e}"))
}

/// The fake server binary running `scenario` behind `sh`, which appends a line to a
/// launch file each time the server is started, so that a test can count processes (a
/// probe of a 2025-era server that exits on it costs one). The server `exec`s, so its pid
/// file names the process the client started.
pub(crate) fn counted(home: &TestHome, scenario: Scenario) -> (Stdio, PathBuf) {
    let launches = home.join("launches");
    let Stdio {
        target,
        pid_file,
        log,
    } = stdio(home, scenario);
    let Target::Stdio { config, .. } = target else {
        unreachable!("stdio() builds a stdio target")
    };
    let command = std::iter::once(config.command().to_owned())
        .chain(config.args().iter().cloned())
        .map(|word| format!("'{word}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let wrapped = StdioConfig::new("sh").with_args([
        "-c".to_owned(),
        format!("echo started >> '{}'; exec {command}", launches.display()),
    ]);
    let stdio = Stdio {
        target: Target::stdio(wrapped),
        pid_file,
        log,
    };
    (stdio, launches)
}

/// How many times the server behind [`counted`] was started.
pub(crate) fn launches(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

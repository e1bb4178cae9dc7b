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

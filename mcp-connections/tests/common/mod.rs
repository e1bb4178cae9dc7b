//! Shared helpers of the connection-set integration tests: build catalogs of real
//! `mcp-fake-server` processes, collect events, and check that no process is left.

#![allow(
    dead_code,
    unreachable_pub,
    reason = "each test binary uses a different subset"
)]

use std::path::PathBuf;
use std::time::Duration;

use mcp_catalog::{CatalogBuilder, Config, LoadedConfig, ResolvedCatalog, ServerConfig};
use mcp_connections::ConnectionEvent;
use mcp_key::ServerName;
use mcp_testkit::{Faults, Recording, Scenario, TestHome};
use tokio::sync::mpsc;

/// A test's servers: scenario files and pid files live in a temporary home.
pub struct Fixture {
    pub home: TestHome,
    config: Config,
    pid_files: Vec<PathBuf>,
}

impl Fixture {
    pub fn new() -> Self {
        Self {
            home: TestHome::new().expect("temp home"),
            config: Config::new(),
            pid_files: Vec::new(),
        }
    }

    /// Adds a stdio server running `scenario` in the fake-server binary; records its pid
    /// and its requests.
    pub fn stdio(&mut self, name: &str, scenario: Scenario) -> &mut Self {
        self.stdio_with(name, scenario, |c| c)
    }

    /// Like [`Self::stdio`], with a hook to adjust the server config.
    pub fn stdio_with(
        &mut self,
        name: &str,
        mut scenario: Scenario,
        adjust: impl FnOnce(ServerConfig) -> ServerConfig,
    ) -> &mut Self {
        let pid_file = self.home.join(format!("{name}.pid"));
        let mut record = Recording::default();
        record.pid_file = Some(pid_file.clone());
        record.request_log = Some(self.request_log(name));
        scenario = scenario.with_record(record);
        let path = self.home.join(format!("{name}.json"));
        scenario.write_json(&path).expect("write scenario");
        let bin = mcp_testkit::fake_server_bin();
        let config = ServerConfig::stdio(bin.to_string_lossy())
            .with_args(["--scenario".to_owned(), path.to_string_lossy().into_owned()]);
        self.pid_files.push(pid_file);
        self.add(name, adjust(config))
    }

    /// Adds any server config.
    pub fn add(&mut self, name: &str, config: ServerConfig) -> &mut Self {
        let config_so_far = std::mem::take(&mut self.config);
        self.config = config_so_far.with_server(ServerName::new(name).expect("name"), config);
        self
    }

    /// The servers added so far, as one user configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn request_log(&self, name: &str) -> PathBuf {
        self.home.join(format!("{name}.requests"))
    }

    pub fn catalog(&self) -> ResolvedCatalog {
        CatalogBuilder::new()
            .with_user_config(LoadedConfig::new("test", self.config.clone()))
            .build()
    }

    /// The catalog with each server passed through `adjust` (`None` leaves it out), and
    /// catalog-wide settings through `config`.
    pub fn catalog_with(
        &self,
        adjust: impl Fn(&str, ServerConfig) -> Option<ServerConfig>,
        config: impl FnOnce(Config) -> Config,
    ) -> ResolvedCatalog {
        let mut out = Config::new();
        for (name, server) in self.config.servers() {
            if let Some(server) = adjust(name.as_str(), server.clone()) {
                out = out.with_server(name.clone(), server);
            }
        }
        CatalogBuilder::new()
            .with_user_config(LoadedConfig::new("test", config(out)))
            .build()
    }

    /// Pids of every stdio server that started (and wrote its pid file) so far.
    pub fn pids(&self) -> Vec<u32> {
        self.pid_files
            .iter()
            .filter_map(mcp_testkit::read_pid_file)
            .collect()
    }

    /// Asserts that none of the servers' processes is alive (after shutdown).
    pub async fn assert_no_processes(&self) {
        for pid in self.pids() {
            assert!(
                mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await,
                "server process {pid} outlived the connection set"
            );
            mcp_testkit::assert_no_process_group(pid);
        }
    }
}

pub fn faults(f: impl FnOnce(&mut Faults)) -> Faults {
    let mut faults = Faults::default();
    f(&mut faults);
    faults
}

/// Receives events until `StartupComplete` (or panics after `timeout`).
pub async fn events_until_complete(
    rx: &mut mpsc::UnboundedReceiver<ConnectionEvent>,
    timeout: Duration,
) -> Vec<ConnectionEvent> {
    let mut out = Vec::new();
    let collect = async {
        while let Some(e) = rx.recv().await {
            let done = matches!(e, ConnectionEvent::StartupComplete { .. });
            out.push(e);
            if done {
                break;
            }
        }
    };
    tokio::time::timeout(timeout, collect)
        .await
        .expect("startup_complete within the timeout");
    out
}

/// Waits for the first event matching `f`.
pub async fn wait_event(
    rx: &mut mpsc::UnboundedReceiver<ConnectionEvent>,
    timeout: Duration,
    f: impl Fn(&ConnectionEvent) -> bool,
) -> ConnectionEvent {
    tokio::time::timeout(timeout, async {
        loop {
            let e = rx.recv().await.expect("event channel open");
            if f(&e) {
                return e;
            }
        }
    })
    .await
    .expect("expected event within the timeout")
}

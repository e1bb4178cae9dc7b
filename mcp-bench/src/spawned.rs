//! Servers the bench runs as processes of their own (HTTP servers, gateways, proxies):
//! started, waited for until their port accepts connections, and stopped with SIGTERM
//! (SIGKILL after a grace), so a gateway or proxy can stop the server it fronts.

#![expect(
    clippy::disallowed_methods,
    reason = "the bench starts servers as a user would, outside the workspace's launcher"
)]

use std::net::SocketAddr;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use crate::{Result, fail};

/// How long a server may take to listen.
const LISTEN_BOUND: Duration = Duration::from_secs(30);
/// How long a stopped server may take to exit before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A command for `program`, to hand to [`Spawned::listening`].
pub(crate) fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    Command::new(program)
}

/// A free loopback port (bound and released; a race with another process is possible
/// and makes the server fail to start, which the bench reports).
pub(crate) fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A running server process listening on `port`.
#[derive(Debug)]
pub(crate) struct Spawned {
    child: Child,
    what: String,
    /// The port it listens on (127.0.0.1).
    pub(crate) port: u16,
}

impl Spawned {
    /// Starts `cmd` (its stdio null, killed if dropped) and waits until 127.0.0.1:`port`
    /// accepts a connection.
    pub(crate) async fn listening(mut cmd: Command, what: &str, port: u16) -> Result<Self> {
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        let child = cmd
            .spawn()
            .map_err(|e| fail(format!("cannot start {what}: {e}")))?;
        let mut spawned = Self {
            child,
            what: what.to_owned(),
            port,
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = tokio::time::Instant::now() + LISTEN_BOUND;
        loop {
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                return Ok(spawned);
            }
            if let Ok(Some(status)) = spawned.child.try_wait() {
                return Err(fail(format!("{what} exited before listening ({status})")));
            }
            if tokio::time::Instant::now() >= deadline {
                spawned.stop().await;
                return Err(fail(format!(
                    "{what} did not listen on {addr} within {}s",
                    LISTEN_BOUND.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The MCP endpoint at `path` (e.g. `/mcp`).
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// SIGTERM, then SIGKILL after [`STOP_GRACE`]; reaps the process.
    pub(crate) async fn stop(mut self) {
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        if tokio::time::timeout(STOP_GRACE, self.child.wait())
            .await
            .is_err()
        {
            eprintln!("mcp-bench: {} ignored SIGTERM; killing it", self.what);
            let _ = self.child.kill().await;
        }
    }
}

/// Stops every server of `servers`.
pub(crate) async fn stop_all(servers: Vec<Spawned>) {
    futures::future::join_all(servers.into_iter().map(Spawned::stop)).await;
}

//! One ssh connection per ssh environment: a control master (`ssh -M -N`) launched through
//! mcp-pool's launcher, whose socket lives in a private 0700 folder under `/tmp` (short:
//! a unix socket path must stay under ~100 bytes); each server's `ssh` then runs as a
//! multiplexed session over it (`ControlMaster=no`, `ControlPath=…`), so N servers cost one
//! TCP connection and one handshake.
//!
//! The master is a child of the launcher like any server: its process group is killed on
//! drop and by the reaper when the host dies; the folder is removed on drop.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_catalog::SshConfig;
use mcp_pool::{LaunchSpec, StdioProcess};

/// How long the first server of an ssh environment waits for the connection to come up
/// (the master's socket to appear) before its startup fails.
pub const SSH_CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Interval between checks for the master's socket.
const POLL: Duration = Duration::from_millis(20);

static FOLDERS: AtomicU64 = AtomicU64::new(0);

/// A private folder `/tmp/mcp-ssh-PID-N`, removed on drop.
#[derive(Debug)]
pub(crate) struct ControlFolder {
    path: PathBuf,
}

impl ControlFolder {
    pub(crate) fn create() -> std::io::Result<Self> {
        let n = FOLDERS.fetch_add(1, Ordering::Relaxed);
        let path = PathBuf::from(format!("/tmp/mcp-ssh-{}-{n}", std::process::id()));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Self { path })
    }

    /// The control socket's path.
    pub(crate) fn socket(&self) -> PathBuf {
        self.path.join("cm")
    }
}

impl Drop for ControlFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A running control master.
pub(crate) struct Master {
    process: StdioProcess,
    socket: PathBuf,
}

impl std::fmt::Debug for Master {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Master")
            .field("pid", &self.process.pid())
            .field("socket", &self.socket)
            .finish()
    }
}

/// Why the master did not come up: its exit status (255 for ssh's own failures) and the
/// tail of its stderr.
#[derive(Debug, Clone)]
pub(crate) struct MasterFailure {
    pub(crate) status: Option<i32>,
    pub(crate) stderr: String,
}

impl Master {
    /// Starts `ssh -M -N` for `ssh` with its socket at `socket` and waits for it.
    pub(crate) async fn start(
        ssh: &SshConfig,
        label: &str,
        socket: PathBuf,
    ) -> Result<Self, MasterFailure> {
        let failed = |stderr: String| MasterFailure {
            status: None,
            stderr,
        };
        let mut argv = ssh.ssh_argv();
        let destination = argv.pop().unwrap_or_default();
        let spec = LaunchSpec::new(argv[0].clone())
            .with_args(argv[1..].iter().cloned())
            .with_args([
                "-M".to_owned(),
                "-N".to_owned(),
                "-o".to_owned(),
                "ControlPersist=no".to_owned(),
                "-o".to_owned(),
                format!("ControlPath={}", socket.display()),
                destination,
            ])
            .with_env_var(crate::SSH_AUTH_SOCK_VAR)
            .with_label(format!("{label} (ssh connection)"))
            .with_stdin_grace(Duration::from_millis(200))
            .with_term_grace(Duration::from_millis(500));
        let process = mcp_pool::launch(spec)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let deadline = tokio::time::Instant::now() + SSH_CONNECT_TIMEOUT;
        loop {
            if socket.exists() {
                return Ok(Self { process, socket });
            }
            if process.has_exited() || tokio::time::Instant::now() >= deadline {
                let exit = tokio::time::timeout(
                    Duration::from_secs(2),
                    process.exit_watcher().wait_exit(),
                )
                .await
                .ok();
                let tail = process.stderr_tail();
                let _ = tokio::time::timeout(Duration::from_secs(1), tail.wait_closed()).await;
                process.kill();
                let status = match exit {
                    Some(mcp_pool::ProcessExit::Exited(code)) => Some(code),
                    _ => None,
                };
                return Err(MasterFailure {
                    status,
                    stderr: tail.snapshot(),
                });
            }
            // Polling another process's socket: there is no event to wait for.
            tokio::time::sleep(POLL).await;
        }
    }

    /// Whether the connection is still up.
    pub(crate) fn is_up(&self) -> bool {
        !self.process.has_exited() && self.socket.exists()
    }

    /// Ends the master (stdin, TERM, KILL).
    pub(crate) async fn shutdown(self) {
        let _ = self.process.shutdown().await;
    }
}

/// The options that make a server's `ssh` a session over `socket`.
pub(crate) fn client_options(socket: &Path) -> [String; 4] {
    [
        "-o".to_owned(),
        "ControlMaster=no".to_owned(),
        "-o".to_owned(),
        format!("ControlPath={}", socket.display()),
    ]
}

//! A real OpenSSH server on 127.0.0.1 for tests of ssh environments.
//!
//! [`SshdFixture::start`] generates a host key and a user key with `ssh-keygen` in a
//! temporary folder, writes an `sshd_config` there (loopback only, a free port, key
//! authentication only, the folder's `authorized_keys`, `LogLevel VERBOSE`), runs
//! `sshd -D -f CONFIG -E LOG`, waits until the port accepts, and writes a `known_hosts`
//! with the host key for `[127.0.0.1]:PORT`. Dropping it kills the listener and every
//! session process it forked (sshd puts each session in a new session of its own, so a
//! process group kill would not reach them).
//!
//! The login user is the user running the tests: sshd started by an unprivileged user
//! can only authenticate that user, and root may log in with a key.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Error;

/// Where the fixture looks for the server binary, in order.
pub const SSHD_PATHS: [&str; 2] = ["/usr/sbin/sshd", "/usr/local/sbin/sshd"];

/// The variable that turns a missing sshd into a test failure instead of a skip (set by
/// `scripts/test.sh` once it has sshd).
pub const REQUIRE_SSHD_ENV: &str = "MCP_REQUIRE_SSHD";

/// How long [`SshdFixture::start`] waits for the port to accept.
pub const SSHD_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Sessions (ssh channels) one connection may carry: OpenSSH's default of 10 is below
/// the 32 servers a multiplexing test starts over one connection.
pub const SSHD_MAX_SESSIONS: u32 = 128;

/// A running `sshd` on `127.0.0.1`, with its keys, configuration and log in a temporary
/// folder; killed (with its sessions) on drop.
#[derive(Debug)]
pub struct SshdFixture {
    dir: tempfile::TempDir,
    child: Child,
    port: u16,
    user: String,
}

impl SshdFixture {
    /// The sshd binary, if installed.
    pub fn sshd_path() -> Option<PathBuf> {
        SSHD_PATHS
            .iter()
            .map(PathBuf::from)
            .find(|path| path.is_file())
    }

    /// Start sshd, or `None` with a `SKIPPED:` line on stderr when it is not installed.
    ///
    /// # Panics
    /// When sshd is missing and [`REQUIRE_SSHD_ENV`] is set, or when it is installed but
    /// cannot start (the message holds its log).
    #[expect(
        clippy::print_stderr,
        reason = "the skip line a test prints when sshd is not installed"
    )]
    pub fn start_or_skip(test: &str) -> Option<Self> {
        if Self::sshd_path().is_none() {
            assert!(
                std::env::var_os(REQUIRE_SSHD_ENV).is_none(),
                "{test}: sshd is not installed ({REQUIRE_SSHD_ENV} is set): install openssh-server"
            );
            eprintln!("SKIPPED: {test}: sshd is not installed (install openssh-server)");
            return None;
        }
        match Self::start() {
            Ok(fixture) => Some(fixture),
            Err(e) => panic!("{test}: cannot start sshd: {e}"),
        }
    }

    /// Generate keys and configuration, start sshd and wait until it accepts.
    ///
    /// # Errors
    /// [`Error::Io`] when sshd is missing, a key cannot be generated, a file cannot be
    /// written, or sshd exits or does not accept within [`SSHD_STARTUP_TIMEOUT`]; [`Error::Sshd`]
    /// with its log when it exits.
    pub fn start() -> Result<Self, Error> {
        let io = |doing: &'static str| move |source| Error::Io { doing, source };
        let sshd = Self::sshd_path().ok_or_else(|| {
            io("looking for sshd")(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "sshd is not installed",
            ))
        })?;
        // A short path: OpenSSH control sockets of tests may live beside it.
        let dir = tempfile::Builder::new()
            .prefix("mcp-sshd-")
            .tempdir_in("/tmp")
            .map_err(io("creating the sshd folder"))?;
        let path = dir.path();
        keygen(&path.join("host_key"))?;
        keygen(&path.join("user_key"))?;
        std::fs::copy(path.join("user_key.pub"), path.join("authorized_keys"))
            .map_err(io("writing authorized_keys"))?;
        let user = current_user()?;
        if is_root() {
            // sshd running as root refuses to start without its privilege separation
            // folder, which a fresh install (no service started) may lack.
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        // A free port: bound and released just before sshd binds it. Another process
        // may take it in between; then sshd exits and the next port is tried.
        let log = path.join("sshd.log");
        let mut last = None;
        for _ in 0..5 {
            let port = crate::free_loopback_port().map_err(io("finding a free port"))?;
            write_config(path, port)?;
            let mut child = Command::new(&sshd)
                .arg("-D")
                .arg("-f")
                .arg(path.join("sshd_config"))
                .arg("-E")
                .arg(&log)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(io("starting sshd"))?;
            match wait_accepting(&mut child, port, &log) {
                Ok(()) => {
                    let fixture = Self {
                        dir,
                        child,
                        port,
                        user,
                    };
                    fixture.write_known_hosts()?;
                    return Ok(fixture);
                }
                Err(e) => {
                    last = Some(e);
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
        Err(last.unwrap_or(Error::Sshd { log: String::new() }))
    }

    fn write_known_hosts(&self) -> Result<(), Error> {
        let key =
            std::fs::read_to_string(self.dir.path().join("host_key.pub")).map_err(|source| {
                Error::Io {
                    doing: "reading the sshd host key",
                    source,
                }
            })?;
        // `type base64 comment`: the comment is left out.
        let key: Vec<&str> = key.split_whitespace().take(2).collect();
        let line = format!("[127.0.0.1]:{} {}\n", self.port, key.join(" "));
        std::fs::write(self.known_hosts(), line).map_err(|source| Error::Io {
            doing: "writing known_hosts",
            source,
        })
    }

    /// Always `127.0.0.1`.
    pub fn host(&self) -> &'static str {
        "127.0.0.1"
    }

    /// The port sshd listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The user to log in as (the user running the tests).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The private key sshd accepts (`-i`).
    pub fn identity_file(&self) -> PathBuf {
        self.dir.path().join("user_key")
    }

    /// A `known_hosts` file holding the host key for `[127.0.0.1]:PORT`.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.path().join("known_hosts")
    }

    /// The fixture's folder (keys, configuration, log); removed on drop.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The pid of the listening sshd.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// sshd's log so far (`LogLevel VERBOSE`: one `Accepted publickey` line per
    /// authenticated connection).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// How many connections authenticated so far (`Accepted publickey` lines).
    pub fn accepted_connections(&self) -> usize {
        self.log()
            .lines()
            .filter(|line| line.contains("Accepted publickey"))
            .count()
    }

    /// The argv of an `ssh` client that logs in to this server with the fixture's key,
    /// strict host key checking and no user configuration, up to (not including) the
    /// remote command: `ssh -F /dev/null -p PORT -i KEY -o … USER@127.0.0.1`.
    pub fn ssh_argv(&self) -> Vec<String> {
        vec![
            "ssh".into(),
            "-F".into(),
            "/dev/null".into(),
            "-p".into(),
            self.port.to_string(),
            "-i".into(),
            self.identity_file().display().to_string(),
            "-o".into(),
            format!("UserKnownHostsFile={}", self.known_hosts().display()),
            "-o".into(),
            "StrictHostKeyChecking=yes".into(),
            "-o".into(),
            "BatchMode=yes".into(),
            format!("{}@127.0.0.1", self.user),
        ]
    }

    /// Live session processes: every descendant of the listener (one `sshd` per
    /// connection, its session children, and whatever the remote commands started that
    /// has not left the tree).
    pub fn session_pids(&self) -> Vec<u32> {
        let mut pids = crate::process::process_tree(self.child.id());
        pids.remove(0);
        pids.sort_unstable();
        pids
    }

    /// The sshd processes of live connections (descendants named `sshd`), without the
    /// commands they run.
    pub fn connection_pids(&self) -> Vec<u32> {
        self.session_pids()
            .into_iter()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|comm| comm.trim_end() == "sshd")
            })
            .collect()
    }

    /// SIGKILL every connection's sshd process, as a crashed server or a cut network
    /// would end them: the remote commands are left running (what happens to them is
    /// for the code under test), the listener stays up and accepts new connections.
    pub fn kill_sessions(&self) {
        for pid in self.connection_pids() {
            crate::kill_process(pid);
        }
    }

    fn kill_all(&mut self) {
        for pid in self.session_pids() {
            crate::kill_process(pid);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for SshdFixture {
    fn drop(&mut self) {
        self.kill_all();
    }
}

fn keygen(path: &Path) -> Result<(), Error> {
    let output = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "mcp-testkit", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| Error::Io {
            doing: "running ssh-keygen",
            source,
        })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(Error::Sshd {
            log: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }
}

fn write_config(dir: &Path, port: u16) -> Result<(), Error> {
    let d = dir.display();
    let config = format!(
        "ListenAddress 127.0.0.1:{port}\n\
         HostKey {d}/host_key\n\
         PidFile {d}/sshd.pid\n\
         AuthorizedKeysFile {d}/authorized_keys\n\
         StrictModes no\n\
         UsePAM no\n\
         PermitRootLogin prohibit-password\n\
         PubkeyAuthentication yes\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         AllowTcpForwarding no\n\
         X11Forwarding no\n\
         MaxSessions {SSHD_MAX_SESSIONS}\n\
         MaxStartups {SSHD_MAX_SESSIONS}\n\
         LogLevel VERBOSE\n"
    );
    let mut file =
        std::fs::File::create(dir.join("sshd_config")).map_err(|source| Error::WriteFile {
            path: dir.join("sshd_config"),
            source,
        })?;
    file.write_all(config.as_bytes())
        .map_err(|source| Error::WriteFile {
            path: dir.join("sshd_config"),
            source,
        })
}

fn wait_accepting(child: &mut Child, port: u16, log: &Path) -> Result<(), Error> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + SSHD_STARTUP_TIMEOUT;
    let failed = || Error::Sshd {
        log: std::fs::read_to_string(log).unwrap_or_default(),
    };
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            return Err(failed());
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(failed());
        }
        // Polling another process's readiness: there is no event to wait for.
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn current_user() -> Result<String, Error> {
    let output = Command::new("id")
        .arg("-un")
        .output()
        .map_err(|source| Error::Io {
            doing: "running id -un",
            source,
        })?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}

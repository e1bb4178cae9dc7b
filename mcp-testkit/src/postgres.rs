//! A real PostgreSQL server on 127.0.0.1 for tests of the gateway's shared stores.
//!
//! [`PostgresFixture::start`] runs `initdb` into a temporary folder (trust authentication,
//! superuser `postgres`, no fsync), then `postgres` itself (not `pg_ctl`, so the fixture
//! owns the process) listening on 127.0.0.1 on a free port, with its socket in the same
//! folder, and waits until it accepts connections. Dropping it (or
//! [`PostgresFixture::stop`]) asks for a fast shutdown, waits, and kills what is left.
//!
//! PostgreSQL refuses to run as root. When the tests run as root (CI does), the fixture
//! hands the folder to the unprivileged user [`UNPRIVILEGED_USER`] and runs `initdb` and
//! `postgres` as that user (the child switches its uid and gid before exec, dropping
//! supplementary groups). Otherwise they run as the user running the tests.
//!
//! The binaries are looked up in Debian's and Ubuntu's `/usr/lib/postgresql/VERSION/bin`
//! (newest first), then on `PATH`. `scripts/postgres.sh` installs them.

use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Error;

/// The variable that turns a missing PostgreSQL into a test failure instead of a skip
/// (set by `scripts/test.sh` once PostgreSQL is installed).
pub const REQUIRE_POSTGRES_ENV: &str = "MCP_REQUIRE_POSTGRES";

/// The user `initdb` and `postgres` run as when the tests run as root.
pub const UNPRIVILEGED_USER: &str = "nobody";

/// How long [`PostgresFixture::start`] waits for the server to accept connections, and
/// [`PostgresFixture::stop`] for it to exit before killing it.
pub const POSTGRES_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// The superuser `initdb` creates (trust authentication: no password).
pub const POSTGRES_USER: &str = "postgres";

/// A running PostgreSQL on `127.0.0.1`, its data and log in a temporary folder; stopped
/// (no process left) on drop.
#[derive(Debug)]
pub struct PostgresFixture {
    dir: tempfile::TempDir,
    child: Option<Child>,
    port: u16,
}

/// The directory holding `initdb` and `postgres`, if PostgreSQL is installed.
pub fn postgres_bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    versions
        .into_iter()
        .map(|(_, dir)| dir)
        .chain(on_path)
        .find(|dir| dir.join("initdb").is_file() && dir.join("postgres").is_file())
}

impl PostgresFixture {
    /// Start PostgreSQL, or `None` with a `SKIPPED:` line on stderr when it is not
    /// installed.
    ///
    /// # Panics
    /// When PostgreSQL is missing and [`REQUIRE_POSTGRES_ENV`] is set, or when it is
    /// installed but cannot start (the message holds its log).
    #[expect(
        clippy::print_stderr,
        reason = "the skip line a test prints when PostgreSQL is not installed"
    )]
    pub fn start_or_skip(test: &str) -> Option<Self> {
        if postgres_bin_dir().is_none() {
            assert!(
                std::env::var_os(REQUIRE_POSTGRES_ENV).is_none(),
                "{test}: PostgreSQL is not installed ({REQUIRE_POSTGRES_ENV} is set): \
                 run scripts/postgres.sh"
            );
            eprintln!(
                "SKIPPED: {test}: PostgreSQL is not installed (run scripts/postgres.sh to \
                 install it)"
            );
            return None;
        }
        match Self::start() {
            Ok(fixture) => Some(fixture),
            Err(e) => panic!("{test}: cannot start PostgreSQL: {e}"),
        }
    }

    /// Create a cluster in a temporary folder, start `postgres` on a free loopback port
    /// and wait until it accepts.
    ///
    /// # Errors
    /// [`Error::Io`] when PostgreSQL is missing, the folder cannot be prepared, `initdb`
    /// fails or the server exits or does not accept within [`POSTGRES_STARTUP_TIMEOUT`]
    /// (the error's text holds the tool's output or the server's log).
    pub fn start() -> Result<Self, Error> {
        let bin = postgres_bin_dir().ok_or_else(|| {
            failure(
                "looking for PostgreSQL",
                "not installed (run scripts/postgres.sh)".to_owned(),
            )
        })?;
        let dir = tempfile::Builder::new()
            .prefix("mcp-postgres-")
            .tempdir_in("/tmp")
            .map_err(io("creating the PostgreSQL folder"))?;
        let owner = if is_root() {
            let (uid, gid) = user_ids(UNPRIVILEGED_USER)?;
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(io("handing the PostgreSQL folder to the unprivileged user"))?;
            Some((uid, gid))
        } else {
            None
        };
        let data = dir.path().join("data");
        let output = as_owner(Command::new(bin.join("initdb")), owner, dir.path())
            .args([
                "--no-sync",
                "--auth=trust",
                "--encoding=UTF8",
                "--no-locale",
            ])
            .arg(format!("--username={POSTGRES_USER}"))
            .arg("-D")
            .arg(&data)
            .stdin(Stdio::null())
            .output()
            .map_err(io("running initdb"))?;
        if !output.status.success() {
            return Err(failure(
                "running initdb",
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                ),
            ));
        }
        let log = dir.path().join(LOG_FILE);
        // A free port: bound and released just before postgres binds it. Another process
        // may take it in between; then postgres exits and the next port is tried.
        let mut last = None;
        for _ in 0..5 {
            let port = crate::free_loopback_port().map_err(io("finding a free port"))?;
            let log_file = std::fs::File::create(&log).map_err(io("creating the log"))?;
            if let Some((uid, gid)) = owner {
                std::os::unix::fs::chown(&log, Some(uid), Some(gid))
                    .map_err(io("handing the log to the unprivileged user"))?;
            }
            let stderr = log_file.try_clone().map_err(io("opening the log"))?;
            let mut child = as_owner(Command::new(bin.join("postgres")), owner, dir.path())
                .arg("-D")
                .arg(&data)
                .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
                .arg(dir.path())
                .args(["-c", "fsync=off", "-c", "full_page_writes=off"])
                .args(["-c", "synchronous_commit=off", "-c", "max_connections=50"])
                .stdin(Stdio::null())
                .stdout(log_file)
                .stderr(stderr)
                .spawn()
                .map_err(io("starting postgres"))?;
            match wait_accepting(&mut child, port, dir.path()) {
                Ok(()) => {
                    return Ok(Self {
                        dir,
                        child: Some(child),
                        port,
                    });
                }
                Err(e) => {
                    last = Some(e);
                    stop_child(child);
                }
            }
        }
        Err(last.unwrap_or_else(|| failure("starting postgres", String::new())))
    }

    /// Always `127.0.0.1`.
    pub fn host(&self) -> &'static str {
        "127.0.0.1"
    }

    /// The port PostgreSQL listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A connection URL for database `postgres` as [`POSTGRES_USER`] (no password, no
    /// TLS): `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!(
            "postgres://{POSTGRES_USER}@127.0.0.1:{}/postgres?sslmode=disable",
            self.port
        )
    }

    /// The fixture's folder (data, socket, log); removed on drop.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The postmaster's pid, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The postmaster and every live process it started (its background workers and one
    /// backend per open connection). Empty once stopped.
    pub fn pids(&self) -> Vec<u32> {
        self.pid()
            .map(crate::process::process_tree)
            .unwrap_or_default()
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        read_log(self.dir.path())
    }

    /// Stop the server: a fast shutdown (SIGINT: open connections are closed), then
    /// SIGKILL for whatever is left after [`POSTGRES_STARTUP_TIMEOUT`]. Idempotent; the
    /// folder stays until drop.
    pub fn stop(&mut self) {
        let Some(child) = self.child.take() else {
            return;
        };
        stop_child(child);
    }
}

impl Drop for PostgresFixture {
    fn drop(&mut self) {
        self.stop();
    }
}

const LOG_FILE: &str = "postgres.log";

fn read_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(LOG_FILE)).unwrap_or_default()
}

fn wait_accepting(child: &mut Child, port: u16, dir: &Path) -> Result<(), Error> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + POSTGRES_STARTUP_TIMEOUT;
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            return Err(failure("starting postgres", read_log(dir)));
        }
        // The port accepts before the server takes queries (it answers "the database
        // system is starting up"); the pid file's last line says "ready" once it does.
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
            && std::fs::read_to_string(dir.join("data/postmaster.pid"))
                .is_ok_and(|pid_file| pid_file.lines().any(|line| line.trim() == "ready"))
        {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(failure("waiting for postgres to accept", read_log(dir)));
        }
        // Polling another process's readiness: there is no event to wait for.
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A fast shutdown (SIGINT: open connections are closed), then SIGKILL for whatever is
/// left after [`POSTGRES_STARTUP_TIMEOUT`], the postmaster's children included.
fn stop_child(mut child: Child) {
    let pids = crate::process::process_tree(child.id());
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let deadline = Instant::now() + POSTGRES_STARTUP_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => break,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            // Polling another process's exit without blocking past the deadline.
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    // The postmaster waits for its children in a fast shutdown; anything still alive
    // (after a SIGKILL of the postmaster) goes now.
    for pid in pids {
        if crate::process_alive(pid) {
            crate::kill_process(pid);
        }
    }
}

/// A command that runs as `owner` (uid, gid) when given, in `dir`, with a plain
/// environment (no locale surprises).
fn as_owner(mut command: Command, owner: Option<(u32, u32)>, dir: &Path) -> Command {
    if let Some((uid, gid)) = owner {
        // std drops the supplementary groups (setgroups) when root changes uid.
        command.uid(uid).gid(gid);
    }
    command
        .current_dir(dir)
        .env("LC_ALL", "C")
        .env("HOME", dir)
        .env_remove("PGDATA");
    command
}

fn user_ids(user: &str) -> Result<(u32, u32), Error> {
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(io("reading /etc/passwd"))?;
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            if fields.first() != Some(&user) {
                return None;
            }
            Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?))
        })
        .ok_or_else(|| {
            failure(
                "looking up the unprivileged user",
                format!("user `{user}` is not in /etc/passwd; PostgreSQL cannot run as root"),
            )
        })
}

fn io(doing: &'static str) -> impl Fn(std::io::Error) -> Error {
    move |source| Error::Io { doing, source }
}

fn failure(doing: &'static str, detail: String) -> Error {
    Error::Io {
        doing,
        source: std::io::Error::other(detail),
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}

//! Running the real `mcpctl` binary in a temporary directory, with deterministic output.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(
    dead_code,
    reason = "each test file uses a different part of the harness"
)]
#![allow(
    clippy::expect_used,
    reason = "test harness: a failed setup step fails the test"
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The binary under test.
pub(crate) const MCPCTL: &str = env!("CARGO_BIN_EXE_mcpctl");

/// One test at a time: the process-leak check looks at every `mcpctl fake-server` process
/// on the machine, so no other run of this binary may be in flight.
static SERIAL: Mutex<()> = Mutex::new(());

/// A temporary working directory for one test. Runs get `MCPCTL_HOME=<dir>/home` and
/// `XDG_CONFIG_HOME=<dir>/config`, so no test reads or writes the user's credentials or
/// user configuration file.
pub(crate) struct Workdir {
    dir: tempfile::TempDir,
    env: Vec<(String, Option<String>)>,
    _serial: MutexGuard<'static, ()>,
}

/// What a run printed and how it exited.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// The run as one snapshot text: exit code, stdout, stderr.
    pub(crate) fn snapshot(&self) -> String {
        format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    /// Like [`Run::snapshot`], with stderr lines sorted (progress lines of concurrent
    /// servers arrive in any order).
    pub(crate) fn snapshot_sorted_stderr(&self) -> String {
        let mut lines: Vec<&str> = self.stderr.lines().collect();
        lines.sort_unstable();
        let mut stderr = lines.join("\n");
        if !stderr.is_empty() {
            stderr.push('\n');
        }
        format!(
            "exit: {}\n--- stdout\n{}--- stderr (sorted)\n{}",
            self.code, self.stdout, stderr
        )
    }

    /// Stdout parsed as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

impl Workdir {
    pub(crate) fn new() -> Self {
        let serial = SERIAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let dir = tempfile::tempdir().expect("temp dir");
        let home = dir.path().join("home").display().to_string();
        let config = dir.path().join("config").display().to_string();
        Self {
            dir,
            env: vec![
                ("MCPCTL_HOME".to_owned(), Some(home)),
                ("XDG_CONFIG_HOME".to_owned(), Some(config)),
            ],
            _serial: serial,
        }
    }

    /// Sets (`Some`) or removes (`None`) an environment variable for every later run.
    pub(crate) fn set_env(&mut self, name: &str, value: Option<&str>) {
        self.env.retain(|(n, _)| n != name);
        self.env.push((name.to_owned(), value.map(str::to_owned)));
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(MCPCTL);
        cmd.args(args);
        self.prepare(&mut cmd);
        cmd
    }

    /// The working directory and environment of every run.
    fn prepare(&self, cmd: &mut Command) {
        cmd.current_dir(self.dir.path())
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG");
        for (name, value) in &self.env {
            match value {
                Some(v) => cmd.env(name, v),
                None => cmd.env_remove(name),
            };
        }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file into the working directory; `{MCPCTL}` is replaced by the binary.
    pub(crate) fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text.replace("{MCPCTL}", MCPCTL)).expect("write file");
        path
    }

    /// Writes a project configuration (like [`Self::write`]) and trusts it with
    /// `mcpctl trust`, as a user would after reviewing it.
    pub(crate) fn write_trusted(&self, name: &str, text: &str) -> PathBuf {
        let path = self.write(name, text);
        let run = self.run(&["trust", name]);
        assert_eq!(run.code, 0, "mcpctl trust {name}: {}", run.stderr);
        path
    }

    /// Runs mcpctl with `args` in the working directory, stdin empty (not a terminal).
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        self.run_with_stdin(args, None)
    }

    /// Runs mcpctl with `args` and `stdin` as its input, then checks that no server process
    /// it started is left.
    pub(crate) fn run_with_stdin(&self, args: &[&str], stdin: Option<&str>) -> Run {
        let mut child = self
            .command(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcpctl");
        if let Some(text) = stdin {
            let mut pipe = child.stdin.take().expect("stdin pipe");
            pipe.write_all(text.as_bytes()).expect("write stdin");
        }
        let output = child.wait_with_output().expect("wait for mcpctl");
        self.assert_no_server_left();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: self.clean(&String::from_utf8_lossy(&output.stdout)),
            stderr: self.clean(&String::from_utf8_lossy(&output.stderr)),
        }
    }

    /// Runs mcpctl with `args` on a pseudo-terminal (util-linux `script`), `keys` typed into
    /// it, then checks that no server process it started is left. stdout holds everything
    /// the terminal showed (stdout and stderr of mcpctl, and echoed keys).
    #[allow(dead_code, reason = "not every test file uses it")]
    pub(crate) fn run_on_terminal(&self, args: &[&str], keys: &str) -> Run {
        let mut child = self
            .terminal_command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn script (util-linux)");
        let mut pipe = child.stdin.take().expect("stdin pipe");
        pipe.write_all(keys.as_bytes()).expect("write stdin");
        drop(pipe);
        let output = child.wait_with_output().expect("wait for script");
        self.assert_no_server_left();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: self.clean(&String::from_utf8_lossy(&output.stdout)),
            stderr: self.clean(&String::from_utf8_lossy(&output.stderr)),
        }
    }

    /// The command that runs mcpctl with `args` on a pseudo-terminal (util-linux `script`):
    /// what is written to its stdin is typed on the terminal, its stdout is what the
    /// terminal shows.
    #[allow(dead_code, reason = "not every test file uses it")]
    pub(crate) fn terminal_command(&self, args: &[&str]) -> Command {
        let quote = |a: &str| format!("'{}'", a.replace('\'', r"'\''"));
        let line = std::iter::once(MCPCTL)
            .chain(args.iter().copied())
            .map(quote)
            .collect::<Vec<_>>()
            .join(" ");
        let mut cmd = Command::new("script");
        cmd.args(["--quiet", "--return", "--command", &line, "/dev/null"]);
        self.prepare(&mut cmd);
        cmd
    }

    /// Starts mcpctl with `args` without waiting (stdin empty, output captured).
    pub(crate) fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcpctl")
    }

    /// Starts mcpctl with `args` without waiting, its stdin and stdout piped (to speak to
    /// `mcpctl serve` over stdio) and its stderr captured.
    #[allow(dead_code, reason = "used by some test files only")]
    pub(crate) fn spawn_piped(&self, args: &[&str]) -> std::process::Child {
        self.command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcpctl")
    }

    /// Replaces machine-specific paths.
    pub(crate) fn clean(&self, text: &str) -> String {
        let dir = self.dir.path().display().to_string();
        text.replace(MCPCTL, "[MCPCTL]").replace(&dir, "[TMP]")
    }
}

/// The pids of `mcpctl fake-server` processes of this binary whose working directory is
/// `dir` or below: the servers one test's runs started (mcpctl runs in the test's own
/// directory and its servers inherit it), not those of another test, another run of the
/// suite or a person's experiment.
fn fake_servers_in(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| mcp_testkit::process_alive(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmd| {
                let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
                args.first() == Some(&MCPCTL.as_bytes())
                    && args.get(1) == Some(&b"fake-server".as_slice())
            })
        })
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
        })
        .collect()
}

/// Fails if a `mcpctl fake-server` process working in `dir` (or below) is still running
/// after a short grace (a process that was killed may take a moment to be reaped).
pub(crate) fn assert_no_server_left_in(dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = fake_servers_in(dir);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "mcpctl left server processes running: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Workdir {
    /// Fails if a server process that this test's runs started outlived mcpctl (polls
    /// briefly: a process that was killed may take a moment to be reaped by its new
    /// parent).
    pub(crate) fn assert_no_server_left(&self) {
        assert_no_server_left_in(self.path());
    }
}

/// A TOML basic string holding `s` (JSON's string escapes are TOML's too).
pub(crate) fn toml_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string encodes as JSON")
}

/// A runtime of two worker threads for what the test serves or drives beside the mcpctl
/// it runs (fake servers, MCP clients).
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a test runtime starts")
}

/// A TOML string holding `scenario` (a JSON scenario for `mcpctl fake-server`).
pub(crate) fn scenario_arg(scenario: &serde_json::Value) -> String {
    format!("'{scenario}'")
}

/// The MCP clients nobody here wrote, as `scripts/gateway-clients.sh` installs them
/// (target/gateway-clients), with each of `scripts` (file name, text) written into that
/// folder; `None` (the test is skipped, saying so on stderr) when they are not installed,
/// a failure under `MCP_REQUIRE_GATEWAY_CLIENTS=1`.
#[allow(clippy::print_stderr, reason = "the skip notice goes to stderr")]
pub(crate) fn gateway_clients(scripts: &[(&str, &str)]) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/gateway-clients");
    let node = dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    if node.is_file() && dir.join("venv/bin/python").is_file() {
        for (name, text) in scripts {
            std::fs::write(dir.join(name), text).expect("write a client script");
        }
        return Some(dir);
    }
    assert!(
        std::env::var_os("MCP_REQUIRE_GATEWAY_CLIENTS").is_none(),
        "the gateway test clients are not installed in {}: run scripts/gateway-clients.sh",
        dir.display()
    );
    eprintln!(
        "SKIPPED: the gateway test clients are not installed in {}; run scripts/gateway-clients.sh",
        dir.display()
    );
    None
}

/// `mcpctl --config <config> serve <flags>` over stdio in `wd`, with an rmcp client of the
/// 2025-11-25 era (no capabilities) initialized on it; its stderr is dropped.
pub(crate) async fn serve_stdio(
    wd: &Workdir,
    config: &Path,
    flags: &[&str],
) -> rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig> {
    serve_stdio_with(
        wd,
        config,
        flags,
        rmcp::model::ClientCapabilities::default(),
    )
    .await
}

/// [`serve_stdio`] with a client announcing `capabilities`.
pub(crate) async fn serve_stdio_with(
    wd: &Workdir,
    config: &Path,
    flags: &[&str],
    capabilities: rmcp::model::ClientCapabilities,
) -> rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig> {
    use rmcp::ServiceExt;
    use rmcp::model::{ClientConfig, Implementation, ProtocolVersion};
    let mut cmd = tokio::process::Command::new(MCPCTL);
    cmd.arg("--config")
        .arg(config)
        .arg("serve")
        .args(flags)
        .env("MCPCTL_HOME", wd.path().join("home"))
        .current_dir(wd.path());
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("mcpctl serve starts");
    ClientConfig::new(capabilities, Implementation::new("t", "0"))
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
        .serve(transport)
        .await
        .expect("the gateway initializes")
}

/// A running `mcpctl --config <config> serve --http 127.0.0.1:0 <extra>` in `wd` with
/// `MCPCTL_SERVE_TOKEN=<token>`, killed on drop (a test that fails leaves none behind).
pub(crate) struct Served {
    child: std::process::Child,
    /// The address it printed.
    pub(crate) url: String,
}

impl Served {
    /// Starts it and reads its address; the token must not be printed.
    pub(crate) fn start(wd: &Workdir, config: &Path, token: &str, extra: &[&str]) -> Self {
        Self::start_with_env(wd, config, token, extra, &[])
    }

    /// [`Served::start`] with more environment variables.
    pub(crate) fn start_with_env(
        wd: &Workdir,
        config: &Path,
        token: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        Self::start_at(wd, config, token, "127.0.0.1:0", extra, env)
    }

    /// [`Served::start_with_env`] listening on `addr` (for a config whose `[gateway]
    /// public_url` names the port).
    pub(crate) fn start_at(
        wd: &Workdir,
        config: &Path,
        token: &str,
        addr: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        use std::io::{BufRead, BufReader, Read};
        let mut child = Command::new(MCPCTL)
            .arg("--config")
            .arg(config)
            .args(["serve", "--http", addr])
            .args(extra)
            .envs(env.iter().copied())
            .current_dir(wd.path())
            .env("MCPCTL_HOME", wd.path().join("home"))
            .env("MCPCTL_SERVE_TOKEN", token)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcpctl serve");
        let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
        let mut url = None;
        let mut seen = String::new();
        let mut line = String::new();
        while url.is_none() && stderr.read_line(&mut line).unwrap_or(0) > 0 {
            seen.push_str(&line);
            url = line
                .trim()
                .strip_prefix("mcpctl serve: listening on ")
                .map(str::to_owned);
            line.clear();
        }
        let url = url.unwrap_or_else(|| panic!("mcpctl serve printed no address:\n{seen}"));
        assert!(
            !seen.contains(token),
            "a token from the environment is not printed"
        );
        // Keep draining stderr so the gateway never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = stderr.read_to_string(&mut rest);
        });
        Self { child, url }
    }

    /// SIGTERM, then the exit (bounded).
    pub(crate) fn stop(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for mcpctl serve") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "mcpctl serve did not stop after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The JSON report a test client prints as its last line of stdout; fails the test, with
/// both outputs, when `which` client failed or printed no JSON there.
pub(crate) fn client_report(which: &str, output: &std::process::Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{which} failed ({}):\nstdout: {stdout}\nstderr: {stderr}",
        output.status
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("{which} printed no JSON ({e}):\n{stdout}\n{stderr}"))
}

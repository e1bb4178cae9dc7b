//! Servers in an ssh environment, against a real OpenSSH server on 127.0.0.1 (mcp-testkit's
//! `SshdFixture`; skipped with a line on stderr when sshd is not installed, a failure
//! under `MCP_REQUIRE_SSHD=1`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "tests"
)]

use std::time::Duration;

use mcp_catalog::{CatalogBuilder, Config, ResolvedCatalog};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_testkit::{Behavior, Scenario, SshdFixture, TestHome, ToolSpec};
use serde_json::Value;

/// A TOML basic string (JSON's string escapes are TOML's too).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// `[environments.devbox]` reaching `sshd`, plus `extra` lines inside that table.
fn devbox(sshd: &SshdFixture, extra: &str) -> String {
    format!(
        "[environments.devbox]\nssh = {{ host = \"127.0.0.1\", port = {}, user = {}, identity_file = {}, known_hosts = {}, options = [\"-F\", \"/dev/null\"] }}\n{extra}\n",
        sshd.port(),
        toml_str(sshd.user()),
        toml_str(&sshd.identity_file().display().to_string()),
        toml_str(&sshd.known_hosts().display().to_string()),
    )
}

/// One stdio server `name` in devbox running the fake server with `args`.
fn server(name: &str, args: &[String], extra: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| toml_str(a)).collect();
    format!(
        "[mcp_servers.{name}]\ncommand = {}\nargs = [{}]\nenvironment = \"devbox\"\n{extra}\n",
        toml_str(&mcp_testkit::fake_server_bin().display().to_string()),
        args.join(", "),
    )
}

fn catalog(text: &str) -> ResolvedCatalog {
    let loaded = Config::from_toml_str(text, "mcp.toml").unwrap();
    CatalogBuilder::new().with_user_config(loaded).build()
}

fn options() -> ConnectionSetOptions {
    ConnectionSetOptions::new().with_client(|c| c.with_process_grace(Duration::from_millis(300)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_variables_and_folder_arrive_intact_on_the_remote_side() {
    let Some(sshd) = SshdFixture::start_or_skip("arguments_variables_and_folder_arrive_intact")
    else {
        return;
    };
    let home = TestHome::new().unwrap();
    let folder = home.join("a folder; it's $HOME");
    std::fs::create_dir_all(&folder).unwrap();
    let tricky = "it's \"quoted\" $HOME $(id) `id`; a|b & c\nline two\tü ✓ 日本";
    let scenario = Scenario::new("remote")
        .with_tool(ToolSpec::new("whereami", Behavior::ReportEnv))
        .with_tool(ToolSpec::echo(tricky));
    let args = vec![
        "--scenario-json".to_owned(),
        serde_json::to_string(&scenario).unwrap(),
        "--pid-file".to_owned(),
        home.join("server.pid").display().to_string(),
    ];
    let text = format!(
        "{}{}",
        devbox(&sshd, ""),
        server(
            "notes",
            &args,
            &format!(
                "cwd = {}\nenv = {{ MARK = {}, SECRET = {} }}",
                toml_str(&folder.display().to_string()),
                toml_str(tricky),
                toml_str(SECRET)
            )
        )
    );
    let set = ConnectionSet::start(&catalog(&text), options());
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 1, "{summary:?}\nsshd log:\n{}", sshd.log());

    let tools = set.tools().await;
    let mut names: Vec<&str> = tools.iter().map(|t| t.raw_name()).collect();
    names.sort_unstable();
    assert_eq!(names, [tricky, "whereami"]);
    let whereami = tools.iter().find(|t| t.raw_name() == "whereami").unwrap();
    let report = set
        .call_qualified(&whereami.qualified_name, None, CallOptions::new())
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(report["env"]["MARK"], Value::from(tricky));
    assert_eq!(report["env"]["SECRET"], Value::from(SECRET));
    // The values went over stdin: the local ssh's command line, which every local user
    // sees with `ps`, holds none of them.
    let local_ssh = ssh_command_lines();
    assert!(!local_ssh.is_empty(), "no local ssh session found");
    for line in &local_ssh {
        assert!(
            !line.contains(SECRET),
            "a value is on the local ssh command line: {line}"
        );
    }
    assert_eq!(report["cwd"], Value::from(folder.display().to_string()));
    // It ran through sshd: the session's variables are there, the host's are not.
    assert!(report["env"].get("SSH_CONNECTION").is_some(), "{report}");
    assert_eq!(sshd.accepted_connections(), 1);

    let pid = mcp_testkit::read_pid_file(home.join("server.pid")).unwrap();
    set.shutdown().await;
    assert!(
        mcp_testkit::wait_gone(pid, Duration::from_secs(2)).await,
        "the remote server {pid} outlived the shutdown"
    );
}

/// A variable's value that must be on no local command line.
const SECRET: &str = "s3cret-value-on-no-command-line";

/// The command lines (NULs as spaces) of this user's local `ssh` sessions that run a remote
/// line (the servers' ssh processes, not the connection's master).
fn ssh_command_lines() -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| cmdline.starts_with(b"ssh\0"))
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|line| line.contains("mcp-remote"))
        .collect()
}

/// Set in the environment of the re-executed host (`host_process`): its configuration.
const HOST_CONFIG: &str = "MCP_SSH_TEST_HOST_CONFIG";

/// The bound on a remote server outliving its host or its connection.
const ORPHAN_BOUND: Duration = Duration::from_secs(2);

/// The stubborn remote server: ignores SIGTERM and stdin's end, and has a grandchild in
/// its process group; both pids are written under `home`.
fn stubborn(home: &TestHome) -> Vec<String> {
    vec![
        "--tool".to_owned(),
        "echo".to_owned(),
        "--ignore-sigterm".to_owned(),
        "--pid-file".to_owned(),
        home.join("server.pid").display().to_string(),
        "--spawn-grandchild".to_owned(),
        home.join("grandchild.pid").display().to_string(),
    ]
}

/// Both remote pids, once written.
async fn remote_pids(home: &TestHome) -> (u32, u32) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let server = mcp_testkit::read_pid_file(home.join("server.pid"));
        let grandchild = mcp_testkit::read_pid_file(home.join("grandchild.pid"));
        if let (Some(s), Some(g)) = (server, grandchild) {
            return (s, g);
        }
        assert!(std::time::Instant::now() < deadline, "no remote pids");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A configuration with the stubborn server in the fixture's ssh environment.
fn stubborn_config(sshd: &SshdFixture, home: &TestHome) -> String {
    format!(
        "{}{}",
        devbox(sshd, ""),
        server("stubborn", &stubborn(home), "")
    )
}

/// A set running the stubborn server, ready, with both remote pids.
async fn start_stubborn(sshd: &SshdFixture, home: &TestHome) -> (ConnectionSet, (u32, u32)) {
    let set = ConnectionSet::start(&catalog(&stubborn_config(sshd, home)), options());
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 1, "{summary:?}");
    let pids = remote_pids(home).await;
    (set, pids)
}

async fn assert_remote_gone(what: &str, (server, grandchild): (u32, u32)) {
    let mut left = Vec::new();
    for pid in [server, grandchild] {
        if !mcp_testkit::wait_gone(pid, ORPHAN_BOUND).await {
            left.push(pid);
        }
    }
    // Clean up before failing, so a failed run leaves nothing either.
    left.iter().for_each(|pid| mcp_testkit::kill_process(*pid));
    assert!(
        left.is_empty(),
        "{what}: remote processes {left:?} still running after {ORPHAN_BOUND:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_shutdown_ends_a_stubborn_remote_server_and_its_group() {
    let Some(sshd) = SshdFixture::start_or_skip("a_clean_shutdown_ends_a_stubborn_remote_server")
    else {
        return;
    };
    let home = TestHome::new().unwrap();
    let (set, pids) = start_stubborn(&sshd, &home).await;
    assert!(mcp_testkit::process_alive(pids.0) && mcp_testkit::process_alive(pids.1));
    set.shutdown().await;
    assert_remote_gone("after shutdown", pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_connection_ends_the_remote_server() {
    let Some(sshd) = SshdFixture::start_or_skip("a_cut_connection_ends_the_remote_server") else {
        return;
    };
    let home = TestHome::new().unwrap();
    let (set, pids) = start_stubborn(&sshd, &home).await;
    std::fs::remove_file(home.join("server.pid")).unwrap();
    std::fs::remove_file(home.join("grandchild.pid")).unwrap();
    // sshd's connection process dies (a crash, a reboot, a cut network would end it so);
    // the remote commands are left to the supervisor.
    assert!(!sshd.connection_pids().is_empty());
    sshd.kill_sessions();
    assert_remote_gone("after the connection was cut", pids).await;
    set.shutdown().await;
    // A restart may have started a new server before the shutdown.
    if let (Some(s), Some(g)) = (
        mcp_testkit::read_pid_file(home.join("server.pid")),
        mcp_testkit::read_pid_file(home.join("grandchild.pid")),
    ) {
        assert_remote_gone("the restarted server after shutdown", (s, g)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_cut_connection_the_server_restarts_over_a_new_connection() {
    let Some(sshd) = SshdFixture::start_or_skip("after_a_cut_connection_the_server_restarts")
    else {
        return;
    };
    let home = TestHome::new().unwrap();
    let pid_file = home.join("server.pid");
    let args = vec![
        "--tool".to_owned(),
        "echo".to_owned(),
        "--pid-file".to_owned(),
        pid_file.display().to_string(),
    ];
    let text = format!("{}{}", devbox(&sshd, ""), server("notes", &args, ""));
    let options =
        options().with_restart_backoff(Duration::from_millis(200), Duration::from_secs(1));
    let set = ConnectionSet::start(&catalog(&text), options);
    assert_eq!(set.wait_startup().await.ready(), 1);
    let first = mcp_testkit::read_pid_file(&pid_file).unwrap();
    std::fs::remove_file(&pid_file).unwrap();
    sshd.kill_sessions();
    assert!(
        mcp_testkit::wait_gone(first, ORPHAN_BOUND).await,
        "the remote server outlived its connection"
    );
    // The server failed with its connection; the set starts it again (a new ssh
    // connection: the shared one died too) and calls work as before.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let echoed = loop {
        let call = set
            .call_qualified(
                "mcp__notes__echo",
                Some(serde_json::json!({"n": 1})),
                CallOptions::new(),
            )
            .await;
        match call {
            Ok(result) if mcp_testkit::read_pid_file(&pid_file).is_some() => break result,
            _ => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "no restart within 30 s: {:?}\nsshd log:\n{}",
                    set.status(),
                    sshd.log()
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    assert_eq!(
        echoed.structured_content,
        Some(serde_json::json!({"n": 1})),
        "{echoed:?}"
    );
    let second = mcp_testkit::read_pid_file(&pid_file).unwrap();
    assert_ne!(first, second, "the call went to a restarted server");
    assert_eq!(
        sshd.accepted_connections(),
        2,
        "one connection before the cut, one after"
    );
    set.shutdown().await;
    assert!(
        mcp_testkit::wait_gone(second, ORPHAN_BOUND).await,
        "the restarted remote server outlived the shutdown"
    );
}

/// The body of the host process `a_killed_host_leaves_no_remote_server` starts. Run
/// directly (no [`HOST_CONFIG`]) it returns at once.
#[test]
fn host_process() {
    let Some(path) = std::env::var_os(HOST_CONFIG) else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let set = ConnectionSet::start(&catalog(&text), options());
        let summary = set.wait_startup().await;
        assert_eq!(summary.ready(), 1, "{summary:?}");
        // Wait to be killed.
        std::future::pending::<()>().await;
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_host_leaves_no_remote_server() {
    let Some(sshd) = SshdFixture::start_or_skip("a_killed_host_leaves_no_remote_server") else {
        return;
    };
    let home = TestHome::new().unwrap();
    let text = stubborn_config(&sshd, &home);
    let config = home.join("host.toml");
    std::fs::write(&config, text).unwrap();
    let mut host = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["host_process", "--exact", "--nocapture"])
        .env(HOST_CONFIG, &config)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pids = remote_pids(&home).await;
    host.kill().unwrap();
    host.wait().unwrap();
    assert_remote_gone("after kill -9 of the host", pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_servers_share_one_ssh_connection() {
    let Some(sshd) = SshdFixture::start_or_skip("thirty_two_servers_share_one_ssh_connection")
    else {
        return;
    };
    let mut text = devbox(&sshd, "");
    for i in 0..32 {
        text.push_str(&server(
            &format!("s{i}"),
            &["--tool".to_owned(), format!("echo{i}")],
            "",
        ));
    }
    let set = ConnectionSet::start(&catalog(&text), options());
    let summary = set.wait_startup().await;
    assert_eq!(
        summary.ready(),
        32,
        "{summary:?}\nsshd log:\n{}",
        sshd.log()
    );
    assert_eq!(set.tools().await.len(), 32);
    assert_eq!(
        sshd.accepted_connections(),
        1,
        "one handshake for 32 servers; sshd log:\n{}",
        sshd.log()
    );
    assert_eq!(
        sshd.connection_pids().len(),
        1,
        "{:?}",
        sshd.connection_pids()
    );
    set.shutdown().await;
    drop(set);
    // The connection ends with the environment (dropped with the set), and its private
    // socket folder is removed.
    let gone = tokio::time::timeout(Duration::from_secs(5), async {
        while !sshd.connection_pids().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "the ssh connection outlived the set");
    let folders: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&format!("mcp-ssh-{}-", std::process::id())))
        .collect();
    // Other tests of this binary may hold theirs; none may be left by this set, whose
    // master is gone: every folder left must still have a live master socket.
    for folder in folders {
        let socket = std::path::Path::new("/tmp").join(&folder).join("cm");
        assert!(
            socket.exists(),
            "/tmp/{folder} was left behind without a connection"
        );
    }
}

/// Starts one server in `ssh_table`'s devbox and returns its startup failure.
async fn startup_failure(
    sshd: &SshdFixture,
    ssh_table: &str,
    command_args: &[String],
) -> mcp_connections::StartupFailure {
    let _ = sshd;
    let text = format!(
        "[environments.devbox]\nssh = {ssh_table}\n{}",
        server("notes", command_args, "")
    );
    let set = ConnectionSet::start(&catalog(&text), options());
    let summary = set.wait_startup().await;
    let failure = match &summary.servers[0].state {
        mcp_connections::ServerState::Failed(f) => f.clone(),
        other => panic!("expected a failure, got {other:?}"),
    };
    set.shutdown().await;
    failure
}

fn ssh_table(
    sshd: &SshdFixture,
    port: u16,
    identity: &std::path::Path,
    known_hosts: &std::path::Path,
) -> String {
    format!(
        "{{ host = \"127.0.0.1\", port = {port}, user = {}, identity_file = {}, known_hosts = {}, options = [\"-F\", \"/dev/null\", \"-o\", \"ConnectTimeout=5\"] }}",
        toml_str(sshd.user()),
        toml_str(&identity.display().to_string()),
        toml_str(&known_hosts.display().to_string()),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_ssh_startup_failure_is_reported_as_its_kind() {
    use mcp_connections::FailureReason;
    let Some(sshd) = SshdFixture::start_or_skip("each_ssh_startup_failure_is_reported") else {
        return;
    };
    let home = TestHome::new().unwrap();
    let args = ["--tool".to_owned(), "echo".to_owned()];
    let key = sshd.identity_file();
    let known = sshd.known_hosts();

    // Nothing listens on this port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let f = startup_failure(&sshd, &ssh_table(&sshd, closed, &key, &known), &args).await;
    assert_eq!(f.reason(), &FailureReason::HostUnreachable, "{f}");
    assert!(
        f.message().contains("`devbox`") && f.message().contains("host unreachable"),
        "{f}"
    );

    // A key the server does not know.
    let other_key = home.join("other_key");
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other_key)
        .status()
        .unwrap();
    assert!(status.success());
    let f = startup_failure(
        &sshd,
        &ssh_table(&sshd, sshd.port(), &other_key, &known),
        &args,
    )
    .await;
    assert_eq!(f.reason(), &FailureReason::AuthRefused, "{f}");
    assert!(f.message().contains("authentication refused"), "{f}");

    // An empty known_hosts: the host key is unknown, and never accepted.
    let empty = home.join("empty_known_hosts");
    std::fs::write(&empty, "").unwrap();
    let f = startup_failure(&sshd, &ssh_table(&sshd, sshd.port(), &key, &empty), &args).await;
    assert_eq!(f.reason(), &FailureReason::HostKeyRejected, "{f}");
    assert!(f.message().contains("is not known"), "{f}");
    assert_eq!(
        std::fs::read_to_string(&empty).unwrap(),
        "",
        "the key was not added"
    );

    // known_hosts holds another key for this host: changed.
    let other_pub = std::fs::read_to_string(home.join("other_key.pub")).unwrap();
    let key_part: Vec<&str> = other_pub.split_whitespace().take(2).collect();
    let changed = home.join("changed_known_hosts");
    std::fs::write(
        &changed,
        format!("[127.0.0.1]:{} {}\n", sshd.port(), key_part.join(" ")),
    )
    .unwrap();
    let f = startup_failure(&sshd, &ssh_table(&sshd, sshd.port(), &key, &changed), &args).await;
    assert_eq!(f.reason(), &FailureReason::HostKeyRejected, "{f}");
    assert!(f.message().contains("changed"), "{f}");

    // The program is missing on the remote side.
    let text = format!(
        "{}[mcp_servers.notes]\ncommand = \"/nonexistent/mcp-server\"\nenvironment = \"devbox\"\n",
        devbox(&sshd, "")
    );
    let set = ConnectionSet::start(&catalog(&text), options());
    let summary = set.wait_startup().await;
    let f = match &summary.servers[0].state {
        mcp_connections::ServerState::Failed(f) => f.clone(),
        other => panic!("expected a failure, got {other:?}"),
    };
    set.shutdown().await;
    assert_eq!(f.reason(), &FailureReason::CommandNotFound, "{f}");
    assert!(f.message().contains("notes@devbox"), "{f}");
}

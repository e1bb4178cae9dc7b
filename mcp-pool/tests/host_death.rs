//! The host itself dies by SIGKILL: every server it started, with its whole process
//! group, is gone within 2 s. And while the host lives, nothing kills its servers.
//!
//! The host is this test binary run again (`host_process` with [`HOST_DIR`] set):
//! it launches its servers, writes their pids, and waits to be killed.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use mcp_pool::{LaunchSpec, ProcessExit, launch};
use mcp_testkit::{kill_process, kill_process_group, process_alive, wait_gone, wait_group_gone};
use pretty_assertions::assert_eq;

/// Set in the environment of the re-executed host: the directory for its pid files.
const HOST_DIR: &str = "MCP_POOL_TEST_HOST_DIR";

/// Set (to anything) in the host's environment: it launches only the direct server
/// and then kills its own reaper helper, leaving the parent-death signal alone.
const HOST_WITHOUT_REAPER: &str = "MCP_POOL_TEST_HOST_WITHOUT_REAPER";

/// The bound the fault suite sets for a killed host's servers.
const ORPHAN_BOUND: Duration = Duration::from_secs(2);

/// How long the host may take to start its servers on a loaded machine.
const HOST_START: Duration = Duration::from_secs(30);

/// The body of the host process the other tests start. Run directly (no
/// [`HOST_DIR`]) it returns at once.
#[test]
fn host_process() {
    let Some(dir) = std::env::var_os(HOST_DIR) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let servers = runtime.block_on(async {
        // A server that ignores SIGTERM, stays after stdin closes, and has a
        // grandchild in its group.
        let direct = fake(&["--ignore-sigterm", "--pid-file"])
            .with_args([path(&dir, "direct.pid"), "--spawn-grandchild".into()])
            .with_args([path(&dir, "direct-grandchild.pid")]);
        // The same server behind a shell wrapper that ignores SIGTERM too: the real
        // server is a grandchild of the host, with a grandchild of its own.
        let script =
            r#"trap '' TERM; "$0" --ignore-sigterm --pid-file "$1" --spawn-grandchild "$2" & wait"#;
        let wrapped = LaunchSpec::new("sh")
            .with_args(["-c", script, &fake_bin()])
            .with_args([
                path(&dir, "wrapped.pid"),
                path(&dir, "wrapped-grandchild.pid"),
            ])
            .with_label("wrapped");
        let direct = launch(direct).await.unwrap();
        if std::env::var_os(HOST_WITHOUT_REAPER).is_some() {
            // Kill the helper until none is seen three checks in a row: under load a
            // helper caught between fork and exec does not show its name yet.
            let mut quiet = 0;
            let deadline = Instant::now() + GONE;
            while quiet < 3 {
                assert!(Instant::now() < deadline, "the reaper keeps coming back");
                let helpers: Vec<u32> = children_of(std::process::id())
                    .into_iter()
                    .filter(|pid| is_reaper(*pid))
                    .collect();
                quiet = if helpers.is_empty() { quiet + 1 } else { 0 };
                for helper in helpers {
                    kill_process(helper);
                    assert!(wait_gone(helper, GONE).await);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            std::fs::write(dir.join("leaders"), format!("{}\n", direct.pid())).unwrap();
            return (direct, None);
        }
        let wrapped = launch(wrapped).await.unwrap();
        let leaders = format!("{} {}\n", direct.pid(), wrapped.pid());
        std::fs::write(dir.join("leaders.tmp"), leaders).unwrap();
        std::fs::rename(dir.join("leaders.tmp"), dir.join("leaders")).unwrap();
        (direct, Some(wrapped))
    });
    // Keep everything alive until the test kills this process.
    let _keep = (runtime, servers);
    loop {
        std::thread::park();
    }
}

#[tokio::test]
async fn a_sigkilled_host_leaves_no_server_behind() {
    let dir = tempfile::tempdir().unwrap();
    fake_bin(); // build it here, not in the host
    let mut host = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "host_process", "--nocapture", "--test-threads=1"])
        .env(HOST_DIR, dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut cleanup = Cleanup::default();
    cleanup.pids.push(host.id());

    let leaders = wait_file(&dir.path().join("leaders")).await;
    let leaders: Vec<u32> = leaders
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    cleanup.groups.extend(&leaders);
    let mut pids = leaders.clone();
    for name in [
        "direct.pid",
        "direct-grandchild.pid",
        "wrapped.pid",
        "wrapped-grandchild.pid",
    ] {
        pids.push(pid_in(&dir.path().join(name)).await);
    }
    cleanup.pids.extend(&pids);
    // The host's other children (its reaper) must not outlive it either.
    let children = children_of(host.id());
    for leader in &leaders {
        assert!(children.contains(leader), "{leader} not in {children:?}");
    }
    cleanup.pids.extend(&children);
    pids.extend(
        children
            .iter()
            .filter(|c| !pids.contains(c))
            .collect::<Vec<_>>(),
    );
    for pid in &pids {
        assert!(process_alive(*pid), "process {pid} is not running");
    }

    host.kill().unwrap(); // SIGKILL: no destructor runs in the host
    let killed = Instant::now();
    let status = host.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );

    let deadline = killed + ORPHAN_BOUND;
    let left = || deadline.saturating_duration_since(Instant::now());
    for pid in &pids {
        assert!(
            wait_gone(*pid, left()).await,
            "process {pid} outlived its host by {ORPHAN_BOUND:?}"
        );
    }
    for leader in &leaders {
        assert!(
            wait_group_gone(*leader, left()).await,
            "process group {leader} outlived its host: {:?}",
            mcp_testkit::process_group_members(*leader)
        );
    }
}

/// The parent-death signal alone (Linux): the reaper is gone, yet the leader, which
/// ignores SIGTERM and stdin's end, dies with the host. (Its grandchild is out of the
/// signal's reach: that is the reaper's job.)
#[tokio::test]
async fn without_its_reaper_a_sigkilled_host_still_takes_the_leader_along() {
    let dir = tempfile::tempdir().unwrap();
    fake_bin();
    let mut host = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "host_process", "--nocapture", "--test-threads=1"])
        .env(HOST_DIR, dir.path())
        .env(HOST_WITHOUT_REAPER, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut cleanup = Cleanup::default();
    cleanup.pids.push(host.id());
    let leader: u32 = wait_file(&dir.path().join("leaders"))
        .await
        .trim()
        .parse()
        .unwrap();
    cleanup.groups.push(leader);
    let server = pid_in(&dir.path().join("direct.pid")).await;
    let grandchild = pid_in(&dir.path().join("direct-grandchild.pid")).await;
    cleanup.pids.push(grandchild);
    assert_eq!(server, leader);
    assert!(children_of(host.id()).iter().all(|pid| !is_reaper(*pid)));

    host.kill().unwrap();
    let killed = Instant::now();
    host.wait().unwrap();
    assert!(
        wait_gone(leader, ORPHAN_BOUND.saturating_sub(killed.elapsed())).await,
        "the leader outlived its host"
    );
    assert!(process_alive(grandchild), "nothing should reach it here");
    kill_process(grandchild);
    assert!(wait_gone(grandchild, GONE).await);
    mcp_testkit::assert_no_process_group(leader);
}

#[test]
fn servers_outlive_idle_blocking_threads_while_the_host_lives() {
    const KEEP_ALIVE: Duration = Duration::from_millis(20);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_keep_alive(KEEP_ALIVE)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut process = launch(fake(&["--tool", "echo"])).await.unwrap();
        let client = connect(&mut process).await;
        // Real time must pass: the blocking thread that spawned the server exits
        // after KEEP_ALIVE idle, and nothing may tie the server's life to it.
        tokio::time::sleep(KEEP_ALIVE * 50).await;
        assert!(process_alive(process.pid()));
        assert_eq!(call(&client, "echo").await.unwrap().is_error, Some(false));
        drop(client);
        assert_eq!(process.shutdown().await, ProcessExit::Exited(0));
        assert_all_gone(&[process.pid()]).await;
        mcp_testkit::assert_no_process_group(process.pid());
    });
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_string_lossy().into_owned()
}

/// Waits (bounded) for `path` to exist and returns its text.
async fn wait_file(path: &Path) -> String {
    let deadline = Instant::now() + HOST_START;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text;
        }
        assert!(Instant::now() < deadline, "no {}", path.display());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn pid_in(path: &Path) -> u32 {
    let deadline = Instant::now() + HOST_START;
    loop {
        if let Some(pid) = mcp_testkit::read_pid_file(path) {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {}", path.display());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether `pid` is a reaper helper (its `$0` names it).
fn is_reaper(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
        cmdline
            .split(|b| *b == 0)
            .any(|arg| arg == b"mcp-pool-reaper")
    })
}

/// Live children of `parent`, from `/proc/<pid>/stat`.
fn children_of(parent: u32) -> Vec<u32> {
    let mut out: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some(end) = stat.rfind(')') else {
                return false;
            };
            let mut fields = stat[end + 1..].split_whitespace();
            let state = fields.next();
            let ppid = fields.next().and_then(|p| p.parse::<u32>().ok());
            ppid == Some(parent) && !matches!(state, Some("Z" | "X"))
        })
        .collect();
    out.sort_unstable();
    out
}

/// Kills whatever is left if the test fails half-way, so a failure leaks nothing.
/// (On success everything is gone, and the numbers may already be someone else's.)
#[derive(Default)]
struct Cleanup {
    pids: Vec<u32>,
    groups: Vec<u32>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        for group in &self.groups {
            kill_process_group(*group);
        }
        for pid in &self.pids {
            kill_process(*pid);
        }
    }
}

//! Process checks for tests that start servers: is a pid (or a process group) gone?
//!
//! Linux only: they read `/proc/<pid>/stat`. A zombie (exited, not yet reaped) counts
//! as gone, since it runs no code and holds no resources but its table entry.

use std::path::Path;
use std::time::Duration;

/// Interval between checks in the `wait_*` functions.
pub const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// State letter and process group of `pid`, from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(char, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Format: `pid (comm) state ppid pgrp ...`; comm may contain spaces and ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

fn running(state: char) -> bool {
    !matches!(state, 'Z' | 'X' | 'x')
}

/// `root` and every live (non-zombie) descendant of it, `root` first, from the parent
/// pids in `/proc/*/stat`: a fixture's whole process tree, for its leak checks and its
/// cleanup.
pub(crate) fn process_tree(root: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = dir
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let rest = &text[text.rfind(')')? + 1..];
            let mut fields = rest.split_whitespace();
            let state = fields.next()?.chars().next()?;
            if !running(state) {
                return None;
            }
            Some((pid, fields.next()?.parse().ok()?))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, ppid)| *ppid == parent)
                .map(|(pid, _)| *pid),
        );
        i += 1;
    }
    found
}

/// True when `pid` exists and is not a zombie.
pub fn process_alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| running(state))
}

/// Live (non-zombie) processes whose process group is `pgid`, sorted.
pub fn process_group_members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = dir
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid| stat(*pid).is_some_and(|(state, group)| group == pgid && running(state)))
        .collect();
    pids.sort_unstable();
    pids
}

/// Panic if `pid` is alive.
///
/// # Panics
/// When the process exists and is not a zombie.
pub fn assert_no_process(pid: u32) {
    assert!(!process_alive(pid), "process {pid} is still running");
}

/// Panic if any process of group `pgid` is alive.
///
/// # Panics
/// When a live member exists; the message lists them.
pub fn assert_no_process_group(pgid: u32) {
    let left = process_group_members(pgid);
    assert!(
        left.is_empty(),
        "process group {pgid} still has live processes: {left:?}"
    );
}

/// Wait until `pid` is gone, up to `timeout`. Returns true when it is gone.
///
/// # Cancel safety
/// Cancel-safe: it only polls.
pub async fn wait_gone(pid: u32, timeout: Duration) -> bool {
    wait_until(timeout, || !process_alive(pid)).await
}

/// Wait until no process of group `pgid` is alive, up to `timeout`. Returns true when
/// the group is empty.
///
/// # Cancel safety
/// Cancel-safe: it only polls.
pub async fn wait_group_gone(pgid: u32, timeout: Duration) -> bool {
    wait_until(timeout, || process_group_members(pgid).is_empty()).await
}

async fn wait_until(timeout: Duration, done: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        // Polling an external condition (another process's state): there is no event.
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// Read a pid written by the fake server (`--pid-file`, `--spawn-grandchild`).
/// Returns `None` when the file is missing or holds no number.
pub fn read_pid_file(path: impl AsRef<Path>) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Send SIGKILL to `pid` with the system `kill` program (no `unsafe` needed), for
/// cleaning up after a test that failed half-way. Errors are ignored.
pub fn kill_process(pid: u32) {
    kill_with("-KILL", &pid.to_string());
}

/// Send SIGKILL to every process of group `pgid` (`kill -KILL -- -PGID`). Errors are
/// ignored.
pub fn kill_process_group(pgid: u32) {
    kill_with("-KILL", &format!("-{pgid}"));
}

/// Send SIGTERM to `pid`. Errors are ignored.
pub fn terminate_process(pid: u32) {
    kill_with("-TERM", &pid.to_string());
}

fn kill_with(signal: &str, target: &str) {
    let _ = std::process::Command::new("kill")
        .args([signal, "--", target])
        .stderr(std::process::Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_in_its_group() {
        let me = std::process::id();
        assert!(process_alive(me));
        let (_, group) = stat(me).unwrap();
        assert!(process_group_members(group).contains(&me));
    }

    #[test]
    fn a_missing_pid_is_gone() {
        // Above the default pid_max of 2^22.
        assert!(!process_alive(4_194_304 + 7));
        assert_no_process(4_194_304 + 7);
    }

    #[tokio::test]
    async fn wait_gone_sees_a_reaped_child() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(wait_gone(pid, Duration::from_secs(5)).await);
    }
}

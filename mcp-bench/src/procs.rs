//! This run's server processes, found by the scenario path in their command line (Linux
//! `/proc`), and the resident memory of the bench process.

use std::time::{Duration, Instant};

/// Pids of live (not zombie) processes whose command line contains `marker`.
pub(crate) fn with_marker(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        // A zombie has an empty command line; it is gone but for its exit status.
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            pids.push(pid);
        }
    }
    pids.sort_unstable();
    pids
}

/// Waits up to `bound` for every process with `marker` to be gone; returns those left.
pub(crate) async fn wait_gone(marker: &str, bound: Duration) -> Vec<u32> {
    let deadline = Instant::now() + bound;
    loop {
        let left = with_marker(marker);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Resident memory of this process in bytes: `/proc/self/statm`'s resident pages times the
/// page size.
pub(crate) fn rss_bytes() -> std::io::Result<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm")?;
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("unexpected /proc/self/statm"))?;
    Ok(pages * page_size())
}

fn page_size() -> u64 {
    match nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE) {
        Ok(Some(size)) if size > 0 => size as u64,
        _ => 4096,
    }
}

/// The 1-minute load average (`/proc/loadavg`), as text; "?" when unreadable. The machines
/// are shared: a table measured under load says so.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

//! The reaper: kills every server's process group when the host dies, even by SIGKILL.
//!
//! A host killed with SIGKILL (or crashing, or OOM-killed) runs no `Drop`, so the
//! launcher's own group kill never happens. The kernel does one thing for us in that
//! case: it closes every file descriptor the host held. The reaper builds on that.
//!
//! At the first launch the host starts one small helper, `/bin/sh` running
//! [`SCRIPT`], in a process group of its own (so a Ctrl-C or a kill of the host's
//! group does not take it along). Its stdin is a pipe whose write end only the host
//! holds: Rust opens pipes close-on-exec, so no server inherits it. The host writes
//! `+ PGID` when a server's group starts and `- PGID` when it is known to be gone.
//! When the host dies, however it dies, the pipe reaches end-of-file and the helper
//! sends SIGKILL to every group still registered, then exits. That covers the whole
//! group (wrappers like `npx` or `sh -c`, and their grandchildren), which the Linux
//! parent-death signal (`parent_death.rs`) cannot: it reaches only the direct child.
//! The helper uses nothing but POSIX (pipes, `read`, `kill -9 -PGID`), so it works on
//! macOS too, where it is the only line of defence.
//!
//! Limits, stated plainly: a process that leaves the group (`setsid`, `setpgid`) is
//! not followed; a host SIGKILLed in the microseconds between `fork` and the `+ PGID`
//! line leaves that server to the parent-death signal (Linux); and if the helper
//! itself is killed, groups started before the next launch (which restarts it) have
//! only that signal, which spares their wrappers' children.
//!
//! Unregistering happens only once a group is known to be gone (or doomed by a
//! SIGKILL already sent), so a registered number is normally still reserved by a
//! living group member and cannot name someone else's group when the helper uses it.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::group::ProcessGroup;

/// The helper's program. Reads `+ PGID` / `- PGID` lines until end-of-file, then
/// SIGKILLs every group still registered. Ids that are not plain numbers above 1
/// are ignored (`kill -9 -1` would kill every process of the user).
const SCRIPT: &str = r#"trap '' HUP INT
groups=
while read -r op group; do
  case $group in ''|*[!0-9]*|0|1) continue ;; esac
  case $op in
    +) groups="$groups $group" ;;
    -) rest=
       for g in $groups; do [ "$g" = "$group" ] || rest="$rest $g"; done
       groups=$rest ;;
  esac
done
for g in $groups; do kill -9 "-$g" 2>/dev/null; done
"#;

/// The helper's name in `ps` (`$0` of the script).
const HELPER_NAME: &str = "mcp-pool-reaper";

static REAPER: Mutex<Reaper> = Mutex::new(Reaper {
    helper: None,
    groups: BTreeMap::new(),
    warned: false,
});

/// The host side: the running helper and the groups it was told about.
struct Reaper {
    helper: Option<Helper>,
    /// How many live registrations each group id has (a number can come back as a
    /// new group only after the old one was unregistered, but counting keeps the
    /// helper right even if that ever overlaps).
    groups: BTreeMap<i32, usize>,
    /// Whether a failure to start the helper was already logged.
    warned: bool,
}

struct Helper {
    child: Child,
    stdin: ChildStdin,
}

/// A server's group, registered with the reaper until [`release`](Self::release).
///
/// Shared by the process handle and its exit task; the first `release` wins.
#[derive(Debug)]
pub(crate) struct Registration {
    pgid: i32,
    released: AtomicBool,
}

impl Registration {
    /// Registers `group` so the helper kills it if the host dies.
    pub(crate) fn new(group: ProcessGroup) -> Self {
        let pgid = group.id();
        let mut reaper = REAPER.lock().unwrap_or_else(PoisonError::into_inner);
        let count = reaper.groups.entry(pgid).or_insert(0);
        *count += 1;
        if *count == 1 {
            reaper.send(&format!("+ {pgid}\n"));
        }
        Self {
            pgid,
            released: AtomicBool::new(false),
        }
    }

    /// Tells the helper the group is gone (or doomed). Idempotent. Needs no runtime.
    pub(crate) fn release(&self) {
        if self.released.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut reaper = REAPER.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(count) = reaper.groups.get_mut(&self.pgid) else {
            return;
        };
        *count -= 1;
        if *count == 0 {
            reaper.groups.remove(&self.pgid);
            reaper.send(&format!("- {}\n", self.pgid));
        }
    }
}

/// The pid of this process's reaper helper (`/bin/sh` named `mcp-pool-reaper` in `ps`), or
/// `None` before the first launch started it (or when it could not be started).
///
/// The helper is started by the first launch and stays for the host's whole life, by
/// design: it is what kills the servers' process groups if the host is SIGKILLed. A
/// shutdown of every connection therefore leaves it running. A host's own check for
/// leftover processes uses this pid to tell the helper apart from a leak. The pid can
/// change if the helper dies and a later launch starts another.
pub fn reaper_pid() -> Option<u32> {
    let reaper = REAPER.lock().unwrap_or_else(PoisonError::into_inner);
    reaper.helper.as_ref().map(|h| h.child.id())
}

impl Reaper {
    /// Sends one line to the helper, (re)starting it if it is missing or dead. A new
    /// helper is told every registered group, so the line itself is then redundant.
    fn send(&mut self, line: &str) {
        if let Some(helper) = &mut self.helper {
            if helper.stdin.write_all(line.as_bytes()).is_ok() {
                return;
            }
            // It died (EPIPE): collect it and start another.
            if let Some(mut old) = self.helper.take() {
                let _ = old.child.kill();
                let _ = old.child.wait();
            }
        }
        let registered: String = self.groups.keys().map(|g| format!("+ {g}\n")).collect();
        match start_helper().and_then(|mut helper| {
            helper.stdin.write_all(registered.as_bytes())?;
            Ok(helper)
        }) {
            Ok(helper) => self.helper = Some(helper),
            Err(err) if !self.warned => {
                self.warned = true;
                tracing::warn!(
                    %err,
                    "could not start the reaper (/bin/sh); servers may outlive this process if it is killed"
                );
            }
            Err(_) => {}
        }
    }
}

fn start_helper() -> std::io::Result<Helper> {
    let mut child = Command::new("/bin/sh")
        .args(["-c", SCRIPT, HELPER_NAME])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    match child.stdin.take() {
        Some(stdin) => Ok(Helper { child, stdin }),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Err(std::io::Error::other("the reaper's stdin was not piped"))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::time::{Duration, Instant};

    use super::*;
    use crate::{LaunchSpec, ProcessExit, launch};

    fn is_registered(pgid: u32) -> bool {
        let pgid = i32::try_from(pgid).unwrap();
        let reaper = REAPER.lock().unwrap_or_else(PoisonError::into_inner);
        reaper.groups.contains_key(&pgid)
    }

    /// A `sleep` in a process group of its own.
    fn sleeper() -> Child {
        Command::new("sleep")
            .arg("1000")
            .process_group(0)
            .spawn()
            .unwrap()
    }

    fn wait_reaped(child: &mut Child) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn registrations_are_counted_and_released_once() {
        // pid_max is at most 2^22, so this id never names a real group.
        const PGID: u32 = 4_194_304 + 11;
        let group = ProcessGroup::led_by(PGID).unwrap();
        let (a, b) = (Registration::new(group), Registration::new(group));
        let count = || {
            let reaper = REAPER.lock().unwrap_or_else(PoisonError::into_inner);
            reaper.groups.get(&group.id()).copied()
        };
        assert_eq!(count(), Some(2));
        a.release();
        a.release();
        assert_eq!(count(), Some(1));
        b.release();
        assert_eq!(count(), None);
    }

    #[test]
    fn the_helper_kills_registered_groups_at_eof_and_only_those() {
        let mut helper = start_helper().unwrap();
        let mut kept = sleeper();
        let mut released = sleeper();
        let lines = format!(
            "+ 1\n+ 0\n+ x\n+ {}\n+ {}\n- {}\n",
            kept.id(),
            released.id(),
            released.id()
        );
        helper.stdin.write_all(lines.as_bytes()).unwrap();
        drop(helper.stdin); // what the kernel does when the host dies
        assert!(wait_reaped(&mut helper.child), "the helper did not exit");
        assert!(wait_reaped(&mut kept), "a registered group survived");
        let status = kept.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        assert_eq!(
            released.try_wait().unwrap(),
            None,
            "an unregistered group was killed"
        );
        released.kill().unwrap();
        released.wait().unwrap();
    }

    #[tokio::test]
    async fn a_group_leaves_the_list_once_it_is_gone() {
        // Shut down.
        let process = launch(LaunchSpec::new("sh").with_args(["-c", "exec cat"]))
            .await
            .unwrap();
        assert!(is_registered(process.pid()));
        assert!(process.shutdown().await.is_success());
        assert!(!is_registered(process.pid()));

        // Exited by itself: released once reaped, before the exit is published.
        let process = launch(LaunchSpec::new("sh").with_args(["-c", "exit 3"]))
            .await
            .unwrap();
        assert_eq!(
            process.exit_watcher().wait_exit().await,
            ProcessExit::Exited(3)
        );
        assert!(!is_registered(process.pid()));

        // Dropped: SIGKILLed, so doomed.
        let process = launch(LaunchSpec::new("sleep").with_args(["1000"]))
            .await
            .unwrap();
        let pid = process.pid();
        assert!(is_registered(pid));
        drop(process);
        assert!(!is_registered(pid));
        assert!(mcp_testkit::wait_group_gone(pid, Duration::from_secs(5)).await);
    }
}

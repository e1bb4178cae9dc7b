//! Signals to a whole process group, and whether a group still has live members.
//!
//! Uses `nix`'s safe `killpg`, so the crate needs no `unsafe`.

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// A process group created for one server (its id is the leader's pid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProcessGroup(i32);

/// Which signal to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupSignal {
    Term,
    Kill,
}

impl ProcessGroup {
    /// The group led by `pid` (the child was spawned with `process_group(0)`).
    pub(crate) fn led_by(pid: u32) -> Option<Self> {
        // A pgid of 0 or 1 (or one that overflows) would signal ourselves or init.
        i32::try_from(pid).ok().filter(|p| *p > 1).map(Self)
    }

    /// The group id (the leader's pid).
    pub(crate) fn id(self) -> i32 {
        self.0
    }

    /// Sends `signal` to every process in the group. Returns `false` when the group
    /// no longer exists.
    pub(crate) fn signal(self, signal: GroupSignal) -> bool {
        let sig = match signal {
            GroupSignal::Term => Signal::SIGTERM,
            GroupSignal::Kill => Signal::SIGKILL,
        };
        match killpg(Pid::from_raw(self.0), sig) {
            Ok(()) => true,
            Err(Errno::ESRCH) => false,
            Err(err) => {
                tracing::warn!(pgid = self.0, %err, ?signal, "could not signal process group");
                true
            }
        }
    }

    /// Whether any process of the group is still running. Zombies do not count:
    /// orphans reparented to an init that never reaps would otherwise look alive
    /// forever.
    ///
    /// A group with no process at all (the usual case once its leader is reaped) is
    /// answered by one `kill(-pgid, 0)`; only a group that still has processes is looked
    /// up in `/proc` to leave its zombies out. (A shutdown polls this every 20 ms per
    /// server, and a `/proc` scan reads every process's `stat`: with 32 servers shutting
    /// down it took a tenth of a startup benchmark's CPU.)
    pub(crate) fn has_live_members(self) -> bool {
        if matches!(killpg(Pid::from_raw(self.0), None), Err(Errno::ESRCH)) {
            return false;
        }
        live_members_from_proc(self.0).is_none_or(|n| n > 0)
    }
}

/// Counts non-zombie processes in group `pgid` by reading `/proc` (Linux). `None`
/// when `/proc` is not available.
fn live_members_from_proc(pgid: i32) -> Option<usize> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut live = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue; // exited while we were looking
        };
        if let Some((state, group)) = parse_stat(&stat)
            && group == pgid
            && state != 'Z'
            && state != 'X'
        {
            live += 1;
        }
    }
    Some(live)
}

/// Parses `(state, pgrp)` from a `/proc/<pid>/stat` line. The command name is in
/// parentheses and may itself contain spaces or parentheses, so parsing starts after
/// the last `)`.
fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_command_names() {
        assert_eq!(
            parse_stat("42 (a) b) (c) S 1 4242 4242 0 -1"),
            Some(('S', 4242))
        );
        assert_eq!(parse_stat("7 (sleep) Z 1 7 7"), Some(('Z', 7)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn refuses_dangerous_group_ids() {
        assert_eq!(ProcessGroup::led_by(0), None);
        assert_eq!(ProcessGroup::led_by(1), None);
        assert_eq!(ProcessGroup::led_by(u32::MAX), None);
        assert_eq!(ProcessGroup::led_by(4242), Some(ProcessGroup(4242)));
    }

    #[test]
    fn our_own_group_has_live_members() {
        let own = nix::unistd::getpgrp().as_raw();
        assert!(ProcessGroup(own).has_live_members());
    }
}

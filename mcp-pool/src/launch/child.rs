//! A child just spawned, guarded until it becomes a server ([`SpawnedChild`]), and how a
//! failed spawn is named ([`classify`]). A leaf of the launcher: both spawn paths (the
//! exec helper's and fork's) and the process that takes the child over use it.

use std::io;
use std::sync::Arc;

use nix::errno::Errno;
use tokio::process::{Child, ChildStdin};

use super::error::LaunchError;
use super::group::{GroupSignal, ProcessGroup};
use super::reaper::Registration;
use super::spec::LaunchSpec;

/// A freshly spawned child whose group is killed if it is dropped before it becomes
/// a [`StdioProcess`] (a cancelled [`launch`]).
#[derive(Debug)]
pub(crate) struct SpawnedChild {
    child: Option<Child>,
    pub(crate) pid: u32,
    pub(crate) group: Option<ProcessGroup>,
    /// The group's registration with the reaper (see `reaper.rs`).
    pub(crate) registration: Option<Arc<Registration>>,
    /// The server's stdin when it is not the child's own (the exec helper's fd 0 is
    /// its report pipe).
    pub(crate) stdin: Option<ChildStdin>,
}

impl SpawnedChild {
    /// Guards `child` (registering its group with the reaper). `None` when the child
    /// has no id (it was already reaped).
    pub(crate) fn new(child: Child, stdin: Option<ChildStdin>) -> Option<Self> {
        let pid = child.id()?;
        let group = ProcessGroup::led_by(pid);
        Some(Self {
            child: Some(child),
            pid,
            group,
            registration: group.map(|group| Arc::new(Registration::new(group))),
            stdin,
        })
    }

    /// Hands the child over; the guard no longer kills it.
    pub(crate) fn defuse(mut self) -> Option<Child> {
        self.child.take()
    }

    /// Kills the group of a child that did not become a server and waits for it.
    #[cfg(target_os = "linux")]
    pub(crate) async fn reap(mut self) {
        if let Some(mut child) = self.child.take() {
            if let Some(group) = self.group {
                group.signal(GroupSignal::Kill);
            }
            let _ = child.wait().await;
            if let Some(registration) = &self.registration {
                registration.release();
            }
        }
    }
}

impl Drop for SpawnedChild {
    fn drop(&mut self) {
        if self.child.is_some()
            && let Some(group) = self.group
        {
            group.signal(GroupSignal::Kill);
            if let Some(registration) = &self.registration {
                registration.release();
            }
        }
    }
}

pub(crate) fn bad_cwd(spec: &LaunchSpec) -> LaunchError {
    LaunchError::BadCwd {
        server: spec.label().to_owned(),
        command: spec.spawned_program().to_owned(),
        cwd: spec.cwd().map(ToOwned::to_owned).unwrap_or_default(),
    }
}

pub(crate) fn classify(spec: &LaunchSpec, source: io::Error) -> LaunchError {
    let server = spec.label().to_owned();
    let command = spec.spawned_program().to_owned();
    let cwd_gone = spec.cwd().is_some_and(|cwd| !cwd.is_dir());
    match source.kind() {
        // exec and chdir both report ENOENT; the directory was checked before the
        // spawn, so look again in case it vanished in between.
        io::ErrorKind::NotFound if cwd_gone => bad_cwd(spec),
        io::ErrorKind::NotFound => LaunchError::CommandNotFound {
            server,
            command,
            source,
        },
        io::ErrorKind::PermissionDenied => LaunchError::NotExecutable {
            server,
            command,
            source,
        },
        _ if source.raw_os_error() == Some(Errno::ENOEXEC as i32) => LaunchError::NotExecutable {
            server,
            command,
            source,
        },
        _ => LaunchError::Spawn {
            server,
            command,
            source,
        },
    }
}

/// The label shared by a process's tasks and messages.
pub(crate) fn shared_label(spec: &LaunchSpec) -> Arc<str> {
    Arc::from(spec.label())
}

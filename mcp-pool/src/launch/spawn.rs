//! [`launch`]: spawning a server process off the async executor.

use std::io;
use std::process::Stdio;
use std::sync::Arc;

use nix::errno::Errno;
use tokio::process::{Child, Command};

use super::env::child_env;
use super::error::LaunchError;
use super::group::{GroupSignal, ProcessGroup};
use super::process::StdioProcess;
use super::reaper::Registration;
use super::spec::LaunchSpec;

/// Starts the server described by `spec` and returns its running process.
///
/// The child gets a cleared environment plus the allow-list (see
/// [`ALLOWED_HOST_ENV`](crate::ALLOWED_HOST_ENV)), its own process group, piped
/// stdin/stdout/stderr, and runs behind the spec's wrapper if any.
///
/// If the host dies without dropping the process (SIGKILL, a crash), the launcher's
/// reaper helper (one `/bin/sh` per host, started by the first launch) SIGKILLs the
/// server's whole process group as soon as the host is gone; on Linux the leader
/// also has SIGKILL as its parent-death signal.
///
/// `fork`/`exec` (and the checks before it) run on one dedicated spawner thread that
/// lives as long as the process, so a slow spawn never stalls the executor, and on
/// Linux the leader gets SIGKILL as a parent-death signal (tied to the spawning
/// thread, hence the one long-lived thread). Tokio's own `Command` is used there
/// (inside the runtime context) so the exit is then awaited with tokio's
/// SIGCHLD-driven reaper rather than a thread blocked in `waitpid` per server.
///
/// Must be called within a tokio runtime (multi-thread or current-thread) with the
/// IO and time drivers enabled.
///
/// # Errors
/// [`LaunchError::CommandNotFound`], [`LaunchError::NotExecutable`] and
/// [`LaunchError::BadCwd`] for the three usual configuration mistakes, each naming
/// the command; [`LaunchError::Spawn`] otherwise.
///
/// # Cancel safety
/// Cancel-safe: if the future is dropped after the process was spawned, its process
/// group is killed.
pub async fn launch(spec: LaunchSpec) -> Result<StdioProcess, LaunchError> {
    let label = spec.label().to_owned();
    if spec.spawned_program().is_empty() {
        let what = if spec.wrapper().is_empty() {
            "program"
        } else {
            "wrapper"
        };
        return Err(LaunchError::InvalidSpec {
            server: label,
            reason: format!("the {what} is empty; set the command to run"),
        });
    }
    let runtime = tokio::runtime::Handle::current();
    let job_spec = spec.clone();
    let spawned = super::spawner::run(move || {
        let _runtime = runtime.enter();
        spawn_child(&job_spec)
    })
    .await
    .map_err(|source| LaunchError::Spawn {
        server: label.clone(),
        command: spec.spawned_program().to_owned(),
        source,
    })??;
    Ok(StdioProcess::start(&spec, spawned))
}

/// A freshly spawned child whose group is killed if it is dropped before it becomes
/// a [`StdioProcess`] (a cancelled [`launch`]).
pub(crate) struct SpawnedChild {
    child: Option<Child>,
    pub(crate) pid: u32,
    pub(crate) group: Option<ProcessGroup>,
    /// The group's registration with the reaper (see `reaper.rs`).
    pub(crate) registration: Option<Arc<Registration>>,
}

impl SpawnedChild {
    /// Hands the child over; the guard no longer kills it.
    pub(crate) fn defuse(mut self) -> Option<Child> {
        self.child.take()
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

/// Runs on the spawner thread, inside the runtime context.
fn spawn_child(spec: &LaunchSpec) -> Result<SpawnedChild, LaunchError> {
    let server = spec.label();
    let command = spec.spawned_program();
    if let Some(cwd) = spec.cwd()
        && !cwd.is_dir()
    {
        return Err(bad_cwd(spec));
    }
    let mut cmd = Command::new(command);
    cmd.args(spec.spawned_args())
        .env_clear()
        .envs(child_env(spec, |name| std::env::var_os(name)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    if let Some(cwd) = spec.cwd() {
        cmd.current_dir(cwd);
    }
    #[cfg(target_os = "linux")]
    super::parent_death::kill_child_with_host(&mut cmd);
    let child = cmd.spawn().map_err(|err| classify(spec, err))?;
    let Some(pid) = child.id() else {
        return Err(LaunchError::Spawn {
            server: server.to_owned(),
            command: command.to_owned(),
            source: io::Error::other("the process exited before its id could be read"),
        });
    };
    let group = ProcessGroup::led_by(pid);
    Ok(SpawnedChild {
        child: Some(child),
        pid,
        group,
        registration: group.map(|group| Arc::new(Registration::new(group))),
    })
}

fn bad_cwd(spec: &LaunchSpec) -> LaunchError {
    LaunchError::BadCwd {
        server: spec.label().to_owned(),
        command: spec.spawned_program().to_owned(),
        cwd: spec.cwd().map(ToOwned::to_owned).unwrap_or_default(),
    }
}

fn classify(spec: &LaunchSpec, source: io::Error) -> LaunchError {
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

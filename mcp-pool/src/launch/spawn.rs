//! [`launch`]: spawning a server process off the async executor.

use std::io;
use std::process::Stdio;

use nix::errno::Errno;
use tokio::process::Command;

#[cfg(target_os = "linux")]
use super::child::{SpawnedChild, bad_cwd, classify};
use super::env::child_env;
use super::error::LaunchError;
use super::exec_helper::{ExecOutcome, PendingExec};
use super::process::StdioProcess;
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
/// The spawn (and the checks before it) runs on one dedicated spawner thread that
/// lives as long as the process, so a slow spawn never stalls the executor, and on
/// Linux the leader gets SIGKILL as a parent-death signal (tied to the spawning
/// thread, hence the one long-lived thread). On Linux the host is not forked: the
/// spawner thread `posix_spawn`s a small exec helper that sets the parent-death
/// signal and `exec`s the server in place, and the wait for that `exec` happens off
/// the spawner thread, so launches proceed concurrently (where the helper cannot
/// work, the launcher forks as before). Tokio's own `Command` is used there (inside
/// the runtime context) so the exit is then awaited with tokio's SIGCHLD-driven
/// reaper rather than a thread blocked in `waitpid` per server.
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
    let spawned = loop {
        match spawn_on_thread(&spec).await? {
            Spawned::Ready(spawned) => break spawned,
            #[cfg(target_os = "linux")]
            Spawned::Pending(pending) => match pending.finish(&spec).await {
                ExecOutcome::Started(spawned) => break spawned,
                ExecOutcome::Failed(err) => return Err(err),
                // Switched off for good: the next round forks.
                ExecOutcome::Unusable(err) => super::exec_helper::disable(&err),
            },
        }
    };
    Ok(StdioProcess::start(&spec, spawned))
}

/// What the spawner thread hands back.
enum Spawned {
    /// A running server (spawned with `fork`).
    Ready(SpawnedChild),
    /// The exec helper, whose `exec` of the server is still to be confirmed.
    #[cfg(target_os = "linux")]
    Pending(PendingExec),
}

/// Runs the spawn on the spawner thread (see `spawner.rs`).
async fn spawn_on_thread(spec: &LaunchSpec) -> Result<Spawned, LaunchError> {
    let runtime = tokio::runtime::Handle::current();
    let job_spec = spec.clone();
    super::spawner::run(move || {
        let _runtime = runtime.enter();
        spawn_child(&job_spec)
    })
    .await
    .map_err(|source| LaunchError::Spawn {
        server: spec.label().to_owned(),
        command: spec.spawned_program().to_owned(),
        source,
    })?
}

/// Runs on the spawner thread, inside the runtime context.
fn spawn_child(spec: &LaunchSpec) -> Result<Spawned, LaunchError> {
    if let Some(cwd) = spec.cwd()
        && !cwd.is_dir()
    {
        return Err(bad_cwd(spec));
    }
    #[cfg(target_os = "linux")]
    if let Some(helper) = super::exec_helper::helper() {
        match super::exec_helper::spawn(spec, helper) {
            Ok(pending) => return Ok(Spawned::Pending(pending)),
            // The helper itself could not be executed here: fork from now on.
            Err(err) if helper_cannot_run(&err) => super::exec_helper::disable(&err),
            // Out of descriptors or memory: `fork` says so in its own words.
            Err(_) => {}
        }
    }
    spawn_forked(spec).map(Spawned::Ready)
}

/// Whether a failed spawn of the exec helper means it cannot run in this process.
#[cfg(target_os = "linux")]
fn helper_cannot_run(err: &io::Error) -> bool {
    [
        Errno::EACCES,
        Errno::EPERM,
        Errno::ENOENT,
        Errno::ENOEXEC,
        Errno::ETXTBSY,
    ]
    .iter()
    .any(|errno| err.raw_os_error() == Some(*errno as i32))
}

/// `fork`, set up the child (on Linux its parent-death signal, in `pre_exec`), `exec`.
fn spawn_forked(spec: &LaunchSpec) -> Result<SpawnedChild, LaunchError> {
    let server = spec.label();
    let command = spec.spawned_program();
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
    SpawnedChild::new(child, None).ok_or_else(|| LaunchError::Spawn {
        server: server.to_owned(),
        command: command.to_owned(),
        source: io::Error::other("the process exited before its id could be read"),
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

    use super::*;

    async fn start(spec: &LaunchSpec) -> (SpawnedChild, bool) {
        match spawn_on_thread(spec).await.unwrap() {
            Spawned::Ready(spawned) => (spawned, false),
            Spawned::Pending(pending) => match pending.finish(spec).await {
                ExecOutcome::Started(spawned) => (spawned, true),
                other => panic!("the helper did not start the server: {other:?}"),
            },
        }
    }

    /// One test, as it switches the helper off for the whole test process (the other
    /// tests then fork, which they pass as well).
    #[tokio::test]
    async fn servers_are_spawned_through_the_helper_and_by_fork_once_it_is_off() {
        let spec = LaunchSpec::new("sh").with_args(["-c", "exec cat"]);
        let (spawned, through_helper) = start(&spec).await;
        assert!(
            through_helper,
            "the host forked although the helper was there"
        );
        let group = spawned.group.unwrap();
        spawned.reap().await;
        assert!(!group.has_live_members());

        super::super::exec_helper::disable(&"a test switches it off");
        let (spawned, through_helper) = start(&spec).await;
        assert!(
            !through_helper,
            "the helper was used after it was switched off"
        );
        let group = spawned.group.unwrap();
        spawned.reap().await;
        assert!(!group.has_live_members());
    }
}

//! Linux: spawning through the exec helper, so the host is never forked.
//!
//! A `fork` copies the page tables of the whole host (about 0.66 ms per spawn in a
//! large host, on the one spawner thread, so 32 servers wait for each other). Rust's
//! `Command` uses `posix_spawn` (a `vfork`-like clone that copies nothing) unless a
//! `pre_exec` hook is set, and `PR_SET_PDEATHSIG` needs one. So the launcher
//! `posix_spawn`s a small helper program instead (`exec-helper/minimal.rs`, without the
//! C library, or `exec-helper/main.rs` where that cannot be built; built by `build.rs`,
//! embedded here and written once into a sealed memfd) in the server's
//! own process group, with the server's cleared environment and its stdout and
//! stderr pipes. The helper sets the parent-death signal, checks that its parent is
//! still the host, opens the server's stdin through `/proc/<host>/fd/<n>` (the report
//! pipe takes its fd 0), changes directory and `exec`s the server in place: same pid,
//! same group, same parent (the spawner thread, to which the signal is tied, as with
//! `fork`).
//!
//! The helper tells how it ended on the report pipe: end-of-file when the server's
//! `exec` succeeded (the pipe is close-on-exec in the helper), or a stage byte and an
//! errno. A failed `exec` is classified exactly as `fork`'s was ("not found", "not
//! executable", a bad working directory). When the helper itself cannot work here
//! (no memfd, no `/proc`, a host that is not dumpable, a helper that could not be
//! built), it is switched off for the life of the process and the launcher spawns
//! with `fork` and `pre_exec` as before: slower, never weaker.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::unistd::pipe2;
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, Command};

use super::child::{SpawnedChild, classify};
use super::env::child_env;
use super::error::LaunchError;
use super::spec::LaunchSpec;

/// The helper's bytes (empty when `build.rs` could not build it).
static HELPER_BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mcp-pool-exec"));

/// The helper's name in `ps` while it runs (a few hundred microseconds).
const HELPER_NAME: &str = "mcp-pool-exec";

/// `MFD_EXEC` (Linux 6.3): an executable memfd even where `vm.memfd_noexec` asks for
/// non-executable ones by default. Older kernels refuse the flag; then none is given.
const MFD_EXEC: MFdFlags = MFdFlags::from_bits_retain(0x0010);

/// The helper, written once per process.
static HELPER: OnceLock<Option<Helper>> = OnceLock::new();

/// Set when the helper failed in a way that would fail again: spawn with `fork`.
static DISABLED: AtomicBool = AtomicBool::new(false);

/// The helper program in a sealed, read-only memfd.
#[derive(Debug)]
pub(crate) struct Helper {
    /// Keeps the memfd open (close-on-exec, so no child inherits it).
    _file: File,
    /// `/proc/self/fd/<n>`: resolved by the spawned child, which still has the fd.
    path: String,
}

/// The helper, unless it is unusable here (then servers are spawned with `fork`).
pub(crate) fn helper() -> Option<&'static Helper> {
    if DISABLED.load(Ordering::Acquire) {
        return None;
    }
    HELPER
        .get_or_init(|| match write_helper() {
            Ok(helper) => Some(helper),
            Err(err) => {
                tracing::debug!(%err, "exec helper unavailable; spawning servers with fork");
                None
            }
        })
        .as_ref()
}

/// Switches the helper off for the life of the process.
pub(crate) fn disable(reason: &dyn std::fmt::Display) {
    if !DISABLED.swap(true, Ordering::AcqRel) {
        tracing::warn!(
            %reason,
            "the exec helper does not work here; spawning servers with fork from now on"
        );
    }
}

fn write_helper() -> io::Result<Helper> {
    if HELPER_BYTES.is_empty() {
        return Err(io::Error::other(
            "mcp-pool was built without its exec helper",
        ));
    }
    let flags = MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING;
    let fd = memfd_create(HELPER_NAME, flags | MFD_EXEC)
        .or_else(|_| memfd_create(HELPER_NAME, flags))?;
    let mut file = File::from(fd);
    file.write_all(HELPER_BYTES)?;
    let seals = SealFlag::F_SEAL_SEAL
        | SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_WRITE;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals))?;
    // Executing a file that is open for writing can fail (ETXTBSY): keep a read-only
    // descriptor only.
    let read_only = File::open(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    drop(file);
    let path = format!("/proc/self/fd/{}", read_only.as_raw_fd());
    Ok(Helper {
        _file: read_only,
        path,
    })
}

/// A child spawned through the helper whose `exec` has not been confirmed yet.
#[derive(Debug)]
pub(crate) struct PendingExec {
    spawned: SpawnedChild,
    report: OwnedFd,
    /// The read end of the server's stdin, held until the helper has opened its own.
    stdin_source: OwnedFd,
}

/// How a helper spawn ended.
#[derive(Debug)]
pub(crate) enum ExecOutcome {
    /// The server runs.
    Started(SpawnedChild),
    /// The server could not be started (as `fork` would have reported it).
    Failed(LaunchError),
    /// The helper cannot work in this process: spawn with `fork` instead.
    Unusable(io::Error),
}

/// Runs on the spawner thread, inside the runtime context: `posix_spawn`s the helper.
/// `Err` means the helper could not even be spawned (then use `fork`).
pub(crate) fn spawn(spec: &LaunchSpec, helper: &Helper) -> io::Result<PendingExec> {
    let (report, report_child) = pipe2(OFlag::O_CLOEXEC)?;
    let (stdin_source, stdin_sink) = pipe2(OFlag::O_CLOEXEC)?;
    let stdin = ChildStdin::from_std(std::process::ChildStdin::from(stdin_sink))?;
    let cwd = spec.cwd().map(OsString::from).unwrap_or_default();
    let mut cmd = Command::new(&helper.path);
    cmd.arg0(HELPER_NAME)
        .arg(std::process::id().to_string())
        .arg(stdin_source.as_raw_fd().to_string())
        .arg(cwd)
        .arg(spec.spawned_program())
        .args(spec.spawned_args())
        .env_clear()
        .envs(child_env(spec, |name| std::env::var_os(name)))
        .stdin(Stdio::from(report_child))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    let child = cmd.spawn()?;
    // `cmd` holds the report pipe's write end: drop it so that end-of-file comes.
    drop(cmd);
    let spawned = SpawnedChild::new(child, Some(stdin))
        .ok_or_else(|| io::Error::other("the exec helper exited before its id could be read"))?;
    Ok(PendingExec {
        spawned,
        report,
        stdin_source,
    })
}

impl PendingExec {
    /// Waits for the helper's report: end-of-file once the server's `exec` succeeded.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping it kills the child's group (see [`SpawnedChild`]).
    pub(crate) async fn finish(self, spec: &LaunchSpec) -> ExecOutcome {
        let Self {
            spawned,
            report,
            stdin_source,
        } = self;
        let mut message = Vec::with_capacity(5);
        let read = match tokio::net::unix::pipe::Receiver::from_owned_fd(report) {
            Ok(mut receiver) => receiver.read_to_end(&mut message).await.map(|_| ()),
            Err(err) => Err(err),
        };
        // The helper has opened its own copy (or given up): the server's stdin must
        // not stay open here, or writes to a dead server would never fail.
        drop(stdin_source);
        if let Err(err) = read {
            spawned.reap().await;
            return ExecOutcome::Unusable(err);
        }
        let Some((&stage, errno)) = message.split_first() else {
            return ExecOutcome::Started(spawned);
        };
        spawned.reap().await;
        let errno = <[u8; 4]>::try_from(errno).map_or(Errno::EIO as i32, i32::from_le_bytes);
        let source = io::Error::from_raw_os_error(errno);
        match stage {
            // The server's exec or chdir: what `fork`'s child would have reported.
            b'x' | b'c' => ExecOutcome::Failed(classify(spec, source)),
            // The host died while spawning (the parent-death signal never comes).
            b'h' => ExecOutcome::Failed(LaunchError::Spawn {
                server: spec.label().to_owned(),
                command: spec.spawned_program().to_owned(),
                source,
            }),
            // No parent-death signal, no /proc, bad arguments: not the server's fault.
            _ => ExecOutcome::Unusable(io::Error::new(
                source.kind(),
                format!(
                    "the exec helper failed at stage `{}`: {source}",
                    char::from(stage)
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    /// On x86_64 and aarch64 the helper is the build without the C library (a few KB):
    /// a toolchain that cannot build it falls back to the standard library's build
    /// (over a megabyte) without an error, and spawns would cost ten times the CPU.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn the_helper_is_the_build_without_the_c_library() {
        let size = super::HELPER_BYTES.len();
        assert!(
            size > 0 && size < 64 * 1024,
            "the exec helper is {size} bytes: build.rs fell back from exec-helper/minimal.rs"
        );
    }
}

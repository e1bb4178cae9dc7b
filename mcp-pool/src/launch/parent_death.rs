//! Linux: a server's leader gets SIGKILL when the host dies (`PR_SET_PDEATHSIG`).
//!
//! A second line of defence beside the reaper (`reaper.rs`), which kills whole groups
//! but needs `/bin/sh` and could itself be killed: this one needs nothing, but reaches
//! only the direct child (not a wrapper's children), and it fires when the thread that
//! spawned the child exits, which is why every spawn runs on the spawner thread
//! (`spawner.rs`), which lives as long as the process.
//!
//! This module is the `fork` path, used only where the exec helper cannot run
//! (`exec_helper.rs`; the helper sets the same signal itself before its `exec`).
//!
//! The only `unsafe` in the workspace's library code: setting the signal must happen
//! in the child, between `fork` and `exec`, and `pre_exec` is an `unsafe` API.
#![expect(
    unsafe_code,
    reason = "pre_exec is unsafe: its closure runs in the forked child before exec"
)]

use std::io;

use nix::errno::Errno;
use nix::sys::prctl::set_pdeathsig;
use nix::sys::signal::Signal;
use nix::unistd::{getpid, getppid};
use tokio::process::Command;

/// Makes the child of `cmd` receive SIGKILL when the spawning thread exits. Call it
/// only for commands spawned on the spawner thread.
pub(crate) fn kill_child_with_host(cmd: &mut Command) {
    let host = getpid();
    // SAFETY: the closure runs in the forked child of a multi-threaded process, where
    // only async-signal-safe operations are allowed. It makes two system calls
    // (`prctl`, `getppid`) and builds an `io::Error` from a raw errno; it takes no
    // lock and does not allocate.
    unsafe {
        cmd.pre_exec(move || {
            set_pdeathsig(Signal::SIGKILL)
                .map_err(|errno| io::Error::from_raw_os_error(errno as i32))?;
            // The host may have died between fork and prctl; then no signal comes.
            if getppid() != host {
                return Err(io::Error::from_raw_os_error(Errno::ESRCH as i32));
            }
            Ok(())
        });
    }
}

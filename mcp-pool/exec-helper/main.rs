//! `mcp-pool-exec`: the exec helper of mcp-pool's launcher (Linux).
//!
//! The host `posix_spawn`s this small program (no copy of the host's address space)
//! in the server's own process group, from the launcher's spawner thread; it applies
//! what `posix_spawn` cannot and then `exec`s the server in place (same pid):
//!
//! 1. `PR_SET_PDEATHSIG` = SIGKILL. The signal is tied to the thread that spawned this
//!    process (the spawner thread) and survives the `exec` below.
//! 2. Checks that its parent is still the host (the host may have died before step 1;
//!    then no signal would ever come).
//! 3. Opens the server's stdin pipe through `/proc/<host>/fd/<n>`. (`posix_spawn`
//!    hands over three descriptors; fd 0 of this program is the report pipe.)
//! 4. Changes to the server's working directory, if any.
//! 5. `execvp`s the server with this program's environment (already the server's).
//!
//! If a step fails it writes one stage byte and the errno (4 bytes, little endian) to
//! the report pipe and exits with 127. The report pipe is close-on-exec here, so the
//! host reads end-of-file exactly when the server's `exec` succeeded.
//!
//! Usage: `mcp-pool-exec HOST_PID STDIN_FD CWD PROGRAM [ARGS...]` (an empty CWD keeps
//! the current directory). Built by mcp-pool's `build.rs`; not meant to be run by hand.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

unsafe extern "C" {
    fn prctl(option: i32, ...) -> i32;
}

const PR_SET_PDEATHSIG: i32 = 1;
const SIGKILL: u64 = 9;
const ESRCH: i32 = 3;
const EINVAL: i32 = 22;

fn main() {
    // fd 0 is the report pipe; keep a close-on-exec copy (fd >= 3). Without it
    // there is nobody to tell, and the host reads end-of-file and an early exit.
    let Ok(report) = io::stdin().as_fd().try_clone_to_owned() else {
        std::process::exit(127);
    };
    let mut report = File::from(report);
    let fail = |report: &mut File, stage: u8, errno: i32| -> ! {
        let mut message = [0u8; 5];
        message[0] = stage;
        message[1..].copy_from_slice(&errno.to_le_bytes());
        let _ = report.write_all(&message);
        std::process::exit(127)
    };
    let errno = |err: io::Error| err.raw_os_error().unwrap_or(EINVAL);

    let mut args = std::env::args_os().skip(1);
    let (Some(host), Some(stdin_fd), Some(cwd), Some(program)) =
        (args.next(), args.next(), args.next(), args.next())
    else {
        fail(&mut report, b'a', EINVAL)
    };
    let Some(host) = host.to_str().and_then(|h| h.parse::<u32>().ok()) else {
        fail(&mut report, b'a', EINVAL)
    };
    let Some(stdin_fd) = stdin_fd.to_str().and_then(|f| f.parse::<u32>().ok()) else {
        fail(&mut report, b'a', EINVAL)
    };

    // SAFETY: prctl(PR_SET_PDEATHSIG, signal) reads no memory of ours.
    if unsafe { prctl(PR_SET_PDEATHSIG, SIGKILL) } != 0 {
        fail(&mut report, b'p', errno(io::Error::last_os_error()));
    }
    if std::os::unix::process::parent_id() != host {
        fail(&mut report, b'h', ESRCH);
    }
    let stdin = match File::open(format!("/proc/{host}/fd/{stdin_fd}")) {
        Ok(stdin) => stdin,
        Err(err) => fail(&mut report, b'i', errno(err)),
    };
    if cwd != OsString::new()
        && let Err(err) = std::env::set_current_dir(&cwd)
    {
        fail(&mut report, b'c', errno(err));
    }
    let err = Command::new(program)
        .args(args)
        .stdin(Stdio::from(stdin))
        .exec();
    fail(&mut report, b'x', errno(err))
}

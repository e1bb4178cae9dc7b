//! `mcp-pool-exec`, minimal build (Linux on x86_64 and aarch64): the exec helper of
//! mcp-pool's launcher without the C library, so that starting it costs little more than
//! its `exec`.
//!
//! `main.rs` is the same helper on the standard library. That build starts the C library
//! first, whose start-up detects the CPU's features with `cpuid`, which a virtual machine
//! traps: measured on the 2-core CI machine, the helper alone took 0.36 ms of CPU per
//! spawn, a quarter of it in that detection, and the server's own start pays it again.
//! This build has no start-up of its own (its entry point is `_start`) and makes the
//! system calls itself; `build.rs` tries it first and falls back to `main.rs`.
//!
//! It does what `main.rs` does, step for step, with the same report (a stage byte and the
//! errno, little endian, on the report pipe; exit status 127):
//!
//! 1. `PR_SET_PDEATHSIG` = SIGKILL (tied to the spawner thread, survives the `exec`).
//! 2. Checks that its parent is still the host.
//! 3. Opens the server's stdin through `/proc/<host>/fd/<n>` and makes it fd 0.
//! 4. Changes to the server's working directory, if any.
//! 5. Resets the signal mask and `SIGPIPE` (as the standard library's `exec` does) and
//!    `exec`s the server as `execvp` would: a program without `/` is searched in the
//!    environment's `PATH` (`/bin:/usr/bin` without one), a file the kernel cannot run
//!    (`ENOEXEC`) is run by `/bin/sh`.
//!
//! Usage: `mcp-pool-exec HOST_PID STDIN_FD CWD PROGRAM [ARGS...]`.

#![no_std]
#![no_main]

use core::arch::{asm, global_asm};

#[cfg(target_arch = "x86_64")]
global_asm!(
    ".globl _start",
    "_start:",
    "xor ebp, ebp",
    "mov rdi, rsp",
    "and rsp, -16",
    "call {entry}",
    "ud2",
    entry = sym entry,
);

#[cfg(target_arch = "aarch64")]
global_asm!(
    ".globl _start",
    "_start:",
    "mov x29, #0",
    "mov x30, #0",
    "mov x0, sp",
    "bl {entry}",
    "brk #0",
    entry = sym entry,
);

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("the minimal exec helper supports x86_64 and aarch64; build.rs falls back to main.rs");

/// System call numbers.
#[cfg(target_arch = "x86_64")]
mod nr {
    pub(crate) const WRITE: usize = 1;
    pub(crate) const CLOSE: usize = 3;
    pub(crate) const RT_SIGACTION: usize = 13;
    pub(crate) const RT_SIGPROCMASK: usize = 14;
    pub(crate) const EXECVE: usize = 59;
    pub(crate) const FCNTL: usize = 72;
    pub(crate) const CHDIR: usize = 80;
    pub(crate) const GETPPID: usize = 110;
    pub(crate) const PRCTL: usize = 157;
    pub(crate) const EXIT_GROUP: usize = 231;
    pub(crate) const OPENAT: usize = 257;
    pub(crate) const DUP3: usize = 292;
}

/// System call numbers.
#[cfg(target_arch = "aarch64")]
mod nr {
    pub(crate) const WRITE: usize = 64;
    pub(crate) const CLOSE: usize = 57;
    pub(crate) const RT_SIGACTION: usize = 134;
    pub(crate) const RT_SIGPROCMASK: usize = 135;
    pub(crate) const EXECVE: usize = 221;
    pub(crate) const FCNTL: usize = 25;
    pub(crate) const CHDIR: usize = 49;
    pub(crate) const GETPPID: usize = 173;
    pub(crate) const PRCTL: usize = 167;
    pub(crate) const EXIT_GROUP: usize = 94;
    pub(crate) const OPENAT: usize = 56;
    pub(crate) const DUP3: usize = 24;
}

const F_DUPFD_CLOEXEC: usize = 1030;
const AT_FDCWD: isize = -100;
const O_CLOEXEC: usize = 0o2_000_000;
const PR_SET_PDEATHSIG: usize = 1;
const SIGKILL: usize = 9;
const SIGPIPE: usize = 13;
const SIG_SETMASK: usize = 2;
const ENOENT: i32 = 2;
const ESRCH: i32 = 3;
const E2BIG: i32 = 7;
const ENOEXEC: i32 = 8;
const EACCES: i32 = 13;
const ENODEV: i32 = 19;
const ENOTDIR: i32 = 20;
const EINVAL: i32 = 22;
const ENAMETOOLONG: i32 = 36;
const ETIMEDOUT: i32 = 110;
const ESTALE: i32 = 116;
const PATH_MAX: usize = 4096;
/// The most arguments the `/bin/sh` fallback passes on.
const MAX_SCRIPT_ARGS: usize = 4096;

/// A system call with up to four arguments; a negative result is `-errno`.
#[cfg(target_arch = "x86_64")]
fn syscall(n: usize, a: usize, b: usize, c: usize, d: usize) -> isize {
    let ret: isize;
    // SAFETY: the calls made here read only the memory their arguments point to, which
    // their callers keep alive and NUL-terminated where the kernel expects it.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") n as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            in("r10") d,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// A system call with up to four arguments; a negative result is `-errno`.
#[cfg(target_arch = "aarch64")]
fn syscall(n: usize, a: usize, b: usize, c: usize, d: usize) -> isize {
    let ret: isize;
    // SAFETY: as for x86_64 above.
    unsafe {
        asm!(
            "svc 0",
            in("x8") n,
            inlateout("x0") a as isize => ret,
            in("x1") b,
            in("x2") c,
            in("x3") d,
            options(nostack),
        );
    }
    ret
}

fn exit(code: usize) -> ! {
    syscall(nr::EXIT_GROUP, code, 0, 0, 0);
    loop {}
}

/// `-result` as an errno when `result` is an error.
fn errno_of(result: isize) -> Option<i32> {
    (result < 0).then(|| i32::try_from(-result).unwrap_or(EINVAL))
}

/// Writes the stage byte and `errno` to `report` and exits with 127.
fn fail(report: usize, stage: u8, errno: i32) -> ! {
    let e = errno.to_le_bytes();
    let message = [stage, e[0], e[1], e[2], e[3]];
    syscall(nr::WRITE, report, message.as_ptr() as usize, message.len(), 0);
    exit(127)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    exit(127)
}

/// Referenced by the precompiled `core`'s unwind tables; never called (panics abort).
#[unsafe(no_mangle)]
extern "C" fn rust_eh_personality() {}

// The compiler may call these for copies and fills; volatile accesses keep them from
// being turned into calls to themselves.
#[unsafe(no_mangle)]
unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    for i in 0..n {
        // SAFETY: the caller's contract: `n` bytes at each, not overlapping.
        unsafe { core::ptr::write_volatile(dst.add(i), core::ptr::read_volatile(src.add(i))) };
    }
    dst
}

#[unsafe(no_mangle)]
unsafe extern "C" fn memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
    for i in 0..n {
        // SAFETY: the caller's contract: `n` bytes at `dst`.
        unsafe { core::ptr::write_volatile(dst.add(i), c as u8) };
    }
    dst
}

/// The bytes of the NUL-terminated string at `p` (without the NUL).
///
/// # Safety
/// `p` points to a NUL-terminated string that outlives the slice.
unsafe fn c_str<'a>(p: *const u8) -> &'a [u8] {
    let mut len = 0;
    // SAFETY: the caller's contract. (Volatile: a plain loop becomes a call to `strlen`,
    // which there is no C library to provide.)
    while unsafe { core::ptr::read_volatile(p.add(len)) } != 0 {
        len += 1;
    }
    // SAFETY: `len` bytes before the NUL.
    unsafe { core::slice::from_raw_parts(p, len) }
}

fn parse_u32(s: &[u8]) -> Option<u32> {
    if s.is_empty() {
        return None;
    }
    let mut n: u32 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u32::from(b - b'0'))?;
    }
    Some(n)
}

/// Appends `s` to `buf` at `*len`; `false` when it does not fit (a NUL still must).
fn push(buf: &mut [u8], len: &mut usize, s: &[u8]) -> bool {
    if *len + s.len() >= buf.len() {
        return false;
    }
    for &b in s {
        buf[*len] = b;
        *len += 1;
    }
    true
}

/// Appends `n` in decimal.
fn push_u32(buf: &mut [u8], len: &mut usize, n: u32) -> bool {
    let mut digits = [0u8; 10];
    let (mut i, mut n) = (digits.len(), n);
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    push(buf, len, &digits[i..])
}

/// The environment's value of `name` (given as `NAME=`), if set.
///
/// # Safety
/// `envp` is the process's NULL-terminated environment.
unsafe fn env_value<'a>(envp: *const *const u8, name: &[u8]) -> Option<&'a [u8]> {
    let mut i = 0;
    loop {
        // SAFETY: the caller's contract; the loop stops at the NULL.
        let entry = unsafe { *envp.add(i) };
        if entry.is_null() {
            return None;
        }
        // SAFETY: every entry is a NUL-terminated string.
        let entry = unsafe { c_str(entry) };
        if let Some(value) = entry.strip_prefix(name) {
            return Some(value);
        }
        i += 1;
    }
}

/// `execve(path, argv, envp)`; returns its errno (it returns only on failure).
fn execve(path: *const u8, argv: *const *const u8, envp: *const *const u8) -> i32 {
    let result = syscall(
        nr::EXECVE,
        path as usize,
        argv as usize,
        envp as usize,
        0,
    );
    errno_of(result).unwrap_or(EINVAL)
}

/// Runs the file at `path` (NUL-terminated) with `/bin/sh`, as `execvp` does for a file
/// the kernel cannot run; returns the errno of the attempt.
///
/// # Safety
/// `argv` is the server's NULL-terminated argument vector (its first the program).
unsafe fn exec_script(path: *const u8, argv: *const *const u8, envp: *const *const u8) -> i32 {
    let mut args: [*const u8; MAX_SCRIPT_ARGS] = [core::ptr::null(); MAX_SCRIPT_ARGS];
    args[0] = b"/bin/sh\0".as_ptr();
    args[1] = path;
    let mut i = 1;
    loop {
        // SAFETY: the caller's contract; the loop stops at the NULL.
        let arg = unsafe { *argv.add(i) };
        if arg.is_null() {
            break;
        }
        if i + 2 >= MAX_SCRIPT_ARGS {
            return E2BIG;
        }
        args[i + 1] = arg;
        i += 1;
    }
    execve(args[0], args.as_ptr(), envp)
}

/// `execvp(program, argv)` with `envp` as the environment; returns the errno to report.
///
/// # Safety
/// `argv` and `envp` are NULL-terminated vectors of NUL-terminated strings; `argv[0]` is
/// `program`.
unsafe fn execvp(program: &[u8], argv: *const *const u8, envp: *const *const u8) -> i32 {
    if program.is_empty() {
        return ENOENT;
    }
    // SAFETY: `argv[0]` is `program`, NUL-terminated.
    let program_c = unsafe { *argv };
    if program.contains(&b'/') {
        let errno = execve(program_c, argv, envp);
        if errno == ENOEXEC {
            // SAFETY: the caller's contract.
            return unsafe { exec_script(program_c, argv, envp) };
        }
        return errno;
    }
    // SAFETY: the caller's contract.
    let path = unsafe { env_value(envp, b"PATH=") }.unwrap_or(b"/bin:/usr/bin");
    let mut denied = false;
    let mut buf = [0u8; PATH_MAX];
    for dir in path.split(|&b| b == b':') {
        let mut len = 0;
        let dir: &[u8] = if dir.is_empty() { b"." } else { dir };
        if !(push(&mut buf, &mut len, dir)
            && push(&mut buf, &mut len, b"/")
            && push(&mut buf, &mut len, program))
        {
            continue;
        }
        buf[len] = 0;
        match execve(buf.as_ptr(), argv, envp) {
            EACCES => denied = true,
            ENOENT | ESTALE | ENOTDIR | ENODEV | ETIMEDOUT | ENAMETOOLONG => {}
            // SAFETY: the caller's contract; `buf` holds the NUL-terminated path.
            ENOEXEC => return unsafe { exec_script(buf.as_ptr(), argv, envp) },
            other => return other,
        }
    }
    if denied { EACCES } else { ENOENT }
}

/// The process's entry, with the stack as the kernel left it: `argc`, the arguments, a
/// NULL, the environment, a NULL.
///
/// # Safety
/// Called once, by `_start`, with the initial stack pointer.
unsafe extern "C" fn entry(sp: *const usize) -> ! {
    // SAFETY: the initial stack's layout (System V ABI).
    let argc = unsafe { *sp };
    let argv = sp.wrapping_add(1).cast::<*const u8>();
    let envp = argv.wrapping_add(argc + 1);
    // fd 0 is the report pipe; keep a close-on-exec copy (fd >= 3).
    let copy = syscall(nr::FCNTL, 0, F_DUPFD_CLOEXEC, 3, 0);
    let Ok(report) = usize::try_from(copy) else {
        exit(127)
    };
    if argc < 5 {
        fail(report, b'a', EINVAL);
    }
    // SAFETY: the arguments are NUL-terminated strings, `argc` of them.
    let arg = |i: usize| unsafe { c_str(*argv.add(i)) };
    let (Some(host), Some(stdin_fd)) = (parse_u32(arg(1)), parse_u32(arg(2))) else {
        fail(report, b'a', EINVAL)
    };
    let cwd = arg(3);

    if let Some(errno) = errno_of(syscall(nr::PRCTL, PR_SET_PDEATHSIG, SIGKILL, 0, 0)) {
        fail(report, b'p', errno);
    }
    if syscall(nr::GETPPID, 0, 0, 0, 0) != host as isize {
        fail(report, b'h', ESRCH);
    }
    let mut path = [0u8; 64];
    let mut len = 0;
    let fits = push(&mut path, &mut len, b"/proc/")
        && push_u32(&mut path, &mut len, host)
        && push(&mut path, &mut len, b"/fd/")
        && push_u32(&mut path, &mut len, stdin_fd);
    if !fits {
        fail(report, b'i', ENAMETOOLONG);
    }
    path[len] = 0;
    let opened = syscall(
        nr::OPENAT,
        AT_FDCWD as usize,
        path.as_ptr() as usize,
        O_CLOEXEC,
        0,
    );
    let Ok(stdin) = usize::try_from(opened) else {
        fail(report, b'i', errno_of(opened).unwrap_or(EINVAL))
    };
    if let Some(errno) = errno_of(syscall(nr::DUP3, stdin, 0, 0, 0)) {
        fail(report, b'i', errno);
    }
    syscall(nr::CLOSE, stdin, 0, 0, 0);
    if !cwd.is_empty() {
        // SAFETY: `argv[3]` is the NUL-terminated directory.
        let dir = unsafe { *argv.add(3) };
        if let Some(errno) = errno_of(syscall(nr::CHDIR, dir as usize, 0, 0, 0)) {
            fail(report, b'c', errno);
        }
    }
    // The server starts with no blocked signal and SIGPIPE's default action, as the
    // standard library's `exec` leaves them.
    let empty: u64 = 0;
    syscall(
        nr::RT_SIGPROCMASK,
        SIG_SETMASK,
        core::ptr::from_ref(&empty) as usize,
        0,
        8,
    );
    let default_action: [usize; 4] = [0, 0, 0, 0];
    syscall(
        nr::RT_SIGACTION,
        SIGPIPE,
        default_action.as_ptr() as usize,
        0,
        8,
    );
    // SAFETY: `argv[4..]` is the server's NULL-terminated argument vector.
    let errno = unsafe { execvp(arg(4), argv.add(4), envp) };
    fail(report, b'x', errno)
}

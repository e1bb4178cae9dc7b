//! Launching stdio MCP servers safely, and sharing connections to them.
//!
//! - [`launch`] starts a server from a [`LaunchSpec`]: cleared environment plus an
//!   allow-list, its own process group, a bounded stdout line reader for rmcp,
//!   stderr into `tracing` and a [`StderrTail`], and an escalating
//!   [`StdioProcess::shutdown`] that leaves no grandchild behind. It is the only
//!   place in the workspace that spawns processes (Unix only). If the host itself
//!   dies (even by SIGKILL), a small helper process kills every server's group.
//! - [`Pool`] shares one connection per key among many [`Lease`]s: single-flight
//!   starts, generations ([`Pool::replace`]), idle keep-alive, crash-loop backoff,
//!   counters ([`Pool::stats`]). It is generic over the key and the
//!   [`PooledConnection`], so it knows nothing of MCP or processes.
//! - [`SessionGate`] serializes the sessions sharing one connection (FIFO turns; one
//!   session's operations run concurrently) and routes server-to-client requests to
//!   the session whose operation is running, declining when that is unclear.
//!
//! ```
//! use mcp_pool::{LaunchSpec, launch};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let spec = LaunchSpec::new("sh").with_args(["-c", "echo ready >&2; exec cat"]);
//! let process = launch(spec).await.unwrap();
//! let exit = process.shutdown().await; // closes stdin: `cat` exits by itself
//! assert!(exit.is_success());
//! assert_eq!(process.stderr_tail().snapshot(), "ready");
//! # });
//! ```

#![allow(
    clippy::disallowed_methods,
    reason = "mcp-pool is the one crate that spawns server processes (its launcher)"
)]

// The launcher needs process groups and signals: it exists on Unix only. The pool and
// the session gate are portable.
#[cfg(unix)]
mod backoff;
mod launch;
mod pool;
mod router;

#[cfg(unix)]
pub use backoff::Backoff;
pub use launch::{
    ALLOWED_HOST_ENV, BoundedLineReader, DEFAULT_MAX_LINE_BYTES, DEFAULT_STDERR_TAIL_BYTES,
    DEFAULT_STDERR_TAIL_LINES, DEFAULT_STDIN_GRACE, DEFAULT_TERM_GRACE, ExitWatcher, LaunchError,
    LaunchSpec, ProcessExit, StderrTail, StdinWriter, StdioProcess, StdioTransport, StdoutReader,
    launch, reaper_pid,
};
pub use pool::{
    AnyError, DEFAULT_BACKOFF_INITIAL, DEFAULT_BACKOFF_MAX, DEFAULT_IDLE_KEEP_ALIVE, ErrorChain,
    FactoryError, Failure, Generation, KeyStatus, Lease, Pool, PoolConfig, PoolError, PoolKey,
    PoolStats, PooledConnection, deadline_in,
};
pub use router::{DeclineReason, OperationGuard, Route, Session, SessionGate, SessionId};

// The README's example, compiled and run as a doc test (not part of the rendered docs).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

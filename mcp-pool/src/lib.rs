//! Launching stdio MCP servers safely, and sharing connections to them.
//!
//! - [`launch`] starts a server from a [`LaunchSpec`]: cleared environment plus an
//!   allow-list, its own process group, a bounded stdout line reader for rmcp,
//!   stderr into `tracing` and a [`StderrTail`], and an escalating
//!   [`StdioProcess::shutdown`] that leaves no grandchild behind.
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

#[cfg(not(unix))]
compile_error!("mcp-pool supports Unix only (process groups and signals)");

mod launch;
mod pool;
mod router;

pub use launch::{
    ALLOWED_HOST_ENV, BoundedLineReader, DEFAULT_MAX_LINE_BYTES, DEFAULT_STDERR_TAIL_BYTES,
    DEFAULT_STDERR_TAIL_LINES, DEFAULT_STDIN_GRACE, DEFAULT_TERM_GRACE, ExitWatcher, LaunchError,
    LaunchSpec, ProcessExit, StderrTail, StdinWriter, StdioProcess, StdioTransport, StdoutReader,
    launch,
};
pub use pool::{
    DEFAULT_BACKOFF_INITIAL, DEFAULT_BACKOFF_MAX, DEFAULT_IDLE_KEEP_ALIVE, Generation, KeyStatus,
    Lease, Pool, PoolConfig, PoolError, PoolKey, PoolStats, PooledConnection, StartError,
};
pub use router::{DeclineReason, OperationGuard, Route, Session, SessionGate, SessionId};

//! The stdio launcher: the only place in the workspace that spawns processes.

mod child;
mod env;
mod error;
#[cfg(target_os = "linux")]
mod exec_helper;
mod exit;
mod group;
mod line_reader;
#[cfg(target_os = "linux")]
mod parent_death;
mod process;
mod reaper;
mod spawn;
mod spawner;
mod spec;
mod stderr;

pub use error::LaunchError;
pub use exit::{ExitWatcher, ProcessExit};
pub use line_reader::BoundedLineReader;
pub use process::{StdinWriter, StdioProcess, StdioTransport, StdoutReader};
pub use reaper::reaper_pid;
pub use spawn::launch;
pub use spec::{
    ALLOWED_HOST_ENV, DEFAULT_MAX_LINE_BYTES, DEFAULT_STDERR_TAIL_BYTES, DEFAULT_STDERR_TAIL_LINES,
    DEFAULT_STDIN_GRACE, DEFAULT_TERM_GRACE, LaunchSpec,
};
pub use stderr::StderrTail;

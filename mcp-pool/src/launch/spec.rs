//! What to launch: [`LaunchSpec`] and its documented defaults.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Default cap on one stdout line (one JSON-RPC message): 8 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// Default time a server gets to exit after its stdin is closed, before SIGTERM: 2 s.
pub const DEFAULT_STDIN_GRACE: Duration = Duration::from_secs(2);

/// Default time a server's process group gets to exit after SIGTERM, before SIGKILL: 2 s.
pub const DEFAULT_TERM_GRACE: Duration = Duration::from_secs(2);

/// Default number of stderr lines kept in the [`StderrTail`](crate::StderrTail): 50.
pub const DEFAULT_STDERR_TAIL_LINES: usize = 50;

/// Default number of stderr bytes kept in the [`StderrTail`](crate::StderrTail): 16 KiB.
pub const DEFAULT_STDERR_TAIL_BYTES: usize = 16 * 1024;

/// Host environment variables every child inherits (when set on the host): `HOME`,
/// `LOGNAME`, `PATH`, `SHELL`, `USER`, `LANG`, `LC_ALL`, `TERM`, `TMPDIR`, `TZ`.
///
/// Nothing else from the host environment reaches a child unless it is named with
/// [`LaunchSpec::with_env_var`].
pub const ALLOWED_HOST_ENV: [&str; 10] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ",
];

/// Everything needed to start one stdio MCP server.
///
/// Built with [`LaunchSpec::new`] and `with_*` setters; started with
/// [`launch`](crate::launch). `Debug` never prints literal environment values (they
/// often hold API keys), only their names.
///
/// ```
/// use std::time::Duration;
/// use mcp_pool::LaunchSpec;
///
/// let spec = LaunchSpec::new("npx")
///     .with_args(["-y", "@modelcontextprotocol/server-everything"])
///     .with_env("API_TOKEN", "s3cret")
///     .with_env_var("HTTPS_PROXY")
///     .with_label("everything")
///     .with_term_grace(Duration::from_millis(500));
/// assert_eq!(spec.program(), "npx");
/// assert!(!format!("{spec:?}").contains("s3cret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaunchSpec {
    program: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    env_vars: BTreeSet<String>,
    cwd: Option<PathBuf>,
    wrapper: Vec<String>,
    label: Option<String>,
    max_line_bytes: usize,
    stdin_grace: Duration,
    term_grace: Duration,
    stderr_tail_lines: usize,
    stderr_tail_bytes: usize,
    stdin_preamble: Vec<u8>,
}

impl LaunchSpec {
    /// A spec that runs `program` (looked up in the child's `PATH` unless it contains
    /// a `/`) with no arguments and every default.
    pub fn new(program: impl Into<String>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            env_vars: BTreeSet::new(),
            cwd: None,
            wrapper: Vec::new(),
            label: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            stdin_grace: DEFAULT_STDIN_GRACE,
            term_grace: DEFAULT_TERM_GRACE,
            stderr_tail_lines: DEFAULT_STDERR_TAIL_LINES,
            stderr_tail_bytes: DEFAULT_STDERR_TAIL_BYTES,
            stdin_preamble: Vec::new(),
        }
    }

    /// Appends arguments.
    #[must_use]
    pub fn with_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets a literal environment variable (wins over inherited values).
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Copies the host's value of `name` into the child (skipped when unset on the host).
    #[must_use]
    pub fn with_env_var(mut self, name: impl Into<String>) -> Self {
        self.env_vars.insert(name.into());
        self
    }

    /// Runs the child in `cwd` instead of the host's current directory.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Runs the command behind an environment wrapper prefix, e.g.
    /// `["ssh", "devbox", "--"]` or `["docker", "exec", "-i", "box"]`. Empty = local.
    ///
    /// The wrapper's first word is the program actually spawned (and the one named in
    /// spawn errors); environment and `cwd` apply to that local process.
    #[must_use]
    pub fn with_wrapper<I, S>(mut self, wrapper: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.wrapper = wrapper.into_iter().map(Into::into).collect();
        self
    }

    /// Names the server in messages and `tracing` fields (default: the program).
    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Caps one stdout line (default [`DEFAULT_MAX_LINE_BYTES`]).
    #[must_use]
    pub fn with_line_limit(mut self, max_line_bytes: usize) -> Self {
        self.max_line_bytes = max_line_bytes;
        self
    }

    /// Time between closing stdin and SIGTERM (default [`DEFAULT_STDIN_GRACE`]).
    #[must_use]
    pub fn with_stdin_grace(mut self, grace: Duration) -> Self {
        self.stdin_grace = grace;
        self
    }

    /// Time between SIGTERM and SIGKILL (default [`DEFAULT_TERM_GRACE`]).
    #[must_use]
    pub fn with_term_grace(mut self, grace: Duration) -> Self {
        self.term_grace = grace;
        self
    }

    /// Sizes the stderr tail (defaults [`DEFAULT_STDERR_TAIL_LINES`] lines and
    /// [`DEFAULT_STDERR_TAIL_BYTES`] bytes).
    #[must_use]
    pub fn with_stderr_tail(mut self, max_lines: usize, max_bytes: usize) -> Self {
        self.stderr_tail_lines = max_lines;
        self.stderr_tail_bytes = max_bytes;
        self
    }

    /// Bytes written to the child's stdin before anything the transport writes: values
    /// that must not sit on a command line, such as the variables an ssh environment
    /// hands its remote side. Never shown by `Debug` (only their length).
    #[must_use]
    pub fn with_stdin_preamble(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin_preamble = bytes.into();
        self
    }

    /// The bytes written to stdin first (empty by default).
    pub fn stdin_preamble(&self) -> &[u8] {
        &self.stdin_preamble
    }

    /// The program (without the wrapper).
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The program's arguments.
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// Literal environment variables.
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// Host variables copied by name.
    pub fn env_vars(&self) -> &BTreeSet<String> {
        &self.env_vars
    }

    /// The configured working directory, if any.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// The environment wrapper prefix (empty for local).
    pub fn wrapper(&self) -> &[String] {
        &self.wrapper
    }

    /// The label used in messages: the configured one, else the program.
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.program)
    }

    /// The stdout line cap.
    pub fn line_limit(&self) -> usize {
        self.max_line_bytes
    }

    /// Time between closing stdin and SIGTERM.
    pub fn stdin_grace(&self) -> Duration {
        self.stdin_grace
    }

    /// Time between SIGTERM and SIGKILL.
    pub fn term_grace(&self) -> Duration {
        self.term_grace
    }

    /// `(max_lines, max_bytes)` of the stderr tail.
    pub fn stderr_tail_limits(&self) -> (usize, usize) {
        (self.stderr_tail_lines, self.stderr_tail_bytes)
    }

    /// The program actually spawned: the wrapper's first word, else the program.
    pub fn spawned_program(&self) -> &str {
        self.wrapper.first().map_or(&self.program, String::as_str)
    }

    /// Arguments of the spawned program: the rest of the wrapper, the program (when
    /// wrapped), then the arguments.
    pub fn spawned_args(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::with_capacity(self.wrapper.len() + self.args.len());
        if !self.wrapper.is_empty() {
            out.extend(self.wrapper[1..].iter().map(String::as_str));
            out.push(&self.program);
        }
        out.extend(self.args.iter().map(String::as_str));
        out
    }
}

impl fmt::Debug for LaunchSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LaunchSpec")
            .field("label", &self.label())
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("env_vars", &self.env_vars)
            .field("cwd", &self.cwd)
            .field("wrapper", &self.wrapper)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("stdin_grace", &self.stdin_grace)
            .field("term_grace", &self.term_grace)
            .field("stdin_preamble_bytes", &self.stdin_preamble.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapper_prefixes_program_and_args() {
        let spec = LaunchSpec::new("server")
            .with_args(["--x", "1"])
            .with_wrapper(["ssh", "devbox", "--"]);
        assert_eq!(spec.spawned_program(), "ssh");
        assert_eq!(spec.spawned_args(), ["devbox", "--", "server", "--x", "1"]);
        let local = LaunchSpec::new("server").with_args(["a"]);
        assert_eq!(local.spawned_program(), "server");
        assert_eq!(local.spawned_args(), ["a"]);
    }

    #[test]
    fn debug_redacts_literal_env_values() {
        let spec = LaunchSpec::new("s").with_env("TOKEN", "hunter2");
        let text = format!("{spec:?}");
        assert!(text.contains("TOKEN"));
        assert!(!text.contains("hunter2"));
    }

    #[test]
    fn label_defaults_to_program() {
        assert_eq!(LaunchSpec::new("npx").label(), "npx");
        assert_eq!(LaunchSpec::new("npx").with_label("fs").label(), "fs");
    }
}

//! [`StdioProcess`]: a running server, its transport, and its shutdown.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::AsyncWrite;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::child::{SpawnedChild, shared_label};
use super::exit::{ExitWatcher, ProcessExit};
use super::group::{GroupSignal, ProcessGroup};
use super::line_reader::BoundedLineReader;
use super::reaper::Registration;
use super::spec::LaunchSpec;
use super::stderr::{StderrTail, pump_stderr};

/// How long to wait for the group to vanish after SIGKILL before giving up.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// How long shutdown waits for the stderr reader to reach EOF.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// How often to look whether the group still has members while waiting.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// The child's stdout as rmcp reads it: lines capped by the spec's line limit.
pub type StdoutReader = BoundedLineReader<ChildStdout>;

/// The read and write halves handed to rmcp: `(StdoutReader, StdinWriter)` is an
/// rmcp transport with its `transport-async-rw` feature.
pub type StdioTransport = (StdoutReader, StdinWriter);

/// A running stdio server in its own process group.
///
/// - [`take_transport`](Self::take_transport) gives rmcp the pipes.
/// - [`stderr_tail`](Self::stderr_tail) and [`exit_watcher`](Self::exit_watcher)
///   observe it.
/// - [`shutdown`](Self::shutdown) stops it gracefully: close stdin, wait the stdin
///   grace, SIGTERM the group, wait the term grace, SIGKILL the group, reap.
///
/// Dropping it without `shutdown` SIGKILLs the whole group at once, from `Drop`,
/// without needing a runtime. The leader is then reaped by the exit watcher task (or
/// by tokio's orphan reaper if the runtime is gone); grandchildren are reaped by
/// their parent or by init.
#[derive(Debug)]
pub struct StdioProcess {
    label: Arc<str>,
    pid: u32,
    group: Option<ProcessGroup>,
    /// Keeps the group on the reaper's list (killed if the host dies) until it is gone.
    registration: Option<Arc<Registration>>,
    transport: Option<StdioTransport>,
    stdin: Weak<Mutex<Option<ChildStdin>>>,
    stderr_tail: StderrTail,
    exit: ExitWatcher,
    stdout_fault: Arc<OnceLock<String>>,
    stop_stderr: CancellationToken,
    stdin_grace: Duration,
    term_grace: Duration,
    shutdown: OnceCell<ProcessExit>,
    group_gone: AtomicBool,
}

impl StdioProcess {
    /// Wires up the tasks of a freshly spawned child. Synchronous, so a cancelled
    /// `launch` cannot leave it half-owned.
    pub(crate) fn start(spec: &LaunchSpec, mut spawned: SpawnedChild) -> Self {
        let label = shared_label(spec);
        let pid = spawned.pid;
        let group = spawned.group;
        let registration = spawned.registration.clone();
        let (exit_tx, exit) = ExitWatcher::channel();
        let (tail_lines, tail_bytes) = spec.stderr_tail_limits();
        let stderr_tail = StderrTail::new(tail_lines, tail_bytes);
        let stop_stderr = CancellationToken::new();
        let stdout_fault = Arc::new(OnceLock::new());
        // A root: the process outlives the request that started it, and a span its tasks
        // keep would hold that request's span open for the process's life.
        let span = tracing::info_span!(parent: None, "mcp_server", server = %label, pid);

        let mut transport = None;
        let mut stdin_weak = Weak::new();
        let separate_stdin = spawned.stdin.take();
        if let Some(mut child) = spawned.defuse() {
            let stdin = child.stdin.take().or(separate_stdin);
            if let (Some(stdin), Some(stdout)) = (stdin, child.stdout.take()) {
                let stdin = Arc::new(Mutex::new(Some(stdin)));
                stdin_weak = Arc::downgrade(&stdin);
                let reader = BoundedLineReader::new(stdout, spec.line_limit())
                    .with_fault_slot(stdout_fault.clone());
                let writer = StdinWriter {
                    inner: stdin,
                    label: label.clone(),
                    preamble: spec.stdin_preamble().to_vec(),
                    preamble_written: 0,
                };
                transport = Some((reader, writer));
            }
            if let Some(stderr) = child.stderr.take() {
                tokio::spawn(
                    pump_stderr(
                        stderr,
                        stderr_tail.clone(),
                        label.clone(),
                        stop_stderr.clone(),
                    )
                    .instrument(span.clone()),
                );
            }
            // Owns the child until it exits (the group is killed on drop/shutdown,
            // so the task ends); it reaps the leader and publishes the exit. Once the
            // leader is reaped its pid may be reused, so an empty group leaves the
            // reaper's list right away.
            let reaped = registration.clone();
            tokio::spawn(
                async move {
                    let exit = match child.wait().await {
                        Ok(status) => ProcessExit::from_status(status),
                        Err(err) => ProcessExit::Unknown(err.to_string()),
                    };
                    tracing::debug!(%exit, "server process exited");
                    if let Some(reaped) = reaped
                        && !group.is_some_and(ProcessGroup::has_live_members)
                    {
                        reaped.release();
                    }
                    exit_tx.send_replace(Some(exit));
                }
                .instrument(span.clone()),
            );
        }
        span.in_scope(|| {
            tracing::debug!(command = spec.spawned_program(), "server process started")
        });
        Self {
            label,
            pid,
            group,
            registration,
            transport,
            stdin: stdin_weak,
            stderr_tail,
            exit,
            stdout_fault,
            stop_stderr,
            stdin_grace: spec.stdin_grace(),
            term_grace: spec.term_grace(),
            shutdown: OnceCell::new(),
            group_gone: AtomicBool::new(false),
        }
    }

    /// The leader's process id (also the process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The server's label from the spec.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Takes the `(stdout, stdin)` pair for rmcp. `None` the second time.
    ///
    /// ```no_run
    /// # async fn demo(mut process: mcp_pool::StdioProcess) {
    /// let (reader, writer) = process.take_transport().unwrap();
    /// // rmcp: `handler.serve((reader, writer)).await`
    /// # drop((reader, writer));
    /// # }
    /// ```
    pub fn take_transport(&mut self) -> Option<StdioTransport> {
        self.transport.take()
    }

    /// The last lines the server wrote to stderr (a shared, live handle).
    pub fn stderr_tail(&self) -> StderrTail {
        self.stderr_tail.clone()
    }

    /// A handle that resolves when the process exits.
    pub fn exit_watcher(&self) -> ExitWatcher {
        self.exit.clone()
    }

    /// Whether the leader process has exited.
    pub fn has_exited(&self) -> bool {
        self.exit.has_exited()
    }

    /// Why the stdout transport failed, if it did ("stdout line longer than N bytes").
    pub fn stdout_fault(&self) -> Option<&str> {
        self.stdout_fault.get().map(String::as_str)
    }

    /// SIGKILLs the whole process group now (no grace). Does not wait.
    pub fn kill(&self) {
        if let Some(group) = self.group {
            group.signal(GroupSignal::Kill);
        }
    }

    /// Stops the server and everything it started: close stdin, wait the stdin
    /// grace, SIGTERM the group, wait the term grace, SIGKILL the group, reap.
    /// Each step is skipped once the leader has exited and the group is empty.
    ///
    /// Idempotent: later and concurrent calls wait for the same result.
    ///
    /// # Cancel safety
    /// Cancel-safe: a cancelled call leaves the process to a later call or to `Drop`.
    pub async fn shutdown(&self) -> ProcessExit {
        self.shutdown
            .get_or_init(|| self.run_shutdown())
            .await
            .clone()
    }

    async fn run_shutdown(&self) -> ProcessExit {
        let span = tracing::info_span!("mcp_server_shutdown", server = %self.label, pid = self.pid);
        async {
            self.close_stdin();
            let mut gone = self.wait_gone(self.stdin_grace).await;
            if !gone {
                tracing::debug!("sending SIGTERM to the process group");
                self.signal(GroupSignal::Term);
                gone = self.wait_gone(self.term_grace).await;
            }
            if !gone {
                tracing::warn!("server ignored SIGTERM; sending SIGKILL to its process group");
                self.signal(GroupSignal::Kill);
                gone = self.wait_gone(KILL_WAIT).await;
                if !gone {
                    tracing::warn!("server processes still present after SIGKILL");
                }
            }
            self.group_gone.store(gone, Ordering::Release);
            if gone {
                self.release_registration();
                // Every writer is gone: let the stderr reader catch up so the tail is
                // complete when shutdown returns.
                let _ = tokio::time::timeout(STDERR_DRAIN, self.stderr_tail.wait_closed()).await;
            }
            let exit = self.exit.wait_exit().await;
            tracing::debug!(%exit, "server stopped");
            exit
        }
        .instrument(span)
        .await
    }

    fn signal(&self, signal: GroupSignal) {
        if let Some(group) = self.group {
            group.signal(signal);
        }
    }

    fn release_registration(&self) {
        if let Some(registration) = &self.registration {
            registration.release();
        }
    }

    fn close_stdin(&self) {
        if let Some(stdin) = self.stdin.upgrade() {
            drop(stdin.lock().unwrap_or_else(PoisonError::into_inner).take());
        }
    }

    /// Waits up to `limit` until the leader has exited and no group member lives.
    async fn wait_gone(&self, limit: Duration) -> bool {
        let gone = async {
            self.exit.wait_exit().await;
            while self.group.is_some_and(ProcessGroup::has_live_members) {
                tokio::time::sleep(GROUP_POLL).await;
            }
        };
        tokio::time::timeout(limit, gone).await.is_ok()
    }
}

impl Drop for StdioProcess {
    fn drop(&mut self) {
        self.stop_stderr.cancel();
        if !self.group_gone.load(Ordering::Acquire)
            && let Some(group) = self.group
            && group.signal(GroupSignal::Kill)
        {
            tracing::debug!(server = %self.label, pid = self.pid, "killed process group on drop");
        }
        // Gone, or doomed by the SIGKILL just sent: the reaper can forget it.
        self.release_registration();
    }
}

/// The child's stdin as an `AsyncWrite`. [`StdioProcess::shutdown`] can close it
/// even while rmcp holds this writer; writes then fail with `BrokenPipe`. The spec's
/// [stdin preamble](LaunchSpec::with_stdin_preamble) goes out before the first write.
pub struct StdinWriter {
    inner: Arc<Mutex<Option<ChildStdin>>>,
    label: Arc<str>,
    preamble: Vec<u8>,
    preamble_written: usize,
}

impl fmt::Debug for StdinWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The preamble may hold secrets.
        f.debug_struct("StdinWriter")
            .field("label", &self.label)
            .field("preamble_bytes", &self.preamble.len())
            .finish_non_exhaustive()
    }
}

impl StdinWriter {
    fn closed(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::BrokenPipe,
            format!("stdin of server `{}` is closed", self.label),
        )
    }
}

impl AsyncWrite for StdinWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let mut stdin = this.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(pipe) = stdin.as_mut() else {
            drop(stdin);
            return Poll::Ready(Err(this.closed()));
        };
        // The preamble first, whole; `buf` is not taken until it is out.
        while this.preamble_written < this.preamble.len() {
            match Pin::new(&mut *pipe).poll_write(cx, &this.preamble[this.preamble_written..]) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => this.preamble_written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Pin::new(pipe).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut stdin = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match stdin.as_mut() {
            Some(pipe) => Pin::new(pipe).poll_flush(cx),
            None => Poll::Ready(Err(self.closed())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut stdin = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match stdin.as_mut() {
            Some(pipe) => Pin::new(pipe).poll_shutdown(cx),
            None => Poll::Ready(Ok(())),
        }
    }
}

//! Reading a child's stderr into `tracing` and a bounded tail.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use std::time::Duration;

use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Longest stderr line kept and logged, in bytes (longer ones are cut and marked with
/// their full length).
const MAX_STDERR_LINE: usize = 4096;

/// At most this many stderr lines of one server go to `tracing` per [`LOG_WINDOW`]; the
/// rest of a flood is counted and reported in one line (the tail still gets every line).
const MAX_LOGGED_LINES_PER_WINDOW: u32 = 200;

/// The window of [`MAX_LOGGED_LINES_PER_WINDOW`].
const LOG_WINDOW: Duration = Duration::from_secs(1);

/// The last lines a server wrote to stderr (bounded by line count and bytes).
///
/// Cheap to clone; every clone sees the same tail. Startup errors and status reports
/// include [`snapshot`](Self::snapshot).
#[derive(Clone, Debug)]
pub struct StderrTail {
    inner: Arc<Mutex<TailBuf>>,
    closed: CancellationToken,
}

#[derive(Debug)]
struct TailBuf {
    lines: VecDeque<String>,
    bytes: usize,
    max_lines: usize,
    max_bytes: usize,
}

impl StderrTail {
    /// An empty tail keeping at most `max_lines` lines and `max_bytes` bytes.
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(TailBuf {
                lines: VecDeque::new(),
                bytes: 0,
                max_lines,
                max_bytes,
            })),
            closed: CancellationToken::new(),
        }
    }

    /// Waits until the server's stderr is closed (every process holding it exited)
    /// and all of it is in the tail.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn wait_closed(&self) {
        self.closed.cancelled().await;
    }

    /// Whether the server's stderr is closed and fully read.
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    pub(crate) fn mark_closed(&self) {
        self.closed.cancel();
    }

    /// Appends one line, dropping the oldest ones past the limits.
    pub fn push(&self, line: impl Into<String>) {
        let mut line = line.into();
        let mut tail = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if line.len() > tail.max_bytes {
            let mut cut = tail.max_bytes;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        tail.bytes += line.len();
        tail.lines.push_back(line);
        while tail.lines.len() > tail.max_lines || tail.bytes > tail.max_bytes {
            match tail.lines.pop_front() {
                Some(old) => tail.bytes -= old.len(),
                None => break,
            }
        }
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let tail = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        tail.lines.iter().cloned().collect()
    }

    /// The kept lines joined with `\n` (empty when nothing was written).
    pub fn snapshot(&self) -> String {
        self.lines().join("\n")
    }
}

/// How many stderr lines may go to `tracing` now: a fixed budget per window, and the
/// count of lines left out since the last one logged.
#[derive(Debug)]
struct LogBudget {
    window_start: Instant,
    logged: u32,
    suppressed: u64,
}

impl LogBudget {
    fn new(now: Instant) -> Self {
        Self {
            window_start: now,
            logged: 0,
            suppressed: 0,
        }
    }

    /// Whether a line may be logged at `now`; when it may, also how many lines were left
    /// out before it (to report first).
    fn admit(&mut self, now: Instant) -> Option<u64> {
        if now.duration_since(self.window_start) >= LOG_WINDOW {
            self.window_start = now;
            self.logged = 0;
        }
        if self.logged < MAX_LOGGED_LINES_PER_WINDOW {
            self.logged += 1;
            Some(std::mem::take(&mut self.suppressed))
        } else {
            self.suppressed += 1;
            None
        }
    }
}

/// Bytes read from stderr at a time. The buffer is on the stack of one poll only, so an
/// idle server's pump keeps no read buffer between reads.
const READ_CHUNK: usize = 8192;

/// Reads `stderr` until EOF or `stop`, line by line, into `tail` and `tracing` (each line
/// cut to [`MAX_STDERR_LINE`] bytes; at most [`MAX_LOGGED_LINES_PER_WINDOW`] logged lines
/// per [`LOG_WINDOW`]).
///
/// Between reads the task holds only the part of a line not yet ended (nothing once a
/// read ends at a line break): a connection lives for hours with an idle stderr, and a
/// read buffer kept across its `await` would cost every connection [`READ_CHUNK`] bytes.
pub(crate) async fn pump_stderr<R: AsyncRead + Unpin>(
    mut stderr: R,
    tail: StderrTail,
    label: Arc<str>,
    stop: CancellationToken,
) {
    let mut lines = LineSplitter {
        line: Vec::new(),
        line_len: 0,
        budget: LogBudget::new(Instant::now()),
    };
    loop {
        let more = tokio::select! {
            () = stop.cancelled() => break,
            more = std::future::poll_fn(|cx| lines.poll_read(&mut stderr, cx, &tail, &label)) => more,
        };
        if !more {
            break;
        }
    }
    if lines.line_len > 0 {
        emit(
            &tail,
            &label,
            &mut lines.budget,
            &lines.line,
            lines.line_len,
        );
    }
    if lines.budget.suppressed > 0 {
        log_suppressed(&label, lines.budget.suppressed);
    }
    tail.mark_closed();
}

/// The state of [`pump_stderr`] between reads.
#[derive(Debug)]
struct LineSplitter {
    /// The kept bytes of the current line (at most [`MAX_STDERR_LINE`]).
    line: Vec<u8>,
    /// Bytes of the current line, including those past the cut.
    line_len: usize,
    budget: LogBudget,
}

impl LineSplitter {
    /// One read from `stderr` into a buffer on this poll's stack, its lines emitted:
    /// `Ready(true)` after a read, `Ready(false)` at EOF or on an error.
    fn poll_read<R: AsyncRead + Unpin>(
        &mut self,
        stderr: &mut R,
        cx: &mut Context<'_>,
        tail: &StderrTail,
        label: &str,
    ) -> Poll<bool> {
        let mut chunk = [0u8; READ_CHUNK];
        let mut buf = ReadBuf::new(&mut chunk);
        match Pin::new(stderr).poll_read(cx, &mut buf) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(_)) => Poll::Ready(false),
            Poll::Ready(Ok(())) if buf.filled().is_empty() => Poll::Ready(false),
            Poll::Ready(Ok(())) => {
                self.feed(buf.filled(), tail, label);
                Poll::Ready(true)
            }
        }
    }

    /// Splits `bytes` into lines, emitting each one ended.
    fn feed(&mut self, bytes: &[u8], tail: &StderrTail, label: &str) {
        for byte in bytes {
            if *byte == b'\n' {
                emit(tail, label, &mut self.budget, &self.line, self.line_len);
                self.line.clear();
                self.line_len = 0;
            } else {
                self.line_len = self.line_len.saturating_add(1);
                if self.line.len() < MAX_STDERR_LINE {
                    self.line.push(*byte);
                }
            }
        }
        if self.line.is_empty() {
            // Nothing pending: don't keep the longest line's capacity while idle.
            self.line = Vec::new();
        }
    }
}

fn emit(tail: &StderrTail, label: &str, budget: &mut LogBudget, kept: &[u8], len: usize) {
    let text = bounded_line(kept, len);
    if let Some(suppressed) = budget.admit(Instant::now()) {
        if suppressed > 0 {
            log_suppressed(label, suppressed);
        }
        tracing::debug!(target: "mcp_pool::server_stderr", server = %label, "{text}");
    }
    tail.push(text);
}

fn log_suppressed(label: &str, count: u64) {
    tracing::debug!(
        target: "mcp_pool::server_stderr",
        server = %label,
        "… {count} stderr lines not logged (more than {MAX_LOGGED_LINES_PER_WINDOW} per second)"
    );
}

/// The text of a stderr line whose first bytes are `kept` and whose full length was `len`
/// bytes: without a trailing `\r`, lossily decoded, and marked `… (N bytes)` when cut.
fn bounded_line(kept: &[u8], len: usize) -> String {
    let cut = len > kept.len();
    let kept = if cut {
        kept
    } else {
        kept.strip_suffix(b"\r").unwrap_or(kept)
    };
    let mut text = String::from_utf8_lossy(kept).into_owned();
    if cut {
        text.push_str(&format!("… ({len} bytes)"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_last_lines_within_both_limits() {
        let tail = StderrTail::new(3, 10);
        for line in ["a", "bb", "ccc", "dddd"] {
            tail.push(line);
        }
        assert_eq!(tail.lines(), ["bb", "ccc", "dddd"]);
        tail.push("eeeeeeeeee");
        assert_eq!(tail.snapshot(), "eeeeeeeeee");
        tail.push("ééééééééééé"); // 22 bytes: cut on a char boundary
        assert_eq!(tail.snapshot(), "ééééé");
    }

    #[tokio::test]
    async fn pump_splits_lines_and_cuts_long_ones() {
        let mut input = b"one\r\ntwo\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_STDERR_LINE + 10));
        input.extend(b"\nlast");
        let tail = StderrTail::new(50, 64 * 1024);
        pump_stderr(
            &input[..],
            tail.clone(),
            "s".into(),
            CancellationToken::new(),
        )
        .await;
        let lines = tail.lines();
        assert_eq!(lines[..2], ["one", "two"]);
        assert_eq!(
            lines[2],
            format!(
                "{}… ({} bytes)",
                "x".repeat(MAX_STDERR_LINE),
                MAX_STDERR_LINE + 10
            )
        );
        assert_eq!(lines[3], "last");
        assert!(tail.is_closed());
    }

    #[tokio::test]
    async fn lines_split_across_reads_are_joined() {
        let (mut writer, reader) = tokio::io::duplex(4);
        let tail = StderrTail::new(50, 64 * 1024);
        let pump = tokio::spawn(pump_stderr(
            reader,
            tail.clone(),
            "s".into(),
            CancellationToken::new(),
        ));
        for piece in [&b"par"[..], b"tial\nne", b"xt\n\nend"] {
            tokio::io::AsyncWriteExt::write_all(&mut writer, piece)
                .await
                .expect("write to the pipe");
        }
        drop(writer);
        pump.await.expect("the pump ends at EOF");
        assert_eq!(tail.lines(), ["partial", "next", "", "end"]);
        assert!(tail.is_closed());
    }

    #[test]
    fn an_idle_pump_holds_no_read_buffer() {
        let (_writer, reader) = tokio::io::duplex(64);
        let pump = pump_stderr(
            reader,
            StderrTail::new(1, 1),
            "s".into(),
            CancellationToken::new(),
        );
        // The whole task state, reader included, is far smaller than one read.
        let size = std::mem::size_of_val(&pump);
        assert!(size < READ_CHUNK / 4, "pump future is {size} bytes");
    }

    #[test]
    fn a_line_at_the_limit_is_not_marked() {
        let line = vec![b'y'; MAX_STDERR_LINE];
        assert_eq!(bounded_line(&line, line.len()), "y".repeat(MAX_STDERR_LINE));
        assert_eq!(bounded_line(b"a\r", 2), "a");
        assert_eq!(bounded_line(b"ab", 1_000_000), "ab… (1000000 bytes)");
    }

    #[test]
    fn a_flood_is_logged_up_to_the_budget_then_counted() {
        let start = Instant::now();
        let mut budget = LogBudget::new(start);
        for _ in 0..MAX_LOGGED_LINES_PER_WINDOW {
            assert_eq!(budget.admit(start), Some(0));
        }
        for _ in 0..5 {
            assert_eq!(budget.admit(start + Duration::from_millis(500)), None);
        }
        // The next window logs again, reporting what was left out first.
        assert_eq!(budget.admit(start + LOG_WINDOW), Some(5));
        assert_eq!(budget.admit(start + LOG_WINDOW), Some(0));
    }
}

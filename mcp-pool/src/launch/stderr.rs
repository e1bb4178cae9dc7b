//! Reading a child's stderr into `tracing` and a bounded tail.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
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

/// Reads `stderr` until EOF or `stop`, line by line, into `tail` and `tracing` (each line
/// cut to [`MAX_STDERR_LINE`] bytes; at most [`MAX_LOGGED_LINES_PER_WINDOW`] logged lines
/// per [`LOG_WINDOW`]).
pub(crate) async fn pump_stderr<R: AsyncRead + Unpin>(
    mut stderr: R,
    tail: StderrTail,
    label: Arc<str>,
    stop: CancellationToken,
) {
    let mut chunk = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    // Bytes of the current line, including those past the cut.
    let mut line_len = 0usize;
    let mut budget = LogBudget::new(Instant::now());
    loop {
        let n = tokio::select! {
            () = stop.cancelled() => break,
            read = stderr.read(&mut chunk) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
        };
        for byte in &chunk[..n] {
            if *byte == b'\n' {
                emit(&tail, &label, &mut budget, &line, line_len);
                line.clear();
                line_len = 0;
            } else {
                line_len = line_len.saturating_add(1);
                if line.len() < MAX_STDERR_LINE {
                    line.push(*byte);
                }
            }
        }
    }
    if line_len > 0 {
        emit(&tail, &label, &mut budget, &line, line_len);
    }
    if budget.suppressed > 0 {
        log_suppressed(&label, budget.suppressed);
    }
    tail.mark_closed();
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

//! Reading a child's stderr into `tracing` and a bounded tail.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

/// Longest stderr line kept (longer ones are cut and marked).
const MAX_STDERR_LINE: usize = 4096;

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

/// Reads `stderr` until EOF or `stop`, line by line, into `tail` and `tracing`.
pub(crate) async fn pump_stderr<R: AsyncRead + Unpin>(
    mut stderr: R,
    tail: StderrTail,
    label: Arc<str>,
    stop: CancellationToken,
) {
    let mut chunk = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let mut truncated = false;
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
                emit(&tail, &label, &line, truncated);
                line.clear();
                truncated = false;
            } else if line.len() < MAX_STDERR_LINE {
                line.push(*byte);
            } else {
                truncated = true;
            }
        }
    }
    if !line.is_empty() {
        emit(&tail, &label, &line, truncated);
    }
    tail.mark_closed();
}

fn emit(tail: &StderrTail, label: &str, raw: &[u8], truncated: bool) {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let mut text = String::from_utf8_lossy(raw).into_owned();
    if truncated {
        text.push_str(" [truncated]");
    }
    tracing::debug!(target: "mcp_pool::server_stderr", server = %label, "{text}");
    tail.push(text);
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
        assert!(lines[2].ends_with(" [truncated]"));
        assert_eq!(lines[2].len(), MAX_STDERR_LINE + " [truncated]".len());
        assert_eq!(lines[3], "last");
        assert!(tail.is_closed());
    }
}

//! [`BoundedLineReader`]: an `AsyncRead` that refuses overlong lines.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

/// Wraps a byte stream of newline-delimited messages and fails with an
/// [`io::ErrorKind::InvalidData`] error ("stdout line longer than N bytes") as soon
/// as one line grows past the limit.
///
/// It buffers nothing itself: bytes pass straight through, and only the length of
/// the current line is tracked. A reader downstream (rmcp's transport) therefore
/// never holds more than the limit for one message, and the failing read ends the
/// transport instead of letting memory grow.
///
/// ```
/// use tokio::io::AsyncReadExt;
/// use mcp_pool::BoundedLineReader;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut ok = BoundedLineReader::new(&b"{}\n{}\n"[..], 4);
/// let mut out = Vec::new();
/// ok.read_to_end(&mut out).await.unwrap();
/// assert_eq!(out, b"{}\n{}\n");
///
/// let mut long = BoundedLineReader::new(&b"0123456789\n"[..], 4);
/// let err = long.read_to_end(&mut Vec::new()).await.unwrap_err();
/// assert_eq!(err.to_string(), "stdout line longer than 4 bytes");
/// # });
/// ```
#[derive(Debug)]
pub struct BoundedLineReader<R> {
    inner: R,
    limit: usize,
    current_line: usize,
    failed: bool,
    fault: Arc<OnceLock<String>>,
}

impl<R> BoundedLineReader<R> {
    /// Caps lines of `inner` at `limit` bytes (not counting the newline).
    pub fn new(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            current_line: 0,
            failed: false,
            fault: Arc::new(OnceLock::new()),
        }
    }

    /// Shares the slot where the first fault message is recorded.
    pub(crate) fn with_fault_slot(mut self, fault: Arc<OnceLock<String>>) -> Self {
        self.fault = fault;
        self
    }

    /// The line cap in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    fn error(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("stdout line longer than {} bytes", self.limit),
        )
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLineReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.failed {
            return Poll::Ready(Err(this.error()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let (line, overflow_at) =
            scan_lines(&buf.filled()[before..], this.current_line, this.limit);
        this.current_line = line;
        let Some(at) = overflow_at else {
            return Poll::Ready(Ok(()));
        };
        // Hand over what precedes the offending byte; every later read fails.
        this.failed = true;
        let err = this.error();
        let _ = this.fault.set(err.to_string());
        buf.set_filled(before + at);
        if at == 0 {
            Poll::Ready(Err(err))
        } else {
            Poll::Ready(Ok(()))
        }
    }
}

/// Scans `bytes` read after `line` bytes of a line without its newline: the length of
/// the line the bytes end in, and the index of the first byte that makes a line longer
/// than `limit`, if one does (the scan stops there). Newlines are found with `memchr`, a
/// word or vector at a time.
fn scan_lines(bytes: &[u8], mut line: usize, limit: usize) -> (usize, Option<usize>) {
    let mut from = 0;
    let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
    for end in ends {
        let len = end - from;
        if line + len > limit {
            return (line, Some(from + limit.saturating_sub(line)));
        }
        if end == bytes.len() {
            return (line + len, None);
        }
        line = 0;
        from = end + 1;
    }
    (line, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn lines_at_the_limit_pass() {
        let data = b"abcd\nefgh\n\nij".to_vec();
        let mut r = BoundedLineReader::new(&data[..], 4);
        let mut out = Vec::new();
        r.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, data);
    }

    #[tokio::test]
    async fn limit_applies_across_reads() {
        // A line split over many small reads is still counted as one line.
        let (mut tx, rx) = tokio::io::duplex(3);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = tx.write_all(b"ok\n0123456789").await;
        });
        let mut r = BoundedLineReader::new(rx, 5);
        let mut out = Vec::new();
        let err = r.read_to_end(&mut out).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(out, b"ok\n01234");
        assert_eq!(
            r.fault.get().map(String::as_str),
            Some("stdout line longer than 5 bytes")
        );
        // Once failed, it stays failed.
        assert!(r.read(&mut [0u8; 8]).await.is_err());
        writer.abort();
    }

    /// The scan a byte at a time, as it was written before `memchr`.
    fn scan_bytewise(bytes: &[u8], mut line: usize, limit: usize) -> (usize, Option<usize>) {
        for (i, byte) in bytes.iter().enumerate() {
            if *byte == b'\n' {
                line = 0;
            } else {
                line += 1;
                if line > limit {
                    return (line - 1, Some(i));
                }
            }
        }
        (line, None)
    }

    proptest::proptest! {
        #[test]
        fn the_scan_finds_what_a_byte_at_a_time_finds(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![proptest::strategy::Just(b'\n'), proptest::prelude::any::<u8>()],
                0..64,
            ),
            limit in 0usize..12,
            carried in 0usize..12,
        ) {
            let line = carried.min(limit);
            let (got_line, got_at) = scan_lines(&bytes, line, limit);
            let (want_line, want_at) = scan_bytewise(&bytes, line, limit);
            proptest::prop_assert_eq!(got_at, want_at);
            if want_at.is_none() {
                proptest::prop_assert_eq!(got_line, want_line);
            }
        }
    }
}

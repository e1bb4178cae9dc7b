//! [`ReplyCheck`]: notices stdout lines of a stdio server that rmcp cannot read.
//!
//! rmcp drops a line it cannot parse (invalid UTF-8, not JSON, nested too deeply, a response
//! with both `result` and `error`) with a log line, so a request whose reply was such a line
//! would wait for its whole timeout. This reader passes every byte through unchanged and, at
//! each newline, checks the line the way a JSON-RPC reader must; a line that cannot be read
//! is reported (once per line) so that the requests pending on the connection fail at once
//! as a protocol error naming what was wrong.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, ReadBuf};

/// Receives what was wrong with an unreadable line.
pub(crate) type FaultSink = Arc<dyn Fn(String) + Send + Sync>;

/// Most JSON values (array elements, object members, containers) one message may hold:
/// 1,000,000. Parsed into `serde_json::Value`s a value takes 32 to 64 bytes, and rmcp
/// converts the message into its own types after that: a line of 4,000,000 `0,` (8 MB,
/// under the line limit) took hundreds of MB before it could be refused. At this bound a
/// message is cut before it costs more than a few tens of MB; no real reply comes close.
pub(crate) const MAX_VALUES_PER_MESSAGE: usize = 1_000_000;

/// Wraps a server's stdout; see the module docs.
pub(crate) struct ReplyCheck<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line is longer than `limit`: not kept (the launcher's line limit ends
    /// the transport anyway).
    overlong: bool,
    limit: usize,
    sink: FaultSink,
    /// Sees each line that passed the checks (see [`Self::with_tap`]).
    tap: Option<crate::tasks::MessageTap>,
    /// Values counted in the current line so far, and where the count is (in a string,
    /// after a backslash).
    values: usize,
    in_string: bool,
    escaped: bool,
    /// The current line held too many values: it was cut, and the rest of it is blanked.
    cut: bool,
    max_values: usize,
}

impl<R> ReplyCheck<R> {
    /// Checks lines of `inner` up to `limit` bytes, reporting problems to `sink`.
    pub(crate) fn new(inner: R, limit: usize, sink: FaultSink) -> Self {
        Self {
            inner,
            line: Vec::new(),
            overlong: false,
            limit,
            sink,
            tap: None,
            values: 0,
            in_string: false,
            escaped: false,
            cut: false,
            max_values: MAX_VALUES_PER_MESSAGE,
        }
    }

    /// Hands each line that passed the checks to `tap` (for what rmcp does not keep).
    pub(crate) fn with_tap(mut self, tap: crate::tasks::MessageTap) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Sets the most values one message may hold (tests use small bounds).
    #[cfg(test)]
    fn with_max_values(mut self, max: usize) -> Self {
        self.max_values = max;
        self
    }

    /// Checks the bytes just read, in place: a line with more than `max_values` values is
    /// cut where the bound is crossed (a newline written there, so rmcp's reader parses no
    /// more of it than that) and the rest of it up to its own newline is blanked (spaces,
    /// which parse to nothing), and the fault is reported once.
    fn scan(&mut self, bytes: &mut [u8]) {
        let mut start = 0;
        for i in 0..bytes.len() {
            let b = bytes[i];
            if b == b'\n' {
                self.keep(start, i, bytes);
                self.end_line();
                start = i + 1;
                continue;
            }
            if self.cut {
                bytes[i] = b' ';
                continue;
            }
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b',' | b'[' | b'{' => self.values += 1,
                    _ => {}
                }
            }
            if self.values > self.max_values {
                self.keep(start, i, bytes);
                bytes[i] = b'\n';
                self.cut = true;
                (self.sink)(format!(
                    "a message with more than {} JSON values (cut there: a reply that large would take hundreds of MB to read)",
                    self.max_values
                ));
            }
        }
        self.keep(start, bytes.len(), bytes);
    }

    /// Keeps `bytes[from..to]` of the current line for its check at the newline.
    fn keep(&mut self, from: usize, to: usize, bytes: &[u8]) {
        if self.overlong || self.cut || from >= to {
            return;
        }
        let body = &bytes[from..to];
        if self.line.len() + body.len() > self.limit {
            self.overlong = true;
            self.line = Vec::new();
        } else {
            self.line.extend_from_slice(body);
        }
    }

    /// At a newline: checks the line (unless it was cut or too long) and starts the next.
    fn end_line(&mut self) {
        if !self.overlong && !self.cut {
            match problem(&self.line) {
                Some(problem) => (self.sink)(problem),
                None => {
                    if let Some(tap) = &self.tap {
                        tap(&self.line);
                    }
                }
            }
        }
        self.line.clear();
        self.overlong = false;
        self.cut = false;
        self.values = 0;
        self.in_string = false;
        self.escaped = false;
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for ReplyCheck<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            this.scan(&mut buf.filled_mut()[before..]);
        }
        polled
    }
}

/// How deep serde_json (and so rmcp) nests before giving up.
const MAX_DEPTH: usize = 128;

/// The deepest nesting of arrays and objects in JSON text (strings skipped).
fn nesting_depth(text: &[u8]) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The members of a JSON-RPC message that decide whether it can be a reply.
#[derive(Deserialize)]
struct Probe {
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

/// What makes `line` unreadable as a JSON-RPC message, if anything.
pub(crate) fn problem(line: &[u8]) -> Option<String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Some("a line that is not valid UTF-8".to_owned());
    };
    if !text.trim_start().starts_with('{') {
        return Some("a line that is not a JSON-RPC message (not a JSON object)".to_owned());
    }
    let depth = nesting_depth(text.as_bytes());
    if depth > MAX_DEPTH {
        return Some(format!(
            "a line that is not valid JSON (recursion limit exceeded: nested {depth} levels deep, readers stop at {MAX_DEPTH})"
        ));
    }
    match serde_json::from_str::<Probe>(text) {
        Ok(probe) if probe.result.is_some() && probe.error.is_some() => {
            Some("a reply with both `result` and `error`".to_owned())
        }
        Ok(_) => None,
        Err(e) => Some(format!("a line that is not valid JSON ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::io::AsyncReadExt;

    use super::*;

    #[test]
    fn readable_messages_pass() {
        for ok in [
            &br#"{"jsonrpc":"2.0","id":1,"result":{}}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":1,"message":"m"}}"#,
            b"   ",
            b"",
        ] {
            assert_eq!(problem(ok), None, "{}", String::from_utf8_lossy(ok));
        }
    }

    #[test]
    fn unreadable_lines_are_named() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(500), "]".repeat(500));
        assert!(problem(deep.as_bytes()).unwrap().contains("not valid JSON"));
        assert!(problem(b"\xff\xfe").unwrap().contains("UTF-8"));
        assert!(problem(b"hello").unwrap().contains("not a JSON object"));
        assert!(
            problem(br#"{"id":1,"result":{},"error":{"code":1,"message":"x"}}"#)
                .unwrap()
                .contains("both")
        );
        assert!(problem(br#"{"id":1,"#).unwrap().contains("not valid JSON"));
        let ok_deep = format!("{{\"a\":{}{}}}", "[".repeat(100), "]".repeat(100));
        assert_eq!(problem(ok_deep.as_bytes()), None);
    }

    #[test]
    fn depth_skips_strings() {
        assert_eq!(nesting_depth(br#"{"a":"[[[[{{{","b":[1,[2]]}"#), 3);
        assert_eq!(nesting_depth(br#"{"a":"\"[[["}"#), 1);
    }

    /// A message with too many values is cut where the bound is crossed and the rest of
    /// its line blanked; the next line passes untouched, however the reads split them.
    #[tokio::test]
    async fn a_message_with_too_many_values_is_cut_and_blanked() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink_seen = Arc::clone(&seen);
        let sink: FaultSink = Arc::new(move |p| sink_seen.lock().unwrap().push(p));
        let huge = format!("{{\"id\":1,\"result\":{{\"a\":[{}0]}}}}\n", "0,".repeat(50));
        let next = "{\"id\":2,\"result\":{\"s\":\"a,b,c,[{\"}}\n";
        let input = format!("{huge}{next}");
        let (client, mut server) = tokio::io::duplex(7);
        let bytes = input.clone().into_bytes();
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            server.write_all(&bytes).await.unwrap();
        });
        let mut reader = ReplyCheck::new(client, 1024, sink).with_max_values(10);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        writer.await.unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(out.len(), input.len());
        let lines: Vec<&str> = out.split('\n').collect();
        // Cut after the 10th value: `{` `{` `[` and seven commas.
        assert_eq!(lines[0], "{\"id\":1,\"result\":{\"a\":[0,0,0,0,0,0,0");
        assert!(lines[1].chars().all(|c| c == ' '), "{:?}", lines[1]);
        // Commas and brackets inside a string are no values.
        assert_eq!(lines[2], next.trim_end());
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].contains("more than 10 JSON values"), "{seen:?}");
    }

    #[tokio::test]
    async fn bytes_pass_through_and_split_lines_are_joined() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink_seen = Arc::clone(&seen);
        let sink: FaultSink = Arc::new(move |p| sink_seen.lock().unwrap().push(p));
        let input: &[u8] = b"{\"id\":1,\"result\":{}}\nnot json\n{\"id\":2,\n";
        let (client, mut server) = tokio::io::duplex(4);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            server.write_all(input).await.unwrap();
        });
        let mut reader = ReplyCheck::new(client, 1024, sink);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        writer.await.unwrap();
        assert_eq!(out, input);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(seen[0].contains("not a JSON object"));
        assert!(seen[1].contains("not valid JSON"));
    }
}

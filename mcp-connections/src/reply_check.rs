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

/// Wraps a server's stdout; see the module docs.
pub(crate) struct ReplyCheck<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line is longer than `limit`: not kept (the launcher's line limit ends
    /// the transport anyway).
    overlong: bool,
    limit: usize,
    sink: FaultSink,
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
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, complete) = match chunk.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (chunk, false),
            };
            if !self.overlong {
                if self.line.len() + body.len() > self.limit {
                    self.overlong = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(body);
                }
            }
            if complete {
                if !self.overlong
                    && let Some(problem) = problem(&self.line)
                {
                    (self.sink)(problem);
                }
                self.line.clear();
                self.overlong = false;
            }
        }
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
            this.scan(&buf.filled()[before..]);
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

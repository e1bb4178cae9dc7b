//! [`ReplyCheck`]: notices stdout lines of a stdio server that rmcp cannot read.
//!
//! rmcp drops a line it cannot parse (invalid UTF-8, not JSON, nested too deeply, a response
//! with both `result` and `error`) with a log line, so a request whose reply was such a line
//! would wait for its whole timeout. This reader passes every byte through unchanged and, at
//! each newline, checks the line the way a JSON-RPC reader must; a line that cannot be read
//! is reported (once per line) so that the requests pending on the connection fail at once
//! as a protocol error naming what was wrong.
//!
//! Each line is parsed once: the checks here are the one pass over the bytes as they are
//! read, and a parse only for a line that can hold an `error` member (its text `"error"`,
//! or a `\u` escape that could spell it), to see `result` beside it. Whether any other
//! object is valid JSON, the transport's own parse of the line tells
//! ([`super::stdio_lines`] reports it to the same sink when [`left_to_parse`] says the
//! line is one this reader passed without a parse).

use std::io;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};

use memchr::memmem::Finder;
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
    /// Nesting of arrays and objects in the current line: where the scan is, and the
    /// deepest so far.
    depth: usize,
    max_depth: usize,
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
            depth: 0,
            max_depth: 0,
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

    /// Checks the bytes just read, in place, in one pass: it counts the values and the
    /// nesting of the current line as it goes. A line with more than `max_values` values
    /// is cut where the bound is crossed (a newline written there, so rmcp's reader parses
    /// no more of it than that) and the rest of it up to its own newline is blanked
    /// (spaces, which parse to nothing), and the fault is reported once. A line that lies
    /// whole in `bytes` is checked where it is, without a copy.
    fn scan(&mut self, bytes: &mut [u8]) {
        let mut start = 0;
        let mut i = self.resume_escape(bytes);
        while i < bytes.len() {
            if self.cut {
                // Blank up to the newline that ends the cut line.
                let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |at| i + at);
                bytes[i..end].fill(b' ');
                if end < bytes.len() {
                    self.end_line(&[]);
                    start = end + 1;
                }
                i = end + 1;
                continue;
            }
            if self.in_string {
                // Most of a message is string text: skip to what can end it (`memchr3`
                // looks a word or vector at a time).
                i += memchr::memchr3(b'"', b'\\', b'\n', &bytes[i..]).unwrap_or(bytes.len() - i);
                let Some(&b) = bytes.get(i) else { break };
                match b {
                    b'\\' => {
                        // The escaped byte is skipped with it (a newline still ends the line).
                        if bytes.get(i + 1).is_some_and(|&next| next != b'\n') {
                            i += 2;
                        } else if i + 1 == bytes.len() {
                            self.escaped = true;
                            i += 1;
                        } else {
                            i += 1;
                        }
                        continue;
                    }
                    b'"' => {
                        self.in_string = false;
                        i += 1;
                        continue;
                    }
                    _ => {}
                }
            }
            let b = bytes[i];
            match b {
                b'\n' => {
                    self.end_line(&bytes[start..i]);
                    start = i + 1;
                }
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.values += 1;
                    self.depth += 1;
                    self.max_depth = self.max_depth.max(self.depth);
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                b',' => self.values += 1,
                _ => {}
            }
            if self.values > self.max_values {
                self.keep(&bytes[start..i]);
                bytes[i] = b'\n';
                self.cut = true;
                (self.sink)(format!(
                    "a message with more than {} JSON values (cut there: a reply that large would take hundreds of MB to read)",
                    self.max_values
                ));
            }
            i += 1;
        }
        if start < bytes.len() {
            self.keep(&bytes[start..]);
        }
    }

    /// Resumes a string cut by the end of the last read after a backslash: the byte it
    /// escapes is skipped. Returns where the scan goes on.
    fn resume_escape(&mut self, bytes: &[u8]) -> usize {
        if self.escaped && !bytes.is_empty() {
            self.escaped = false;
            if bytes[0] != b'\n' {
                return 1;
            }
        }
        0
    }

    /// Keeps part of the current line (from an earlier read) for its check at the newline.
    fn keep(&mut self, body: &[u8]) {
        if self.overlong || self.cut || body.is_empty() {
            return;
        }
        if self.line.len() + body.len() > self.limit {
            self.overlong = true;
            self.line = Vec::new();
        } else {
            self.line.extend_from_slice(body);
        }
    }

    /// At a newline: checks the line, whose last part is `tail` (unless it was cut or too
    /// long), and starts the next.
    fn end_line(&mut self, tail: &[u8]) {
        if !self.overlong && !self.cut {
            let whole = if self.line.is_empty() {
                (tail.len() <= self.limit).then_some(tail)
            } else {
                self.keep(tail);
                (!self.overlong).then_some(self.line.as_slice())
            };
            if let Some(line) = whole {
                match problem_at_depth(line, self.max_depth) {
                    Some(problem) => (self.sink)(problem),
                    None => {
                        if let Some(tap) = &self.tap {
                            tap(line);
                        }
                    }
                }
            }
        }
        self.line.clear();
        self.overlong = false;
        self.cut = false;
        self.values = 0;
        self.depth = 0;
        self.max_depth = 0;
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

/// The deepest nesting of arrays and objects in JSON text (strings skipped) and how many
/// values it holds, as [`ReplyCheck::scan`] counts them while reading.
fn counts(text: &[u8]) -> (usize, usize) {
    let (mut depth, mut max, mut values) = (0usize, 0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
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
                values += 1;
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => {}
        }
    }
    (max, values)
}

/// The deepest nesting of arrays and objects in JSON text (strings skipped).
#[cfg(test)]
fn nesting_depth(text: &[u8]) -> usize {
    counts(text).0
}

/// Whether `line`, which a parse found not to be JSON, is one [`ReplyCheck`] passed
/// without a parse of its own, so its fault is the parser's to report: not a line it
/// reported (not UTF-8, not an object, too deep, one that can hold `error`), nor what is
/// left of a line it cut at `max_values` values. Called on the parse's failure only.
pub(crate) fn left_to_parse(line: &[u8], max_values: usize) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (depth, values) = counts(line);
    // A line cut at the bound holds exactly `max_values` values up to the cut.
    values < max_values && cheap_problem(line, depth).is_none() && !may_hold_error(line)
}

/// Whether a line can hold an `error` member: its text `"error"`, or a `\u` escape that
/// could spell the name (no other escape can).
fn may_hold_error(line: &[u8]) -> bool {
    // Searchers built once: building one costs about as much as searching a short line.
    static ERROR: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"error\""));
    static ESCAPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\u"));
    ERROR.find(line).is_some() || ESCAPE.find(line).is_some()
}

/// The members of a JSON-RPC message that decide whether it can be a reply.
#[derive(Deserialize)]
struct Probe {
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

/// What makes `line` unreadable as a JSON-RPC message, if anything.
#[cfg(test)]
pub(crate) fn problem(line: &[u8]) -> Option<String> {
    problem_at_depth(line, nesting_depth(line))
}

/// [`problem`] for a line whose nesting `depth` the scan has measured already.
fn problem_at_depth(line: &[u8], depth: usize) -> Option<String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if let Some(problem) = cheap_problem(line, depth) {
        return Some(problem);
    }
    if !may_hold_error(line) {
        // Whether it is JSON at all, its parse in the transport tells (a blank line holds
        // no `error` either).
        return None;
    }
    match serde_json::from_slice::<Probe>(line) {
        Ok(probe) if probe.result.is_some() && probe.error.is_some() => {
            Some("a reply with both `result` and `error`".to_owned())
        }
        Ok(_) => None,
        Err(e) => Some(invalid_json(&e)),
    }
}

/// What is wrong with `line` (without its `\r`), nested `depth` deep, that needs no
/// parse to see.
fn cheap_problem(line: &[u8], depth: usize) -> Option<String> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Some("a line that is not valid UTF-8".to_owned());
    };
    // A byte order mark may start a line (JSON readers may ignore it; the transport does).
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !text.trim_start().starts_with('{') {
        return Some("a line that is not a JSON-RPC message (not a JSON object)".to_owned());
    }
    if depth > MAX_DEPTH {
        return Some(format!(
            "a line that is not valid JSON (recursion limit exceeded: nested {depth} levels deep, readers stop at {MAX_DEPTH})"
        ));
    }
    None
}

/// The problem of a line that does not parse as JSON, from the parse's error.
pub(crate) fn invalid_json(e: &serde_json::Error) -> String {
    format!("a line that is not valid JSON ({e})")
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
        assert!(
            problem(br#"{"id":1,"error":"#)
                .unwrap()
                .contains("not valid JSON")
        );
        // Member names spelled with escapes are what a parser reads.
        assert!(
            problem(br#"{"id":1,"\u0072esult":{},"\u0065rror":{"code":1,"message":"x"}}"#)
                .unwrap()
                .contains("both")
        );
        // Invalid JSON that cannot hold `error` is the transport's parse to report.
        assert_eq!(problem(br#"{"id":1,"#), None);
        assert!(left_to_parse(br#"{"id":1,"#, MAX_VALUES_PER_MESSAGE));
        let ok_deep = format!("{{\"a\":{}{}}}", "[".repeat(100), "]".repeat(100));
        assert_eq!(problem(ok_deep.as_bytes()), None);
        // A byte order mark first is no fault: the transport reads the message after it.
        assert_eq!(
            problem(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"),
            None
        );
    }

    #[test]
    fn what_the_check_reported_or_cut_is_not_left_to_the_parse() {
        for reported in [
            &b"\xff{"[..],
            b"hello",
            br#"{"id":1,"error":"#,
            br#"{"id":1,"result":"\u00"#,
        ] {
            assert!(!left_to_parse(reported, MAX_VALUES_PER_MESSAGE));
        }
        let deep = format!("{{\"a\":{}", "[".repeat(500));
        assert!(!left_to_parse(deep.as_bytes(), MAX_VALUES_PER_MESSAGE));
        // What is left of a line cut at 10 values holds 10.
        let cut = br#"{"id":1,"result":{"a":[0,0,0,0,0,0,0"#;
        assert_eq!(counts(cut).1, 10);
        assert!(!left_to_parse(cut, 10));
        assert!(left_to_parse(cut, 11));
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
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].contains("not a JSON object"));
        // The unfinished object is the transport's parse to report.
        assert!(left_to_parse(b"{\"id\":2,", MAX_VALUES_PER_MESSAGE));
    }
}

#[cfg(test)]
mod split_reads {
    use std::sync::Mutex;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// Lines whose strings, escapes and brackets fall across reads of every size: the
    /// one-pass scan reports what [`problem`] finds in each whole line, and nothing else.
    #[tokio::test]
    async fn the_scan_finds_what_the_whole_line_check_finds_however_reads_split() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(130), "]".repeat(130));
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"result":{"s":"a \" [[[ \\"}}"#.to_owned(),
            r#"{"id":2,"result":{"s":"\\\\\"{{{{"},"x":[1,[2,[3]]]}"#.to_owned(),
            deep,
            // Brackets in strings past escaped quotes and backslashes: counted, they
            // would be too deep.
            format!(r#"{{"s":"\"{}\\","t":"\\"}}"#, "[".repeat(130)),
            r#"{"id":3,"result":{},"error":{"code":1,"message":"x"}}"#.to_owned(),
            // Left to the transport's parse (it cannot hold `error`).
            r#"{"id":4,"result":"unterminated \"}"#.to_owned(),
            "not json".to_owned(),
            r#"{"id":5,"result":{"t":"ends with a backslash \\"}}"#.to_owned(),
        ];
        let expected: Vec<String> = lines.iter().filter_map(|l| problem(l.as_bytes())).collect();
        assert_eq!(expected.len(), 3, "{expected:?}");
        assert!(left_to_parse(lines[5].as_bytes(), MAX_VALUES_PER_MESSAGE));
        let input = lines.join("\n") + "\n";
        for size in 1..=9 {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let sink_seen = Arc::clone(&seen);
            let sink: FaultSink = Arc::new(move |p| sink_seen.lock().unwrap().push(p));
            let (client, mut server) = tokio::io::duplex(size);
            let bytes = input.clone().into_bytes();
            let writer = tokio::spawn(async move { server.write_all(&bytes).await.unwrap() });
            let mut reader = ReplyCheck::new(client, 1024, sink);
            let mut out = Vec::new();
            reader.read_to_end(&mut out).await.unwrap();
            writer.await.unwrap();
            assert_eq!(out, input.as_bytes(), "read size {size}");
            assert_eq!(*seen.lock().unwrap(), expected, "read size {size}");
        }
    }
}

//! [`StdioLines`]: the newline-delimited JSON transport of a stdio connection, with a fast
//! path for the reply to a tool call.
//!
//! rmcp's own stdio transport parses every incoming line as a whole JSON-RPC message, a
//! response's `result` through its untagged `ServerResult` union, which makes a tool call's
//! reply the most expensive message a client reads (see [`super::call_reply`]). This
//! transport knows which requests it sent as `tools/call`, and reads a reply to one of them
//! with [`call_reply`]'s fast path when the reply fits it. Any other line (requests,
//! notifications, other replies, a call's reply with other members such as a task) is
//! parsed exactly as rmcp parses it.
//!
//! Unlike rmcp's transport, a line that cannot be parsed is skipped with a debug log and no
//! `Invalid Request` error is written back to the server: the reply check below this
//! transport ([`super::reply_check`]) fails the requests such a line would have answered
//! (an object that is not valid JSON, which the check leaves to this parse, is reported
//! here to the check's sink), and an error without an id tells the server nothing it can
//! act on.

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ClientNotification, ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::call_reply::call_reply;
use super::reply_check::{FaultSink, MAX_VALUES_PER_MESSAGE, invalid_json, left_to_parse};

/// The most `tools/call` ids remembered while their replies are pending. A request whose
/// reply never comes (cancelled, timed out) leaves its id behind; past this bound the set
/// is emptied, which only sends the replies still pending down the general path.
const PENDING_CALLS_BOUND: usize = 1024;

/// The largest read buffer kept once it is empty (bytes).
const KEPT_LINE_CAPACITY: usize = 64 * 1024;

/// What the read buffer grows by when it has less than [`MIN_SPARE`] free (bytes).
const READ_CHUNK: usize = 4096;

/// The least free room a read is made into (bytes).
const MIN_SPARE: usize = 1024;

/// A UTF-8 byte order mark, which a line may start with (JSON readers may ignore it).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The transport; see the module docs.
pub(crate) struct StdioLines<R, W> {
    read: R,
    /// Bytes read and not yet taken as lines, from `start` on: kept across a cancelled
    /// `receive` (rmcp polls it in a `select!`), so a partial line is resumed, not lost.
    /// One buffer that grows as bytes come, not a `BufReader`'s zero-filled 8 KiB beside a
    /// line buffer: an idle connection holds only what its messages needed.
    buf: Vec<u8>,
    /// Where the bytes not yet taken as lines begin in `buf`.
    start: usize,
    /// `buf[start..scanned]` holds no newline.
    scanned: usize,
    write: Arc<tokio::sync::Mutex<Option<W>>>,
    /// Ids of `tools/call` requests sent whose replies have not come yet.
    calls: HashSet<RequestId>,
    /// Where an object that is not valid JSON is reported (the reply check's sink).
    faults: Option<FaultSink>,
}

impl<R: AsyncRead, W> StdioLines<R, W> {
    /// Reads messages from `read` (a server's stdout) and writes them to `write` (its stdin).
    pub(crate) fn new(read: R, write: W) -> Self {
        Self {
            read,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
            calls: HashSet::new(),
            faults: None,
        }
    }

    /// Reports to `faults` each line the reply check left to this parse that is not
    /// valid JSON ([`left_to_parse`]), so the requests it may have answered fail at once.
    pub(crate) fn with_faults(mut self, faults: FaultSink) -> Self {
        self.faults = Some(faults);
        self
    }
}

impl<R, W> StdioLines<R, W> {
    /// Notes what a message sent means for the replies to come.
    fn note_sent(&mut self, item: &TxJsonRpcMessage<RoleClient>) {
        match item {
            JsonRpcMessage::Request(r)
                if matches!(r.request, ClientRequest::CallToolRequest(_)) =>
            {
                if self.calls.len() >= PENDING_CALLS_BOUND {
                    self.calls.clear();
                }
                self.calls.insert(r.id.clone());
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    self.calls.remove(id);
                }
            }
            _ => {}
        }
    }

    /// The message on one line (without its newline), or `None` for a line to skip.
    fn parse(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        let whole = line;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(BOM).unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        if !self.calls.is_empty()
            && let Some(reply) = call_reply(line)
            && self.calls.remove(&reply.id)
        {
            return Some(reply.into_message());
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
            Ok(message) => {
                if let JsonRpcMessage::Response(r) = &message {
                    self.calls.remove(&r.id);
                } else if let JsonRpcMessage::Error(e) = &message
                    && let Some(id) = &e.id
                {
                    self.calls.remove(id);
                }
                Some(message)
            }
            Err(e) => {
                if (e.is_syntax() || e.is_eof())
                    && let Some(faults) = &self.faults
                    && left_to_parse(whole, MAX_VALUES_PER_MESSAGE)
                {
                    faults(invalid_json(&e));
                }
                // The line itself helps whoever reads the log (a host bounds long fields).
                tracing::debug!(
                    "skipped a line of the server's stdout that is not a message ({e}): {}",
                    String::from_utf8_lossy(line)
                );
                None
            }
        }
    }
}

impl<R, W> Transport<RoleClient> for StdioLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.note_sent(&item);
        let write = Arc::clone(&self.write);
        async move {
            let mut bytes = serde_json::to_vec(&item)?;
            bytes.push(b'\n');
            let mut write = write.lock().await;
            let Some(write) = write.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the transport is closed",
                ));
            };
            write.write_all(&bytes).await?;
            write.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(at) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                let end = self.scanned + at;
                let buf = std::mem::take(&mut self.buf);
                let parsed = self.parse(&buf[self.start..end]);
                self.buf = buf;
                self.start = end + 1;
                self.scanned = self.start;
                if self.start == self.buf.len() {
                    self.buf.clear();
                    (self.start, self.scanned) = (0, 0);
                }
                // A large message's room is not kept (an idle connection should not hold
                // its largest message's size): what is left moves to a buffer its size.
                if self.buf.capacity() > KEPT_LINE_CAPACITY
                    && self.buf.len() - self.start <= KEPT_LINE_CAPACITY / 2
                {
                    self.buf = self.buf[self.start..].to_vec();
                    self.scanned -= self.start;
                    self.start = 0;
                }
                if let Some(message) = parsed {
                    return Some(message);
                }
                continue;
            }
            self.scanned = self.buf.len();
            if self.start > 0 {
                // Half a line is left: move it to the front, to read the rest after it.
                self.buf.drain(..self.start);
                self.scanned -= self.start;
                self.start = 0;
            }
            if self.buf.capacity() - self.buf.len() < MIN_SPARE {
                self.buf.reserve(READ_CHUNK);
            }
            // Cancel-safe: a cancelled `read_buf` read nothing.
            match self.read.read_buf(&mut self.buf).await {
                Ok(0) => return None, // End of stdout (half a line left is no message).
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "the server's stdout failed");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::JsonRpcVersion2_0;

    use super::*;
    use crate::transport::call_reply::as_call_result;

    #[test]
    fn only_replies_to_calls_sent_take_the_fast_path() {
        let mut lines = StdioLines::new(tokio::io::empty(), tokio::io::sink());
        let reply = br#"{"jsonrpc":"2.0","id":9,"result":{"content":[]}}"#;
        // Not a call this transport sent: rmcp's parse (the same message).
        let general = lines.parse(reply).expect("a message");
        assert!(as_call_result(&general).is_some());
        lines.calls.insert(RequestId::Number(9));
        assert!(as_call_result(&lines.parse(reply).unwrap()).is_some());
        assert!(lines.calls.is_empty(), "the reply ends the call");
        // Blank lines, a byte order mark and a carriage return.
        assert!(lines.parse(b"  ").is_none());
        let with_bom = [BOM, &reply[..], b"\r"].concat();
        assert!(lines.parse(&with_bom).is_some());
        assert!(lines.parse(b"not json").is_none());
    }

    /// An object that is not valid JSON is reported to the sink; what the reply check
    /// reports itself, or valid JSON that is no message, is not.
    #[test]
    fn invalid_json_the_check_left_is_reported_once() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink_seen = Arc::clone(&seen);
        let mut lines = StdioLines::new(tokio::io::empty(), tokio::io::sink())
            .with_faults(Arc::new(move |p| sink_seen.lock().unwrap().push(p)));
        assert!(
            lines
                .parse(br#"{"jsonrpc":"2.0","id":1,"result":{"#)
                .is_none()
        );
        for skipped in [
            &b"not json"[..],
            br#"{"jsonrpc":"2.0","id":2,"error":{"#,
            br#"{"unknown":true}"#,
        ] {
            assert!(lines.parse(skipped).is_none());
        }
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(
            seen[0].contains("not valid JSON (EOF while parsing"),
            "{seen:?}"
        );
    }

    /// Lines split across reads are joined, a large line is read whole and its buffer
    /// not kept, a notification and a reply keep their order, and the end of the stream
    /// (with half a line left) ends the transport.
    #[tokio::test]
    async fn lines_are_read_in_order_across_reads_until_the_end() {
        use tokio::io::AsyncWriteExt;
        let (read, mut server) = tokio::io::duplex(64);
        let mut lines = StdioLines::new(read, tokio::io::sink());
        lines.calls.insert(RequestId::Number(1));
        let big = "x".repeat(100_000);
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"{big}\"}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"content\":[]}}}}\n{{\"jsonrpc\":"
        );
        let writer = tokio::spawn(async move {
            server.write_all(input.as_bytes()).await.unwrap();
        });
        let first = lines.receive().await.expect("the notification");
        assert!(matches!(first, JsonRpcMessage::Notification(_)));
        assert!(lines.buf.capacity() <= KEPT_LINE_CAPACITY);
        let second = lines.receive().await.expect("the reply");
        assert!(as_call_result(&second).is_some());
        writer.await.unwrap();
        assert!(
            lines.receive().await.is_none(),
            "half a line and then the end"
        );
    }

    /// A `receive` dropped while half a line is read (rmcp polls it in a `select!`) loses
    /// nothing: the next one reads the whole line; several lines in one read come one by
    /// one, in order.
    #[tokio::test]
    async fn a_cancelled_receive_loses_nothing_and_a_burst_comes_in_order() {
        use tokio::io::AsyncWriteExt;
        let (read, mut server) = tokio::io::duplex(1 << 16);
        let mut lines = StdioLines::new(read, tokio::io::sink());
        let line = |id: i64| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n");
        let first = line(1);
        let (head, tail) = first.split_at(10);
        server.write_all(head.as_bytes()).await.unwrap();
        let waited =
            tokio::time::timeout(std::time::Duration::from_millis(20), lines.receive()).await;
        assert!(waited.is_err(), "half a line is no message");
        let burst = format!("{tail}{}{}", line(2), line(3));
        server.write_all(burst.as_bytes()).await.unwrap();
        for id in 1..=3 {
            match lines.receive().await {
                Some(JsonRpcMessage::Response(r)) => assert_eq!(r.id, RequestId::Number(id)),
                other => panic!("expected the reply to {id}, got {other:?}"),
            }
        }
        drop(server);
        assert!(lines.receive().await.is_none());
        assert_eq!(lines.buf.len(), 0);
    }

    fn call(id: i64) -> TxJsonRpcMessage<RoleClient> {
        use rmcp::model::{CallToolRequestParams, JsonRpcRequest, Request};
        JsonRpcMessage::Request(JsonRpcRequest::new(
            RequestId::Number(id),
            ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("echo"))),
        ))
    }

    fn cancel(id: i64) -> TxJsonRpcMessage<RoleClient> {
        use rmcp::model::{CancelledNotificationParam, JsonRpcNotification, Notification};
        JsonRpcMessage::Notification(JsonRpcNotification {
            jsonrpc: JsonRpcVersion2_0,
            notification: ClientNotification::CancelledNotification(Notification::new(
                CancelledNotificationParam::new(Some(RequestId::Number(id)), None),
            )),
        })
    }

    /// What is sent decides which replies may take the fast path: a call sent through the
    /// transport is remembered (and written), its cancellation forgets it, a reply that
    /// comes late for a cancelled call is read by rmcp's parse, and a server that never
    /// answers cannot make the remembered ids grow past the bound.
    #[tokio::test]
    async fn calls_sent_are_remembered_cancelled_ones_forgotten_and_the_memory_bounded() {
        use tokio::io::AsyncReadExt;
        let (stdin, mut server) = tokio::io::duplex(1 << 20);
        let mut lines = StdioLines::new(tokio::io::empty(), stdin);
        lines.send(call(1)).await.unwrap();
        lines.send(call(2)).await.unwrap();
        let mut written = vec![0; 4096];
        let n = server.read(&mut written).await.unwrap();
        let written = String::from_utf8_lossy(&written[..n]).into_owned();
        assert_eq!(written.lines().count(), 2, "{written}");
        assert!(written.contains(r#""method":"tools/call""#), "{written}");
        assert_eq!(
            lines.calls,
            HashSet::from([RequestId::Number(1), RequestId::Number(2)])
        );
        lines.send(cancel(1)).await.unwrap();
        assert_eq!(lines.calls, HashSet::from([RequestId::Number(2)]));
        // The late reply to the cancelled call is still a message (rmcp drops it by id).
        let late = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
        assert!(as_call_result(&lines.parse(late).unwrap()).is_some());
        assert_eq!(lines.calls, HashSet::from([RequestId::Number(2)]));

        for id in 3..(3 + 2 * PENDING_CALLS_BOUND as i64) {
            lines.note_sent(&call(id));
            assert!(lines.calls.len() <= PENDING_CALLS_BOUND);
        }
    }
}

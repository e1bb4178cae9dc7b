//! A tool call's reply over streamable HTTP, read without rmcp's union when it can be.
//!
//! A server that answers a `tools/call` POST with an SSE stream (rmcp's and the TypeScript
//! SDK's servers do by default) hands rmcp a stream whose events rmcp parses inside its own
//! transport worker, through the untagged `ServerResult` union that makes a call's reply the
//! most expensive message a client reads (see [`super::call_reply`]); the worker also
//! spawns a task per response stream to read it. The HTTP client ([`super::http_client`])
//! is the last place that sees the raw events, so it reads a tool call's stream itself for
//! a short while ([`CALL_REPLY_HOLD`]):
//!
//! - if the stream holds only events without data (a priming event for resumption) and the
//!   call's reply, which [`call_reply`] reads, and then ends, the reply goes to rmcp as a
//!   JSON reply, the same message its own parse of the event would have produced;
//! - anything else (a notification or a request before the reply, a control event, a read
//!   error, a reply `call_reply` leaves to rmcp, an event after the reply, more than
//!   [`MAX_HELD_EVENTS`] events, or nothing yet when the hold ends) hands rmcp the stream as it came: the events already read first,
//!   unchanged, then the rest. Nothing is lost or reordered, and nothing already received
//!   waits for the hold.
//!
//! What the hold changes: a tool call's POST stays among rmcp's in-flight POSTs until its
//! reply or the hold's end instead of until the response's headers, so a slow tool's POST
//! takes one of rmcp's concurrent-POST slots (16 by default) for up to [`CALL_REPLY_HOLD`]
//! longer, and a request that must wait for in-flight POSTs (a new `initialize`, a session
//! renewal) waits as long at most. A cancellation during the hold drops the stream, as it
//! drops a POST waiting for its headers.

use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use sse_stream::{Error as SseError, Sse};

use super::call_reply::call_reply;

/// How long a tool call's SSE reply is read here before the stream goes to rmcp as it is.
pub(crate) const CALL_REPLY_HOLD: Duration = Duration::from_millis(20);

/// The most events held while reading: a server that sends empty events without end
/// gets its stream handed on, not a buffer that grows for the whole hold.
const MAX_HELD_EVENTS: usize = 16;

/// A response stream's events, as rmcp's HTTP client trait hands them over.
pub(crate) type Events = BoxStream<'static, Result<Sse, SseError>>;

/// What a tool call's SSE reply turned out to be.
#[expect(
    clippy::large_enum_variant,
    reason = "returned once per call and taken apart at once; boxing would add an allocation"
)]
pub(crate) enum CallStream {
    /// The stream held the call's reply and ended: the reply, as rmcp would have read it.
    Reply(ServerJsonRpcMessage),
    /// The stream for rmcp: the events read here first, then the rest as it comes.
    Stream(Events),
}

/// Whether rmcp reads `event` as a JSON-RPC message (blank or `message` event type); it
/// hands other events to its reconnection handler.
fn is_message_event(event: &Sse) -> bool {
    matches!(event.event.as_deref(), None | Some("" | "message"))
}

/// Reads the SSE reply `stream` of `tools/call` request `id` for at most `hold` (see the
/// module docs). `tap` sees the data of each event of a stream turned into a reply; the
/// events of a stream handed on are left to whoever reads it.
pub(crate) async fn read_call_stream(
    mut stream: Events,
    id: &RequestId,
    hold: Duration,
    tap: impl Fn(&[u8]),
) -> CallStream {
    // One timer for the whole hold, polled only when the stream has nothing ready.
    let hold = tokio::time::sleep(hold);
    tokio::pin!(hold);
    let mut seen: Vec<Result<Sse, SseError>> = Vec::new();
    let mut reply: Option<ServerJsonRpcMessage> = None;
    let ended = loop {
        let next = tokio::select! {
            biased;
            next = stream.next() => next,
            () = &mut hold => break false,
        };
        let Some(item) = next else {
            break true;
        };
        let step = match (&item, &reply) {
            (Ok(event), None) if is_message_event(event) => match event.data.as_deref() {
                None => Step::Read,
                Some(data) if data.trim().is_empty() => Step::Read,
                Some(data) => match call_reply(data.as_bytes()) {
                    Some(found) if &found.id == id => Step::Reply(found.into_message()),
                    _ => Step::HandOn,
                },
            },
            _ => Step::HandOn,
        };
        seen.push(item);
        if seen.len() >= MAX_HELD_EVENTS {
            break false;
        }
        match step {
            Step::Read => {}
            Step::Reply(found) => reply = Some(found),
            Step::HandOn => break false,
        }
    };
    if ended && let Some(reply) = reply {
        for data in seen.iter().filter_map(|e| e.as_ref().ok()?.data.as_deref()) {
            tap(data.as_bytes());
        }
        return CallStream::Reply(reply);
    }
    let seen = futures::stream::iter(seen);
    if ended {
        // A finished stream must not be polled again.
        CallStream::Stream(Box::pin(seen))
    } else {
        CallStream::Stream(Box::pin(seen.chain(stream)))
    }
}

/// What one event means for the read.
#[expect(
    clippy::large_enum_variant,
    reason = "a local step of the read, taken apart at once"
)]
enum Step {
    /// Keep reading.
    Read,
    /// The call's reply: read on, to see the stream end.
    Reply(ServerJsonRpcMessage),
    /// Hand the stream on.
    HandOn,
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use rmcp::model::JsonRpcMessage;

    use super::*;

    fn event(data: Option<&str>) -> Sse {
        Sse {
            event: None,
            data: data.map(str::to_owned),
            id: None,
            retry: None,
        }
    }

    const REPLY: &str =
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
    const PROGRESS: &str = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;

    fn id() -> RequestId {
        RequestId::Number(7)
    }

    /// The data of each event a stream handed on yields, in order (errors as `!`).
    async fn drain(stream: Events) -> Vec<String> {
        stream
            .map(|item| match item {
                Ok(event) => event.data.unwrap_or_default(),
                Err(_) => "!".to_owned(),
            })
            .collect()
            .await
    }

    fn from(items: Vec<Result<Sse, SseError>>) -> Events {
        Box::pin(futures::stream::iter(items))
    }

    #[tokio::test]
    async fn a_priming_event_and_the_reply_then_the_end_is_the_reply() {
        let tapped = Mutex::new(Vec::new());
        let stream = from(vec![Ok(event(Some(""))), Ok(event(Some(REPLY)))]);
        let read = read_call_stream(stream, &id(), CALL_REPLY_HOLD, |d| {
            tapped.lock().unwrap().push(d.to_vec());
        })
        .await;
        let CallStream::Reply(ours) = read else {
            panic!("not read as the reply");
        };
        assert!(matches!(&ours, JsonRpcMessage::Response(r) if r.id == id()));
        // The same message as rmcp's own parse of the event.
        let theirs: ServerJsonRpcMessage = serde_json::from_str(REPLY).unwrap();
        assert_eq!(
            serde_json::to_value(ours).unwrap(),
            serde_json::to_value(theirs).unwrap()
        );
        assert_eq!(
            *tapped.lock().unwrap(),
            vec![Vec::new(), REPLY.as_bytes().to_vec()]
        );
    }

    /// Every stream that is not just the reply is handed on whole and in order, and the
    /// tap is left to its reader.
    #[tokio::test]
    async fn anything_else_is_handed_on_as_it_came() {
        let other_id = REPLY.replace("\"id\":7", "\"id\":8");
        let task = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"task":{"taskId":"t"}}}"#;
        // What happens, the stream, the data of the events handed on.
        type Case<'a> = (&'a str, Vec<Result<Sse, SseError>>, Vec<&'a str>);
        let cases: Vec<Case<'_>> = vec![
            (
                "a notification first",
                vec![Ok(event(Some(PROGRESS))), Ok(event(Some(REPLY)))],
                vec![PROGRESS, REPLY],
            ),
            (
                "an event after the reply",
                vec![Ok(event(Some(REPLY))), Ok(event(Some(PROGRESS)))],
                vec![REPLY, PROGRESS],
            ),
            (
                "another request's reply",
                vec![Ok(event(Some(&other_id)))],
                vec![&other_id],
            ),
            (
                "a result with other members",
                vec![Ok(event(Some(task)))],
                vec![task],
            ),
            (
                "a read error",
                vec![Ok(event(Some(""))), Err(SseError::InvalidLine)],
                vec!["", "!"],
            ),
            (
                "the end without a reply",
                vec![Ok(event(Some("")))],
                vec![""],
            ),
            (
                "a control event",
                vec![Ok(Sse {
                    event: Some("ping".to_owned()),
                    ..event(Some(REPLY))
                })],
                vec![REPLY],
            ),
        ];
        for (what, items, expected) in cases {
            let tapped = Mutex::new(0);
            let read = read_call_stream(from(items), &id(), CALL_REPLY_HOLD, |_| {
                *tapped.lock().unwrap() += 1;
            })
            .await;
            let CallStream::Stream(stream) = read else {
                panic!("{what}: read as the reply");
            };
            assert_eq!(drain(stream).await, expected, "{what}");
            assert_eq!(*tapped.lock().unwrap(), 0, "{what}");
        }
    }

    /// A hostile server's stream of empty events is handed on after a few, every event
    /// kept and in order, not buffered for the whole hold.
    #[tokio::test]
    async fn endless_empty_events_are_handed_on_not_held() {
        let blanks = MAX_HELD_EVENTS * 4;
        let mut items: Vec<Result<Sse, SseError>> =
            (0..blanks).map(|_| Ok(event(Some("")))).collect();
        items.push(Ok(event(Some(REPLY))));
        let read = read_call_stream(from(items), &id(), CALL_REPLY_HOLD, |_| {}).await;
        let CallStream::Stream(stream) = read else {
            panic!("read as the reply after {blanks} empty events");
        };
        let data = drain(stream).await;
        assert_eq!(data.len(), blanks + 1);
        assert_eq!(data.last().map(String::as_str), Some(REPLY));
    }

    /// A stream that stays open after the reply, or sends nothing, is handed on when the
    /// hold ends, with what was read first and what comes after.
    #[tokio::test(start_paused = true)]
    async fn a_stream_still_open_when_the_hold_ends_is_handed_on() {
        for first in [Some(REPLY), None] {
            let (tx, rx) = futures::channel::mpsc::unbounded::<Result<Sse, SseError>>();
            if let Some(first) = first {
                tx.unbounded_send(Ok(event(Some(first)))).unwrap();
            }
            let read = read_call_stream(Box::pin(rx), &id(), CALL_REPLY_HOLD, |_| {}).await;
            let CallStream::Stream(stream) = read else {
                panic!("read as the reply while the stream is open");
            };
            tx.unbounded_send(Ok(event(Some(PROGRESS)))).unwrap();
            drop(tx);
            let mut expected: Vec<&str> = first.into_iter().collect();
            expected.push(PROGRESS);
            assert_eq!(drain(stream).await, expected);
        }
    }
}

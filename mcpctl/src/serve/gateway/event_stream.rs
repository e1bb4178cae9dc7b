//! `events/stream` through the gateway (the Events extension's push, SEP-3415): a
//! long-lived request of a client of `mcpctl serve`, in either era, on one of its
//! subscriptions in the relay ([`super::event_relay`], the same subscription and grants
//! as `events/poll`). The stream first says where it starts
//! (`notifications/events/active` with the gateway's cursor, `truncated` when events
//! after the client's cursor fell out of the subscription's buffer), replays what the
//! buffer holds after that cursor, then pushes each event as the relay takes it
//! (`notifications/events/event`, each with the cursor after it), a heartbeat with the
//! cursor every [`HEARTBEAT`] when nothing happens, and `notifications/events/terminated`
//! when the upstream subscription ends. It lasts until the client cancels the request or
//! goes away, or the gateway stops; it runs in the request's own task (nothing is left
//! behind), and while it lasts its subscription is not idle. While it lasts it is a client
//! of its caller, as a `subscriptions/listen` is: a caller holding `[gateway.limits]
//! clients_per_principal` sessions, listens and streams already is refused, naming the
//! limit.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{CustomNotification, JsonObject, ServerNotification};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::Hub;
use super::event_relay::{EventRelay, Read, arguments_of, cursor_of, invalid, seq_of};
use crate::serve::binding::ClientSlot;
use crate::serve::caller::Caller;

/// How often a stream with nothing to deliver sends a heartbeat (the extension asks for
/// one at least every 30 seconds; clients take a stream silent for twice that for dead).
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(15);

/// The `_meta` key that ties a push notification to its `events/stream` request.
const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// The error code a stream ends with when the upstream subscription ended.
const UPSTREAM_ENDED: i64 = -32603;

impl EventRelay {
    /// `events/stream` of `caller` (see the module docs): pushes the events of its
    /// subscription from the cursor given (none: from now) until the request is
    /// cancelled; answers the empty result then.
    pub(crate) async fn stream(
        self: &Arc<Self>,
        hub: &Hub,
        caller: &Caller,
        params: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let (name, arguments, from) = stream_params(params)?;
        let _slot = admit(hub, caller)?;
        let relayed = self.subscription(hub, caller, name, arguments).await?;
        let _open = relayed.stream_opened();
        // Taken before the first read: a change after it wakes the loop.
        let mut heads = relayed.heads();
        let id = serde_json::to_value(&context.id).unwrap_or(Value::Null);
        let send = |method: &'static str, mut params: Value| {
            params["_meta"] = json!({ SUBSCRIPTION_ID_KEY: id.clone() });
            let peer = context.peer.clone();
            async move {
                peer.send_notification(ServerNotification::CustomNotification(
                    CustomNotification::new(method, Some(params)),
                ))
                .await
                .is_ok()
            }
        };
        let done = || json!({ "_meta": {} });
        let first = relayed.read(from, usize::MAX);
        let active = json!({"cursor": cursor_of(first.start), "truncated": first.truncated});
        if !send("notifications/events/active", active).await {
            return Ok(done());
        }
        let mut position = first.start;
        let mut truncated_at = first.truncated_at;
        let mut pending = Some(first);
        loop {
            let read: Read = match pending.take() {
                Some(first) => first,
                None => {
                    heads.mark_unchanged();
                    let read = relayed.read(Some(position), usize::MAX);
                    // Events dropped from the buffer before this stream took them, or
                    // skipped upstream since the last read.
                    if read.start > position || read.truncated_at != truncated_at {
                        truncated_at = read.truncated_at;
                        let active = json!({"cursor": cursor_of(read.start), "truncated": true});
                        if !send("notifications/events/active", active).await {
                            return Ok(done());
                        }
                    }
                    read
                }
            };
            position = read.start;
            for (seq, event) in read.events {
                let mut pushed = serde_json::to_value(&event).unwrap_or(Value::Null);
                position = seq + 1;
                pushed["cursor"] = Value::String(cursor_of(position));
                if !send("notifications/events/event", pushed).await {
                    return Ok(done());
                }
            }
            if let Some(why) = read.ended {
                let error = json!({"error": {"code": UPSTREAM_ENDED, "message": why}});
                send("notifications/events/terminated", error).await;
                return Ok(done());
            }
            tokio::select! {
                () = context.ct.cancelled() => return Ok(done()),
                changed = heads.changed() => {
                    // The subscription is held here: its sender lives.
                    if changed.is_err() {
                        return Ok(done());
                    }
                }
                () = tokio::time::sleep(HEARTBEAT) => {
                    let beat = json!({"cursor": cursor_of(position)});
                    if !send("notifications/events/heartbeat", beat).await {
                        return Ok(done());
                    }
                }
            }
        }
    }
}

/// The event type, arguments and gateway cursor (`None`: from now) of an `events/stream`.
fn stream_params(params: &Value) -> Result<(&str, JsonObject, Option<u64>), McpError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("events/stream needs the event type's `name`".to_owned()))?;
    let arguments = arguments_of(params)?;
    let from = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(seq_of(c).ok_or_else(|| {
            invalid(format!(
                "`{c}` is not a cursor of this gateway; stream without one to start from now"
            ))
        })?),
        Some(_) => return Err(invalid("`cursor` must be a string or null".to_owned())),
    };
    Ok((name, arguments, from))
}

/// A stream is a client of its caller while it lasts, as a listen is: its slot, or the
/// refusal naming the limit.
fn admit(hub: &Hub, caller: &Caller) -> Result<ClientSlot, McpError> {
    hub.bindings.admit_client(caller).map_err(|n| {
        McpError::invalid_request(
            format!(
                "you already have {n} clients connected to mcpctl serve ([gateway.limits] clients_per_principal), counting sessions, listens and event streams; end an events/stream and try again"
            ),
            None,
        )
    })
}

//! The fake server's delivery task of one webhook subscription: each round it reads the
//! subscription's state, POSTs the events after its position (a `gap` message first when
//! events it asked for were forgotten), and waits for the next event, a lapse or the
//! server's stop. Apart from `webhook.rs` (the subscriptions, signatures and POSTs), so that
//! `webhook.rs` needs nothing of the server's shared state.

use std::sync::Weak;

use serde_json::{Map, Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::WebhookFault;
use super::cursor::cursor;
use super::webhook::{Callback, deliver, deliver_with_faults};
use crate::record::lock;
use crate::shared::Shared;

/// What the delivery task of one subscription needs each round.
struct Round {
    name: String,
    arguments: Map<String, Value>,
    /// The current key, and the replaced one during its grace.
    keys: Vec<Vec<u8>>,
    position: u64,
    lapses_at: Option<Instant>,
    posted: u64,
}

/// Starts the task that delivers subscription `id` to `callback` until it is
/// unsubscribed, lapses, or the server stops.
pub(crate) fn spawn_delivery(
    server: Weak<Shared>,
    id: String,
    callback: Callback,
    cancel: CancellationToken,
    faults: Vec<WebhookFault>,
) {
    tokio::spawn(async move {
        let Some(strong) = server.upgrade() else {
            return;
        };
        let stop = strong.stop.clone();
        let mut heads = strong.events.head.subscribe();
        drop(strong);
        loop {
            heads.mark_unchanged();
            let Some(server) = server.upgrade() else {
                return;
            };
            let Some(round) = current(&server, &id, &cancel) else {
                return;
            };
            let since =
                server
                    .events
                    .since(round.position, &round.name, &round.arguments, usize::MAX);
            if since.truncated {
                let resumed = since
                    .events
                    .first()
                    .map_or(since.checked, |e| e.seq.saturating_sub(1));
                let body = json!({"type": "gap", "cursor": cursor(resumed)}).to_string();
                let gap_id = format!("msg_gap_{}", server.webhooks.nonce());
                let _abandoned =
                    deliver(&callback, &gap_id, body.into_bytes(), &round.keys, &id).await;
            }
            let mut posted = round.posted;
            for event in &since.events {
                // Lapsed or unsubscribed meanwhile: nothing more is POSTed.
                if current(&server, &id, &cancel).is_none() {
                    return;
                }
                posted += 1;
                let body = event.with_cursor().to_string().into_bytes();
                let event_id = format!("evt-{}", event.seq);
                let event_id = event.occurrence["eventId"]
                    .as_str()
                    .map_or(event_id, str::to_owned);
                let outcome = deliver_with_faults(
                    &callback,
                    &event_id,
                    body,
                    &round.keys,
                    &id,
                    posted,
                    &faults,
                )
                .await;
                let mut subs = lock(&server.webhooks.subs);
                let Some(sub) = subs.get_mut(&id).filter(|_| !cancel.is_cancelled()) else {
                    return;
                };
                sub.posted = posted;
                sub.position = sub.position.max(event.seq);
                match outcome {
                    Ok(()) => {
                        sub.delivered += 1;
                        sub.last_delivery_at = Some(
                            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                        );
                        sub.last_error = None;
                    }
                    Err(failure) => sub.last_error = Some(failure),
                }
            }
            if let Some(sub) = lock(&server.webhooks.subs)
                .get_mut(&id)
                .filter(|_| !cancel.is_cancelled())
            {
                sub.position = sub.position.max(since.checked);
            }
            let lapses_at = round.lapses_at;
            drop(server);
            let lapse = async {
                match lapses_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = stop.cancelled() => return,
                () = cancel.cancelled() => return,
                changed = heads.changed() => if changed.is_err() { return },
                () = lapse => {}
            }
        }
    });
}

/// The subscription's state for a round; `None` (and the subscription forgotten) once it
/// lapsed, or when it was unsubscribed.
fn current(server: &Shared, id: &str, cancel: &CancellationToken) -> Option<Round> {
    if cancel.is_cancelled() {
        return None;
    }
    let mut subs = lock(&server.webhooks.subs);
    let sub = subs.get(id)?;
    if sub.lapses_at.is_some_and(|at| at <= Instant::now()) {
        sub.cancel.cancel();
        subs.remove(id);
        return None;
    }
    Some(Round {
        name: sub.name.clone(),
        arguments: sub.arguments.clone(),
        keys: std::iter::once(sub.key.clone())
            .chain(
                sub.previous_key
                    .as_ref()
                    .filter(|(_, until)| *until > Instant::now())
                    .map(|(key, _)| key.clone()),
            )
            .collect(),
        position: sub.position,
        lapses_at: sub.lapses_at,
        posted: sub.posted,
    })
}

//! Faults of the 2026-07-28 era's `subscriptions/listen` streams, driven by tools:
//! [`Behavior::EndListens`](crate::Behavior::EndListens) ends every open listen (and may
//! hold the next ones back until [`Behavior::ReleaseListens`](crate::Behavior::ReleaseListens)),
//! [`Behavior::SilenceListens`](crate::Behavior::SilenceListens) makes every open listen
//! stream go silent without closing (over HTTP). A client must notice, and open its
//! listens again.

use std::sync::atomic::Ordering;

use rmcp::service::SubscriptionSink;
use serde_json::{Value, json};

use crate::record::lock;
use crate::shared::Shared;

/// The listens registered now (once those already acknowledged are), taken out of the
/// server's list: nothing is sent to them any more.
async fn take_listeners(server: &Shared) -> Vec<SubscriptionSink> {
    let open = server.listening(|_| true).await;
    lock(&server.listeners).retain(|sink| !open.iter().any(|o| o.id() == sink.id()));
    open
}

/// [`Behavior::EndListens`](crate::Behavior::EndListens): ends every open listen (each gets
/// its final result), after holding new ones back when `hold`. Returns `{"ended": N}`.
pub(crate) async fn end(server: &Shared, hold: bool) -> Value {
    if hold {
        server.listen_faults.hold.send_replace(true);
    }
    let ended = take_listeners(server).await.len();
    server.listen_faults.ended.send_modify(|n| *n += 1);
    json!({ "ended": ended })
}

/// [`Behavior::ReleaseListens`](crate::Behavior::ReleaseListens): lets held listen requests
/// through, and new ones from now on. Returns `{"released": N}`, the requests that were
/// waiting.
pub(crate) fn release(server: &Shared) -> Value {
    server.listen_faults.hold.send_replace(false);
    let released = server.listen_faults.held.load(Ordering::SeqCst);
    json!({ "released": released })
}

/// [`Behavior::SilenceListens`](crate::Behavior::SilenceListens): every listen open now
/// gets nothing more (over HTTP its stream sends nothing at all, keep-alives included,
/// and stays open). Returns `{"silenced": N}`.
pub(crate) async fn silence(server: &Shared) -> Value {
    let silenced = take_listeners(server).await.len();
    server.listen_faults.silenced.send_modify(|n| *n += 1);
    json!({ "silenced": silenced })
}

/// The HTTP side: listen requests held back, and listen streams silenced.
#[cfg(feature = "http")]
pub(crate) mod http {
    use std::sync::atomic::Ordering;

    use axum::body::Body;
    use futures::StreamExt;
    use tokio_util::sync::CancellationToken;

    use crate::shared::ListenFaults;

    /// Waits while listens are held back (or until `stop`).
    pub(crate) async fn wait_unless_held(faults: &ListenFaults, stop: &CancellationToken) {
        let mut hold = faults.hold.subscribe();
        if !*hold.borrow_and_update() {
            return;
        }
        faults.held.fetch_add(1, Ordering::SeqCst);
        tokio::select! {
            _ = hold.wait_for(|held| !held) => {}
            () = stop.cancelled() => {}
        }
        faults.held.fetch_sub(1, Ordering::SeqCst);
    }

    /// The body of a listen's response, which stops sending anything (and stays open until
    /// `stop`) once the listens answered before are silenced: the first chunk the server
    /// writes after that (an event, a keep-alive, the end) is swallowed, and so is
    /// everything after it.
    pub(crate) fn silenceable(faults: &ListenFaults, body: Body, stop: CancellationToken) -> Body {
        let silenced = faults.silenced.subscribe();
        let answered_at = *silenced.borrow();
        let chunks = futures::stream::unfold(
            (body.into_data_stream(), silenced, stop),
            move |(mut inner, silenced, stop)| async move {
                let chunk = inner.next().await;
                if *silenced.borrow() != answered_at {
                    stop.cancelled().await;
                    return None;
                }
                Some((chunk?, (inner, silenced, stop)))
            },
        );
        Body::from_stream(chunks)
    }
}

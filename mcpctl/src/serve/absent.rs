//! Noticing a 2025-era HTTP client that went away while the gateway waits for its answer.
//!
//! rmcp keeps a streamable-HTTP session after its client's connections are gone (a client
//! may resume a stream), until it has been idle for minutes; a call waiting for that
//! client's answer to a question would wait as long, holding its turn on a 2025-era
//! upstream server. The HTTP layer tells when a response stream of a session ends before
//! its last byte ([`watch_stream`]); if that session has a question out, the gateway pings
//! the client, and a client that does not answer within [`PING_BOUND`] is gone: its session
//! is closed, which cancels its calls at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::ServerRequest;
use rmcp::service::Peer;

/// How long a client whose stream broke has to answer a ping.
pub(crate) const PING_BOUND: Duration = Duration::from_secs(3);

/// The header naming a request's session.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// Sessions with a question out to their client: how many, and the client.
#[derive(Default)]
pub(crate) struct Waiting {
    sessions: Mutex<HashMap<String, (usize, Peer<RoleServer>)>>,
}

impl std::fmt::Debug for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = self.sessions.lock().map_or(0, |s| s.len());
        f.debug_struct("Waiting")
            .field("sessions", &waiting)
            .finish()
    }
}

impl Waiting {
    /// A question to the client of `session` is out until the guard drops.
    pub(crate) fn begin(self: &Arc<Self>, session: &str, peer: &Peer<RoleServer>) -> WaitGuard {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions
                .entry(session.to_owned())
                .or_insert_with(|| (0, peer.clone()))
                .0 += 1;
        }
        WaitGuard {
            waiting: Arc::clone(self),
            session: session.to_owned(),
        }
    }

    /// The client of `session`, when a question to it is out.
    fn peer_if_waiting(&self, session: &str) -> Option<Peer<RoleServer>> {
        self.sessions
            .lock()
            .ok()?
            .get(session)
            .map(|(_, peer)| peer.clone())
    }
}

/// See [`Waiting::begin`].
pub(crate) struct WaitGuard {
    waiting: Arc<Waiting>,
    session: String,
}

impl Drop for WaitGuard {
    fn drop(&mut self) {
        if let Ok(mut sessions) = self.waiting.sessions.lock()
            && let Some((count, _)) = sessions.get_mut(&self.session)
        {
            *count -= 1;
            if *count == 0 {
                sessions.remove(&self.session);
            }
        }
    }
}

/// Whether the client behind `peer` answers a ping within [`PING_BOUND`].
async fn answers(peer: &Peer<RoleServer>) -> bool {
    let ping = peer.send_request(ServerRequest::PingRequest(Default::default()));
    matches!(tokio::time::timeout(PING_BOUND, ping).await, Ok(Ok(_)))
}

/// A response stream of `session` ended before its last byte: when a question to its
/// client is out, ping it, and call `close` (which closes the session) when it does not
/// answer.
pub(crate) fn stream_lost<F, Fut>(waiting: &Waiting, session: String, close: F)
where
    F: FnOnce(String) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let Some(peer) = waiting.peer_if_waiting(&session) else {
        return;
    };
    tokio::spawn(async move {
        if answers(&peer).await {
            return;
        }
        tracing::info!(
            "the client of session {session} is gone (a stream broke and it does not answer a ping); its calls are cancelled"
        );
        close(session).await;
    });
}

/// `body` with `on_lost` called when it is dropped before its end (the client's
/// connection went away mid-stream).
pub(crate) fn watch_stream(
    body: axum::body::Body,
    on_lost: impl FnOnce() + Send + 'static,
) -> axum::body::Body {
    struct Guard<F: FnOnce()> {
        on_lost: Option<F>,
    }
    impl<F: FnOnce()> Guard<F> {
        fn disarm(&mut self) {
            self.on_lost = None;
        }
    }
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(on_lost) = self.on_lost.take() {
                on_lost();
            }
        }
    }
    let guard = Guard {
        on_lost: Some(on_lost),
    };
    let frames = body.into_data_stream();
    let stream = futures::stream::unfold((frames, guard), |(mut frames, mut guard)| async move {
        use futures::StreamExt;
        match frames.next().await {
            Some(frame) => Some((frame, (frames, guard))),
            None => {
                // Ended whole: nothing was lost.
                guard.disarm();
                None
            }
        }
    });
    axum::body::Body::from_stream(stream)
}

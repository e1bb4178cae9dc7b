//! The loopback callback server that receives the authorization response.
//!
//! Any local process can reach a loopback port, so only a request carrying the pending
//! login's `state` is passed on; anything else (another state, no state, or a request
//! before the state is known) gets a short HTTP 400 page and is ignored, and the login keeps
//! waiting for the real callback until its own timeout.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use mcp_key::McpServerKey;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::AuthError;

/// The path the authorization server redirects to.
pub(crate) const CALLBACK_PATH: &str = "/callback";

/// The query of the first request that reached the callback path with the expected state.
pub(crate) type CallbackParams = HashMap<String, String>;

/// What the handler needs: the state to expect (unknown until the authorization URL is
/// built) and where to deliver the one matching callback.
struct Pending {
    state: Option<String>,
    deliver: Option<oneshot::Sender<CallbackParams>>,
}

type Slot = Arc<Mutex<Pending>>;

/// A running callback server; aborted when dropped.
pub(crate) struct CallbackServer {
    pub(crate) redirect_uri: String,
    pub(crate) received: oneshot::Receiver<CallbackParams>,
    slot: Slot,
    task: JoinHandle<()>,
}

impl CallbackServer {
    /// From now on only callbacks carrying `state` are delivered.
    pub(crate) fn expect_state(&self, state: &str) {
        let mut pending = self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pending.state = Some(state.to_owned());
    }
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The page for a request that does not belong to the pending login. It echoes nothing
/// from the request.
const FOREIGN_REQUEST: &str = "This request does not belong to the pending login and was ignored.";

async fn on_callback(
    State(slot): State<Slot>,
    Query(params): Query<CallbackParams>,
) -> impl IntoResponse {
    let failed = params.contains_key("error");
    let sender = {
        let mut pending = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let matches = pending.state.is_some() && params.get("state") == pending.state.as_ref();
        if !matches {
            tracing::debug!("ignored a login callback without this login's state");
            return (StatusCode::BAD_REQUEST, FOREIGN_REQUEST);
        }
        pending.deliver.take()
    };
    match sender {
        Some(tx) => {
            let _ = tx.send(params);
            let page = if failed {
                "Login failed. You can close this window."
            } else {
                "Login complete. You can close this window."
            };
            (StatusCode::OK, page)
        }
        None => (
            StatusCode::OK,
            "This login was already completed. You can close this window.",
        ),
    }
}

/// Binds 127.0.0.1 on `port` (0 = any free port) and serves the callback path.
pub(crate) async fn start(
    server: &McpServerKey,
    port: Option<u16>,
) -> Result<CallbackServer, AuthError> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port.unwrap_or(0)));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| AuthError::Config {
            server: server.clone(),
            detail: format!(
                "cannot listen for the login callback on {addr}: {e}; choose another callback port"
            ),
        })?;
    let local = listener.local_addr().map_err(|e| AuthError::Config {
        server: server.clone(),
        detail: format!("cannot read the callback listener address: {e}"),
    })?;
    let (tx, rx) = oneshot::channel();
    let slot: Slot = Arc::new(Mutex::new(Pending {
        state: None,
        deliver: Some(tx),
    }));
    let app = Router::new()
        .route(CALLBACK_PATH, get(on_callback))
        .with_state(Arc::clone(&slot));
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::debug!(error = %e, "login callback server stopped");
        }
    });
    Ok(CallbackServer {
        redirect_uri: format!("http://127.0.0.1:{}{CALLBACK_PATH}", local.port()),
        received: rx,
        slot,
        task,
    })
}

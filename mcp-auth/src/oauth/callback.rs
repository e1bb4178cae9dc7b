//! The loopback callback server that receives the authorization response.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use axum::routing::get;
use mcp_key::McpServerKey;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::AuthError;

/// The path the authorization server redirects to.
pub(crate) const CALLBACK_PATH: &str = "/callback";

/// The query of the first request that reached the callback path.
pub(crate) type CallbackParams = HashMap<String, String>;

type Slot = Arc<Mutex<Option<oneshot::Sender<CallbackParams>>>>;

/// A running callback server; aborted when dropped.
pub(crate) struct CallbackServer {
    pub(crate) redirect_uri: String,
    pub(crate) received: oneshot::Receiver<CallbackParams>,
    task: JoinHandle<()>,
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn on_callback(
    State(slot): State<Slot>,
    Query(params): Query<CallbackParams>,
) -> impl IntoResponse {
    let failed = params.contains_key("error");
    let sender = slot.lock().ok().and_then(|mut s| s.take());
    match sender {
        Some(tx) => {
            let _ = tx.send(params);
            if failed {
                "Login failed. You can close this window."
            } else {
                "Login complete. You can close this window."
            }
        }
        None => "This login was already completed. You can close this window.",
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
    let slot: Slot = Arc::new(Mutex::new(Some(tx)));
    let app = Router::new()
        .route(CALLBACK_PATH, get(on_callback))
        .with_state(slot);
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::debug!(error = %e, "login callback server stopped");
        }
    });
    Ok(CallbackServer {
        redirect_uri: format!("http://127.0.0.1:{}{CALLBACK_PATH}", local.port()),
        received: rx,
        task,
    })
}

//! What a live server said about itself in `initialize` ([`ServerInfo`]), and waiting for
//! a server to be ready.

use std::time::Duration;

use mcp_key::McpServerKey;
use rmcp::model::ServerCapabilities;
use serde::Serialize;

use crate::set::ConnectionSet;
use crate::set::slot::SlotState;

/// A server's identity and capabilities from its live connection's `initialize` result
/// (never from the tool catalog cache).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ServerInfo {
    /// `serverInfo.name` (empty when the server sent no `serverInfo`).
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `serverInfo.title`.
    pub title: Option<String>,
    /// `instructions`.
    pub instructions: Option<String>,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// The advertised capabilities, as sent.
    pub capabilities: ServerCapabilities,
}

impl ConnectionSet {
    /// What the server `key` said about itself when its live connection initialized:
    /// name, version, title, instructions, protocol version and capabilities. `None` when
    /// the key is unknown or the server is not ready (starting, deferred, failed): a
    /// deferred server's cached listing carries no server information.
    pub fn server_info(&self, key: &McpServerKey) -> Option<ServerInfo> {
        let SlotState::Ready(attached) = self.inner.slots.get(key)?.current() else {
            return None;
        };
        let info = attached.server_info()?;
        let (name, version, title) = match info.server_info.clone() {
            Some(i) => (i.name, i.version, i.title),
            None => (String::new(), String::new(), None),
        };
        Some(ServerInfo {
            name,
            version,
            title,
            instructions: info.instructions.clone(),
            protocol_version: info.protocol_version.to_string(),
            capabilities: info.capabilities.clone(),
        })
    }

    /// Brings server `key` up if it is not: waits for a start in progress, starts a
    /// deferred server, restarts one that crashed (unless the restart backoff holds it
    /// back: then [`Error::NotReady`](crate::Error::NotReady) says when it may be tried again), within its startup
    /// timeout. `Ok` once it is ready (at once if it is). For a host that offers "restart"
    /// or wants a crashed server's tools ([`ToolInfo::ready`](crate::ToolInfo::ready)
    /// `false`) ready before the next call.
    ///
    /// # Errors
    /// [`Error::UnknownServer`](crate::Error::UnknownServer) for a key the set does not have; [`Error::NotReady`](crate::Error::NotReady) with
    /// the failure when it does not come up (or is held back); [`Error::ShutDown`](crate::Error::ShutDown).
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting (a start it began goes on).
    pub async fn ensure_started(&self, key: &McpServerKey) -> crate::Result<()> {
        let slot = self.inner.slot(key)?;
        let deadline = mcp_pool::deadline_in(slot.spec.config.startup_timeout());
        self.ready_connection(slot, deadline, false).await.map(drop)
    }

    /// [`ensure_started`](Self::ensure_started) without the restart backoff: for a host
    /// that knows why the server failed went away (the credentials it lacked appeared), so
    /// its earlier failures must not hold the start back. The failure count is kept.
    ///
    /// # Errors
    /// As [`ensure_started`](Self::ensure_started).
    ///
    /// # Cancel safety
    /// As [`ensure_started`](Self::ensure_started).
    pub async fn start_now(&self, key: &McpServerKey) -> crate::Result<()> {
        let slot = self.inner.slot(key)?;
        self.inner.pool.pool.clear_backoff(&slot.pool_key);
        self.ensure_started(key).await
    }

    /// Waits up to `timeout` for the server `key` to be ready: `true` once it is (at once
    /// if it already is), `false` when the timeout passes, the key is unknown, or the
    /// server settled in a state nothing will change by itself (its start was cancelled,
    /// or it failed for a reason that does not restart). Starts nothing: a deferred or
    /// crashed server becomes ready only if a call starts it meanwhile. Never an error.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting.
    pub async fn wait_for_server_ready(&self, key: &McpServerKey, timeout: Duration) -> bool {
        let Some(slot) = self.inner.slots.get(key) else {
            return false;
        };
        let mut states = slot.state.subscribe();
        let settled = states.wait_for(|state| match state {
            SlotState::Ready(attached) => attached.is_alive(),
            SlotState::Cancelled => true,
            SlotState::Failed(f) => !f.reason().is_restartable(),
            SlotState::Starting | SlotState::Deferred(_) => false,
        });
        match tokio::time::timeout(timeout, settled).await {
            Ok(Ok(state)) => matches!(&*state, SlotState::Ready(_)),
            _ => false,
        }
    }
}

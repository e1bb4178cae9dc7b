//! The gateway's 2025-era sessions: rmcp's in-memory session manager, whose new session
//! ids start with the instance's id (`--instance-id`), so a load balancer in front of
//! several instances routes each session to the instance that holds it by its
//! `Mcp-Session-Id` header alone (an nginx `map` on the part before the first `.`).
//!
//! rmcp's `LocalSessionManager` makes its ids itself (a UUID) and takes no generator:
//! [`InstanceSessions`] makes the session the same way under an id of its own and hands
//! every other operation to it.

use std::sync::Arc;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::common::server_side_http::{ServerSseMessage, session_id};
use rmcp::transport::streamable_http_server::session::EventStore;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, create_local_session,
};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

/// Longest instance id.
pub(crate) const MAX_INSTANCE_ID: usize = 32;

/// The 2025-era sessions of one instance.
#[derive(Debug, Default)]
pub(crate) struct InstanceSessions {
    local: LocalSessionManager,
    /// What new session ids start with (`<instance id>.`), empty without an instance id.
    prefix: String,
}

impl InstanceSessions {
    /// Sessions whose ids start with `instance` and a dot (none without one).
    pub(crate) fn new(instance: Option<&str>) -> Self {
        Self {
            local: LocalSessionManager::default(),
            prefix: instance.map(|id| format!("{id}.")).unwrap_or_default(),
        }
    }
}

/// Checks an `--instance-id`: 1 to [`MAX_INSTANCE_ID`] letters, digits, `-` or `_` (what a
/// header value and an nginx `map` take as is).
pub(crate) fn check_instance_id(id: &str) -> Result<(), String> {
    let fits = !id.is_empty()
        && id.len() <= MAX_INSTANCE_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if fits {
        Ok(())
    } else {
        Err(format!(
            "--instance-id {id:?} must be 1 to {MAX_INSTANCE_ID} letters, digits, `-` or `_`"
        ))
    }
}

impl SessionManager for InstanceSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let id: SessionId = format!("{}{}", self.prefix, session_id()).into();
        let (handle, worker) = create_local_session(id.clone(), self.local.session_config.clone());
        self.local.sessions.write().await.insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.local.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn session_ids_start_with_the_instance_id() {
        let sessions = InstanceSessions::new(Some("gw-1"));
        let (id, _transport) = sessions.create_session().await.unwrap();
        assert!(id.starts_with("gw-1."), "{id}");
        assert!(sessions.has_session(&id).await.unwrap());
        sessions.close_session(&id).await.unwrap();
        assert!(!sessions.has_session(&id).await.unwrap());
        let (plain, _transport) = InstanceSessions::new(None).create_session().await.unwrap();
        assert!(!plain.contains('.'), "{plain}");
    }

    #[test]
    fn instance_ids_fit_a_header_and_a_map() {
        for good in ["a", "gw-1", "eu_west_2", &"x".repeat(MAX_INSTANCE_ID)] {
            assert_eq!(check_instance_id(good), Ok(()), "{good}");
        }
        for bad in ["", "a.b", "a b", "é", &"x".repeat(MAX_INSTANCE_ID + 1)] {
            assert!(check_instance_id(bad).is_err(), "{bad:?}");
        }
    }
}

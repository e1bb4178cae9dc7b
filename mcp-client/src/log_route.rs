//! Whose log message is it? A connection shared by several users (a connection set's
//! sessions) must hand a log message written during one user's call to that user only.
//! rmcp handles each notification on a task of its own, which may run after the call's
//! reply has already ended the call; so the route is chosen here, as the message is read
//! off the transport (stdio, streamable HTTP, legacy SSE), in the order the server wrote
//! it (before the reply that follows it), and carried to the handler in the
//! notification's extensions.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::handler::ServerRequests;
use crate::server_log::ServerLog;

/// Where one log message goes, chosen by [`ServerRequests::route_log`] when the message
/// was read.
pub type LogRoute = Arc<dyn Fn(&ServerLog) + Send + Sync>;

/// The route of one message, as a notification extension.
#[derive(Clone)]
pub(crate) struct RoutedLog(pub(crate) LogRoute);

/// A transport that routes log messages as they are read (see the module docs).
pub(crate) struct RouteLogs<T> {
    inner: T,
    requests: Arc<dyn ServerRequests>,
}

impl<T> RouteLogs<T> {
    pub(crate) fn new(inner: T, requests: Arc<dyn ServerRequests>) -> Self {
        Self { inner, requests }
    }
}

impl<T> Transport<RoleClient> for RouteLogs<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let mut message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &mut message
            && let ServerNotification::LoggingMessageNotification(log) = &mut n.notification
            && let Some(route) = self.requests.route_log()
        {
            log.extensions.insert(RoutedLog(route));
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

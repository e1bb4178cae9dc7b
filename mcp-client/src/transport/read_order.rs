//! What must be handled in the order the server wrote it. rmcp handles each notification
//! on a task of its own, which may run after a later notification's task, and after the
//! call's reply has already ended the call. Two kinds of notification cannot wait for that:
//! - a log message: a connection shared by several users (a connection set's sessions)
//!   must hand a message written during one user's call to that user only, so its route
//!   is chosen as it is read and carried to the handler in the notification's extensions;
//! - a progress notification: a call's progress callback must see every update, in order,
//!   before the call returns (the second of three was once overtaken by the third and
//!   dropped as stale), so progress is delivered here and not passed on to rmcp.
//!
//! Both are handled as the message is read off the transport (stdio, streamable HTTP,
//! legacy SSE), before the reply that follows it.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ClientRequest, JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::host::server_requests::LogRoute;
use crate::state::ConnectionShared;

/// The route of one message, as a notification extension.
#[derive(Clone)]
pub(crate) struct RoutedLog(pub(crate) LogRoute);

/// A transport that handles log and progress notifications as they are read (see the
/// module docs).
pub(crate) struct ReadOrder<T> {
    inner: T,
    shared: Arc<ConnectionShared>,
    /// The handshake's spans, whose trace context the handshake's requests carry; let go
    /// once the handshake is sent, so they end with the handshake and not with the
    /// connection.
    handshake: Option<Handshake>,
}

/// The spans of a handshake: the one current when the transport was made, named for the
/// first request; a request of another method (the `initialize` rmcp sends when its
/// `server/discover` probe was answered the 2025 way) gets a child span of its own.
struct Handshake {
    span: tracing::Span,
    first: Option<&'static str>,
    fallback: Option<tracing::Span>,
}

impl Handshake {
    /// The span whose context a handshake request of `method` carries.
    fn span_for(&mut self, method: &'static str, shared: &ConnectionShared) -> &tracing::Span {
        match self.first {
            None => {
                self.first = Some(method);
                &self.span
            }
            Some(first) if first == method => &self.span,
            Some(_) => {
                let span = &self.span;
                self.fallback.get_or_insert_with(|| {
                    span.in_scope(|| shared.instruments.span(&shared.key, None, method, None))
                })
            }
        }
    }
}

impl<T> ReadOrder<T> {
    /// `inner`, made in the handshake's span.
    pub(crate) fn new(inner: T, shared: Arc<ConnectionShared>) -> Self {
        Self {
            inner,
            shared,
            handshake: Some(Handshake {
                span: tracing::Span::current(),
                first: None,
                fallback: None,
            }),
        }
    }
}

impl<T> Transport<RoleClient> for ReadOrder<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // rmcp sends the handshake itself, outside every span (see
        // `telemetry::outside_spans`). Every other request got its trace context where it
        // was made.
        match &mut item {
            JsonRpcMessage::Request(r)
                if matches!(
                    r.request,
                    ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_)
                ) =>
            {
                let method = match r.request {
                    ClientRequest::InitializeRequest(_) => "initialize",
                    _ => "server/discover",
                };
                if let Some(handshake) = &mut self.handshake {
                    let span = handshake.span_for(method, &self.shared);
                    crate::telemetry::inject_from(span, &mut r.request);
                }
            }
            _ => self.handshake = None,
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let mut message = self.inner.receive().await?;
            if let JsonRpcMessage::Notification(n) = &mut message {
                match &mut n.notification {
                    ServerNotification::ProgressNotification(progress) => {
                        self.shared.deliver_progress(progress.params.clone());
                        continue;
                    }
                    ServerNotification::LoggingMessageNotification(log) => {
                        if let Some(route) = self.shared.requests().route_log() {
                            log.extensions.insert(RoutedLog(route));
                        }
                    }
                    ServerNotification::CustomNotification(custom)
                        if self.shared.events.route(custom) =>
                    {
                        continue;
                    }
                    _ => {}
                }
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

//! A TCP listener handing out killable streams ([`crate::killable`]) with Nagle's
//! algorithm off, and [`Running`]: a fake server's router served on it.

use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::killable::KillableStream;

/// A bound server task: the address, a stop token and the serving task.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) addr: SocketAddr,
    pub(crate) stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Bind `bind`, build the router for the bound address and serve it until
    /// [`Running::shutdown`] or drop.
    pub(crate) async fn start(
        bind: SocketAddr,
        stop: CancellationToken,
        what: &'static str,
        router: impl FnOnce(SocketAddr) -> axum::Router,
    ) -> Result<Self, Error> {
        let listener = tokio::net::TcpListener::bind(bind)
            .await
            .map_err(|source| Error::Io {
                doing: what,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| Error::Io {
            doing: what,
            source,
        })?;
        let router = router(addr);
        let listener = KillableListener {
            inner: listener,
            kill: stop.clone(),
        };
        let shutdown = stop.clone();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(shutdown.cancelled_owned())
                .await;
        });
        Ok(Self {
            addr,
            stop,
            task: Some(task),
        })
    }

    /// Stop, wait up to [`crate::SHUTDOWN_GRACE`], then abort.
    pub(crate) async fn shutdown(&mut self) {
        self.stop.cancel();
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(crate::SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
        {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Turns Nagle's algorithm off on an accepted connection.
///
/// hyper writes a streamed response's head and each body chunk (an SSE event) as separate
/// small writes. With Nagle on, the second write waits for the client's ACK of the first,
/// and a client in request/response rhythm delays that ACK (40 ms on Linux): every call
/// answered on an SSE stream would take ~44 ms.
/// Failing to set it costs only latency, so the connection is served either way.
pub(crate) fn no_delay(stream: &TcpStream) {
    let _ = stream.set_nodelay(true);
}

pub(crate) struct KillableListener {
    pub(crate) inner: TcpListener,
    pub(crate) kill: CancellationToken,
}

impl axum::serve::Listener for KillableListener {
    type Io = KillableStream<TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (stream, addr) = axum::serve::Listener::accept(&mut self.inner).await;
        no_delay(&stream);
        (KillableStream::new(stream, &self.kill), addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[tokio::test]
    async fn accepted_connections_have_nagle_off() {
        let mut listener = KillableListener {
            inner: TcpListener::bind("127.0.0.1:0").await.unwrap(),
            kill: CancellationToken::new(),
        };
        let addr = listener.inner.local_addr().unwrap();
        let client = TcpStream::connect(addr);
        let ((accepted, _), _client) =
            tokio::join!(axum::serve::Listener::accept(&mut listener), client);
        let stream = accepted.inner_stream().unwrap();
        assert!(
            stream.nodelay().unwrap(),
            "TCP_NODELAY on the server's side"
        );
    }
}

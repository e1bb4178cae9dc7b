//! Streams that close at once when a token is cancelled.
//!
//! A crashed fake server has an in-flight call that never ends: axum's graceful
//! shutdown would wait for it, and rmcp drains in-flight requests before closing a
//! transport. A real crash closes the pipe or socket; so does a killed stream: on the
//! next poll after the token fires it drops the inner stream and fails.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

pub(crate) struct KillableStream<S> {
    stream: Option<S>,
    killed: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> KillableStream<S> {
    pub(crate) fn new(stream: S, kill: &CancellationToken) -> Self {
        Self {
            stream: Some(stream),
            killed: Box::pin(kill.clone().cancelled_owned()),
        }
    }

    /// The inner stream, unless killed.
    #[cfg(all(test, feature = "http"))]
    pub(crate) fn inner_stream(&self) -> Option<&S> {
        self.stream.as_ref()
    }

    /// The live stream, or an error (dropping the stream) once killed.
    fn live(&mut self, cx: &mut Context<'_>) -> io::Result<Pin<&mut S>> {
        if self.killed.as_mut().poll(cx).is_ready() {
            self.stream = None;
        }
        match self.stream.as_mut() {
            Some(stream) => Ok(Pin::new(stream)),
            None => Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "fake server stopped",
            )),
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for KillableStream<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut().live(cx) {
            Ok(stream) => stream.poll_read(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for KillableStream<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut().live(cx) {
            Ok(stream) => stream.poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut().live(cx) {
            Ok(stream) => stream.poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut().live(cx) {
            Ok(stream) => stream.poll_shutdown(cx),
            Err(_) => Poll::Ready(Ok(())),
        }
    }
}

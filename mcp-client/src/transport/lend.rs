//! [`Lent`]: a pipe lent to one rmcp handshake and handed back when rmcp drops it.
//!
//! rmcp takes a transport by value and drops it when a handshake fails. Under
//! `protocol = "auto"`, a 2025-era server built on rmcp 3.x answers the `server/discover`
//! probe with "unsupported protocol version" and stays open to `initialize`, but rmcp's
//! probe gives up with an error instead of falling back. Lending it the child's pipes lets
//! the set shake hands again with `initialize` on the same process instead of starting a
//! second one.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::oneshot;

/// A pipe that goes back to its owner (through [`Lent::new`]'s receiver) when dropped.
pub(crate) struct Lent<T> {
    inner: Option<T>,
    owner: Option<oneshot::Sender<T>>,
}

impl<T> Lent<T> {
    /// Lends `inner`; the receiver gets it back once the returned value is dropped.
    pub(crate) fn new(inner: T) -> (Self, oneshot::Receiver<T>) {
        let (owner, back) = oneshot::channel();
        (
            Self {
                inner: Some(inner),
                owner: Some(owner),
            },
            back,
        )
    }

    fn pipe(&mut self) -> io::Result<&mut T> {
        // Only `Drop` takes it.
        self.inner
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "pipe already handed back"))
    }
}

impl<T> Drop for Lent<T> {
    fn drop(&mut self) {
        if let (Some(inner), Some(owner)) = (self.inner.take(), self.owner.take()) {
            // An owner that stopped waiting drops the pipe, which is what it would do.
            let _ = owner.send(inner);
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Lent<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut().pipe() {
            Ok(pipe) => Pin::new(pipe).poll_read(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Lent<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut().pipe() {
            Ok(pipe) => Pin::new(pipe).poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut().pipe() {
            Ok(pipe) => Pin::new(pipe).poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut().pipe() {
            Ok(pipe) => Pin::new(pipe).poll_shutdown(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn a_dropped_loan_hands_the_pipe_back_with_its_unread_bytes() {
        let (mut near, far) = tokio::io::duplex(64);
        let (mut lent, back) = Lent::new(far);
        near.write_all(b"one two").await.unwrap();
        let mut first = [0u8; 4];
        lent.read_exact(&mut first).await.unwrap();
        assert_eq!(&first, b"one ");
        lent.write_all(b"hi").await.unwrap();
        drop(lent);
        let mut far = back.await.unwrap();
        let mut rest = [0u8; 3];
        far.read_exact(&mut rest).await.unwrap();
        assert_eq!(&rest, b"two");
        let mut echoed = [0u8; 2];
        near.read_exact(&mut echoed).await.unwrap();
        assert_eq!(&echoed, b"hi");
    }
}

//! The gateway's own stdin and stdout, for the MCP client it serves over stdio.
//!
//! tokio's `stdin()`/`stdout()` (what `rmcp::transport::stdio()` uses) run every read and
//! write on a blocking thread, since a terminal or file cannot be polled: each message
//! costs two thread hand-offs, which profiles of the gateway's call path showed as most of
//! its own time. An MCP client starts the gateway with pipes, and a pipe can be polled:
//! then both are non-blocking pipes on the reactor. Anything else (a terminal, a file)
//! keeps tokio's blocking stdio.

use std::os::fd::{AsFd, BorrowedFd};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// A reader of the client's messages.
pub(crate) type Input = Box<dyn AsyncRead + Send + Unpin>;
/// A writer of the gateway's messages.
pub(crate) type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// stdin and stdout, each as a non-blocking pipe when it is one.
///
/// Making a pipe non-blocking sets `O_NONBLOCK` on its open file description, which the
/// process that started the gateway could share; MCP clients keep only the other end of
/// each pipe, so only the gateway reads its stdin and writes its stdout.
pub(crate) fn stdio() -> (Input, Output) {
    let input: Input = match pipe_reader(std::io::stdin().as_fd()) {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    };
    let output: Output = match pipe_writer(std::io::stdout().as_fd()) {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

/// `fd` (duplicated) as a non-blocking pipe reader; an error when it is not a pipe.
fn pipe_reader(fd: BorrowedFd<'_>) -> std::io::Result<pipe::Receiver> {
    pipe::Receiver::from_file(std::fs::File::from(fd.try_clone_to_owned()?))
}

/// `fd` (duplicated) as a non-blocking pipe writer; an error when it is not a pipe.
fn pipe_writer(fd: BorrowedFd<'_>) -> std::io::Result<pipe::Sender> {
    pipe::Sender::from_file(std::fs::File::from(fd.try_clone_to_owned()?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn pipes_are_polled_on_the_reactor() {
        let (reader, writer) = std::io::pipe().unwrap();
        let mut input = pipe_reader(reader.as_fd()).unwrap();
        let mut output = pipe_writer(writer.as_fd()).unwrap();
        output.write_all(b"{}\n").await.unwrap();
        let mut line = [0u8; 3];
        input.read_exact(&mut line).await.unwrap();
        assert_eq!(&line, b"{}\n");
    }

    #[test]
    fn a_file_is_not_a_pipe() {
        let file = tempfile::tempfile().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        assert!(pipe_reader(file.as_fd()).is_err());
        assert!(pipe_writer(file.as_fd()).is_err());
    }
}

//! The in-process runner: a [`FakeServer`] on one end of a `tokio::io::duplex` pipe.

use rmcp::ServiceExt;
use tokio::io::DuplexStream;
use tokio_util::sync::CancellationToken;

use crate::server::FakeServer;
use crate::{RecordedRequest, Scenario};

/// Buffer size of each direction of the duplex pipe.
pub const DUPLEX_BUFFER: usize = 64 * 1024;

/// A fake server running in this process; the client half of its pipe is handed out by
/// [`InProcessServer::start`].
///
/// Dropping it stops the server task without waiting; prefer
/// [`InProcessServer::shutdown`].
#[derive(Debug)]
pub struct InProcessServer {
    server: FakeServer,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl InProcessServer {
    /// Start serving `scenario` on a new duplex pipe. Returns the client half (an rmcp
    /// transport: `client.serve(stream)`) and the handle. Must be called inside a tokio
    /// runtime.
    ///
    /// Faults honoured: `init_delay_ms`, `hang_initialize`, `garbage_stdout` and
    /// `huge_line` (written to the pipe before serving), the list faults, and
    /// [`crate::Behavior::Exit`] (closes the pipe).
    pub fn start(scenario: Scenario) -> (DuplexStream, Self) {
        let (client, mut server_half) = tokio::io::duplex(DUPLEX_BUFFER);
        let server = FakeServer::new(scenario);
        let stop = server.stop_token();
        let running = server.clone();
        let token = stop.clone();
        let task = tokio::spawn(async move {
            let faults = running.scenario().faults.clone();
            let preamble = crate::stdio::write_preamble(&faults, &mut server_half);
            let wrote = tokio::select! {
                r = preamble => r.is_ok(),
                () = token.cancelled() => false,
            };
            if !wrote {
                return;
            }
            let stream = crate::killable::KillableStream::new(server_half, &token);
            if let Ok(service) = running.serve_with_ct(stream, token).await {
                let _ = service.waiting().await;
            }
        });
        (
            client,
            Self {
                server,
                stop,
                task: Some(task),
            },
        )
    }

    /// The server (tool set, request log).
    pub fn server(&self) -> &FakeServer {
        &self.server
    }

    /// The latest requests received ([`FakeServer::requests`](crate::FakeServer::requests)).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// True once the server task ended (client closed, crash, or shutdown).
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Stop the server and wait for its task; the client sees the pipe close.
    ///
    /// # Cancel safety
    /// Cancel-safe: the server is already told to stop.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for InProcessServer {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

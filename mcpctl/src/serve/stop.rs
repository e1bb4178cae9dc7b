//! The stop signals (SIGINT, SIGTERM) every long-running command waits for: a leaf of
//! `serve/`, which runs until one arrives; the commands register them once.

use crate::error::CliError;

/// SIGINT and SIGTERM, registered at once.
pub(crate) struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    /// Registers both signals.
    pub(crate) fn new() -> Result<Self, CliError> {
        use tokio::signal::unix::{SignalKind, signal};
        let register = |kind| {
            signal(kind).map_err(|e| CliError::failure(format!("cannot handle signals: {e}")))
        };
        Ok(Self {
            interrupt: register(SignalKind::interrupt())?,
            terminate: register(SignalKind::terminate())?,
        })
    }

    /// Waits for either signal.
    pub(crate) async fn recv(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

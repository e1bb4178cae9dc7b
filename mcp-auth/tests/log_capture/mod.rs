//! Captures formatted `tracing` output (TRACE level, every target) for the tests that check
//! that no secret reaches the logs.

#![allow(clippy::unwrap_used, unreachable_pub, reason = "test helper")]

use std::io::Write;
use std::sync::{Arc, Mutex};

/// The captured text, shared with the subscriber's writer.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs a capturing subscriber for the current thread until the guard drops.
pub fn capture_logs() -> (Captured, tracing::subscriber::DefaultGuard) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::TRACE)
        .finish();
    (captured, tracing::subscriber::set_default(subscriber))
}

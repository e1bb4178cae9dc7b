//! A server's own log messages (`notifications/message`): each becomes a `tracing` event
//! (target [`SERVER_LOG_TARGET`], the server and logger as fields, the level mapped) and a
//! [`ServerLog`] on [`Client::server_logs`](crate::Client::server_logs). A server that
//! floods is held to [`LOG_BURST`] messages at once and [`LOG_RATE`] a second after that;
//! what is held back is counted, and the count rides on the next message let through.

#![expect(
    deprecated,
    reason = "rmcp marks logging and sampling deprecated (SEP-2577), yet MCP 2025-11-25 defines them and hosts still meet them"
)]

use std::sync::{Mutex, OnceLock};

use mcp_key::McpServerKey;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio::time::Instant;

/// The `tracing` target of server log messages (the server is the `server` field: a
/// target must be known when the program is compiled).
pub const SERVER_LOG_TARGET: &str = "mcp_server_log";

/// Messages a server may send at once before the rate applies.
pub const LOG_BURST: u32 = 200;
/// Messages a second a server may send after its burst; the rest are dropped and counted.
pub const LOG_RATE: u32 = 100;
/// Messages kept for a slow reader of [`Client::server_logs`](crate::Client::server_logs);
/// a reader that falls further behind is told how many it missed.
pub const LOG_BUFFER: usize = 256;
/// Most characters of a message's text shown in the `tracing` event (the [`ServerLog`]
/// keeps the data whole).
pub const LOG_TEXT_LIMIT: usize = 2_000;

/// One log message of a server.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ServerLog {
    /// The server.
    pub server: McpServerKey,
    /// Its level, as the server sent it.
    pub level: LoggingLevel,
    /// The logger that wrote it, when the server named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message's data, unchanged (a string or any JSON).
    pub data: Value,
    /// Messages of this server dropped by the rate limit since the last one let through.
    pub dropped: u64,
}

impl ServerLog {
    /// The data as one line of text: a string as it is, other JSON compact; control
    /// characters escaped, cut to [`LOG_TEXT_LIMIT`] characters.
    pub fn text(&self) -> String {
        let raw = match &self.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        escape_line(&raw, LOG_TEXT_LIMIT)
    }
}

/// `text` with control characters (newlines, escapes that would steer a terminal)
/// written as escapes, cut to `limit` characters with a marker.
pub(crate) fn escape_line(text: &str, limit: usize) -> String {
    let mut out = String::with_capacity(text.len().min(limit));
    for (count, c) in text.chars().enumerate() {
        if count >= limit {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A token bucket: [`LOG_BURST`] tokens, refilled at [`LOG_RATE`] a second.
struct Bucket {
    tokens: f64,
    at: Instant,
    dropped: u64,
}

/// Where one connection's log messages go.
pub(crate) struct ServerLogs {
    /// Made by the first subscriber: a broadcast channel allocates all its
    /// [`LOG_BUFFER`] slots at once (about 40 KiB), and most connections never have a
    /// reader. Before it exists nobody could receive a message anyway.
    sender: OnceLock<broadcast::Sender<ServerLog>>,
    bucket: Mutex<Bucket>,
}

impl ServerLogs {
    pub(crate) fn new() -> Self {
        Self {
            sender: OnceLock::new(),
            bucket: Mutex::new(Bucket {
                tokens: f64::from(LOG_BURST),
                at: Instant::now(),
                dropped: 0,
            }),
        }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ServerLog> {
        self.sender
            .get_or_init(|| broadcast::channel(LOG_BUFFER).0)
            .subscribe()
    }

    /// Lets one message through, or counts it as dropped; returns how many were dropped
    /// before it when it goes through.
    fn admit(&self) -> Option<u64> {
        let Ok(mut bucket) = self.bucket.lock() else {
            return Some(0);
        };
        let now = Instant::now();
        let refill = now.duration_since(bucket.at).as_secs_f64() * f64::from(LOG_RATE);
        bucket.tokens = (bucket.tokens + refill).min(f64::from(LOG_BURST));
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Some(std::mem::take(&mut bucket.dropped))
        } else {
            bucket.dropped += 1;
            None
        }
    }

    /// Takes one `notifications/message` of `server`: the message to pass on (already a
    /// `tracing` event), or `None` when the rate limit dropped it.
    pub(crate) fn receive(
        &self,
        server: &McpServerKey,
        params: LoggingMessageNotificationParam,
    ) -> Option<ServerLog> {
        let dropped = self.admit()?;
        let log = ServerLog {
            server: server.clone(),
            level: params.level,
            logger: params.logger,
            data: params.data,
            dropped,
        };
        emit(&log);
        Some(log)
    }

    /// Passes `log` to the subscribers of [`Client::server_logs`](crate::Client::server_logs).
    pub(crate) fn publish(&self, log: ServerLog) {
        // Nobody listening is fine: the tracing event is the record.
        if let Some(sender) = self.sender.get() {
            let _ = sender.send(log);
        }
    }
}

/// The `tracing` event of one message.
fn emit(log: &ServerLog) {
    let text = log.text();
    let logger = log.logger.as_deref().map(|l| escape_line(l, 200));
    let server = &log.server;
    let dropped = log.dropped;
    macro_rules! event {
        ($level:expr) => {
            tracing::event!(target: SERVER_LOG_TARGET, $level, %server, logger = logger.as_deref(), dropped, "{text}")
        };
    }
    match log.level {
        LoggingLevel::Debug => event!(tracing::Level::DEBUG),
        LoggingLevel::Info | LoggingLevel::Notice => event!(tracing::Level::INFO),
        LoggingLevel::Warning => event!(tracing::Level::WARN),
        LoggingLevel::Error
        | LoggingLevel::Critical
        | LoggingLevel::Alert
        | LoggingLevel::Emergency => event!(tracing::Level::ERROR),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::time::Duration;

    use super::*;

    fn key() -> McpServerKey {
        McpServerKey::unscoped("noisy".parse().unwrap())
    }

    fn message(n: u32) -> LoggingMessageNotificationParam {
        LoggingMessageNotificationParam::new(LoggingLevel::Info, serde_json::json!(n))
    }

    #[tokio::test(start_paused = true)]
    async fn a_flood_is_cut_to_the_burst_and_the_rest_counted() {
        let logs = ServerLogs::new();
        let mut rx = logs.subscribe();
        for n in 0..100_000 {
            if let Some(log) = logs.receive(&key(), message(n)) {
                logs.publish(log);
            }
        }
        let mut got = 0;
        while let Ok(log) = rx.try_recv() {
            assert_eq!(log.dropped, 0);
            got += 1;
        }
        assert_eq!(got, LOG_BUFFER.min(LOG_BURST as usize));
        tokio::time::advance(Duration::from_secs(1)).await;
        let log = logs.receive(&key(), message(1)).unwrap();
        logs.publish(log);
        let next = rx.recv().await.unwrap();
        assert_eq!(next.dropped, 100_000 - u64::from(LOG_BURST));
    }

    #[test]
    fn text_is_escaped_and_cut() {
        let log = ServerLog {
            server: key(),
            level: LoggingLevel::Info,
            logger: None,
            data: Value::String("a\nb\u{1b}[31m".to_owned()),
            dropped: 0,
        };
        assert_eq!(log.text(), "a\\nb\\u{1b}[31m");
        assert_eq!(escape_line(&"x".repeat(10), 4), "xxxx…");
        let json = ServerLog {
            data: serde_json::json!({"k": 1}),
            ..log
        };
        assert_eq!(json.text(), r#"{"k":1}"#);
    }
}

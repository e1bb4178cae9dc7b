//! [`crate::Behavior::Log`]: log messages (`notifications/message`) and the level a client
//! set with `logging/setLevel`.

use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};

use crate::record::lock;
use crate::shared::Shared;
use crate::wire;

/// MCP's log levels, least severe first (RFC 5424's order).
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The severity of `level` (0: `debug`), `None` for a name that is not a level.
fn severity(level: &str) -> Option<usize> {
    LEVELS.iter().position(|l| *l == level)
}

/// Sends `count` messages of `level` through the call's session unless the client's
/// level (from `logging/setLevel`) is above it; returns how many were sent.
#[expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577 in rmcp, yet MCP 2025-11-25 defines notifications/message"
)]
pub(crate) async fn send(
    server: &Shared,
    context: &RequestContext<RoleServer>,
    level: &str,
    logger: Option<&String>,
    data: &Value,
    count: u32,
) -> Result<u32, McpError> {
    let Some(severity) = severity(level) else {
        return Err(McpError::internal_error(
            format!(
                "fake server: scenario log level {level:?} is not one of {}",
                LEVELS.join(", ")
            ),
            None,
        ));
    };
    let threshold = lock(&server.log_level)
        .as_deref()
        .and_then(self::severity)
        .unwrap_or(0);
    if severity < threshold {
        return Ok(0);
    }
    let mut sent = 0;
    for n in 1..=count {
        let data = if count > 1 {
            json!({ "n": n, "data": data })
        } else {
            data.clone()
        };
        let param: rmcp::model::LoggingMessageNotificationParam = wire::from_wire(
            "log message",
            json!({ "level": level, "logger": logger, "data": data }),
        )?;
        context
            .peer
            .notify_logging_message(param)
            .await
            .map_err(|e| McpError::internal_error(format!("send log message: {e}"), None))?;
        sent += 1;
    }
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_by_severity() {
        assert!(severity("debug") < severity("info"));
        assert!(severity("warning") < severity("error"));
        assert_eq!(severity("emergency"), Some(7));
        assert_eq!(severity("loud"), None);
    }
}

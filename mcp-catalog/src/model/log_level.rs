//! The least severe log level a server should send (`log_level`).

use std::fmt;
use std::str::FromStr;

/// The least severe level of log messages (`notifications/message`) a server should send
/// (`log_level`, per server, or catalog-wide; a server's own value wins). The connection
/// layer sends it as `logging/setLevel`; with neither written nothing is sent and the
/// server keeps its own level (see
/// [`ResolvedCatalog::log_level`](crate::ResolvedCatalog::log_level)).
///
/// The levels of MCP (those of syslog, RFC 5424), ordered from least to most severe:
///
/// ```
/// use mcp_catalog::LogLevel;
/// assert!(LogLevel::Debug < LogLevel::Warning);
/// assert_eq!("warning".parse::<LogLevel>(), Ok(LogLevel::Warning));
/// assert_eq!(LogLevel::Emergency.as_str(), "emergency");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LogLevel {
    /// Detailed information for debugging.
    Debug,
    /// Normal progress.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub(crate) const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The text form used in configuration and on the wire (`logging/setLevel`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|level| level.as_str() == s)
    }

    /// The names of every level, least severe first.
    pub(crate) fn names() -> [&'static str; 8] {
        Self::ALL.map(LogLevel::as_str)
    }
}

impl FromStr for LogLevel {
    type Err = String;

    /// Parses a lowercase level name; the error says which names there are.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| {
            let names: Vec<String> = Self::names().iter().map(|n| format!("`{n}`")).collect();
            format!("unknown log level `{s}`: use one of {}", names.join(", "))
        })
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::LogLevel;

    #[test]
    fn every_name_parses_back_and_the_order_is_by_severity() {
        for level in LogLevel::ALL {
            assert_eq!(level.as_str().parse::<LogLevel>(), Ok(level));
            assert_eq!(level.to_string(), level.as_str());
        }
        let mut sorted = LogLevel::ALL;
        sorted.sort();
        assert_eq!(sorted, LogLevel::ALL);
        assert_eq!(
            "Warning".parse::<LogLevel>(),
            Err(
                "unknown log level `Warning`: use one of `debug`, `info`, `notice`, \
                 `warning`, `error`, `critical`, `alert`, `emergency`"
                    .to_owned()
            )
        );
    }
}

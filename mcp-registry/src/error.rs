//! The crate's error type.

use mcp_catalog::ConfigErrors;

/// What went wrong talking to a registry. Each message names the URL or the server and
/// says what to do; the cause (the HTTP client's error, the `server.json`'s located
/// problems) is the [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The base URL (or a download URL) cannot be used.
    #[error("cannot use `{url}` as a registry address: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why not, and what to give instead.
        reason: &'static str,
    },
    /// A server name that is not the registry's `namespace/name`.
    #[error(
        "`{name}` is not a registry server name: write it as namespace/name, e.g. \
         io.github.user/weather"
    )]
    InvalidName {
        /// The name as given.
        name: String,
    },
    /// No answer within the timeout.
    #[error(
        "the registry did not answer {url} within {seconds:.1} s: try again, or raise the timeout"
    )]
    Timeout {
        /// The request's URL.
        url: String,
        /// The timeout, in seconds.
        seconds: f64,
    },
    /// The registry could not be reached (DNS, connection, TLS).
    #[error("cannot reach the registry at {url}: check the address and the network")]
    Unreachable {
        /// The request's URL.
        url: String,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// The server (or that version of it) is not in the registry, or was deleted.
    #[error("the registry has no {what} (GET {url} answered 404): check the name with a search")]
    NotFound {
        /// `server io.github.user/weather`, `version 1.0.2 of io.github.user/weather`.
        what: String,
        /// The request's URL.
        url: String,
    },
    /// The registry answered with another error status.
    #[error("the registry answered {url} with HTTP {status}{}", message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default())]
    Status {
        /// The request's URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The answer's `error` text, if it gave one.
        message: Option<String>,
    },
    /// The answer is not what the registry's API returns (not JSON, the wrong shape, too
    /// large).
    #[error("the answer from {url} is not a registry answer: {reason}")]
    BadAnswer {
        /// The request's URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The version asked for is deleted from the registry: it is never offered.
    #[error(
        "version {version} of {name} is deleted from the registry{}: choose another version",
        message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default()
    )]
    Deleted {
        /// The server.
        name: String,
        /// The version.
        version: String,
        /// The registry's `statusMessage`, if any.
        message: Option<String>,
    },
    /// The `server.json` served is not valid; its errors are located as
    /// `<url>:line:column` ([`RegistryError::config_errors`]).
    #[error("the server.json of {name} served at {url} is not valid; ask its publisher to fix it")]
    InvalidDocument {
        /// The server asked for.
        name: String,
        /// The request's URL.
        url: String,
        /// Every problem, with its line, column and field.
        #[source]
        source: ConfigErrors,
    },
    /// A downloaded file (an `mcpb` bundle) does not have the SHA-256 its entry pins: it
    /// must not run.
    #[error(
        "refusing the file downloaded from {url}: its SHA-256 is {actual}, not the pinned \
         {expected}; do not run it: download it again, and if it still differs it was changed \
         after publishing (ask its publisher)"
    )]
    BundleMismatch {
        /// The download URL.
        url: String,
        /// The pinned digest (`sha256:…`).
        expected: String,
        /// The digest of the bytes downloaded (`sha256:…`).
        actual: String,
    },
}

impl RegistryError {
    /// No answer in time.
    pub fn is_timeout(&self) -> bool {
        matches!(self, RegistryError::Timeout { .. })
    }

    /// The server or version does not exist (or is deleted).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            RegistryError::NotFound { .. } | RegistryError::Deleted { .. }
        )
    }

    /// Asking again later may succeed: a timeout, an unreachable registry, HTTP 429 or 5xx.
    pub fn is_retryable(&self) -> bool {
        match self {
            RegistryError::Timeout { .. } | RegistryError::Unreachable { .. } => true,
            RegistryError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }

    /// The document (or the bundle) is not what may run: fixing it is the publisher's job.
    pub fn is_invalid_document(&self) -> bool {
        matches!(
            self,
            RegistryError::InvalidDocument { .. }
                | RegistryError::BundleMismatch { .. }
                | RegistryError::BadAnswer { .. }
        )
    }

    /// The located problems of an invalid `server.json`.
    pub fn config_errors(&self) -> Option<&ConfigErrors> {
        match self {
            RegistryError::InvalidDocument { source, .. } => Some(source),
            _ => None,
        }
    }
}

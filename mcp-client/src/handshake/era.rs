//! Which protocol era a connection speaks: the plan from the server's `protocol` setting
//! and the era it spoke last time, and the checks of what a handshake answered.

use rmcp::model::{ProtocolVersion, ServerPeerInfo};
use rmcp::service::ClientLifecycleMode;

use crate::failure::{FailureReason, StartupFailure};

/// The protocol era a connection speaks: the 2025-11-25 era (sessions, `initialize`) or
/// the 2026-07-28 era (stateless, `server/discover`, notifications on a listen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Era {
    /// MCP 2025-11-25 and the versions before it.
    V2025_11_25,
    /// MCP 2026-07-28 and later.
    V2026_07_28,
}

impl Era {
    /// The era of a negotiated protocol version.
    pub fn of(version: &ProtocolVersion) -> Self {
        Self::of_version(version.as_str())
    }

    /// The era of a protocol version written as a date (`2025-06-18`): versions dated
    /// 2026-07-28 or later are of the stateless era.
    pub fn of_version(version: &str) -> Self {
        if version >= ProtocolVersion::V_2026_07_28.as_str() {
            Self::V2026_07_28
        } else {
            Self::V2025_11_25
        }
    }

    /// The era's protocol version, e.g. `2026-07-28`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a connection opens: which era's handshake, or a probe that finds out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Handshake {
    /// A `server/discover` probe, bounded by
    /// [`ClientSettings::with_probe_timeout`](crate::ClientSettings::with_probe_timeout); a
    /// server that answers it the 2025 way (or not at all) gets `initialize` on the same
    /// connection (HTTP client or stdio process), and a stdio server that exits on it gets
    /// a new process with `initialize`, once.
    #[default]
    Probe,
    /// The 2025-11-25 era's `initialize`, asking for
    /// [`ClientSettings::with_protocol_version`](crate::ClientSettings::with_protocol_version).
    Initialize,
    /// The 2026-07-28 era's `server/discover`.
    Discover,
}

/// How to open a connection: the lifecycle (which era's handshake) and the newest
/// protocol version the client may end up speaking.
#[derive(Clone)]
pub(crate) struct EraPlan {
    pub(crate) lifecycle: ClientLifecycleMode,
    pub(crate) requested: ProtocolVersion,
}

impl EraPlan {
    /// The plan of `handshake`, whose `initialize` asks for `legacy`.
    pub(crate) fn new(handshake: Handshake, legacy: &ProtocolVersion) -> Self {
        let modern = ProtocolVersion::V_2026_07_28;
        match handshake {
            Handshake::Initialize => Self::initialize(legacy),
            Handshake::Discover => Self {
                lifecycle: ClientLifecycleMode::Discover {
                    preferred_versions: vec![modern.clone()],
                },
                requested: modern,
            },
            Handshake::Probe => Self {
                lifecycle: ClientLifecycleMode::Auto {
                    preferred_versions: vec![modern.clone()],
                    legacy_version: Some(legacy.clone()),
                },
                requested: modern,
            },
        }
    }

    /// The `initialize` handshake asking for `legacy`.
    pub(crate) fn initialize(legacy: &ProtocolVersion) -> Self {
        Self {
            lifecycle: ClientLifecycleMode::Initialize,
            requested: legacy.clone(),
        }
    }

    /// Whether the plan probes the era.
    pub(crate) fn probes(&self) -> bool {
        matches!(self.lifecycle, ClientLifecycleMode::Auto { .. })
    }
}

/// Whether a failed probe may be the server not knowing `server/discover` (rather than a
/// failure that another handshake would meet too).
pub(crate) fn probe_may_explain(failure: &StartupFailure) -> bool {
    !matches!(
        failure.reason(),
        FailureReason::Timeout
            | FailureReason::Config
            | FailureReason::Environment
            | FailureReason::SpawnFailed
            | FailureReason::LoginRequired
            | FailureReason::ReloginRequired
            | FailureReason::EnterpriseReloginRequired
            | FailureReason::Cancelled
            | FailureReason::HostUnreachable
            | FailureReason::AuthRefused
            | FailureReason::HostKeyRejected
            | FailureReason::CommandNotFound
    )
}

/// The protocol versions this client can speak when it asks for `requested` in
/// `initialize`: every version rmcp knows up to and including the requested one (a server
/// may answer with an older version, never a newer or an unknown one), oldest first.
pub(crate) fn supported_protocol_versions(requested: &ProtocolVersion) -> Vec<ProtocolVersion> {
    let mut versions = ProtocolVersion::known_up_to(requested).to_vec();
    if !versions.contains(requested) {
        versions.push(requested.clone());
    }
    versions
}

/// Refuses a server whose `initialize` answer names a protocol version this client does
/// not speak (the specification says the client should then disconnect). Under a probe, an
/// answer other than the probed version came from the `initialize` that followed it, which
/// asked for `legacy`.
pub(crate) fn check_protocol_version(
    info: Option<&ServerPeerInfo>,
    era: &EraPlan,
    legacy: &ProtocolVersion,
) -> Result<(), String> {
    let Some(info) = info else {
        return Err("the initialize answer was not recorded".to_owned());
    };
    let answered = &info.protocol_version;
    let requested = if era.probes() && *answered != era.requested {
        legacy
    } else {
        &era.requested
    };
    let supported = supported_protocol_versions(requested);
    if supported.contains(answered) {
        return Ok(());
    }
    let list = supported
        .iter()
        .map(ProtocolVersion::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    Err(format!(
        "initialize answered with protocol version `{answered}`, which this client does not support (supported: {list}); disconnected. Use a server release that speaks one of these versions"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_version_up_to_the_requested_one_is_supported() {
        assert_eq!(
            supported_protocol_versions(&ProtocolVersion::V_2025_11_25),
            [
                ProtocolVersion::V_2024_11_05,
                ProtocolVersion::V_2025_03_26,
                ProtocolVersion::V_2025_06_18,
                ProtocolVersion::V_2025_11_25,
            ]
        );
        assert_eq!(
            supported_protocol_versions(&ProtocolVersion::V_2026_07_28),
            ProtocolVersion::KNOWN_VERSIONS
        );
    }
}

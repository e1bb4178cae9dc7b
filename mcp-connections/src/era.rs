//! Which protocol era a connection speaks: the plan from the server's `protocol` setting
//! and the era it spoke last time, and the checks of what a handshake answered.

use rmcp::RoleClient;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, RunningService};

use crate::error::StartupFailure;
use crate::events::FailureReason;
use crate::handler::Handler;
use crate::inner::SetInner;

/// How to open a connection: the lifecycle (which era's handshake) and the newest
/// protocol version the client may end up speaking.
pub(crate) struct EraPlan {
    pub(crate) lifecycle: ClientLifecycleMode,
    pub(crate) requested: ProtocolVersion,
    /// Whether the plan follows a remembered era (rather than the configuration or a probe).
    pub(crate) remembered: bool,
}

/// The era plan of a server: its `protocol` setting, and under `auto` the era its
/// connection spoke last time (no probe: from the pool, or from the catalog cache for a
/// new process), else a `server/discover` probe that falls back to
/// the `initialize` handshake of the set's legacy version.
pub(crate) fn era_plan(
    inner: &SetInner,
    key: &mcp_key::McpServerKey,
    pool_key: &crate::pool::ConnectionKey,
) -> EraPlan {
    let legacy = inner.options.protocol_version.clone();
    let modern = ProtocolVersion::V_2026_07_28;
    let initialize = |remembered| EraPlan {
        lifecycle: ClientLifecycleMode::Initialize,
        requested: legacy.clone(),
        remembered,
    };
    let discover = |remembered| EraPlan {
        lifecycle: ClientLifecycleMode::Discover {
            preferred_versions: vec![modern.clone()],
        },
        requested: modern.clone(),
        remembered,
    };
    match inner.catalog.protocol(key) {
        mcp_catalog::ProtocolChoice::V2025_11_25 => initialize(false),
        mcp_catalog::ProtocolChoice::V2026_07_28 => discover(false),
        _ => match inner
            .pool
            .remembered_era(pool_key)
            .or_else(|| inner.cached_era(key, pool_key))
        {
            Some(true) => discover(true),
            Some(false) => initialize(true),
            None => EraPlan {
                lifecycle: ClientLifecycleMode::Auto {
                    preferred_versions: vec![modern.clone()],
                    legacy_version: Some(legacy.clone()),
                },
                requested: modern.clone(),
                remembered: false,
            },
        },
    }
}

/// Whether a failed `server/discover` probe was answered (not a transport failure) in a
/// way that says the server is not of the 2026 era: the connection is still good for
/// `initialize` (over HTTP on the same client, over stdio on the same process).
pub(crate) fn answered_as_legacy(err: &ClientInitializeError) -> bool {
    match err {
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => !server_supported.contains(&ProtocolVersion::V_2026_07_28),
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::JsonRpcError(_)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => true,
        _ => false,
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
    service: &RunningService<RoleClient, Handler>,
    era: &EraPlan,
    legacy: &ProtocolVersion,
) -> Result<(), String> {
    let Some(info) = service.peer().peer_info() else {
        return Err("the initialize answer was not recorded".to_owned());
    };
    let answered = &info.protocol_version;
    let requested = if matches!(era.lifecycle, ClientLifecycleMode::Auto { .. })
        && *answered != era.requested
    {
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

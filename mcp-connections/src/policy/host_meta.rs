//! Host-owned `tools/call` metadata: what the host tells a server about the environment
//! it runs in (sandbox, network policy), under the host's reserved `_meta` prefix, for
//! servers that say they understand it.

use std::sync::Arc;

use mcp_key::{EnvironmentId, McpServerKey};
use rmcp::model::ServerCapabilities;
use serde_json::{Map, Value};

use crate::policy::authority::PermissionProfile;

/// What a [`HostMetadataProvider`] is asked about: one call's server, its environment and
/// that environment's permission profile (from the host's current
/// [`HostAuthority`](crate::HostAuthority)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MetadataContext {
    /// The server called.
    pub server: McpServerKey,
    /// The environment it runs in (`local` for unscoped servers).
    pub environment: EnvironmentId,
    /// The environment's permission profile.
    pub profile: PermissionProfile,
}

/// Supplies the host's own `_meta` keys for a tool call. Set it with
/// [`ConnectionSetOptions::with_host_metadata`](crate::ConnectionSetOptions::with_host_metadata),
/// together with a reserved prefix
/// ([`with_reserved_meta_prefix`](crate::ConnectionSetOptions::with_reserved_meta_prefix)).
///
/// The keys reach a server only when it advertises that it understands them: its
/// `initialize` result has an `experimental` capability named exactly the reserved prefix
/// (`"capabilities": {"experimental": {"host.example/": {}}}`). Keys the provider returns
/// outside the prefix are dropped (with a warning): callers own those. Callers can never
/// supply keys under the prefix: they are removed from caller `_meta`, advertised or not.
pub trait HostMetadataProvider: Send + Sync {
    /// The keys for one call (already-prefixed names, e.g. `host.example/sandbox`).
    fn metadata(&self, context: &MetadataContext) -> Map<String, Value>;
}

/// Wraps a closure as a [`HostMetadataProvider`].
pub fn host_metadata_fn<F>(f: F) -> Arc<dyn HostMetadataProvider>
where
    F: Fn(&MetadataContext) -> Map<String, Value> + Send + Sync + 'static,
{
    Arc::new(FnProvider(f))
}

struct FnProvider<F>(F);

impl<F> HostMetadataProvider for FnProvider<F>
where
    F: Fn(&MetadataContext) -> Map<String, Value> + Send + Sync,
{
    fn metadata(&self, context: &MetadataContext) -> Map<String, Value> {
        (self.0)(context)
    }
}

/// Whether a server with these capabilities advertised that it understands host
/// metadata under `prefix`.
pub(crate) fn advertises(capabilities: &ServerCapabilities, prefix: &str) -> bool {
    capabilities
        .experimental
        .as_ref()
        .is_some_and(|e| e.contains_key(prefix))
}

/// The provider's keys under `prefix`, dropping (and logging) any outside it.
pub(crate) fn host_keys(
    provider: &dyn HostMetadataProvider,
    prefix: &str,
    context: &MetadataContext,
) -> Map<String, Value> {
    let mut keys = provider.metadata(context);
    keys.retain(|k, _| {
        let ours = k.starts_with(prefix);
        if !ours {
            tracing::warn!(server = %context.server, key = %k, %prefix, "host metadata key outside the reserved prefix dropped");
        }
        ours
    });
    keys
}

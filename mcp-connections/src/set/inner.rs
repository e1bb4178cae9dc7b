//! The shared state of a connection set ([`SetInner`]): its servers, options and the
//! per-server policies (HTTP headers, credential providers) that startup and calls use.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mcp_catalog::ResolvedCatalog;
use mcp_key::{EnvironmentId, McpServerKey, NamingOptions, ServerName};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::catalog::tool_cache::ToolCache;
use crate::error::{Error, Result};
use crate::events::{ConnectionEvent, CrashLoop};
use crate::set::live::Live;
use crate::set::live::SessionRoute;
use crate::set::options::ConnectionSetOptions;
use crate::set::pool::{ConnectionKey, ServerPool};
use crate::set::slot::{Slot, SlotState};
use mcp_client::Environment;

/// Shared state of a connection set.
pub(crate) struct SetInner {
    pub(crate) options: ConnectionSetOptions,
    pub(crate) slots: BTreeMap<McpServerKey, Arc<Slot>>,
    pub(crate) naming: NamingOptions,
    pub(crate) multi_environment: bool,
    /// The catalog the set was started from (approval modes, elicitation policies).
    pub(crate) catalog: ResolvedCatalog,
    /// Where stdio servers of non-local environments are launched.
    pub(crate) environments: BTreeMap<EnvironmentId, Arc<dyn Environment>>,
    /// Tools approved "for this session", per server key.
    /// Approvals remembered for the session, each with the fingerprint of the definition
    /// that was approved (`None`: the server was not ready, its definition unknown).
    pub(crate) approvals: std::sync::Mutex<
        std::collections::BTreeMap<(McpServerKey, String), Option<mcp_key::Fingerprint>>,
    >,
    /// Legacy (name-only) lookups: name -> the key that answers for it.
    pub(crate) by_name: BTreeMap<ServerName, McpServerKey>,
    pub(crate) revision: AtomicU64,
    pub(crate) event_order: std::sync::Mutex<()>,
    /// The aggregated catalog of the last revision asked for.
    pub(crate) catalog_cache: std::sync::Mutex<Option<crate::catalog::tool_info::Catalog>>,
    /// Per server, the pinned-tool drift held back from the catalog and the changes
    /// re-pinned as notices (computed in `pins_impl.rs`).
    pub(crate) drift:
        std::sync::Mutex<std::collections::BTreeMap<McpServerKey, crate::policy::pins::Drift>>,
    /// The tool search index, following the catalog (`search.rs`).
    pub(crate) search: crate::catalog::search::SharedSearch,
    /// The name tables of the last [`NAME_HISTORY`] catalog revisions built, so a call
    /// naming the revision its name came from can check it still names the same tool.
    pub(crate) name_history: std::sync::Mutex<BTreeMap<u64, Arc<mcp_key::ToolNameTable>>>,
    pub(crate) tasks: TaskTracker,
    /// Child of the caller's cancellation token: cancels starts that are still running.
    pub(crate) startup_cancel: CancellationToken,
    /// Cancelled when the set shuts down or its last handle is dropped; parent of this
    /// set's watchers of its connections.
    pub(crate) shutdown: CancellationToken,
    /// Cancelled by `shutdown` (not by `replace`): calls still in flight stop.
    pub(crate) abort_calls: CancellationToken,
    /// Servers of this set waiting for a login to appear in the credential store.
    pub(crate) login_watches: std::sync::Mutex<std::collections::BTreeSet<McpServerKey>>,
    /// Where the set's connections live: the host's shared pool, or one of its own.
    pub(crate) pool: ServerPool,
    /// Whether the set shuts the pool down with itself (a pool of its own, not handed
    /// on to a replacement set).
    pub(crate) owns_pool: AtomicBool,
    /// The host's authority, replaced as a whole by `set_authority`.
    pub(crate) authority: crate::policy::authority::AuthorityCell,
    /// The servers' skill listings, skill drift and skill approvals (`skills_impl.rs`).
    pub(crate) skills: crate::set::skill_state::SkillState,
    /// The event feeds this set keeps (`events_impl.rs`).
    pub(crate) event_feeds: Arc<crate::set::events_impl::registry::FeedRegistry>,
}

/// How many catalog revisions' name tables a set remembers for stale-name checks.
pub(crate) const NAME_HISTORY: usize = 64;

impl SetInner {
    /// Remembers the name table of a catalog revision hosts may have seen.
    pub(crate) fn remember_names(&self, revision: u64, names: &Arc<mcp_key::ToolNameTable>) {
        if let Ok(mut history) = self.name_history.lock() {
            history.entry(revision).or_insert_with(|| Arc::clone(names));
            while history.len() > NAME_HISTORY {
                history.pop_first();
            }
        }
    }

    /// The name table of catalog `revision`, if it is remembered.
    pub(crate) fn names_at(&self, revision: u64) -> Option<Arc<mcp_key::ToolNameTable>> {
        self.name_history
            .lock()
            .ok()
            .and_then(|h| h.get(&revision).cloned())
    }

    pub(crate) fn emit(&self, event: ConnectionEvent) {
        if let Some(sink) = &self.options.events {
            sink.send(event);
        }
    }

    /// Held while a server's state changes together with its event, and while
    /// `StartupComplete` is sent, so events keep their documented order.
    pub(crate) fn event_order(&self) -> std::sync::MutexGuard<'_, ()> {
        self.event_order
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The environment `key` runs in, from its configuration (`local` for unscoped
    /// servers).
    pub(crate) fn running_environment(&self, key: &McpServerKey) -> EnvironmentId {
        self.catalog
            .get(key)
            .map_or(EnvironmentId::LOCAL, |c| c.environment().clone())
    }

    /// How this set answers the server's requests (elicitation) for `key`: by the host's
    /// live authority, the owning environment's configured policy and the host's handler.
    pub(crate) fn session_route(&self, key: &McpServerKey) -> SessionRoute {
        SessionRoute {
            authority: self.authority.clone(),
            environment: self.running_environment(key),
            environment_policy: self.catalog.elicitation_policy(key).unwrap_or_default(),
            handler: self.options.elicitation.clone(),
            sampling: self.options.sampling.clone(),
            events: self.options.events.clone(),
            answer_deadline: self.options.answer_deadline,
        }
    }

    /// The crash loop the pool holds `slot`'s connection in, if any: two failures or more
    /// in a row (after one, the next use restarts the server at once).
    pub(crate) fn crash_loop(&self, slot: &Slot) -> Option<CrashLoop> {
        match self.pool.pool.status(&slot.pool_key) {
            mcp_pool::KeyStatus::CrashLoop {
                failures, retry_in, ..
            } if failures >= 2 => Some(CrashLoop {
                crashes: failures,
                retry_in,
            }),
            _ => None,
        }
    }

    /// Sets `slot`'s state to one that changes the catalog (ready, or dead) and moves to a
    /// new revision, as one step for [`ConnectionSet::catalog`](crate::ConnectionSet),
    /// which builds under the same lock. Returns the previous state (dropped by the caller,
    /// outside the lock).
    pub(crate) fn publish(&self, slot: &Slot, state: SlotState) -> SlotState {
        let _cache = self
            .catalog_cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let previous = slot.state.send_replace(state);
        // Leaving a live connection: its tools stay known (listed as not ready) until the
        // server is back.
        if let SlotState::Ready(attached) = &previous {
            slot.remember_listing(attached.tools());
        }
        self.revision.fetch_add(1, Ordering::SeqCst);
        previous
    }

    /// A connection this set uses listed its tools again (after `list_changed`).
    pub(crate) fn tools_listed_again(&self, slot: &Slot, live: &Live) {
        self.remember_tools(slot, live);
        self.persist_cache();
        let revision = self.revision.fetch_add(1, Ordering::SeqCst) + 1;
        self.emit(ConnectionEvent::ToolsChanged {
            server: slot.spec.key.clone(),
            revision,
        });
    }

    /// The tool catalog cache, if the host gave one and the server did not opt out.
    fn cache_for(&self, slot: &Slot) -> Option<&ToolCache> {
        self.options
            .tool_cache
            .as_ref()
            .filter(|_| self.catalog.tool_cache_enabled(&slot.spec.key))
    }

    /// Puts the connection's current listing into the tool catalog cache (a listing
    /// fetched before the cached one is ignored by the cache).
    ///
    /// A listing the server marked `cacheScope: "private"` is for the authorization it was
    /// listed under. It is cached only when the connection fingerprint (the cache key)
    /// identifies that authorization ([`SetInner::authorization_in_key`]); otherwise only
    /// the era is remembered, as for a listing with no time to live (`ttlMs: 0`).
    pub(crate) fn remember_tools(&self, slot: &Slot, live: &Live) {
        if let Some(cache) = self.cache_for(slot) {
            let stamp = live.stamp();
            let private = stamp.private && !self.authorization_in_key(&slot.spec);
            if private || stamp.ttl.is_some_and(|ttl| ttl.is_zero()) {
                cache.forget_listing(&slot.spec.key, &slot.pool_key.fingerprint);
            } else {
                cache.insert(
                    &slot.spec.key,
                    &slot.pool_key.fingerprint,
                    live.tools().as_ref().clone(),
                    stamp.fetched,
                    stamp.ttl,
                );
            }
            cache.remember_protocol(
                &slot.spec.key,
                &slot.pool_key.fingerprint,
                live.protocol_version().as_str(),
            );
        }
    }

    /// Whether the connection fingerprint identifies who the server sees: a stdio server
    /// (its command and environment values are in it), or an HTTP server whose credentials
    /// are static (a token or header whose value is in it, or no authorization). Not for a
    /// login (OAuth, enterprise-managed, workload identity) or a host's credential
    /// provider: another account can stand behind the same fingerprint.
    pub(crate) fn authorization_in_key(&self, spec: &crate::catalog::spec::ServerSpec) -> bool {
        let Some(http) = spec.http() else {
            return true;
        };
        if self.options.auth.contains_key(&spec.key) {
            return false;
        }
        let static_header = http
            .http_headers()
            .keys()
            .chain(http.env_http_headers().keys())
            .any(|h| h.eq_ignore_ascii_case("authorization"));
        http.bearer_token_env_var().is_some()
            || static_header
            || (http.auth() == mcp_catalog::AuthMode::None && http.workload_identity().is_none())
    }

    /// The server announced that its tools changed: the cached listing is stale.
    pub(crate) fn forget_tools(&self, slot: &Slot) {
        if let Some(cache) = self.cache_for(slot) {
            cache.invalidate(&slot.spec.key, &slot.pool_key.fingerprint);
        }
    }

    /// The cached tools `slot` may start deferred with: policy `lazy_when_cached`, a
    /// cache, no opt-out, and a fresh entry for this connection fingerprint.
    pub(crate) fn deferred_tools(
        &self,
        slot_key: &McpServerKey,
        pool_key: &ConnectionKey,
    ) -> Option<crate::catalog::tool_cache::CachedTools> {
        let lazy = self.options.cache_only
            || self.options.defer_cached
            || self.catalog.startup_policy(slot_key) == mcp_catalog::StartupPolicy::LazyWhenCached;
        if !lazy || !self.catalog.tool_cache_enabled(slot_key) {
            return None;
        }
        self.options
            .tool_cache
            .as_ref()?
            .get(slot_key, &pool_key.fingerprint)
    }

    /// The era the catalog cache recorded for a connection, for servers that use the
    /// cache.
    pub(crate) fn cached_era(
        &self,
        slot_key: &McpServerKey,
        pool_key: &ConnectionKey,
    ) -> Option<mcp_client::Era> {
        if !self.catalog.tool_cache_enabled(slot_key) {
            return None;
        }
        let version = self
            .options
            .tool_cache
            .as_ref()?
            .protocol(slot_key, &pool_key.fingerprint)?;
        Some(mcp_client::Era::of_version(&version))
    }

    /// Writes a persisted tool catalog cache, off the executor; a failure is logged.
    pub(crate) fn persist_cache(&self) {
        let Some(cache) = self.options.tool_cache.clone() else {
            return;
        };
        if cache.path().is_none() {
            return;
        }
        self.tasks.spawn(async move {
            match tokio::task::spawn_blocking(move || cache.persist()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!("could not save the tool catalog cache: {e}"),
                Err(e) => tracing::warn!("could not save the tool catalog cache: {e}"),
            }
        });
    }

    /// Lets go of every connection of this set (its leases go back to the pool once
    /// the calls in flight on them finish), after any start in progress noticed the
    /// shutdown. Returns the connections let go of, with their pool keys.
    pub(crate) async fn release_all(
        &self,
        per_server: std::time::Duration,
    ) -> Vec<(ConnectionKey, Arc<Live>)> {
        let mut released = Vec::new();
        for slot in self.slots.values() {
            let _guard = tokio::time::timeout(per_server, slot.transition.lock()).await;
            if let SlotState::Ready(attached) = slot.state.send_replace(SlotState::Cancelled) {
                // This set's resource subscriptions end with it (the connection may live on
                // for other sets).
                let uris = std::mem::take(&mut *slot.resource_subscriptions.lock().await);
                let live = Arc::clone(attached.live());
                let unwatch = async {
                    for uri in &uris {
                        live.unwatch_resource(uri).await;
                    }
                };
                let _ = tokio::time::timeout(per_server, unwatch).await;
                released.push((slot.pool_key.clone(), live));
            }
        }
        released
    }

    pub(crate) fn slot(&self, key: &McpServerKey) -> Result<&Arc<Slot>> {
        self.slots.get(key).ok_or_else(|| Error::UnknownServer {
            server: key.to_string(),
            hint: known_servers_hint(self.slots.keys()),
        })
    }
}

pub(crate) fn known_servers_hint<'a>(keys: impl Iterator<Item = &'a McpServerKey>) -> String {
    let names: Vec<String> = keys.map(ToString::to_string).collect();
    if names.is_empty() {
        " (no servers are configured)".to_owned()
    } else {
        format!(" (configured: {})", names.join(", "))
    }
}

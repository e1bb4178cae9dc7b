//! The aggregated tool catalog: qualified names, filters, visibility.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_key::{McpServerKey, ToolNamer};
use rmcp::model::Tool;

use crate::catalog::tool_info::{Catalog, ToolInfo, visible_to_model};
use crate::set::ConnectionSet;
use crate::set::inner::SetInner;
use crate::set::slot::SlotState;

/// The namespace description of a server: its environment line and its instructions
/// (none for a deferred server: cached instructions are not trusted).
fn namespace_description(
    inner: &SetInner,
    key: &McpServerKey,
    instructions: Option<&String>,
) -> Option<String> {
    let env_line = match key.environment() {
        Some(env) if inner.multi_environment => Some(format!("Runs in environment {env}.")),
        _ => None,
    };
    match (env_line, instructions) {
        (Some(e), Some(i)) => Some(format!("{e} {i}")),
        (Some(e), None) => Some(e),
        (None, Some(i)) => Some(i.clone()),
        (None, None) => None,
    }
}

/// Builds the catalog from the servers that are ready now.
pub(crate) fn build(inner: &SetInner) -> Catalog {
    let revision = inner.revision.load(std::sync::atomic::Ordering::SeqCst);
    // Per server: its instructions, the tools kept, the tools held back, whether it is
    // connected.
    type Listed = (Option<String>, Vec<Tool>, Vec<Tool>, bool);
    let mut per_server: BTreeMap<McpServerKey, Listed> = BTreeMap::new();
    for (key, slot) in &inner.slots {
        // A deferred server shows its cached tools (annotations cleared); a server that
        // crashed, or is restarting after a crash, the tools it listed last (a call
        // restarts it), so they stay findable.
        let (instructions, listed, ready) = match slot.current() {
            SlotState::Ready(live) => (
                live.instructions().map(ToOwned::to_owned),
                live.tools(),
                true,
            ),
            SlotState::Deferred(cached) => (None, Arc::new(cached.tools.clone()), false),
            SlotState::Failed(f) if f.reason().is_restartable() => match slot.last_listing() {
                Some(last) => (None, last, false),
                None => continue,
            },
            SlotState::Starting => match slot.last_listing() {
                Some(last) => (None, last, false),
                None => continue,
            },
            _ => continue,
        };
        let mut tools: Vec<Tool> = listed
            .iter()
            // Tools only an app may call are the catalog's only for a host that renders apps.
            .filter(|t| {
                slot.spec.config.tool_filter().allows(&t.name)
                    && (inner.options.apps || visible_to_model(t))
            })
            .cloned()
            .collect();
        let mut held = Vec::new();
        if let Some(pins) = &inner.options.tool_pins {
            (tools, held) = crate::set::pins_impl::enforce(inner, pins, slot, tools);
        }
        per_server.insert(key.clone(), (instructions, tools, held, ready));
    }
    // Held-back tools keep their names: a call by name is refused as changed (not as
    // unknown), and holding one back renames no other tool.
    let namer = ToolNamer::new(inner.naming.clone());
    let names = namer.qualify(per_server.iter().flat_map(|(k, (_, tools, held, _))| {
        tools
            .iter()
            .chain(held.iter())
            .map(move |t| (k, t.name.as_ref()))
    }));
    let mut out = Vec::with_capacity(names.len());
    for (key, (instructions, tools, _, ready)) in &per_server {
        let ns = namespace_description(inner, key, instructions.as_ref());
        for tool in tools {
            if let Some(q) = names.qualified_name(key, &tool.name) {
                out.push(ToolInfo {
                    qualified_name: q.to_owned(),
                    server: key.clone(),
                    tool: tool.clone(),
                    namespace_description: ns.clone(),
                    catalog_revision: revision,
                    plugin: crate::catalog::tool_info::PluginOrigin::of(&inner.catalog, key),
                    ui: inner
                        .options
                        .apps
                        .then(|| crate::catalog::apps::ToolUi::of(tool))
                        .flatten(),
                    ready: *ready,
                });
            }
        }
    }
    out.sort_by(|a, b| a.qualified_name.cmp(&b.qualified_name));
    Catalog {
        revision,
        tools: Arc::new(out),
        names: Arc::new(names),
    }
}

impl ConnectionSet {
    /// The aggregated tool list, sorted by qualified name: every ready server's tools, a
    /// deferred server's cached ones, and the last listing of a server that crashed or is
    /// restarting after a crash (each marked [`ToolInfo::ready`] `false`: a call brings the
    /// server back). Servers still starting get the set's shared grace period (1 s by
    /// default) to become ready; after it, the list holds what is known.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn tools(&self) -> Vec<ToolInfo> {
        self.settle_within_grace().await;
        self.catalog().tools.as_ref().clone()
    }

    /// Waits, at most the set's grace period, for the servers still starting to settle
    /// (ready or failed): what [`Self::tools`] and [`Self::skills`] list then is known.
    pub(crate) async fn settle_within_grace(&self) {
        let waits = self
            .inner
            .slots
            .values()
            .filter(|s| !s.current().is_settled())
            .map(|s| s.settled());
        let grace = self.inner.options.tools_grace;
        let _ = tokio::time::timeout(grace, futures::future::join_all(waits)).await;
    }

    /// The current catalog (no waiting), cached per revision. The revision is read and the
    /// catalog built under the cache's lock, which [`SetInner::publish`] holds while a
    /// server's state and the revision change: a caller that saw the new state never gets
    /// a catalog cached before it.
    ///
    /// [`SetInner::publish`]: crate::set::inner::SetInner::publish
    pub(crate) fn catalog(&self) -> Catalog {
        let mut cache = self
            .inner
            .catalog_cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let revision = self.revision();
        if let Some(c) = cache.as_ref().filter(|c| c.revision == revision) {
            return c.clone();
        }
        let built = build(&self.inner);
        self.inner.remember_names(built.revision, &built.names);
        *cache = Some(built.clone());
        built
    }

    /// Resolves a qualified tool name to its server and raw tool name, in the current
    /// catalog.
    pub fn resolve_tool(&self, qualified: &str) -> Option<(McpServerKey, String)> {
        self.catalog()
            .names
            .resolve(qualified)
            .map(|(k, t)| (k.clone(), t.to_owned()))
    }

    /// [`Self::resolve_tool_settled`] with why a name resolves to nothing: the tool a
    /// qualified name means (its server brought up first, as a call would), or the error a
    /// call of it would end with: [`Error::UnknownTool`](crate::Error::UnknownTool) when no
    /// server has it, [`Error::NotReady`](crate::Error::NotReady) with the failure when its
    /// server did not come up. For a host that must know which tool a name means before
    /// calling it (to ask for approval) and tell the model why it cannot.
    ///
    /// # Errors
    /// As above.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting (a start it began goes on).
    pub async fn resolve_qualified(
        &self,
        qualified: &str,
    ) -> crate::Result<(McpServerKey, String)> {
        let found = self
            .resolve_for_call(qualified, &crate::CallOptions::new())
            .await?;
        // Found in the catalog while its server is down (a crashed server's last
        // listing): bring it up as the call would.
        let slot = self.inner.slot(&found.0)?;
        if !matches!(slot.current(), SlotState::Ready(_)) {
            let deadline = mcp_pool::deadline_in(slot.spec.config.tool_timeout());
            self.ready_connection(slot, deadline, false).await?;
        }
        Ok(found)
    }

    /// Whether calls to this tool may run in parallel with other calls to the same server:
    /// when the server's configuration says `supports_parallel_tool_calls`, or the tool is
    /// annotated read-only. Hosts serialize the others.
    pub fn can_run_in_parallel(&self, server: &McpServerKey, tool: &str) -> bool {
        let Some(slot) = self.inner.slots.get(server) else {
            return false;
        };
        if slot.spec.config.supports_parallel_tool_calls() {
            return true;
        }
        let SlotState::Ready(live) = slot.current() else {
            return false;
        };
        live.tools().iter().any(|t| {
            t.name == tool
                && t.annotations
                    .as_ref()
                    .and_then(|a| a.read_only_hint)
                    .unwrap_or(false)
        })
    }
}

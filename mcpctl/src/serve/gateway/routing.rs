//! Where a resource URI, a resource template or a prompt name goes: the one server that
//! listed it (as the caller may see it), never a guess among several.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mcp_key::McpServerKey;
use rmcp::ErrorData as McpError;
use rmcp::model::Prompt;

use super::Gateway;
use crate::serve::shared_uri;

/// The server that serves `uri`: the one server that listed it (`listers`), else the one
/// server with a template whose fixed prefix `uri` starts with. Several of either is no
/// answer: a URI is never routed to one of them by a guess.
pub(super) fn route(
    listers: &[McpServerKey],
    templates: &[(String, McpServerKey)],
    uri: &str,
) -> Option<McpServerKey> {
    match listers {
        [one] => return Some(one.clone()),
        [] => {}
        _ => return None,
    }
    let mut owners: Vec<&McpServerKey> = templates
        .iter()
        .filter(|(prefix, _)| uri.starts_with(prefix.as_str()))
        .map(|(_, server)| server)
        .collect();
    owners.sort();
    owners.dedup();
    match owners.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

/// Every server that listed each resource URI in the gateway's last listing (sorted).
pub(super) type Owners = Arc<Mutex<BTreeMap<String, Vec<McpServerKey>>>>;

/// The URI the client knows `server`'s `uri` by: named with its server when several
/// servers listed it (see [`shared_uri`]).
pub(super) fn shown_uri(owners: &Owners, server: &McpServerKey, uri: String) -> String {
    let shared = owners
        .lock()
        .ok()
        .is_some_and(|map| map.get(&uri).is_some_and(|l| l.len() > 1));
    if shared {
        shared_uri::qualified(server, &uri)
    } else {
        uri
    }
}

/// The error for a resource URI no server the caller may use lists.
pub(super) fn not_listed(uri: &str) -> McpError {
    McpError::resource_not_found(
        format!("no configured MCP server lists the resource {uri:?} (or a template for it)"),
        None,
    )
}

impl Gateway {
    /// Lists every server's prompts under qualified names and remembers which is which.
    pub(super) async fn qualified_prompts(&self) -> Vec<Prompt> {
        let listing = self.inner.set.list_prompts().await;
        // Named like the tools: with the catalog's naming options.
        let namer = self.inner.set.namer();
        let table = namer.qualify(
            listing
                .items
                .iter()
                .map(|i| (&i.server, i.item.name.as_str())),
        );
        let mut map = BTreeMap::new();
        let mut prompts = Vec::new();
        let caller = self.kept_caller();
        for item in listing.items {
            let Some(qualified) = table.qualified_name(&item.server, &item.item.name) else {
                continue;
            };
            if !caller.may_use_server(&item.server) {
                continue;
            }
            map.insert(
                qualified.to_owned(),
                (item.server.clone(), item.item.name.clone()),
            );
            let mut prompt = item.item;
            prompt.name = qualified.to_owned();
            prompts.push(prompt);
        }
        if let Ok(mut known) = self.inner.prompts.lock() {
            *known = map;
        }
        prompts
    }

    /// The server and own name of the prompt the last listing named `qualified`.
    pub(super) fn prompt_owner(&self, qualified: &str) -> Option<(McpServerKey, String)> {
        self.inner
            .prompts
            .lock()
            .ok()
            .and_then(|map| map.get(qualified).cloned())
    }

    /// The server to ask for `uri` and the URI to ask it for: the server a
    /// [`shared_uri::qualified`] URI names, else [`Self::owner_or_not_found`].
    pub(super) async fn resource_target(
        &self,
        uri: &str,
    ) -> Result<(McpServerKey, String), McpError> {
        if let Some((server, upstream)) = shared_uri::split(uri) {
            if !self.kept_caller().may_use_server(&server) {
                return Err(not_listed(uri));
            }
            return Ok((server, upstream.to_owned()));
        }
        Ok((self.owner_or_not_found(uri).await?, uri.to_owned()))
    }

    /// [`Self::owner_of`], or the error for a URI no server serves, or that several list.
    pub(super) async fn owner_or_not_found(&self, uri: &str) -> Result<McpServerKey, McpError> {
        if let Some(server) = self.owner_of(uri).await {
            return Ok(server);
        }
        let listers = self.listers(uri);
        if listers.len() > 1 {
            let names: Vec<String> = listers.iter().map(|s| format!("`{s}`")).collect();
            return Err(McpError::invalid_params(
                format!(
                    "the resource {uri:?} is listed by the MCP servers {}: which one is meant cannot be told, so it is read from none; use the URI `resources/list` shows for each (e.g. {:?}), or `mcpctl read --server NAME {uri:?}`",
                    names.join(" and "),
                    shared_uri::qualified(&listers[0], uri)
                ),
                None,
            ));
        }
        Err(not_listed(uri))
    }

    /// The servers that listed `uri` in the latest listing.
    pub(super) fn listers(&self, uri: &str) -> Vec<McpServerKey> {
        self.inner
            .resource_owners
            .lock()
            .ok()
            .and_then(|map| map.get(uri).cloned())
            .unwrap_or_default()
    }

    /// The server that serves `uri`: for a `ui://` URI a tool names as its UI, that tool's
    /// server ([`Self::ui_owner`]); else the one that listed it, else the only server with a
    /// template whose fixed prefix `uri` starts with. A URI that several servers list has
    /// none: it is never routed to one of them by a guess (a hostile server could shadow
    /// another's resource).
    pub(super) async fn owner_of(&self, uri: &str) -> Option<McpServerKey> {
        if let Some(owner) = self.ui_owner(uri).await {
            return owner;
        }
        let mut listers = self.listers(uri);
        if listers.is_empty() {
            let _ = self.list_resources_and_owners().await;
            listers = self.listers(uri);
        }
        if listers.is_empty() {
            route(&[], &self.template_prefixes().await, uri)
        } else {
            route(&listers, &[], uri)
        }
    }

    /// The server of the tools that name `uri` as their UI (`_meta.ui.resourceUri`) among
    /// those the caller may use: `Some(Some(server))` when they are one server's,
    /// `Some(None)` when several servers' tools name it (no guess), `None` when no tool
    /// does (or `uri` is no `ui://` URI). An app's HTML comes from the server of its tool,
    /// never from another server's listing or template that happens to match.
    pub(super) async fn ui_owner(&self, uri: &str) -> Option<Option<McpServerKey>> {
        if !uri.starts_with("ui://") {
            return None;
        }
        let caller = self.kept_caller();
        let mut servers: Vec<McpServerKey> = self
            .inner
            .set
            .tools()
            .await
            .iter()
            .filter(|t| {
                mcp_connections::ToolUi::of(&t.tool).is_some_and(|ui| ui.resource_uri == uri)
            })
            .filter(|t| caller.may_use_server(&t.server))
            .map(|t| t.server.clone())
            .collect();
        servers.sort();
        servers.dedup();
        match servers.as_slice() {
            [] => None,
            [one] => Some(Some(one.clone())),
            _ => Some(None),
        }
    }

    /// The one server that lists resource template `uri_template` (none or several: a
    /// clear error, never a guess).
    pub(super) async fn template_owner(
        &self,
        uri_template: &str,
    ) -> Result<McpServerKey, McpError> {
        let mut owners: Vec<McpServerKey> = self
            .inner
            .set
            .list_resource_templates()
            .await
            .items
            .into_iter()
            .filter(|t| t.item.uri_template == uri_template)
            .filter(|t| self.kept_caller().may_use_server(&t.server))
            .map(|t| t.server)
            .collect();
        owners.dedup();
        match owners.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(McpError::invalid_params(
                format!("no configured MCP server has the resource template {uri_template:?}"),
                None,
            )),
            several => Err(McpError::invalid_params(
                format!(
                    "several MCP servers have the resource template {uri_template:?} ({}); it cannot be completed through the gateway",
                    several
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            )),
        }
    }

    /// Every server's resource templates the caller may use, as (fixed prefix, server).
    pub(super) async fn template_prefixes(&self) -> Vec<(String, McpServerKey)> {
        self.inner
            .set
            .list_resource_templates()
            .await
            .items
            .into_iter()
            .filter(|t| self.kept_caller().may_use_server(&t.server))
            .filter_map(|t| {
                let fixed = t.item.uri_template.split('{').next().unwrap_or_default();
                (!fixed.is_empty()).then(|| (fixed.to_owned(), t.server))
            })
            .collect()
    }

    /// Lists every server's resources and remembers which servers listed each URI.
    pub(super) async fn list_resources_and_owners(&self) -> Vec<rmcp::model::Resource> {
        let mut listing = self.inner.set.list_resources().await;
        let caller = self.kept_caller();
        listing.items.retain(|i| caller.may_use_server(&i.server));
        let mut owners: BTreeMap<String, Vec<McpServerKey>> = BTreeMap::new();
        for item in &listing.items {
            let listers = owners.entry(item.item.uri.clone()).or_default();
            if !listers.contains(&item.server) {
                listers.push(item.server.clone());
                listers.sort();
            }
        }
        let resources = listing
            .items
            .into_iter()
            .map(|mut item| {
                if owners.get(&item.item.uri).is_some_and(|l| l.len() > 1) {
                    item.item.uri = shared_uri::qualified(&item.server, &item.item.uri);
                }
                item.item
            })
            .collect();
        if let Ok(mut map) = self.inner.resource_owners.lock() {
            *map = owners;
        }
        resources
    }
}

#[cfg(test)]
mod route_tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn key(name: &str) -> McpServerKey {
        McpServerKey::unscoped(name.parse().unwrap())
    }

    #[test]
    fn a_uri_goes_to_its_one_lister_else_its_one_template_else_nowhere() {
        let templates = vec![
            ("notes://".to_owned(), key("notes")),
            ("file:///".to_owned(), key("files")),
            ("file:///".to_owned(), key("other")),
        ];
        assert_eq!(route(&[key("a")], &templates, "x://y"), Some(key("a")));
        assert_eq!(route(&[key("a"), key("b")], &templates, "notes://1"), None);
        assert_eq!(route(&[], &templates, "notes://1"), Some(key("notes")));
        assert_eq!(
            route(&[], &templates, "file:///etc/passwd"),
            None,
            "two templates"
        );
        assert_eq!(route(&[], &templates, "unknown://"), None);
    }
}

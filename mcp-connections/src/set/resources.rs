//! Resources and resource templates across servers.

use std::sync::Arc;

use mcp_key::{EnvironmentId, McpServerKey};
use rmcp::model::{ReadResourceResult, Resource, ResourceTemplate};

use crate::error::{Error, Result};
use crate::set::ConnectionSet;
use crate::set::slot::{Attached, SlotState};
use mcp_pool::deadline_in;

/// One item of a cross-server listing, with the server it came from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerItem<T> {
    /// The server.
    pub server: McpServerKey,
    /// The server's environment, for environment-scoped servers with multi-environment
    /// exposure.
    pub environment_id: Option<EnvironmentId>,
    /// The item as the server listed it.
    pub item: T,
}

/// A listing across servers: what the ready servers returned, and which servers failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Listing<T> {
    /// Items, grouped by server in key order, each server's items in its order.
    pub items: Vec<ServerItem<T>>,
    /// Servers whose listing failed, or that are not ready (starting, failed, cancelled),
    /// with the reason, sorted by key.
    pub failures: Vec<(McpServerKey, String)>,
}

/// One page of a single server's listing.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ListPage<T> {
    /// The page's items.
    pub items: Vec<T>,
    /// The cursor of the next page, if any.
    pub next_cursor: Option<String>,
}

impl ConnectionSet {
    fn ready_lives(&self) -> Vec<(McpServerKey, Arc<Attached>)> {
        self.inner
            .slots
            .iter()
            .filter_map(|(k, s)| match s.current() {
                SlotState::Ready(live) if live.is_alive() => Some((k.clone(), live)),
                _ => None,
            })
            .collect()
    }

    /// The environment a listed item is shown under: the key's, under multi-environment
    /// exposure only (else items carry none).
    fn shown_environment(&self, key: &McpServerKey) -> Option<EnvironmentId> {
        if self.inner.multi_environment {
            key.environment().cloned()
        } else {
            None
        }
    }

    pub(crate) async fn list_across<T, F, Fut>(&self, list: F) -> Listing<T>
    where
        F: Fn(Arc<Attached>) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<Vec<T>, mcp_client::RequestError>>,
    {
        let lives = self.ready_lives();
        let results = futures::future::join_all(lives.iter().map(|(key, live)| {
            let fut = list(Arc::clone(live));
            let timeout = self
                .inner
                .slots
                .get(key)
                .map_or(std::time::Duration::from_secs(30), |s| {
                    s.spec.config.startup_timeout()
                });
            async move { tokio::time::timeout(timeout, fut).await }
        }))
        .await;
        let mut listing = Listing {
            items: Vec::new(),
            failures: self.unready_failures(),
        };
        for ((key, _), result) in lives.into_iter().zip(results) {
            match result {
                Ok(Ok(items)) => {
                    let env = self.shown_environment(&key);
                    listing
                        .items
                        .extend(items.into_iter().map(|item| ServerItem {
                            server: key.clone(),
                            environment_id: env.clone(),
                            item,
                        }));
                }
                Ok(Err(e)) => listing.failures.push((key, e.to_string())),
                Err(_) => listing.failures.push((key, "listing timed out".to_owned())),
            }
        }
        listing.failures.sort_by(|a, b| a.0.cmp(&b.0));
        listing
    }

    /// A failure entry for every server that is not ready (starting, failed, cancelled or
    /// disconnected), saying why: a listing never leaves a server out silently.
    fn unready_failures(&self) -> Vec<(McpServerKey, String)> {
        self.inner
            .slots
            .iter()
            .filter_map(|(key, slot)| {
                let state = slot.current();
                match &state {
                    SlotState::Ready(live) if live.is_alive() => None,
                    SlotState::Ready(_) => {
                        Some((key.clone(), "not ready: the connection was lost".to_owned()))
                    }
                    _ => Some((key.clone(), format!("not ready: {}", state.describe()))),
                }
            })
            .collect()
    }

    /// Every resource of every ready server (all pages, concurrently). A failing server is
    /// reported in `failures`, not as an error of the whole listing.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn list_resources(&self) -> Listing<Resource> {
        let budget = self.inner.options.client.list_byte_budget();
        self.list_across(|live| async move { live.list_resources(budget).await })
            .await
    }

    /// Every resource template of every ready server, like [`Self::list_resources`].
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn list_resource_templates(&self) -> Listing<ResourceTemplate> {
        let budget = self.inner.options.client.list_byte_budget();
        self.list_across(|live| async move { live.list_resource_templates(budget).await })
            .await
    }

    /// One page of `server`'s `kind` list (`list` fetches it from the client), within
    /// the server's startup timeout.
    async fn page_of<T, F, Fut>(
        &self,
        server: &McpServerKey,
        method: &str,
        cursor: Option<String>,
        list: F,
    ) -> Result<ListPage<T>>
    where
        F: FnOnce(Arc<Attached>, Option<String>) -> Fut,
        Fut: std::future::Future<
                Output = std::result::Result<(Vec<T>, Option<String>), mcp_client::RequestError>,
            >,
    {
        let slot = Arc::clone(self.inner.slot(server)?);
        let deadline = deadline_in(slot.spec.config.startup_timeout());
        let live = self.ready_connection(&slot, deadline, false).await?;
        match tokio::time::timeout_at(deadline, list(live, cursor)).await {
            Ok(Ok((items, next_cursor))) => Ok(ListPage { items, next_cursor }),
            Ok(Err(e)) => Err(self.request_error(server, method, e)),
            Err(_) => Err(Error::Timeout {
                server: server.clone(),
                tool: method.to_owned(),
                after: slot.spec.config.startup_timeout(),
            }),
        }
    }

    /// One page of one server's resources.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn list_resources_page(
        &self,
        server: &McpServerKey,
        cursor: Option<String>,
    ) -> Result<ListPage<Resource>> {
        self.page_of(
            server,
            "resources/list",
            cursor,
            |live, cursor| async move { live.list_resources_page(cursor).await },
        )
        .await
    }

    /// One page of one server's resource templates.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn list_resource_templates_page(
        &self,
        server: &McpServerKey,
        cursor: Option<String>,
    ) -> Result<ListPage<ResourceTemplate>> {
        self.page_of(
            server,
            "resources/templates/list",
            cursor,
            |live, cursor| async move { live.list_resource_templates_page(cursor).await },
        )
        .await
    }

    /// Reads one resource of one server.
    ///
    /// # Cancel safety
    /// Cancel-safe (the read is abandoned).
    pub async fn read_resource(
        &self,
        server: &McpServerKey,
        uri: &str,
    ) -> Result<ReadResourceResult> {
        let slot = Arc::clone(self.inner.slot(server)?);
        let timeout = slot.spec.config.tool_timeout();
        let deadline = deadline_in(timeout);
        let live = self.ready_connection(&slot, deadline, false).await?;
        let Ok(_turn) = tokio::time::timeout_at(deadline, live.turn()).await else {
            return Err(Error::Timeout {
                server: server.clone(),
                tool: format!("resources/read {uri}"),
                after: timeout,
            });
        };
        let operation = format!("resources/read {uri}");
        match tokio::time::timeout_at(deadline, live.read_resource(uri)).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(self.request_error(server, &operation, e)),
            Err(_) => Err(Error::Timeout {
                server: server.clone(),
                tool: operation,
                after: timeout,
            }),
        }
    }
}

//! Bounded pagination of `tools/list`, `resources/list` and `resources/templates/list`.
//!
//! Requests are sent directly (not through rmcp's list helpers) so that rmcp's client-side
//! response cache never serves a stale page after `tools/list_changed`.

use std::borrow::Cow;
use std::collections::HashSet;

use rmcp::RoleClient;
use rmcp::model::{
    CacheScope, ClientRequest, ListPromptsRequest, ListResourceTemplatesRequest,
    ListResourcesRequest, ListToolsRequest, PaginatedRequestParams, Prompt, Resource,
    ResourceTemplate, ServerResult, Tool,
};
use rmcp::service::{Peer, ServiceError};

/// Most pages one list may have.
pub const MAX_PAGES: usize = 100;
/// Most items one server may list in one list.
pub const MAX_ITEMS: usize = 2048;
/// Longest cursor accepted, in bytes.
pub const MAX_CURSOR_BYTES: usize = 64 * 1024;

/// Why a list could not be completed.
#[derive(Debug)]
pub(crate) enum PageError {
    Service(ServiceError),
    TooManyPages,
    TooManyItems,
    CursorTooLong(usize),
    RepeatedCursor,
    UnexpectedResponse,
    /// The pages so far hold more JSON than the budget: (bytes, budget).
    OverBudget(usize, usize),
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Service(e) => write!(f, "{e}"),
            Self::TooManyPages => write!(f, "more than {MAX_PAGES} pages"),
            Self::TooManyItems => write!(f, "more than {MAX_ITEMS} items"),
            Self::CursorTooLong(n) => {
                write!(f, "cursor of {n} bytes is longer than {MAX_CURSOR_BYTES}")
            }
            Self::RepeatedCursor => write!(f, "the server repeated a cursor (endless pagination)"),
            Self::UnexpectedResponse => write!(f, "unexpected response type"),
            Self::OverBudget(bytes, budget) => write!(
                f,
                "the list holds more than its byte budget ({bytes} bytes of JSON so far, budget {budget}; raise the list byte budget (`with_list_byte_budget`) if the server is trusted)"
            ),
        }
    }
}

/// Which list to fetch.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ListKind {
    Tools,
    Resources,
    Templates,
    Prompts,
}

/// One page of any list.
pub(crate) enum Page {
    /// Tools, with the page's caching hints.
    Tools(Vec<Tool>, Hints),
    Resources(Vec<Resource>),
    Templates(Vec<ResourceTemplate>),
    Prompts(Vec<Prompt>),
}

/// Fetches one page.
pub(crate) async fn fetch_page(
    peer: &Peer<RoleClient>,
    kind: ListKind,
    cursor: Option<String>,
) -> Result<(Page, Option<String>), PageError> {
    let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
    let request = match kind {
        ListKind::Tools => ClientRequest::ListToolsRequest(ListToolsRequest {
            params,
            ..Default::default()
        }),
        ListKind::Resources => ClientRequest::ListResourcesRequest(ListResourcesRequest {
            params,
            ..Default::default()
        }),
        ListKind::Prompts => ClientRequest::ListPromptsRequest(ListPromptsRequest {
            params,
            ..Default::default()
        }),
        ListKind::Templates => {
            ClientRequest::ListResourceTemplatesRequest(ListResourceTemplatesRequest {
                params,
                ..Default::default()
            })
        }
    };
    let result = crate::transport::reissue::send_read(peer, request)
        .await
        .map_err(PageError::Service)?;
    Ok(match (kind, result) {
        (ListKind::Tools, ServerResult::ListToolsResult(r)) => {
            let hints = Hints {
                ttl_ms: r.ttl_ms,
                private: r.cache_scope == Some(CacheScope::Private),
            };
            (Page::Tools(r.tools, hints), r.next_cursor)
        }
        (ListKind::Resources, ServerResult::ListResourcesResult(r)) => {
            (Page::Resources(r.resources), r.next_cursor)
        }
        (ListKind::Templates, ServerResult::ListResourceTemplatesResult(r)) => {
            (Page::Templates(r.resource_templates), r.next_cursor)
        }
        (ListKind::Prompts, ServerResult::ListPromptsResult(r)) => {
            (Page::Prompts(r.prompts), r.next_cursor)
        }
        _ => return Err(PageError::UnexpectedResponse),
    })
}

/// Checks the cursor a page returned against the limits.
pub(crate) struct CursorCheck {
    seen: HashSet<String>,
    pages: usize,
}

impl CursorCheck {
    pub(crate) fn new() -> Self {
        Self {
            seen: HashSet::new(),
            pages: 0,
        }
    }

    /// Call after each page with the total item count so far and the page's next cursor.
    pub(crate) fn after_page(&mut self, items: usize, next: Option<&str>) -> Result<(), PageError> {
        self.pages += 1;
        if items > MAX_ITEMS {
            return Err(PageError::TooManyItems);
        }
        let Some(cursor) = next else {
            return Ok(());
        };
        if self.pages >= MAX_PAGES {
            return Err(PageError::TooManyPages);
        }
        if cursor.len() > MAX_CURSOR_BYTES {
            return Err(PageError::CursorTooLong(cursor.len()));
        }
        if !self.seen.insert(cursor.to_owned()) {
            return Err(PageError::RepeatedCursor);
        }
        Ok(())
    }
}

/// Counts bytes written, keeping none.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The size of `items` as JSON.
fn json_size<T: serde::Serialize>(items: &[T]) -> usize {
    let mut count = ByteCount(0);
    let _ = serde_json::to_writer(&mut count, items);
    count.0
}

/// Lists every page of one list, within the limits and `budget` bytes of JSON.
async fn list_all<T: serde::Serialize>(
    peer: &Peer<RoleClient>,
    kind: ListKind,
    budget: usize,
    extract: fn(Page) -> (Vec<T>, Hints),
) -> Result<(Vec<T>, Hints), PageError> {
    let mut out = Vec::new();
    let mut check = CursorCheck::new();
    let mut cursor = None;
    let mut bytes = 0usize;
    let mut hints = Hints::default();
    loop {
        let (page, next) = fetch_page(peer, kind, cursor).await?;
        let (items, page_hints) = extract(page);
        hints = hints.and(page_hints);
        bytes = bytes.saturating_add(json_size(&items));
        if bytes > budget {
            return Err(PageError::OverBudget(bytes, budget));
        }
        out.extend(items);
        check.after_page(out.len(), next.as_deref())?;
        match next {
            Some(c) => cursor = Some(c),
            None => return Ok((out, hints)),
        }
    }
}

/// Lists every page of tools.
pub(crate) async fn all_tools(peer: &Peer<RoleClient>, budget: usize) -> Result<Listed, PageError> {
    let (tools, hints) = list_all(peer, ListKind::Tools, budget, |p| match p {
        Page::Tools(v, hints) => (v, hints),
        _ => (Vec::new(), Hints::default()),
    })
    .await?;
    Ok(Listed {
        tools,
        ttl: hints.ttl_ms.map(std::time::Duration::from_millis),
        private: hints.private,
    })
}

/// The caching hints of a list (MCP 2026-07-28): the pages' together.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Hints {
    /// `ttlMs`, if a page sent one.
    ttl_ms: Option<u64>,
    /// A page said `cacheScope: "private"`.
    private: bool,
}

impl Hints {
    /// A listing is as fresh as its least fresh page, and private if any page is.
    fn and(self, page: Hints) -> Hints {
        Hints {
            ttl_ms: match (self.ttl_ms, page.ttl_ms) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            private: self.private || page.private,
        }
    }
}

/// Every tool of a server, with how long the server says the listing stays fresh and
/// whether it is for this authorization only.
pub(crate) struct Listed {
    pub(crate) tools: Vec<Tool>,
    /// The server's `ttlMs` hint (the smallest over the pages), if it sent one.
    pub(crate) ttl: Option<std::time::Duration>,
    /// The server's `cacheScope` was `private` (on any page): the listing may be cached
    /// only where the authorization it was listed under is part of the key.
    pub(crate) private: bool,
}

/// Lists every page of resources.
pub(crate) async fn all_resources(
    peer: &Peer<RoleClient>,
    budget: usize,
) -> Result<Vec<Resource>, PageError> {
    list_all(peer, ListKind::Resources, budget, |p| match p {
        Page::Resources(v) => (v, Hints::default()),
        _ => (Vec::new(), Hints::default()),
    })
    .await
    .map(|(items, _)| items)
}

/// Lists every page of resource templates.
pub(crate) async fn all_templates(
    peer: &Peer<RoleClient>,
    budget: usize,
) -> Result<Vec<ResourceTemplate>, PageError> {
    list_all(peer, ListKind::Templates, budget, |p| match p {
        Page::Templates(v) => (v, Hints::default()),
        _ => (Vec::new(), Hints::default()),
    })
    .await
    .map(|(items, _)| items)
}

/// Lists every page of prompts.
pub(crate) async fn all_prompts(
    peer: &Peer<RoleClient>,
    budget: usize,
) -> Result<Vec<Prompt>, PageError> {
    list_all(peer, ListKind::Prompts, budget, |p| match p {
        Page::Prompts(v) => (v, Hints::default()),
        _ => (Vec::new(), Hints::default()),
    })
    .await
    .map(|(items, _)| items)
}

/// The `error.type` and status code of a listing that failed (as
/// `telemetry::error_kind` tells them of a request).
pub(crate) fn page_error_kind(error: &PageError) -> (Cow<'static, str>, Option<i64>) {
    use crate::rmcp_errors::ServiceFailure;
    let PageError::Service(e) = error else {
        return ("protocol_error".into(), None);
    };
    match ServiceFailure::of(e) {
        ServiceFailure::Refused(e) => (e.code.0.to_string().into(), Some(i64::from(e.code.0))),
        ServiceFailure::Timeout => ("timeout".into(), None),
        ServiceFailure::Closed
        | ServiceFailure::SendFailed
        | ServiceFailure::ProtocolFault
        | ServiceFailure::AuthRequired => ("disconnected".into(), None),
        ServiceFailure::UnexpectedResponse | ServiceFailure::Other => {
            ("protocol_error".into(), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_size_counts_the_serialized_bytes() {
        assert_eq!(json_size(&["ab", "c"]), r#"["ab","c"]"#.len());
        assert_eq!(json_size::<u8>(&[]), 2);
    }

    #[test]
    fn a_repeated_cursor_is_rejected() {
        let mut c = CursorCheck::new();
        assert!(c.after_page(1, Some("a")).is_ok());
        assert!(c.after_page(2, Some("b")).is_ok());
        assert!(matches!(
            c.after_page(3, Some("a")),
            Err(PageError::RepeatedCursor)
        ));
    }

    #[test]
    fn page_item_and_cursor_limits_apply() {
        let mut c = CursorCheck::new();
        for i in 0..MAX_PAGES - 1 {
            assert!(c.after_page(i, Some(&i.to_string())).is_ok());
        }
        assert!(matches!(
            c.after_page(0, Some("x")),
            Err(PageError::TooManyPages)
        ));
        assert!(matches!(
            CursorCheck::new().after_page(MAX_ITEMS + 1, None),
            Err(PageError::TooManyItems)
        ));
        let long = "c".repeat(MAX_CURSOR_BYTES + 1);
        assert!(matches!(
            CursorCheck::new().after_page(0, Some(&long)),
            Err(PageError::CursorTooLong(_))
        ));
        assert!(CursorCheck::new().after_page(MAX_ITEMS, None).is_ok());
    }
}

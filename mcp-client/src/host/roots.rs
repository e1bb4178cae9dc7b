//! [`Root`]: a directory or file the host offers its servers (MCP roots), in both eras.

/// One root the host offers its servers: a URI (MCP roots are `file://` URIs) and an
/// optional name shown to the server.
///
/// Give the list to [`ClientSettings::with_roots`](crate::ClientSettings::with_roots).
/// The client then announces the `roots` capability and answers with that list, unchanged and
/// in the host's order, whichever way a server asks: a `roots/list` request
/// (MCP 2025-11-25) or a `roots/list` input request in an `input_required` result
/// (MCP 2026-07-28). Without roots the capability is not announced and a server that asks
/// anyway gets an empty list.
///
/// ```
/// use mcp_client::Root;
///
/// let root = Root::new("file:///home/me/project").with_name("project");
/// assert_eq!(root.uri, "file:///home/me/project");
/// assert_eq!(root.name.as_deref(), Some("project"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub struct Root {
    /// The root's URI, as the server receives it.
    pub uri: String,
    /// A name for it, when the host has one.
    pub name: Option<String>,
}

impl Root {
    /// A root at `uri`, without a name.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: None,
        }
    }

    /// Names the root.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// The wire answer to `roots/list` for `roots`, in either era.
#[expect(
    deprecated,
    reason = "roots are deprecated by SEP-2577 in rmcp, yet both eras still define roots/list"
)]
pub(crate) fn list_result(roots: &[Root]) -> rmcp::model::ListRootsResult {
    rmcp::model::ListRootsResult::new(
        roots
            .iter()
            .map(|root| {
                let wire = rmcp::model::Root::new(root.uri.clone());
                match &root.name {
                    Some(name) => wire.with_name(name.clone()),
                    None => wire,
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_list_keeps_order_and_names() {
        let roots = [
            Root::new("file:///b").with_name("b"),
            Root::new("file:///a"),
        ];
        assert_eq!(
            serde_json::to_value(list_result(&roots)).unwrap(),
            serde_json::json!({"roots": [{"uri": "file:///b", "name": "b"}, {"uri": "file:///a"}]})
        );
    }
}

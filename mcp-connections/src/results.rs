//! Helpers for reading call and read results without matching rmcp's enums by hand.

use rmcp::model::{CallToolResult, ContentBlock, ReadResourceResult, ResourceContents};
use serde_json::Value;

/// Reading a [`CallToolResult`]: its text, its structured content, whether the tool failed.
///
/// ```
/// use mcp_connections::CallToolResultExt;
/// use mcp_connections::model::{CallToolResult, ContentBlock};
///
/// let result = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
/// assert_eq!(result.text(), "a\nb");
/// assert!(!result.is_tool_error());
/// ```
pub trait CallToolResultExt {
    /// Every text block of the content, in order, joined with `\n` (other blocks are left
    /// out). Empty when there is no text block.
    fn text(&self) -> String;
    /// The `structuredContent` the tool returned, if any.
    fn structured(&self) -> Option<&Value>;
    /// Whether the tool reported a failure (`isError: true`): the call itself worked, the
    /// tool did not. A missing flag means success.
    fn is_tool_error(&self) -> bool;
}

impl CallToolResultExt for CallToolResult {
    fn text(&self) -> String {
        join_text(
            self.content
                .iter()
                .filter_map(ContentBlock::as_text)
                .map(|t| t.text.as_str()),
        )
    }

    fn structured(&self) -> Option<&Value> {
        self.structured_content.as_ref()
    }

    fn is_tool_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

/// Reading a [`ReadResourceResult`]: its text.
pub trait ReadResourceResultExt {
    /// Every text entry of the contents, in order, joined with `\n` (binary entries are
    /// left out). Empty when there is no text entry.
    fn text(&self) -> String;
}

impl ReadResourceResultExt for ReadResourceResult {
    fn text(&self) -> String {
        join_text(self.contents.iter().filter_map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => Some(text.as_str()),
            _ => None,
        }))
    }
}

fn join_text<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    parts.collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_skips_other_blocks_and_structured_is_returned() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("one"),
            ContentBlock::image("aGk=", "image/png"),
            ContentBlock::text("two"),
        ]);
        result.structured_content = Some(json!({"n": 1}));
        assert_eq!(result.text(), "one\ntwo");
        assert_eq!(result.structured(), Some(&json!({"n": 1})));
        assert!(!result.is_tool_error());
        assert!(CallToolResult::error(vec![]).is_tool_error());
    }

    #[test]
    fn resource_text_skips_blobs() {
        let result = ReadResourceResult::new(vec![
            ResourceContents::text("hello", "file:///a"),
            ResourceContents::BlobResourceContents {
                uri: "file:///b".to_owned(),
                mime_type: None,
                blob: "aGk=".to_owned(),
                meta: None,
            },
        ]);
        assert_eq!(result.text(), "hello");
    }
}

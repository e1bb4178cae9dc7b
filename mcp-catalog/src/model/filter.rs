//! Per-server tool allow- and deny-lists.

use std::collections::BTreeSet;

/// Which raw tool names of one server may be listed and called.
///
/// A tool is allowed iff (`enabled_tools` is absent or contains its raw name) and
/// `disabled_tools` does not contain it. Names match exactly; `enabled_tools = []` allows
/// nothing.
///
/// ```
/// use mcp_catalog::ToolFilter;
/// let filter = ToolFilter::new()
///     .with_enabled_tools(["read", "write"])
///     .with_disabled_tools(["write"]);
/// assert!(filter.allows("read"));
/// assert!(!filter.allows("write"));
/// assert!(!filter.allows("delete"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ToolFilter {
    enabled: Option<BTreeSet<String>>,
    disabled: BTreeSet<String>,
}

impl ToolFilter {
    /// A filter that allows every tool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the allow-list (replacing any previous one). An empty list allows nothing.
    #[must_use]
    pub fn with_enabled_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.enabled = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Adds names to the deny-list, which applies after the allow-list.
    #[must_use]
    pub fn with_disabled_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.disabled.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Whether the tool with this raw name may be listed and called.
    pub fn allows(&self, raw_tool_name: &str) -> bool {
        self.enabled
            .as_ref()
            .is_none_or(|enabled| enabled.contains(raw_tool_name))
            && !self.disabled.contains(raw_tool_name)
    }

    /// The allow-list, if one is set.
    pub fn enabled_tools(&self) -> Option<&BTreeSet<String>> {
        self.enabled.as_ref()
    }

    /// The deny-list.
    pub fn disabled_tools(&self) -> &BTreeSet<String> {
        &self.disabled
    }

    /// True when the filter allows every tool.
    pub fn allows_all(&self) -> bool {
        self.enabled.is_none() && self.disabled.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_lists_allow_everything() {
        let filter = ToolFilter::new();
        assert!(filter.allows("anything"));
        assert!(filter.allows_all());
    }

    #[test]
    fn empty_allow_list_allows_nothing() {
        let filter = ToolFilter::new().with_enabled_tools(Vec::<String>::new());
        assert!(!filter.allows("read"));
        assert!(!filter.allows(""));
    }

    #[test]
    fn deny_list_applies_after_allow_list_and_matches_exactly() {
        let filter = ToolFilter::new()
            .with_enabled_tools(["a", "b"])
            .with_disabled_tools(["b"]);
        assert!(filter.allows("a"));
        assert!(!filter.allows("b"));
        assert!(!filter.allows("A"));
        assert!(!filter.allows("a "));
        let deny_only = ToolFilter::new().with_disabled_tools(["x"]);
        assert!(deny_only.allows("y"));
        assert!(!deny_only.allows("x"));
    }
}

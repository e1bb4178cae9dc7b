//! [`ToolNameTable`]: the namer's output, searchable both ways.

use std::cmp::Ordering;

use crate::McpServerKey;

/// One named tool.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    qualified: String,
    /// Index into [`ToolNameTable::keys`].
    key: usize,
    raw: String,
}

/// The result of [`ToolNamer::qualify`](crate::ToolNamer::qualify): a bijection between
/// model-visible names and (server key, raw tool name) pairs.
///
/// Look a model's tool call up with [`ToolNameTable::resolve`]; never parse a qualified
/// name. Both lookups are binary searches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolNameTable {
    /// Each distinct server key once, in key order.
    keys: Vec<McpServerKey>,
    /// Sorted by qualified name.
    entries: Vec<Entry>,
    /// Positions in `entries`, in (key, raw tool name) order.
    by_identity: Vec<usize>,
}

impl ToolNameTable {
    /// Builds a table from the distinct `keys` in key order; `named` (qualified name, index
    /// into `keys`, raw tool), sorted by (key, raw tool) with no duplicate; and `order`, the
    /// indices of `named` sorted by qualified name, no two names equal.
    pub(crate) fn from_named(
        keys: Vec<McpServerKey>,
        named: Vec<(String, usize, &str)>,
        order: &[usize],
    ) -> Self {
        let mut by_identity = vec![0; named.len()];
        let mut slots: Vec<Option<Entry>> = named
            .into_iter()
            .map(|(qualified, key, raw)| {
                Some(Entry {
                    qualified,
                    key,
                    raw: raw.to_owned(),
                })
            })
            .collect();
        let mut entries = Vec::with_capacity(slots.len());
        for (pos, &i) in order.iter().enumerate() {
            by_identity[i] = pos;
            entries.extend(slots[i].take());
        }
        debug_assert_eq!(entries.len(), by_identity.len());
        Self {
            keys,
            entries,
            by_identity,
        }
    }

    /// The server and raw tool name behind a model-visible name, if the table has it.
    pub fn resolve(&self, qualified: &str) -> Option<(&McpServerKey, &str)> {
        let pos = self
            .entries
            .binary_search_by(|e| e.qualified.as_str().cmp(qualified))
            .ok()?;
        let entry = &self.entries[pos];
        Some((&self.keys[entry.key], entry.raw.as_str()))
    }

    /// The model-visible name of `raw_tool` on the server `key`, if the table has it.
    pub fn qualified_name(&self, key: &McpServerKey, raw_tool: &str) -> Option<&str> {
        let pos = self
            .by_identity
            .binary_search_by(|&i| {
                let e = &self.entries[i];
                match self.keys[e.key].cmp(key) {
                    Ordering::Equal => e.raw.as_str().cmp(raw_tool),
                    other => other,
                }
            })
            .ok()?;
        Some(self.entries[self.by_identity[pos]].qualified.as_str())
    }

    /// Every (qualified name, server key, raw tool name), sorted by qualified name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &McpServerKey, &str)> {
        self.entries
            .iter()
            .map(|e| (e.qualified.as_str(), &self.keys[e.key], e.raw.as_str()))
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the table names no tool.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use crate::{McpServerKey, ToolNamer};

    #[test]
    fn lookups_both_ways_and_sorted_iteration() {
        let (a, b): (McpServerKey, McpServerKey) = ("a".parse().unwrap(), "b@e".parse().unwrap());
        let table = ToolNamer::default().qualify([(&b, "z"), (&a, "y"), (&a, "x")]);
        let listed: Vec<_> = table.iter().collect();
        assert_eq!(
            listed,
            [
                ("mcp__a__x", &a, "x"),
                ("mcp__a__y", &a, "y"),
                ("mcp__b__e__z", &b, "z"),
            ]
        );
        assert_eq!(table.resolve("mcp__b__e__z"), Some((&b, "z")));
        assert_eq!(table.resolve("mcp__b__z"), None);
        assert_eq!(table.qualified_name(&b, "z"), Some("mcp__b__e__z"));
        assert_eq!(table.qualified_name(&a, "z"), None);
        assert_eq!(table.len(), 3);
        assert!(!table.is_empty());
    }
}

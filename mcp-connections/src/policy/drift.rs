//! What changed in a server's tools: each tool's definition fingerprinted
//! ([`tool_fingerprint`]), and two listings compared tool by tool ([`classify_listing`]):
//! added, removed, renamed, description or title changed, input schema widened or
//! narrowed, annotations less safe or safer, output schema or `_meta` changed. The
//! classification says which changes add risk ([`ToolChange::adds_risk`]), so a host can
//! ask again before a changed tool runs. This is the comparison only; pinning a listing and
//! enforcing a policy on it build on it.

use std::collections::{BTreeMap, BTreeSet};

use mcp_key::Fingerprint;
use rmcp::model::Tool;
use serde_json::Value;

use crate::catalog::tool_info::ToolInfo;

/// The fingerprint domain of tool definitions.
const TOOL_DOMAIN: &str = "mcp-connections/tool-definition/v1";

/// `value` with every object's keys sorted, so equal definitions give equal text whatever
/// order a server wrote them in.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, Value> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Canonical JSON text of `value` (sorted keys, no spaces).
fn canonical_text(value: &Value) -> String {
    canonical(value).to_string()
}

/// The fingerprint of `tool`'s whole definition as a model and the host see it: its name,
/// title, description, input and output schemas, annotations and `_meta`, as canonical
/// JSON (sorted keys), so it is the same across runs, processes and key orders.
pub fn tool_fingerprint(tool: &Tool) -> Fingerprint {
    let wire = serde_json::to_value(tool).unwrap_or(Value::Null);
    let field = |name: &str| wire.get(name).map_or_else(String::new, canonical_text);
    Fingerprint::builder(TOOL_DOMAIN)
        .str("name", &tool.name)
        .str("title", &field("title"))
        .str("description", &field("description"))
        .str("inputSchema", &field("inputSchema"))
        .str("outputSchema", &field("outputSchema"))
        .str("annotations", &field("annotations"))
        .str("_meta", &field("_meta"))
        .finish()
}

impl ToolInfo {
    /// The fingerprint of this tool's definition ([`tool_fingerprint`]).
    pub fn fingerprint(&self) -> Fingerprint {
        tool_fingerprint(&self.tool)
    }
}

/// A sign in a description that it now carries something for the model rather than a
/// description of the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum RiskSign {
    /// A URL (`http://`, `https://`, `file://`, ...).
    Url,
    /// A file path (`/etc/...`, `~/...`, `../`, `C:\...`, dot-files).
    FilePath,
    /// Words that instruct the model ("ignore previous", "you must", "do not tell the
    /// user", "`<important>`", ...).
    Instruction,
}

/// One classified difference of a tool between two listings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChange {
    /// The tool is new.
    Added,
    /// The tool is gone.
    Removed,
    /// The tool was listed under another name before, with the same input schema.
    Renamed {
        /// The name it had.
        from: String,
    },
    /// The title changed.
    TitleChanged,
    /// The description changed; `gained` lists the risk signs the new text has and the
    /// old one had not.
    DescriptionChanged {
        /// Risk signs that appeared.
        gained: Vec<RiskSign>,
    },
    /// The input schema accepts more: new properties, fewer required ones, new enum
    /// values, additional properties allowed, a type widened or removed.
    SchemaWidened {
        /// What, e.g. `property \`cmd\` added`.
        details: Vec<String>,
    },
    /// The input schema accepts less (only narrower, nothing wider).
    SchemaNarrowed {
        /// What, e.g. `property \`path\` now required`.
        details: Vec<String>,
    },
    /// Annotations now say the tool is less safe: `destructiveHint` or `openWorldHint`
    /// became true, `readOnlyHint` or `idempotentHint` false (absent hints count as the
    /// spec's defaults).
    AnnotationsLessSafe {
        /// The hints that changed that way.
        hints: Vec<String>,
    },
    /// Annotations now say the tool is safer (the reverse of the above).
    AnnotationsSafer {
        /// The hints that changed that way.
        hints: Vec<String>,
    },
    /// The output schema changed.
    OutputSchemaChanged,
    /// `_meta` changed.
    MetaChanged,
}

impl ToolChange {
    /// Whether the change adds risk and so should be approved again: a new tool, a schema
    /// that accepts more, annotations that say less safe, a description that gained a
    /// URL, a file path or instructions aimed at the model. A renamed tool is a new name
    /// for the model and counts as new.
    pub fn adds_risk(&self) -> bool {
        match self {
            ToolChange::Added
            | ToolChange::Renamed { .. }
            | ToolChange::SchemaWidened { .. }
            | ToolChange::AnnotationsLessSafe { .. } => true,
            ToolChange::DescriptionChanged { gained } => !gained.is_empty(),
            _ => false,
        }
    }
}

/// The changes of one tool between two listings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolDrift {
    /// The tool's raw name (in the new listing; the old one for [`ToolChange::Removed`]).
    pub tool: String,
    /// What changed, in a fixed order.
    pub changes: Vec<ToolChange>,
}

impl ToolDrift {
    /// Whether any of the changes adds risk.
    pub fn adds_risk(&self) -> bool {
        self.changes.iter().any(ToolChange::adds_risk)
    }
}

/// Compares a server's `pinned` listing with its `live` one, tool by tool: every tool that
/// differs, sorted by name. A removed and an added tool with the same input schema (and
/// no other removed or added tool with it) are one rename.
pub fn classify_listing(pinned: &[Tool], live: &[Tool]) -> Vec<ToolDrift> {
    let old: BTreeMap<&str, &Tool> = pinned.iter().map(|t| (t.name.as_ref(), t)).collect();
    let new: BTreeMap<&str, &Tool> = live.iter().map(|t| (t.name.as_ref(), t)).collect();
    let mut removed: Vec<&str> = old
        .keys()
        .filter(|n| !new.contains_key(*n))
        .copied()
        .collect();
    let mut added: Vec<&str> = new
        .keys()
        .filter(|n| !old.contains_key(*n))
        .copied()
        .collect();
    let schema = |t: &Tool| canonical_text(&Value::Object(t.input_schema.as_ref().clone()));
    let mut out = Vec::new();
    // Renames: one removed and one added tool with the same input schema.
    let mut renames = Vec::new();
    for &gone in &removed {
        let same: Vec<&str> = added
            .iter()
            .filter(|a| schema(new[*a]) == schema(old[gone]))
            .copied()
            .collect();
        let rivals = removed
            .iter()
            .filter(|r| schema(old[*r]) == schema(old[gone]))
            .count();
        if let ([to], 1) = (same.as_slice(), rivals) {
            renames.push((gone, *to));
        }
    }
    for (from, to) in &renames {
        removed.retain(|r| r != from);
        added.retain(|a| a != to);
        let mut changes = vec![ToolChange::Renamed {
            from: (*from).to_owned(),
        }];
        changes.extend(compare(old[from], new[to]));
        out.push(ToolDrift {
            tool: (*to).to_owned(),
            changes,
        });
    }
    for name in added {
        out.push(ToolDrift {
            tool: name.to_owned(),
            changes: vec![ToolChange::Added],
        });
    }
    for name in removed {
        out.push(ToolDrift {
            tool: name.to_owned(),
            changes: vec![ToolChange::Removed],
        });
    }
    for (name, before) in &old {
        if let Some(after) = new.get(name) {
            let changes = compare(before, after);
            if !changes.is_empty() {
                out.push(ToolDrift {
                    tool: (*name).to_owned(),
                    changes,
                });
            }
        }
    }
    out.sort_by(|a, b| a.tool.cmp(&b.tool));
    out
}

/// The changes from `before` to `after` (one tool, names aside).
fn compare(before: &Tool, after: &Tool) -> Vec<ToolChange> {
    let mut changes = Vec::new();
    if before.title != after.title {
        changes.push(ToolChange::TitleChanged);
    }
    if before.description != after.description {
        let had = risk_signs(before.description.as_deref().unwrap_or_default());
        let has = risk_signs(after.description.as_deref().unwrap_or_default());
        changes.push(ToolChange::DescriptionChanged {
            gained: has.difference(&had).copied().collect(),
        });
    }
    let (wider, narrower) = schema_changes(
        &Value::Object(before.input_schema.as_ref().clone()),
        &Value::Object(after.input_schema.as_ref().clone()),
    );
    if !wider.is_empty() {
        changes.push(ToolChange::SchemaWidened { details: wider });
    } else if !narrower.is_empty() {
        changes.push(ToolChange::SchemaNarrowed { details: narrower });
    }
    let (less, more) = annotation_changes(before, after);
    if !less.is_empty() {
        changes.push(ToolChange::AnnotationsLessSafe { hints: less });
    }
    if !more.is_empty() {
        changes.push(ToolChange::AnnotationsSafer { hints: more });
    }
    let text = |s: &Option<std::sync::Arc<serde_json::Map<String, Value>>>| {
        s.as_ref()
            .map(|m| canonical_text(&Value::Object(m.as_ref().clone())))
    };
    if text(&before.output_schema) != text(&after.output_schema) {
        changes.push(ToolChange::OutputSchemaChanged);
    }
    let meta = |t: &Tool| {
        serde_json::to_value(t)
            .ok()
            .and_then(|v| v.get("_meta").map(canonical_text))
    };
    if meta(before) != meta(after) {
        changes.push(ToolChange::MetaChanged);
    }
    changes
}

/// The risk signs in `text`.
pub(crate) fn risk_signs(text: &str) -> BTreeSet<RiskSign> {
    let lower = text.to_lowercase();
    let mut signs = BTreeSet::new();
    if ["http://", "https://", "file://", "ftp://", "data:"]
        .iter()
        .any(|s| lower.contains(s))
    {
        signs.insert(RiskSign::Url);
    }
    let path = lower.split_whitespace().any(|w| {
        let w = w.trim_matches(|c: char| "\"'`(),;".contains(c));
        w.starts_with("~/")
            || w.starts_with("../")
            || w.starts_with("./.")
            || (w.starts_with('/') && w[1..].contains('/'))
            || (w.len() > 3 && w.as_bytes()[1] == b':' && w.as_bytes()[2] == b'\\')
            || w.starts_with(".ssh")
            || w.starts_with(".env")
    });
    if path {
        signs.insert(RiskSign::FilePath);
    }
    const INSTRUCTIONS: &[&str] = &[
        "ignore previous",
        "ignore all previous",
        "ignore the above",
        "disregard",
        "you must",
        "you should always",
        "always call",
        "before using this tool",
        "before calling",
        "do not tell",
        "don't tell",
        "do not mention",
        "without telling",
        "the user must not",
        "<important>",
        "<instructions>",
        "<system>",
        "system prompt",
        "read the file",
        "pass its content",
        "send it to",
    ];
    if INSTRUCTIONS.iter().any(|s| lower.contains(s)) {
        signs.insert(RiskSign::Instruction);
    }
    signs
}

/// How `after` accepts more (first) and less (second) than `before`: top-level
/// properties, `required`, `additionalProperties`, and each kept property's `type` and
/// `enum`.
fn schema_changes(before: &Value, after: &Value) -> (Vec<String>, Vec<String>) {
    let (mut wider, mut narrower) = (Vec::new(), Vec::new());
    let props = |s: &Value| -> BTreeMap<String, Value> {
        s.get("properties")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let required = |s: &Value| -> BTreeSet<String> {
        s.get("required")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old, new) = (props(before), props(after));
    for name in new.keys().filter(|k| !old.contains_key(*k)) {
        wider.push(format!("property `{name}` added"));
    }
    for name in old.keys().filter(|k| !new.contains_key(*k)) {
        narrower.push(format!("property `{name}` removed"));
    }
    let (old_req, new_req) = (required(before), required(after));
    for name in old_req.difference(&new_req) {
        wider.push(format!("property `{name}` no longer required"));
    }
    for name in new_req.difference(&old_req) {
        narrower.push(format!("property `{name}` now required"));
    }
    let open = |s: &Value| s.get("additionalProperties") != Some(&Value::Bool(false));
    match (open(before), open(after)) {
        (false, true) => wider.push("additional properties now allowed".to_owned()),
        (true, false) => narrower.push("additional properties no longer allowed".to_owned()),
        _ => {}
    }
    for (name, was) in &old {
        let Some(is) = new.get(name) else { continue };
        if was.get("type") != is.get("type") {
            wider.push(format!(
                "property `{name}` type {} -> {}",
                was.get("type").map_or("any".to_owned(), Value::to_string),
                is.get("type").map_or("any".to_owned(), Value::to_string)
            ));
        }
        let values = |v: &Value| -> Option<BTreeSet<String>> {
            v.get("enum")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(Value::to_string).collect())
        };
        match (values(was), values(is)) {
            (Some(a), Some(b)) => {
                for v in b.difference(&a) {
                    wider.push(format!("property `{name}` accepts {v}"));
                }
                for v in a.difference(&b) {
                    narrower.push(format!("property `{name}` no longer accepts {v}"));
                }
            }
            (Some(_), None) => wider.push(format!("property `{name}` no longer an enum")),
            (None, Some(_)) => narrower.push(format!("property `{name}` now an enum")),
            (None, None) => {}
        }
    }
    (wider, narrower)
}

/// The hints that became less safe (first) and safer (second), absent hints counting as
/// the spec's defaults (read-only false, destructive true, idempotent false, open-world
/// true).
fn annotation_changes(before: &Tool, after: &Tool) -> (Vec<String>, Vec<String>) {
    let hints = |t: &Tool| {
        let a = t.annotations.as_ref();
        [
            a.and_then(|a| a.read_only_hint).unwrap_or(false),
            a.and_then(|a| a.destructive_hint).unwrap_or(true),
            a.and_then(|a| a.idempotent_hint).unwrap_or(false),
            a.and_then(|a| a.open_world_hint).unwrap_or(true),
        ]
    };
    // For each hint, the value that is the safe one.
    const NAMES: [(&str, bool); 4] = [
        ("readOnlyHint", true),
        ("destructiveHint", false),
        ("idempotentHint", true),
        ("openWorldHint", false),
    ];
    let (was, is) = (hints(before), hints(after));
    let (mut less, mut more) = (Vec::new(), Vec::new());
    for (i, (name, safe)) in NAMES.iter().enumerate() {
        if was[i] == is[i] {
            continue;
        }
        let change = format!("{name} {} -> {}", was[i], is[i]);
        if is[i] == *safe {
            more.push(change);
        } else {
            less.push(change);
        }
    }
    (less, more)
}

#[cfg(test)]
mod tests;

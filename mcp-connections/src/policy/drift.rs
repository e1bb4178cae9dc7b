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
use serde_json::{Map, Value};

use crate::catalog::tool_info::ToolInfo;

/// The fingerprint domain of tool definitions (v2: the whole wire definition; v1 hashed
/// seven chosen fields).
const TOOL_DOMAIN: &str = "mcp-connections/tool-definition/v2";

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

/// The fingerprint of `tool`'s whole definition as the server listed it: every field of
/// its wire form (name, title, description, input and output schemas, annotations, icons,
/// `_meta`, and whatever else the definition carries) as canonical JSON (sorted keys), so
/// it is the same across runs, processes and key orders, and any difference changes it.
pub fn tool_fingerprint(tool: &Tool) -> Fingerprint {
    wire_fingerprint(&wire(tool))
}

/// [`tool_fingerprint`] of a definition in its wire form.
pub(crate) fn wire_fingerprint(definition: &Value) -> Fingerprint {
    Fingerprint::builder(TOOL_DOMAIN)
        .str("definition", &canonical_text(definition))
        .finish()
}

/// `tool`'s wire form (what [`tool_fingerprint`] hashes and a pin keeps).
fn wire(tool: &Tool) -> Value {
    serde_json::to_value(tool).unwrap_or(Value::Null)
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
    /// A text the model reads changed, other than the description: the tool's `title`,
    /// `annotations.title`, or a schema keyword such as a property's `description`,
    /// `title`, `examples` or `default`, at any depth of the input or output schema.
    TextChanged {
        /// Where, e.g. `title` or `input schema: property \`topic\` description`.
        at: String,
        /// Risk signs the new text has and the old one had not.
        gained: Vec<RiskSign>,
        /// Only white space, punctuation or invisible characters changed.
        cosmetic: bool,
    },
    /// The description changed; `gained` lists the risk signs the new text has and the
    /// old one had not (both matched after normalising: NFKC, invisible characters
    /// dropped).
    DescriptionChanged {
        /// Risk signs that appeared.
        gained: Vec<RiskSign>,
        /// Only white space, punctuation or invisible characters changed.
        cosmetic: bool,
    },
    /// The input schema accepts more, at any depth: new properties, fewer required ones,
    /// new enum values, additional properties allowed, a type widened or removed, a
    /// `const`, `pattern`, `format` or bound dropped or loosened, a branch of `anyOf`
    /// added; also any change of a reference (`$ref`) or of a keyword not known here.
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
    /// The output schema changed (beyond its texts, which are [`ToolChange::TextChanged`]).
    OutputSchemaChanged,
    /// `_meta` changed.
    MetaChanged,
    /// The tool was for an app only (`_meta.ui.visibility` without `"model"`) and the
    /// model now sees it.
    BecameModelVisible,
    /// The tool's `icons` changed: the user sees other images, from wherever they point.
    IconsChanged,
    /// Fields of the definition changed that none of the above covers (e.g.
    /// `execution`, another annotation, a field this version does not know): named.
    Unclassified {
        /// The fields, e.g. `execution`.
        fields: Vec<String>,
    },
    /// The server's entry runs another version than the one recorded when it was
    /// installed from the MCP Registry (or last accepted), or something else altogether:
    /// every tool it lists carries this change until it is accepted, whatever its
    /// definition.
    VersionChanged {
        /// The version recorded or last accepted (`1.0.2`, an image's `tag@digest`).
        from: String,
        /// The version the entry runs now, or what it runs instead.
        to: String,
    },
}

impl ToolChange {
    /// Whether the change adds risk and so should be approved again: a new tool, a schema
    /// that accepts more, annotations that say less safe, a tool the model now sees, new
    /// icons, a field not classified, another version of the server, and any change of a
    /// text the model reads (the description, a title, a schema's texts) beyond white space
    /// and punctuation, or one that gained a URL, a file path or instructions aimed at the
    /// model. A renamed tool is a new name for the model and counts as new.
    pub fn adds_risk(&self) -> bool {
        match self {
            ToolChange::Added
            | ToolChange::Renamed { .. }
            | ToolChange::SchemaWidened { .. }
            | ToolChange::AnnotationsLessSafe { .. }
            | ToolChange::BecameModelVisible
            | ToolChange::IconsChanged
            | ToolChange::Unclassified { .. }
            | ToolChange::VersionChanged { .. } => true,
            ToolChange::DescriptionChanged { gained, cosmetic }
            | ToolChange::TextChanged {
                gained, cosmetic, ..
            } => !cosmetic || !gained.is_empty(),
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
    compare_wire(&wire(before), &wire(after))
}

/// Fields of a definition that [`compare_wire`] classifies.
const KNOWN_FIELDS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "_meta",
];

/// The changes from `before` to `after`, two definitions in their wire form (names
/// aside): every field compared, the schemas at every depth; a difference nothing
/// classifies is [`ToolChange::Unclassified`].
pub(crate) fn compare_wire(before: &Value, after: &Value) -> Vec<ToolChange> {
    let empty = Map::new();
    let was = before.as_object().unwrap_or(&empty);
    let is = after.as_object().unwrap_or(&empty);
    let mut changes = Vec::new();
    if let Some(change) = text_change("title", was.get("title"), is.get("title")) {
        changes.push(change);
    }
    let (d1, d2) = (was.get("description"), is.get("description"));
    if d1 != d2 {
        let (a, b) = (text_of(d1), text_of(d2));
        changes.push(ToolChange::DescriptionChanged {
            gained: gained(&a, &b),
            cosmetic: text::cosmetic(&a, &b),
        });
    }
    add_input_schema_changes(was.get("inputSchema"), is.get("inputSchema"), &mut changes);
    let (a1, a2) = (was.get("annotations"), is.get("annotations"));
    add_annotation_changes(a1, a2, &mut changes);
    add_output_schema_changes(
        was.get("outputSchema"),
        is.get("outputSchema"),
        &mut changes,
    );
    let (m1, m2) = (was.get("_meta"), is.get("_meta"));
    if !model_visible(m1) && model_visible(m2) {
        changes.push(ToolChange::BecameModelVisible);
    }
    if m1 != m2 {
        changes.push(ToolChange::MetaChanged);
    }
    if was.get("icons") != is.get("icons") {
        changes.push(ToolChange::IconsChanged);
    }
    let mut fields = unclassified_fields(was, is);
    let unnamed = |m: &Map<String, Value>| {
        let mut m = m.clone();
        m.remove("name");
        canonical(&Value::Object(m))
    };
    if changes.is_empty() && fields.is_empty() && unnamed(was) != unnamed(is) {
        // The whole definition differs where nothing above looked: still a change.
        fields.push("definition".to_owned());
    }
    if !fields.is_empty() {
        changes.push(ToolChange::Unclassified { fields });
    }
    changes
}

/// Adds the input schema's changes (absent: `{}`): each text change, then whether it
/// widened (which wins) or narrowed.
fn add_input_schema_changes(
    before: Option<&Value>,
    after: Option<&Value>,
    changes: &mut Vec<ToolChange>,
) {
    let object = Value::Object(Map::new());
    let (mut wider, mut narrower) = (Vec::new(), Vec::new());
    for d in schema::diff(before.unwrap_or(&object), after.unwrap_or(&object)) {
        match d {
            schema::Diff::Text { at, before, after } => changes.push(text_diff(
                &format!("input schema: {at}"),
                before.as_deref(),
                after.as_deref(),
            )),
            schema::Diff::Wider(what) => wider.push(what),
            schema::Diff::Narrower(what) => narrower.push(what),
        }
    }
    if !wider.is_empty() {
        changes.push(ToolChange::SchemaWidened { details: wider });
    } else if !narrower.is_empty() {
        changes.push(ToolChange::SchemaNarrowed { details: narrower });
    }
}

/// Adds the changes of the annotations' hints (less safe, then safer) and of their title.
fn add_annotation_changes(
    before: Option<&Value>,
    after: Option<&Value>,
    changes: &mut Vec<ToolChange>,
) {
    let (less, more) = annotation_changes(before, after);
    if !less.is_empty() {
        changes.push(ToolChange::AnnotationsLessSafe { hints: less });
    }
    if !more.is_empty() {
        changes.push(ToolChange::AnnotationsSafer { hints: more });
    }
    if let Some(change) = text_change(
        "annotations.title",
        annotation(before, "title").as_ref(),
        annotation(after, "title").as_ref(),
    ) {
        changes.push(change);
    }
}

/// Annotation `k` of an `annotations` value.
fn annotation(annotations: Option<&Value>, k: &str) -> Option<Value> {
    annotations.and_then(|a| a.get(k)).cloned()
}

/// Adds the output schema's changes: each text change, then one
/// [`ToolChange::OutputSchemaChanged`] for any other difference (added or removed too).
fn add_output_schema_changes(
    before: Option<&Value>,
    after: Option<&Value>,
    changes: &mut Vec<ToolChange>,
) {
    if before == after {
        return;
    }
    let object = Value::Object(Map::new());
    let mut other = before.is_none() != after.is_none();
    for d in schema::diff(before.unwrap_or(&object), after.unwrap_or(&object)) {
        match d {
            schema::Diff::Text { at, before, after } => changes.push(text_diff(
                &format!("output schema: {at}"),
                before.as_deref(),
                after.as_deref(),
            )),
            _ => other = true,
        }
    }
    if other {
        changes.push(ToolChange::OutputSchemaChanged);
    }
}

/// The changed fields nothing above classifies: fields of the definition not in
/// [`KNOWN_FIELDS`], then annotations other than the title and the hints, sorted.
fn unclassified_fields(was: &Map<String, Value>, is: &Map<String, Value>) -> Vec<String> {
    let mut fields: Vec<String> = was
        .keys()
        .chain(is.keys())
        .filter(|k| !KNOWN_FIELDS.contains(&k.as_str()) && was.get(*k) != is.get(*k))
        .cloned()
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    const HINTS: [&str; 5] = [
        "title",
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ];
    let (a1, a2) = (was.get("annotations"), is.get("annotations"));
    let other_annotations: BTreeSet<String> = [a1, a2]
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|m| m.keys())
        .filter(|k| !HINTS.contains(&k.as_str()) && annotation(a1, k) != annotation(a2, k))
        .map(|k| format!("annotations.{k}"))
        .collect();
    fields.extend(other_annotations);
    fields
}

/// Whether a definition with this `_meta` is for the model to see (absent: yes).
fn model_visible(meta: Option<&Value>) -> bool {
    crate::catalog::tool_info::meta_visible_to_model(meta.and_then(Value::as_object))
}

/// A text field's value as text (a non-string as its JSON; absent as empty).
fn text_of(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => canonical_text(other),
    }
}

/// The risk signs `after` has that `before` had not.
fn gained(before: &str, after: &str) -> Vec<RiskSign> {
    let (had, has) = (text::risk_signs(before), text::risk_signs(after));
    has.difference(&had).copied().collect()
}

/// The change of the text field `at`, if it changed.
fn text_change(at: &str, before: Option<&Value>, after: Option<&Value>) -> Option<ToolChange> {
    (before != after).then(|| {
        text_diff(
            at,
            Some(text_of(before).as_str()),
            Some(text_of(after).as_str()),
        )
    })
}

fn text_diff(at: &str, before: Option<&str>, after: Option<&str>) -> ToolChange {
    let (a, b) = (before.unwrap_or_default(), after.unwrap_or_default());
    ToolChange::TextChanged {
        at: at.to_owned(),
        gained: gained(a, b),
        // A text that appears or goes is not cosmetic, even an empty one.
        cosmetic: before.is_some() == after.is_some() && text::cosmetic(a, b),
    }
}

/// The hints that became less safe (first) and safer (second), absent hints counting as
/// the spec's defaults (read-only false, destructive true, idempotent false, open-world
/// true).
fn annotation_changes(before: Option<&Value>, after: Option<&Value>) -> (Vec<String>, Vec<String>) {
    // For each hint, its default and the value that is the safe one.
    const NAMES: [(&str, bool, bool); 4] = [
        ("readOnlyHint", false, true),
        ("destructiveHint", true, false),
        ("idempotentHint", false, true),
        ("openWorldHint", true, false),
    ];
    let hint = |a: Option<&Value>, name: &str, default: bool| {
        a.and_then(|a| a.get(name))
            .and_then(Value::as_bool)
            .unwrap_or(default)
    };
    let (mut less, mut more) = (Vec::new(), Vec::new());
    for (name, default, safe) in NAMES {
        let (was, is) = (hint(before, name, default), hint(after, name, default));
        if was == is {
            continue;
        }
        let change = format!("{name} {was} -> {is}");
        if is == safe {
            more.push(change);
        } else {
            less.push(change);
        }
    }
    (less, more)
}

mod schema;
pub(crate) mod skills;
mod text;

#[cfg(test)]
mod tests;

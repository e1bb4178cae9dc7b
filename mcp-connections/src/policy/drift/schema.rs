//! How one JSON Schema differs from another, keyword by keyword and at every depth:
//! nested `properties`, `items`, `$defs`, `anyOf`/`oneOf`/`allOf` branches and the other
//! subschemas are walked; every keyword is compared. A difference is text a model reads
//! (`description`, `title`, `examples`, `default`, ...), or the schema accepting more or
//! less. A keyword this walk does not know counts as accepting more: an unclassified
//! difference is still a change, and a risky one.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// One difference between two schemas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Diff {
    /// A text changed: where (e.g. `property \`topic\` description`), before and after
    /// (`None`: absent), a non-string value as its JSON.
    Text {
        at: String,
        before: Option<String>,
        after: Option<String>,
    },
    /// The schema accepts more (or it cannot be told which): what.
    Wider(String),
    /// The schema accepts less: what.
    Narrower(String),
}

/// Keywords whose value is text a model reads (JSON Schema's annotations).
const TEXT: &[&str] = &[
    "description",
    "title",
    "$comment",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
];
/// Keywords holding a map of subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords holding one subschema.
const SCHEMAS: &[&str] = &[
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
/// Keywords holding a list of subschemas.
const SCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Bounds that accept more when lower (or gone).
const LOWER_BOUNDS: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
];
/// Bounds that accept more when higher (or gone).
const UPPER_BOUNDS: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
];
/// Constraints that accept less when added and more when removed or changed.
const CONSTRAINTS: &[&str] = &[
    "pattern",
    "format",
    "multipleOf",
    "uniqueItems",
    "contentEncoding",
    "contentMediaType",
    "dependentRequired",
];

/// Where in a schema: property names and keyword steps, e.g. `opts.conversation` or
/// `$defs.Query.anyOf[1]`.
#[derive(Clone, Default)]
struct Path(Vec<String>);

impl Path {
    fn join(&self, step: impl Into<String>) -> Self {
        let mut steps = self.0.clone();
        steps.push(step.into());
        Self(steps)
    }

    /// `what` said of this place: `property \`a.b\` what`, or `what` at the root.
    fn say(&self, what: &str) -> String {
        if self.0.is_empty() {
            what.to_owned()
        } else {
            format!("property `{}` {what}", self.0.join("."))
        }
    }

    /// `schema: what` at the root, `property \`a.b\`: what` below it.
    fn about(&self, what: &str) -> String {
        if self.0.is_empty() {
            what.to_owned()
        } else {
            format!("property `{}`: {what}", self.0.join("."))
        }
    }
}

/// Every difference from `before` to `after` (two schemas), in a fixed order.
pub(crate) fn diff(before: &Value, after: &Value) -> Vec<Diff> {
    let mut out = Vec::new();
    walk(&Path::default(), before, after, &mut out);
    out
}

/// Adds to `out` the differences from schema `before` to `after` at `at`, keyword by
/// keyword (in key order), walking into the schemas they hold.
fn walk(at: &Path, before: &Value, after: &Value, out: &mut Vec<Diff>) {
    if before == after {
        return;
    }
    let (Value::Object(was), Value::Object(is)) = (before, after) else {
        // A boolean schema, or something that is not a schema: `true` accepts all.
        if after == &Value::Bool(false) {
            out.push(Diff::Narrower(at.about("accepts nothing now")));
        } else {
            out.push(Diff::Wider(
                at.about(&format!("schema {before} -> {after}")),
            ));
        }
        return;
    };
    let keys: BTreeSet<&String> = was.keys().chain(is.keys()).collect();
    for key in keys {
        let (a, b) = (was.get(key), is.get(key));
        if a == b {
            continue;
        }
        let k = key.as_str();
        if TEXT.contains(&k) {
            out.push(text_keyword(at, k, a, b));
        } else if k == "properties" {
            properties(at, a, b, out);
        } else if SCHEMA_MAPS.contains(&k) {
            schema_map(at, k, a, b, out);
        } else if k == "required" {
            required(at, a, b, out);
        } else if k == "additionalProperties" {
            additional(at, a, b, out);
        } else if SCHEMAS.contains(&k) {
            subschema(at, k, a, b, out);
        } else if SCHEMA_LISTS.contains(&k) {
            list(at, k, a, b, out);
        } else if k == "type" {
            types(at, a, b, out);
        } else if k == "enum" {
            enumeration(at, a, b, out);
        } else if k == "const" {
            out.push(constant(at, a, b));
        } else if LOWER_BOUNDS.contains(&k) || UPPER_BOUNDS.contains(&k) {
            out.push(bound(at, k, a, b));
        } else if CONSTRAINTS.contains(&k) {
            let what = at.about(&format!("{k} {} -> {}", shown(a), shown(b)));
            out.push(if a.is_none() {
                Diff::Narrower(what)
            } else {
                Diff::Wider(what)
            });
        } else {
            // `$ref`, `$id`, `$schema`, `$anchor`, ... and any keyword not known here.
            out.push(Diff::Wider(at.about(&format!(
                "{k} {} -> {}",
                shown(a),
                shown(b)
            ))));
        }
    }
}

/// A changed annotation `k` (a title, a description, ...): its texts before and after.
fn text_keyword(at: &Path, k: &str, a: Option<&Value>, b: Option<&Value>) -> Diff {
    let text = |v: Option<&Value>| {
        v.map(|v| match v {
            Value::String(s) => s.clone(),
            other => super::canonical_text(other),
        })
    };
    let place = if at.0.is_empty() {
        format!("schema {k}")
    } else {
        format!("property `{}` {k}", at.0.join("."))
    };
    Diff::Text {
        at: place,
        before: text(a),
        after: text(b),
    }
}

/// A keyword `k` that maps names to schemas (`$defs`, `patternProperties`, ...): each
/// schema added (wider), removed (narrower) or walked into.
fn schema_map(at: &Path, k: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Diff>) {
    let empty = Map::new();
    let (m1, m2) = (
        a.and_then(Value::as_object).unwrap_or(&empty),
        b.and_then(Value::as_object).unwrap_or(&empty),
    );
    let names: BTreeSet<&String> = m1.keys().chain(m2.keys()).collect();
    for name in names {
        let here = at.join(format!("{k}.{name}"));
        match (m1.get(name), m2.get(name)) {
            (Some(x), Some(y)) => walk(&here, x, y, out),
            (None, Some(_)) => out.push(Diff::Wider(here.say("added"))),
            (Some(_), None) => out.push(Diff::Narrower(here.say("removed"))),
            (None, None) => {}
        }
    }
}

/// A keyword `k` that holds one schema (`items`, `not`, ...): added (narrower), removed
/// (wider) or walked into.
fn subschema(at: &Path, k: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Diff>) {
    match (a, b) {
        (Some(x), Some(y)) => walk(&at.join(k), x, y, out),
        (None, Some(_)) => out.push(Diff::Narrower(at.about(&format!("`{k}` added")))),
        (Some(_), None) | (None, None) => {
            out.push(Diff::Wider(at.about(&format!("`{k}` removed"))));
        }
    }
}

/// A changed `const`: added narrows, removed or changed widens.
fn constant(at: &Path, a: Option<&Value>, b: Option<&Value>) -> Diff {
    match (a, b) {
        (None, Some(v)) => Diff::Narrower(at.say(&format!("now only {v}"))),
        (Some(v), None) => Diff::Wider(at.say(&format!("no longer only {v}"))),
        _ => Diff::Wider(at.say(&format!("const {} -> {}", shown(a), shown(b)))),
    }
}

/// A changed bound `k` (`minimum`, `maxLength`, ...): wider when it lets more through
/// (a lower bound lowered, an upper one raised, either removed).
fn bound(at: &Path, k: &str, a: Option<&Value>, b: Option<&Value>) -> Diff {
    let lower = LOWER_BOUNDS.contains(&k);
    let number = |v: Option<&Value>| v.and_then(Value::as_f64);
    let wider = match (number(a), number(b)) {
        (Some(x), Some(y)) => (y < x) == lower,
        (Some(_), None) if b.is_none() => true,
        (None, Some(_)) if a.is_none() => false,
        _ => true,
    };
    let what = at.about(&format!("{k} {} -> {}", shown(a), shown(b)));
    if wider {
        Diff::Wider(what)
    } else {
        Diff::Narrower(what)
    }
}

/// A keyword's value for a message (`none` when absent).
fn shown(v: Option<&Value>) -> String {
    v.map_or_else(|| "none".to_owned(), super::canonical_text)
}

fn properties(at: &Path, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Diff>) {
    let props = |v: Option<&Value>| -> BTreeMap<String, Value> {
        v.and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let (old, new) = (props(a), props(b));
    for name in new.keys().filter(|k| !old.contains_key(*k)) {
        out.push(Diff::Wider(at.join(name.clone()).say("added")));
    }
    for name in old.keys().filter(|k| !new.contains_key(*k)) {
        out.push(Diff::Narrower(at.join(name.clone()).say("removed")));
    }
    for (name, was) in &old {
        if let Some(is) = new.get(name) {
            walk(&at.join(name.clone()), was, is, out);
        }
    }
}

fn required(at: &Path, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Diff>) {
    let names = |v: Option<&Value>| -> BTreeSet<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old, new) = (names(a), names(b));
    for name in old.difference(&new) {
        out.push(Diff::Wider(at.join(name.clone()).say("no longer required")));
    }
    for name in new.difference(&old) {
        out.push(Diff::Narrower(at.join(name.clone()).say("now required")));
    }
}

fn additional(at: &Path, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Diff>) {
    match (a, b) {
        (Some(x @ Value::Object(_)), Some(y @ Value::Object(_))) => {
            walk(&at.join("additionalProperties"), x, y, out);
        }
        _ => {
            let closed = |v: Option<&Value>| v == Some(&Value::Bool(false));
            let open = |v: Option<&Value>| v.is_none() || v == Some(&Value::Bool(true));
            let what = at.about(&format!(
                "additionalProperties {} -> {}",
                shown(a),
                shown(b)
            ));
            out.push(if closed(b) {
                Diff::Narrower(at.about("additional properties no longer allowed"))
            } else if open(a) {
                // Absent and `true` mean the same; a schema where it was open constrains.
                Diff::Narrower(what)
            } else if open(b) {
                Diff::Wider(at.about("additional properties now allowed"))
            } else {
                Diff::Wider(what)
            });
        }
    }
}

fn list(at: &Path, k: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Diff>) {
    let empty = Vec::new();
    let (l1, l2) = (
        a.and_then(Value::as_array).unwrap_or(&empty),
        b.and_then(Value::as_array).unwrap_or(&empty),
    );
    for (i, (x, y)) in l1.iter().zip(l2).enumerate() {
        walk(&at.join(format!("{k}[{i}]")), x, y, out);
    }
    if l1.len() == l2.len() && a.is_some() == b.is_some() {
        return;
    }
    let what = at.about(&format!(
        "{k} has {} -> {} branches",
        a.map_or("no".to_owned(), |_| l1.len().to_string()),
        b.map_or("no".to_owned(), |_| l2.len().to_string())
    ));
    // More alternatives accept more; more conditions (`allOf`), fewer; an absent list
    // constrains nothing.
    let more = match (a, b) {
        (None, _) => false,
        (_, None) => true,
        _ => (l2.len() > l1.len()) != (k == "allOf"),
    };
    out.push(if more {
        Diff::Wider(what)
    } else {
        Diff::Narrower(what)
    });
}

fn types(at: &Path, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Diff>) {
    let set = |v: Option<&Value>| -> Option<BTreeSet<String>> {
        match v? {
            Value::String(s) => Some(BTreeSet::from([s.clone()])),
            Value::Array(items) => Some(items.iter().map(Value::to_string).collect()),
            other => Some(BTreeSet::from([other.to_string()])),
        }
    };
    let what = at.say(&format!(
        "type {} -> {}",
        a.map_or("any".to_owned(), Value::to_string),
        b.map_or("any".to_owned(), Value::to_string)
    ));
    let narrower = match (set(a), set(b)) {
        (None, Some(_)) => true,
        (Some(x), Some(y)) => y.is_subset(&x),
        _ => false,
    };
    out.push(if narrower {
        Diff::Narrower(what)
    } else {
        Diff::Wider(what)
    });
}

fn enumeration(at: &Path, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Diff>) {
    let values = |v: Option<&Value>| -> Option<BTreeSet<String>> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().map(super::canonical_text).collect())
    };
    match (values(a), values(b)) {
        (Some(x), Some(y)) => {
            for v in y.difference(&x) {
                out.push(Diff::Wider(at.say(&format!("accepts {v}"))));
            }
            for v in x.difference(&y) {
                out.push(Diff::Narrower(at.say(&format!("no longer accepts {v}"))));
            }
        }
        (Some(_), None) => out.push(Diff::Wider(at.say("no longer an enum"))),
        (None, Some(_)) => out.push(Diff::Narrower(at.say("now an enum"))),
        (None, None) => out.push(Diff::Wider(at.about(&format!(
            "enum {} -> {}",
            shown(a),
            shown(b)
        )))),
    }
}

//! A tool definition turned into per-field terms.

use crate::FastMap;

use crate::analyze::Analyzer;
use crate::tool::ToolDef;

/// The fields of a tool, in index order.
pub(crate) const FIELDS: usize = 5;
/// The tool's name.
pub(crate) const NAME: usize = 0;
/// The server's name.
pub(crate) const SERVER: usize = 1;
/// Title and description.
pub(crate) const DESCRIPTION: usize = 2;
/// Input-schema property names.
pub(crate) const PARAM_NAME: usize = 3;
/// Input-schema property descriptions.
pub(crate) const PARAM_DESCRIPTION: usize = 4;

/// How deep nested schemas are read.
const MAX_SCHEMA_DEPTH: usize = 6;

/// One tool's terms: term -> frequency per field, and each field's length.
#[derive(Debug, Default)]
pub(crate) struct Document {
    pub(crate) tf: FastMap<String, [u16; FIELDS]>,
    pub(crate) len: [u32; FIELDS],
}

impl Document {
    /// The terms of `tool` on the server named `server_text`.
    pub(crate) fn build(analyzer: &Analyzer, server_text: &str, tool: &ToolDef) -> Self {
        let mut doc = Self::default();
        let mut buf = Vec::new();
        let mut add = |field: usize, text: &str, doc: &mut Self| {
            buf.clear();
            analyzer.terms(text, &mut buf);
            for term in buf.drain(..) {
                let slot = doc.tf.entry(term).or_default();
                slot[field] = slot[field].saturating_add(1);
                doc.len[field] += 1;
            }
        };
        add(NAME, tool.name(), &mut doc);
        add(SERVER, server_text, &mut doc);
        if let Some(title) = tool.title() {
            add(DESCRIPTION, title, &mut doc);
        }
        add(DESCRIPTION, tool.description(), &mut doc);
        let mut params = Vec::new();
        schema_texts(tool.input_schema(), 0, &mut params);
        for (name, description) in params {
            add(PARAM_NAME, name, &mut doc);
            if let Some(d) = description {
                add(PARAM_DESCRIPTION, d, &mut doc);
            }
        }
        doc
    }
}

/// Every (property name, description) of `schema`, nested ones included.
pub(crate) fn schema_texts<'a>(
    schema: &'a serde_json::Value,
    depth: usize,
    out: &mut Vec<(&'a str, Option<&'a str>)>,
) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(props) = obj.get("properties").and_then(|p| p.as_object()) {
        for (name, prop) in props {
            let description = prop.get("description").and_then(|d| d.as_str());
            out.push((name.as_str(), description));
            schema_texts(prop, depth + 1, out);
        }
    }
    if let Some(items) = obj.get("items") {
        schema_texts(items, depth + 1, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(list) = obj.get(key).and_then(|l| l.as_array()) {
            for s in list {
                schema_texts(s, depth + 1, out);
            }
        }
    }
}

//! Reading JSON values with their place in the text: each value read knows its field path
//! (`packages[0].version`) and its line and column, so an error can point at it.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::diagnostic::{ConfigError, ConfigErrorKind, LineIndex, Location, Scope};
use crate::formats::json_locate::{Step, locate_steps};

/// Where a value is: its field path and its location in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spot {
    pub(crate) field: String,
    pub(crate) location: Location,
}

impl Spot {
    /// An error about the value here.
    pub(crate) fn error(
        &self,
        kind: ConfigErrorKind,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            location: self.location.clone(),
            scope: Scope::Document,
            field: (!self.field.is_empty()).then(|| self.field.clone()),
            kind,
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

/// The text being read, and the errors found so far.
pub(crate) struct Reader<'a> {
    text: &'a str,
    origin: &'a str,
    index: LineIndex<'a>,
    pub(crate) errors: Vec<ConfigError>,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(text: &'a str, origin: &'a str) -> Self {
        Self {
            text,
            origin,
            index: LineIndex::new(text),
            errors: Vec::new(),
        }
    }

    /// The spot of `path`; a path that is not in the text (a missing field) points at the
    /// nearest part of it that is.
    pub(crate) fn spot(&self, path: &[Step]) -> Spot {
        let offset = (0..=path.len())
            .rev()
            .find_map(|len| locate_steps(self.text, &path[..len]))
            .unwrap_or(0);
        let (line, column) = self.index.position(offset);
        Spot {
            field: field_name(path),
            location: Location::new(self.origin, line, column),
        }
    }

    /// Records an error about `path`.
    pub(crate) fn error(
        &mut self,
        path: &[Step],
        kind: ConfigErrorKind,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let error = self.spot(path).error(kind, message, hint);
        self.errors.push(error);
    }

    /// A syntax error at serde_json's (line, column).
    pub(crate) fn syntax(&mut self, err: &serde_json::Error) {
        let message = err.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(head, _)| head);
        self.errors.push(ConfigError {
            location: Location::new(self.origin, err.line().max(1), err.column().max(1)),
            scope: Scope::Document,
            field: None,
            kind: ConfigErrorKind::Syntax,
            message: format!("invalid JSON: {message}"),
            hint: Some("fix the syntax at this position".to_owned()),
        });
    }

    /// The object at `path`, or an error naming what it is instead.
    pub(crate) fn object<'v>(
        &mut self,
        path: &[Step],
        value: &'v Value,
    ) -> Option<&'v Map<String, Value>> {
        match value {
            Value::Object(object) => Some(object),
            other => {
                let found = crate::diagnostic::json_type_name(other);
                self.error(
                    path,
                    ConfigErrorKind::WrongType,
                    format!("expected an object, found {found}"),
                    "write a JSON object `{...}` here",
                );
                None
            }
        }
    }

    /// The array member `key` of `object` (empty when absent).
    pub(crate) fn array<'v>(
        &mut self,
        path: &[Step],
        object: &'v Map<String, Value>,
        key: &str,
    ) -> &'v [Value] {
        match object.get(key) {
            None => &[],
            Some(Value::Array(items)) => items,
            Some(other) => {
                let found = crate::diagnostic::json_type_name(other);
                self.error(
                    &join(path, key),
                    ConfigErrorKind::WrongType,
                    format!("expected an array, found {found}"),
                    "write a JSON array `[...]` here",
                );
                &[]
            }
        }
    }

    /// The string member `key` of `object`, if present and a string.
    pub(crate) fn string(
        &mut self,
        path: &[Step],
        object: &Map<String, Value>,
        key: &str,
    ) -> Option<String> {
        match object.get(key)? {
            Value::String(text) => Some(text.clone()),
            other => {
                let found = crate::diagnostic::json_type_name(other);
                self.error(
                    &join(path, key),
                    ConfigErrorKind::WrongType,
                    format!("expected a string, found {found}"),
                    "write the value in double quotes",
                );
                None
            }
        }
    }

    /// The string member `key` of `object`, which must be present and not empty.
    pub(crate) fn required_string(
        &mut self,
        path: &[Step],
        object: &Map<String, Value>,
        key: &str,
        what: &str,
    ) -> Option<String> {
        if !object.contains_key(key) {
            self.error(
                path,
                ConfigErrorKind::MissingField,
                format!("`{key}` is missing"),
                format!("add `\"{key}\"`: {what}"),
            );
            return None;
        }
        let text = self.string(path, object, key)?;
        if text.trim().is_empty() {
            self.error(
                &join(path, key),
                ConfigErrorKind::InvalidValue,
                format!("`{key}` is empty"),
                format!("write {what}"),
            );
            return None;
        }
        Some(text)
    }

    /// The boolean member `key` of `object` (false when absent or not a boolean).
    pub(crate) fn flag(&mut self, path: &[Step], object: &Map<String, Value>, key: &str) -> bool {
        match object.get(key) {
            None => false,
            Some(Value::Bool(flag)) => *flag,
            Some(other) => {
                let found = crate::diagnostic::json_type_name(other);
                self.error(
                    &join(path, key),
                    ConfigErrorKind::WrongType,
                    format!("expected `true` or `false`, found {found}"),
                    "write `true` or `false` without quotes",
                );
                false
            }
        }
    }
}

/// `path` followed by the object key `key`.
pub(crate) fn join(path: &[Step], key: &str) -> Vec<Step> {
    let mut out = path.to_vec();
    out.push(Step::Key(key.to_owned()));
    out
}

/// `path` followed by the array index `index`.
pub(crate) fn join_index(path: &[Step], index: usize) -> Vec<Step> {
    let mut out = path.to_vec();
    out.push(Step::Index(index));
    out
}

/// `packages[0].transport.type`.
fn field_name(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Index(index) => {
                let _ = write!(out, "[{index}]");
            }
        }
    }
    out
}

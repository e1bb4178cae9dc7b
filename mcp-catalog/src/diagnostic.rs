//! Located, actionable configuration errors and warnings.

use std::fmt;

/// Where a configuration value came from: an origin (a file path or a label such as
/// `<user config>`) plus a 1-based line and column when known.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    origin: String,
    position: Option<(usize, usize)>,
}

impl Location {
    /// A location with an origin only (no line or column).
    pub fn origin_only(origin: impl Into<String>) -> Self {
        Self {
            origin: origin.into(),
            position: None,
        }
    }

    /// A location with an origin, a 1-based line and a 1-based column (in characters).
    pub fn new(origin: impl Into<String>, line: usize, column: usize) -> Self {
        Self {
            origin: origin.into(),
            position: Some((line, column)),
        }
    }

    /// The file path or label the value came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// 1-based line, when known.
    pub fn line(&self) -> Option<usize> {
        self.position.map(|(line, _)| line)
    }

    /// 1-based column in characters, when known.
    pub fn column(&self) -> Option<usize> {
        self.position.map(|(_, column)| column)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{}:{line}:{column}", self.origin),
            None => f.write_str(&self.origin),
        }
    }
}

/// Converts byte offsets of one text into 1-based line and column numbers.
#[derive(Debug)]
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { text, line_starts }
    }

    /// 1-based (line, column) of a byte offset; the column counts characters.
    pub(crate) fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self
            .line_starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(0);
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |prefix| prefix.chars().count());
        (line.max(1), column + 1)
    }
}

/// What a configuration error is about, for hosts that branch on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The text is not valid TOML or JSON.
    Syntax,
    /// A server sets neither `command` nor `url`.
    MissingTransport,
    /// A server sets both `command` and `url`.
    ConflictingTransport,
    /// A field of the other transport (e.g. `http_headers` on a stdio server).
    WrongTransportField,
    /// A secret written inline (e.g. `bearer_token`).
    InlineSecret,
    /// A server name that is not a valid [`mcp_key::ServerName`].
    InvalidServerName,
    /// An environment id that is invalid or not declared in `[environments]`.
    UnknownEnvironment,
    /// A zero, negative or non-finite timeout.
    InvalidTimeout,
    /// An approval mode other than `auto`, `prompt`, `writes`, `approve`.
    UnknownApprovalMode,
    /// A value of the wrong type (e.g. a number where a string is expected).
    WrongType,
    /// A URL that is not an absolute `http` or `https` URL.
    InvalidUrl,
    /// A `${VAR}` in `.mcp.json` whose variable is not set and has no default.
    UndefinedVariable,
    /// Any other value outside its allowed set or range.
    InvalidValue,
    /// A missing required field.
    MissingField,
}

/// What part of the configuration a diagnostic is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// A top-level setting or the document itself.
    Document,
    /// `[mcp_servers.<name>]` (the raw, possibly invalid, name).
    Server(String),
    /// `[environments.<id>]`.
    Environment(String),
    /// The n-th (0-based) `[[plugins]]` entry.
    Plugin(usize),
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Document => Ok(()),
            Scope::Server(name) => write!(f, "server `{name}`: "),
            Scope::Environment(id) => write!(f, "environment `{id}`: "),
            Scope::Plugin(index) => write!(f, "plugin #{}: ", index + 1),
        }
    }
}

/// One actionable configuration error: where, which server and field, what is wrong and
/// what to do.
///
/// Displays as `origin:line:col: server `x`: field `y`: message (hint)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub(crate) location: Location,
    pub(crate) scope: Scope,
    pub(crate) field: Option<String>,
    pub(crate) kind: ConfigErrorKind,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
}

impl ConfigError {
    /// The classification of this error.
    pub fn kind(&self) -> ConfigErrorKind {
        self.kind
    }

    /// Where the offending value is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The server the error is about (raw name as written), if any.
    pub fn server(&self) -> Option<&str> {
        match &self.scope {
            Scope::Server(name) => Some(name),
            _ => None,
        }
    }

    /// The environment the error is about (raw id as written), if any.
    pub fn environment(&self) -> Option<&str> {
        match &self.scope {
            Scope::Environment(id) => Some(id),
            _ => None,
        }
    }

    /// The field (dotted path inside the server or environment), if any.
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What to do about it, if there is more to say than the message.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.scope)?;
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Every error found in one configuration, in document order.
///
/// Displays one error per line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigErrors {
    errors: Vec<ConfigError>,
}

impl ConfigErrors {
    pub(crate) fn new(errors: Vec<ConfigError>) -> Self {
        Self { errors }
    }

    /// The errors, in document order.
    pub fn errors(&self) -> &[ConfigError] {
        &self.errors
    }

    /// Iterates over the errors.
    pub fn iter(&self) -> std::slice::Iter<'_, ConfigError> {
        self.errors.iter()
    }

    /// Number of errors (at least one).
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Always false for errors returned by this crate; present for API completeness.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
}

impl<'a> IntoIterator for &'a ConfigErrors {
    type Item = &'a ConfigError;
    type IntoIter = std::slice::Iter<'a, ConfigError>;
    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// A non-fatal finding, such as an unknown key that was ignored.
///
/// Displays like a [`ConfigError`]: `origin:line:col: server `x`: message (hint)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    pub(crate) location: Location,
    pub(crate) scope: Scope,
    pub(crate) key: Option<String>,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
}

impl ConfigWarning {
    pub(crate) fn unknown_key(location: Location, scope: Scope, key: &str, hint: &str) -> Self {
        Self {
            location,
            scope,
            key: Some(key.to_owned()),
            message: format!("unknown key `{key}` ignored"),
            hint: Some(hint.to_owned()),
        }
    }

    pub(crate) fn other(location: Location, scope: Scope, message: String) -> Self {
        Self {
            location,
            scope,
            key: None,
            message,
            hint: None,
        }
    }

    /// Where the finding is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The unknown key this warning is about, if it is about one.
    pub fn unknown_key_name(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The server this warning is about (raw name), if any.
    pub fn server(&self) -> Option<&str> {
        match &self.scope {
            Scope::Server(name) => Some(name),
            _ => None,
        }
    }

    /// The warning text.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}{}", self.location, self.scope, self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

/// The type of a JSON value with an article, for messages: `a string`, `an object`, `null`.
pub fn json_type_name(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_counts_lines_and_characters() {
        let index = LineIndex::new("ab\nçd\n\nx");
        assert_eq!(index.position(0), (1, 1));
        assert_eq!(index.position(2), (1, 3));
        assert_eq!(index.position(3), (2, 1));
        // 'ç' is two bytes; 'd' is the second character.
        assert_eq!(index.position(5), (2, 2));
        assert_eq!(index.position(8), (4, 1));
        assert_eq!(index.position(999), (4, 2));
    }
}

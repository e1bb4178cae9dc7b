//! Accumulates every diagnostic of one parse, with positions, and shared value checks.

use std::collections::BTreeMap;

use mcp_key::ServerName;

use crate::diagnostic::{
    ConfigError, ConfigErrorKind, ConfigErrors, ConfigWarning, LineIndex, Location, Scope,
};
use crate::model::format::ConfigFormat;
use crate::model::transport::UnusableServer;

/// Collects errors and warnings for one text.
pub(crate) struct Collector<'a> {
    origin: &'a str,
    lines: LineIndex<'a>,
    errors: Vec<(usize, ConfigError)>,
    warnings: Vec<(usize, ConfigWarning)>,
}

/// What kind of file is being read: a user configuration, or a plugin's declaration of
/// its servers (where the installation, not the file, decides the environment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// A user configuration file.
    Config,
    /// A plugin's `.mcp.json` or `mcp.toml`.
    Plugin,
}

/// One error to record.
pub(crate) struct Problem<'s> {
    pub(crate) scope: &'s Scope,
    pub(crate) field: Option<String>,
    pub(crate) offset: usize,
    pub(crate) kind: ConfigErrorKind,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
}

impl<'a> Collector<'a> {
    pub(crate) fn new(text: &'a str, origin: &'a str) -> Self {
        Self {
            origin,
            lines: LineIndex::new(text),
            errors: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub(crate) fn location(&self, offset: usize) -> Location {
        let (line, column) = self.lines.position(offset);
        Location::new(self.origin, line, column)
    }

    pub(crate) fn push(&mut self, problem: Problem<'_>) {
        let error = ConfigError {
            location: self.location(problem.offset),
            scope: problem.scope.clone(),
            field: problem.field,
            kind: problem.kind,
            message: problem.message,
            hint: problem.hint,
        };
        self.errors.push((problem.offset, error));
    }

    /// Shorthand for [`Collector::push`].
    pub(crate) fn error(
        &mut self,
        scope: &Scope,
        field: Option<&str>,
        offset: usize,
        kind: ConfigErrorKind,
        message: impl Into<String>,
        hint: Option<String>,
    ) {
        self.push(Problem {
            scope,
            field: field.map(str::to_owned),
            offset,
            kind,
            message: message.into(),
            hint,
        });
    }

    pub(crate) fn unknown_key(&mut self, scope: &Scope, key: &str, offset: usize, known: &[&str]) {
        self.unknown_key_of(scope, key, offset, known, None);
    }

    /// [`Collector::unknown_key`] in another client's file: a key that is not a typo is
    /// that client's setting without an equivalent here.
    pub(crate) fn unknown_key_of(
        &mut self,
        scope: &Scope,
        key: &str,
        offset: usize,
        known: &[&str],
        client: Option<ConfigFormat>,
    ) {
        let hint = match closest(key, known) {
            Some(candidate) => format!("did you mean `{candidate}`?"),
            None if let Some(client) = client => {
                format!(
                    "no equivalent for this {} setting here; it has no effect",
                    client.name()
                )
            }
            // A top-level key is usually another program's setting in a shared config file.
            None if *scope == Scope::Document => {
                "not an MCP setting; fine if another program reads this file".to_owned()
            }
            None => "check the spelling; it may belong to a newer version".to_owned(),
        };
        let warning = ConfigWarning::unknown_key(self.location(offset), scope.clone(), key, &hint);
        self.warnings.push((offset, warning));
    }

    /// A key a plugin file may not set (`environment`, top-level settings): ignored, with a
    /// warning that says where to set it instead.
    pub(crate) fn ignored_in_plugin(&mut self, scope: &Scope, key: &str, offset: usize) {
        let hint = if key == "environment" {
            "the installation decides where a plugin runs: list environments in the user \
             configuration's `[[plugins]] environments = [...]`"
        } else {
            "a plugin only declares servers; set it in the user configuration"
        };
        let warning = ConfigWarning {
            location: self.location(offset),
            scope: scope.clone(),
            key: None,
            message: format!("`{key}` is ignored in a plugin"),
            hint: Some(hint.to_owned()),
        };
        self.warnings.push((offset, warning));
    }

    /// A key that is understood but has no effect here: ignored, with a warning naming it.
    pub(crate) fn warning(
        &mut self,
        scope: &Scope,
        key: &str,
        offset: usize,
        message: String,
        hint: &str,
    ) {
        let warning = ConfigWarning {
            location: self.location(offset),
            scope: scope.clone(),
            key: Some(key.to_owned()),
            message,
            hint: Some(hint.to_owned()),
        };
        self.warnings.push((offset, warning));
    }

    pub(crate) fn error_count(&self) -> usize {
        self.errors.len()
    }

    /// Like [`Collector::finish`], but the errors of an entry with a valid server name fail
    /// only that server: they come back as [`UnusableServer`]s by name. Any other error
    /// (syntax, a top-level setting, an invalid server name) fails the whole text, with
    /// every error.
    pub(crate) fn finish_per_server(
        mut self,
    ) -> Result<(Vec<ConfigWarning>, BTreeMap<ServerName, UnusableServer>), ConfigErrors> {
        let document_level = self.errors.iter().any(|(_, e)| server_of(e).is_none());
        if document_level {
            return Err(self
                .finish()
                .err()
                .unwrap_or_else(|| ConfigErrors::new(Vec::new())));
        }
        self.errors.sort_by_key(|(offset, _)| *offset);
        let mut by_server: BTreeMap<ServerName, Vec<ConfigError>> = BTreeMap::new();
        for (_, error) in std::mem::take(&mut self.errors) {
            if let Some(name) = server_of(&error) {
                by_server.entry(name).or_default().push(error);
            }
        }
        let unusable = by_server
            .into_iter()
            .map(|(name, errors)| (name, UnusableServer::new(ConfigErrors::new(errors))))
            .collect();
        let warnings = self.finish()?;
        Ok((warnings, unusable))
    }

    /// Errors (sorted by position) or the warnings (sorted by position).
    pub(crate) fn finish(mut self) -> Result<Vec<ConfigWarning>, ConfigErrors> {
        if !self.errors.is_empty() {
            self.errors.sort_by_key(|(offset, _)| *offset);
            return Err(ConfigErrors::new(
                self.errors.into_iter().map(|(_, e)| e).collect(),
            ));
        }
        self.warnings.sort_by_key(|(offset, _)| *offset);
        Ok(self.warnings.into_iter().map(|(_, w)| w).collect())
    }
}

/// The server an error fails on its own: a server-scoped error whose name is valid.
fn server_of(error: &ConfigError) -> Option<ServerName> {
    match &error.scope {
        Scope::Server(name) if error.kind != ConfigErrorKind::InvalidServerName => {
            ServerName::new(name).ok()
        }
        _ => None,
    }
}

/// The known key nearest to `key` by edit distance, if it is close enough to be a typo.
fn closest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|candidate| (mcp_key::edit_distance(key, candidate), *candidate))
        .filter(|(distance, candidate)| *distance <= 2.min(candidate.len() / 3).max(1))
        .min()
        .map(|(_, candidate)| candidate)
}

/// Checks an absolute `http`/`https` URL with a host. Returns what is wrong, if anything.
pub(crate) fn url_problem(url: &str) -> Option<&'static str> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &url[8..]
    } else if lower.starts_with("http://") {
        &url[7..]
    } else {
        return Some("must be an absolute URL starting with http:// or https://");
    };
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("must not contain spaces or control characters");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Some("has no host");
    }
    None
}

/// A valid environment variable name for our purposes: non-empty, no `=` and no NUL.
pub(crate) fn env_var_name_ok(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

/// An HTTP header name: one or more RFC 9110 token characters.
pub(crate) fn header_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// An HTTP header value: no CR, LF or NUL.
pub(crate) fn header_value_ok(value: &str) -> bool {
    !value.contains(['\r', '\n', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(url_problem("https://example.com/mcp"), None);
        assert_eq!(url_problem("HTTP://127.0.0.1:8080"), None);
        assert!(url_problem("ftp://example.com").is_some());
        assert!(url_problem("example.com").is_some());
        assert!(url_problem("https://").is_some());
        assert!(url_problem("https:///path").is_some());
        assert!(url_problem("https://exa mple.com").is_some());
        assert!(url_problem("h").is_some());
        assert!(url_problem("ht\u{e9}ps://x").is_some());
    }

    #[test]
    fn typo_suggestions() {
        assert_eq!(closest("comand", &["command", "url"]), Some("command"));
        assert_eq!(closest("tool_timeout", &["tool_timeout_sec"]), None);
        assert_eq!(closest("zzz", &["url"]), None);
    }
}

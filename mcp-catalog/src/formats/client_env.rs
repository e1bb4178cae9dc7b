//! How other clients' `${...}` variables are looked up: `${env:NAME}`, VS Code's
//! `${input:id}` (from `MCP_INPUT_<ID>`; see `inputs.rs` for prompting), `${workspaceFolder}` and
//! `${userHome}`.

use std::path::Path;

use crate::env::EnvLookup;
use crate::model::format::ConfigFormat;

/// The environment variable a VS Code `${input:id}` is read from: `MCP_INPUT_` and the id
/// in upper case, every character other than a letter or digit replaced by `_`.
pub(crate) fn input_variable(id: &str) -> String {
    let id: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("MCP_INPUT_{id}")
}

/// Gemini CLI's `$NAME` form written as `${NAME}` (which it also accepts), so that one
/// expander handles both. A `$` not followed by a letter or `_` is kept as is.
pub(crate) fn braced(raw: &str) -> std::borrow::Cow<'_, str> {
    if !raw.contains('$') {
        return std::borrow::Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len() + 8);
    let mut chars = raw.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        let starts_name = chars
            .peek()
            .is_some_and(|(_, n)| n.is_ascii_alphabetic() || *n == '_');
        if c != '$' || !starts_name {
            out.push(c);
            continue;
        }
        out.push_str("${");
        while let Some((_, n)) = chars.peek().copied() {
            if !(n.is_ascii_alphanumeric() || n == '_') {
                break;
            }
            out.push(n);
            chars.next();
        }
        out.push('}');
    }
    std::borrow::Cow::Owned(out)
}

/// An [`EnvLookup`] that understands one client's variable forms.
pub(crate) struct ClientEnv<'e> {
    inner: &'e dyn EnvLookup,
    format: ConfigFormat,
    workspace: Option<String>,
}

impl<'e> ClientEnv<'e> {
    /// `origin` is the file's path: `${workspaceFolder}` is the folder holding its
    /// `.vscode` or `.cursor` folder.
    pub(crate) fn new(inner: &'e dyn EnvLookup, format: ConfigFormat, origin: &str) -> Self {
        let folder = Path::new(origin).parent();
        let workspace = folder
            .filter(|f| {
                f.file_name()
                    .is_some_and(|n| n == ".vscode" || n == ".cursor")
            })
            .and_then(Path::parent)
            .map(|w| {
                let w = w.display().to_string();
                if w.is_empty() { ".".to_owned() } else { w }
            });
        Self {
            inner,
            format,
            workspace,
        }
    }
}

impl EnvLookup for ClientEnv<'_> {
    fn get(&self, name: &str) -> Option<String> {
        let editor = matches!(
            self.format,
            ConfigFormat::VsCode | ConfigFormat::Cursor | ConfigFormat::Windsurf
        );
        if editor {
            if let Some(var) = name.strip_prefix("env:") {
                return self.inner.get(var);
            }
            match name {
                "workspaceFolder" => return self.workspace.clone(),
                "userHome" => return self.inner.get("HOME"),
                _ => {}
            }
        }
        if self.format == ConfigFormat::VsCode
            && let Some(id) = name.strip_prefix("input:")
        {
            return self.inner.get(&input_variable(id));
        }
        self.inner.get(name)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn dollar_names_are_braced() {
        assert_eq!(
            braced("$A and ${B} $ $1 x$_c-d"),
            "${A} and ${B} $ $1 x${_c}-d"
        );
        assert_eq!(braced("plain"), "plain");
    }

    #[test]
    fn editor_forms() {
        let env: BTreeMap<String, String> = [("TOKEN", "t"), ("MCP_INPUT_API_KEY", "k")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let vscode = ClientEnv::new(&env, ConfigFormat::VsCode, "proj/.vscode/mcp.json");
        assert_eq!(vscode.get("env:TOKEN").as_deref(), Some("t"));
        assert_eq!(vscode.get("input:api-key").as_deref(), Some("k"));
        assert_eq!(vscode.get("workspaceFolder").as_deref(), Some("proj"));
        let bare = ClientEnv::new(&env, ConfigFormat::VsCode, ".vscode/mcp.json");
        assert_eq!(bare.get("workspaceFolder").as_deref(), Some("."));
        let plain = ClientEnv::new(&env, ConfigFormat::McpJson, ".mcp.json");
        assert_eq!(plain.get("env:TOKEN"), None);
        assert_eq!(plain.get("TOKEN").as_deref(), Some("t"));
    }
}

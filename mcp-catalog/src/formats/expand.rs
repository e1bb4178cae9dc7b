//! `${VAR}` and `${VAR:-default}` expansion for `.mcp.json` string values.

use crate::env::EnvLookup;

/// Why a string could not be expanded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ExpandError {
    /// `${NAME}` with `NAME` unset and no default.
    Undefined(String),
    /// `${` without a closing `}`.
    Unterminated,
    /// `${}` or `${:-x}`.
    EmptyName,
}

/// Expands every `${NAME}` (value of `NAME`, error when unset) and `${NAME:-default}`
/// (`default` when `NAME` is unset or empty). A `$` not followed by `{` is kept as is.
pub(crate) fn expand(input: &str, env: &dyn EnvLookup) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(ExpandError::Unterminated)?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if name.is_empty() {
            return Err(ExpandError::EmptyName);
        }
        match (env.get(name), default) {
            (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(ExpandError::Undefined(name.to_owned())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn env() -> BTreeMap<String, String> {
        [("HOME", "/home/me"), ("EMPTY", ""), ("TOKEN", "t0k")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn expands_variables_and_defaults() {
        let env = env();
        assert_eq!(expand("${HOME}/x", &env), Ok("/home/me/x".to_owned()));
        assert_eq!(expand("Bearer ${TOKEN}", &env), Ok("Bearer t0k".to_owned()));
        assert_eq!(expand("${MISSING:-dflt}", &env), Ok("dflt".to_owned()));
        assert_eq!(expand("${EMPTY:-dflt}", &env), Ok("dflt".to_owned()));
        assert_eq!(expand("${EMPTY}", &env), Ok(String::new()));
        assert_eq!(
            expand("${HOME:-x}${TOKEN}", &env),
            Ok("/home/me t0k".replace(' ', ""))
        );
        assert_eq!(
            expand("$HOME and $ and $", &env),
            Ok("$HOME and $ and $".to_owned())
        );
        assert_eq!(expand("${MISSING:-}", &env), Ok(String::new()));
        assert_eq!(expand("ünï${TOKEN}çø", &env), Ok("ünït0kçø".to_owned()));
    }

    #[test]
    fn reports_problems() {
        let env = env();
        assert_eq!(
            expand("${MISSING}", &env),
            Err(ExpandError::Undefined("MISSING".to_owned()))
        );
        assert_eq!(expand("${HOME", &env), Err(ExpandError::Unterminated));
        assert_eq!(expand("${}", &env), Err(ExpandError::EmptyName));
        assert_eq!(expand("${:-x}", &env), Err(ExpandError::EmptyName));
    }
}

//! The values a registry entry asks its user for, and the caller's answers.

use std::collections::BTreeMap;

use crate::registry::document::InputFormat;

/// One value a package or remote needs from the user: an argument, a variable, an
/// environment variable or a header without a fixed value.
///
/// A secret is never taken as a value: the configuration refers to it by the environment
/// variable named in [`RegistryInput::variable`], which the host sets (from its credential
/// store or the user's environment) when it starts or connects to the server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegistryInput {
    /// The name the answer is given under ([`InputValues::with`]): an environment
    /// variable's or header's name, a positional argument's `valueHint`, a named
    /// argument's flag without its leading dashes, or a variable's key.
    pub name: String,
    /// What to show when asking (the `description`, or the name when there is none).
    pub description: String,
    /// `isSecret`: hide it when asking; it is kept as a reference, never as text.
    pub secret: bool,
    /// No configuration can be made without it (it is required and has no default).
    pub required: bool,
    /// The `default` used when no answer is given.
    pub default: Option<String>,
    /// The `placeholder` to show as an example, if any.
    pub placeholder: Option<String>,
    /// The accepted values (`choices`); empty when any value is accepted.
    pub choices: Vec<String>,
    /// The `format` of the value.
    pub format: InputFormat,
    /// `isRepeated`: several answers may be given ([`InputValues::with_all`]).
    pub repeated: bool,
    /// For a secret: the environment variable the configuration reads it from.
    pub variable: Option<String>,
    /// Where it is declared (`packages[0].environmentVariables[1]`).
    pub field: String,
}

/// How an entry's environment value refers to a secret stored for its server:
/// `${secret:NAME}`, the whole value, `NAME` an environment variable's name (ASCII
/// letters, digits and `_`, not starting with a digit).
const SECRET_OPEN: &str = "${secret:";

impl RegistryInput {
    /// The value an entry's `env` holds in place of the secret of `variable`:
    /// `${secret:VARIABLE}`. The secret itself lives in the host's credential store, under
    /// a name bound to the server ([`RegistryInput::secret_lookup_name`]); the host
    /// resolves the reference when it starts the server.
    ///
    /// ```
    /// use mcp_catalog::RegistryInput;
    /// let value = RegistryInput::secret_reference("API_KEY");
    /// assert_eq!(value, "${secret:API_KEY}");
    /// assert_eq!(RegistryInput::referenced_secret(&value), Some(Ok("API_KEY")));
    /// assert_eq!(RegistryInput::referenced_secret("plain text"), None);
    /// assert!(RegistryInput::referenced_secret("${secret:not a name}").unwrap().is_err());
    /// assert_eq!(
    ///     RegistryInput::secret_lookup_name("weather", "API_KEY"),
    ///     "secret:weather/API_KEY"
    /// );
    /// ```
    pub fn secret_reference(variable: &str) -> String {
        format!("{SECRET_OPEN}{variable}}}")
    }

    /// The variable a value refers to, if it is a secret reference
    /// ([`RegistryInput::secret_reference`]): `None` for any other value; an error saying
    /// what is wrong for a value that starts like one but is not (`${secret:` without its
    /// `}` or with a name that is not an environment variable's).
    pub fn referenced_secret(value: &str) -> Option<Result<&str, String>> {
        let rest = value.strip_prefix(SECRET_OPEN)?;
        let Some(name) = rest.strip_suffix('}') else {
            return Some(Err(format!(
                "`{value}` starts like a secret reference but does not end with `}}`: write \
                 `${{secret:NAME}}` as the whole value"
            )));
        };
        let valid = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && name.chars().next().is_some_and(|c| !c.is_ascii_digit());
        Some(if valid {
            Ok(name)
        } else {
            Err(format!(
                "`{value}`: a secret reference names an environment variable (letters, digits \
                 and `_`, not starting with a digit)"
            ))
        })
    }

    /// The name a host's variable lookup is asked for the secret `variable` of `server`
    /// (`secret:SERVER/VARIABLE`): bound to the server, so two servers' secrets of the same
    /// variable never mix, and never an environment variable's name.
    pub fn secret_lookup_name(server: &str, variable: &str) -> String {
        format!("secret:{server}/{variable}")
    }
}

/// The caller's answers to a registry entry's [`RegistryInput`]s, by name.
///
/// ```
/// use mcp_catalog::InputValues;
/// let values = InputValues::new()
///     .with("database_name", "sales")
///     .with_all("target_dir", ["/src", "/docs"]);
/// assert_eq!(values.get("target_dir"), Some(&["/src".to_owned(), "/docs".to_owned()][..]));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputValues {
    values: BTreeMap<String, Vec<String>>,
}

impl InputValues {
    pub(crate) const EMPTY: InputValues = InputValues {
        values: BTreeMap::new(),
    };

    /// No answers: defaults only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `name` with `value` (replacing an earlier answer).
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.values.insert(name.into(), vec![value.into()]);
        self
    }

    /// Answers a repeated input `name` with each of `values`, in order.
    #[must_use]
    pub fn with_all<I, S>(mut self, name: impl Into<String>, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.values
            .insert(name.into(), values.into_iter().map(Into::into).collect());
        self
    }

    /// The answers given for `name`.
    pub fn get(&self, name: &str) -> Option<&[String]> {
        self.values.get(name).map(Vec::as_slice)
    }

    /// The names answered, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }
}

/// `X-API-Key` -> `X_API_KEY`: an environment variable name for a header or variable.
pub(crate) fn variable_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

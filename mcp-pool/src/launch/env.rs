//! The child's environment: a cleared environment plus an allow-list.

use std::collections::BTreeMap;
use std::ffi::OsString;

use super::spec::{ALLOWED_HOST_ENV, LaunchSpec};

/// Builds the child's complete environment: [`ALLOWED_HOST_ENV`] and the spec's named
/// variables from `host` (when set there), then the spec's literal variables on top.
pub(crate) fn child_env(
    spec: &LaunchSpec,
    host: impl Fn(&str) -> Option<OsString>,
) -> BTreeMap<OsString, OsString> {
    let mut env = BTreeMap::new();
    let inherited = ALLOWED_HOST_ENV
        .iter()
        .copied()
        .chain(spec.env_vars().iter().map(String::as_str));
    for name in inherited {
        if let Some(value) = host(name) {
            env.insert(OsString::from(name), value);
        }
    }
    for (name, value) in spec.env() {
        env.insert(OsString::from(name), OsString::from(value));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn only_allowed_named_and_literal_variables() {
        let host = |name: &str| match name {
            "PATH" => Some(OsString::from("/bin")),
            "HOME" => Some(OsString::from("/home/u")),
            "SECRET" => Some(OsString::from("leak")),
            "PROXY" => Some(OsString::from("http://p")),
            _ => None,
        };
        let spec = LaunchSpec::new("x")
            .with_env_var("PROXY")
            .with_env_var("MISSING")
            .with_env("HOME", "/override")
            .with_env("TOKEN", "t");
        let env = child_env(&spec, host);
        let got: Vec<(String, String)> = env
            .into_iter()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .collect();
        let want: Vec<(String, String)> = [
            ("HOME", "/override"),
            ("PATH", "/bin"),
            ("PROXY", "http://p"),
            ("TOKEN", "t"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        assert_eq!(got, want);
    }
}

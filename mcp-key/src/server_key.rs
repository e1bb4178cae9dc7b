//! [`McpServerKey`]: the exact identity of one configured server.

use std::fmt;
use std::str::FromStr;

use crate::environment::is_environment_byte;
use crate::error::{KeyError, KeyPart, check_name};
use crate::server_name::is_server_name_byte;
use crate::{EnvironmentId, MAX_NAME_LEN, ServerName};

/// The exact identity of one configured MCP server: a [`ServerName`] plus, for servers owned
/// by one environment, an [`EnvironmentId`].
///
/// Every map of servers is keyed by this type, never by a bare name: two keys with the same
/// name and different environments are two servers, and
/// `in_environment(EnvironmentId::LOCAL, n)` is a different server from `unscoped(n)`.
///
/// Text form (`Display`, `FromStr`, serde): `name` for unscoped keys, `name@environment` for
/// scoped ones. Keys sort by name, then unscoped before scoped, then by environment.
///
/// ```
/// use mcp_key::{EnvironmentId, McpServerKey, ServerName};
///
/// let key: McpServerKey = "github@devbox".parse()?;
/// assert_eq!(key.name().as_str(), "github");
/// assert_eq!(key.environment().map(EnvironmentId::as_str), Some("devbox"));
/// assert_eq!(key.to_string(), "github@devbox");
///
/// let host_wide = McpServerKey::unscoped(ServerName::new("github")?);
/// assert!(!host_wide.is_scoped());
/// assert!(host_wide < key);
/// # Ok::<(), mcp_key::KeyError>(())
/// ```
// Field order matters: the derived `Ord` compares the name first, then `None` (unscoped)
// before `Some` (scoped), then the environment.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct McpServerKey {
    name: ServerName,
    environment: Option<EnvironmentId>,
}

impl McpServerKey {
    /// A server registered for the whole host (the common case).
    pub fn unscoped(name: ServerName) -> Self {
        Self {
            name,
            environment: None,
        }
    }

    /// A server owned by one environment, such as a plugin installed inside a devbox.
    pub fn in_environment(env: EnvironmentId, name: ServerName) -> Self {
        Self {
            name,
            environment: Some(env),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &ServerName {
        &self.name
    }

    /// The owning environment, or `None` for an unscoped key.
    pub fn environment(&self) -> Option<&EnvironmentId> {
        self.environment.as_ref()
    }

    /// True when the key belongs to one environment.
    pub fn is_scoped(&self) -> bool {
        self.environment.is_some()
    }
}

impl fmt::Display for McpServerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name.as_str())?;
        if let Some(env) = &self.environment {
            write!(f, "@{env}")?;
        }
        Ok(())
    }
}

impl FromStr for McpServerKey {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, env) = match s.split_once('@') {
            Some((name, env)) => (name, Some(env)),
            None => (s, None),
        };
        let fail = |part, problem| KeyError::InvalidKey {
            value: s.to_owned(),
            part,
            problem,
        };
        check_name(name, MAX_NAME_LEN, is_server_name_byte)
            .map_err(|problem| fail(KeyPart::ServerName, problem))?;
        let name = ServerName::new(name)?;
        match env {
            None => Ok(Self::unscoped(name)),
            Some(env) => {
                check_name(env, MAX_NAME_LEN, is_environment_byte).map_err(|problem| {
                    fail(
                        KeyPart::Environment,
                        problem.shifted(name.as_str().len() + 1),
                    )
                })?;
                Ok(Self::in_environment(EnvironmentId::new(env)?, name))
            }
        }
    }
}

impl TryFrom<&str> for McpServerKey {
    type Error = KeyError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl TryFrom<String> for McpServerKey {
    type Error = KeyError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<ServerName> for McpServerKey {
    /// [`McpServerKey::unscoped`].
    fn from(name: ServerName) -> Self {
        Self::unscoped(name)
    }
}

impl serde::Serialize for McpServerKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for McpServerKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NameProblem;

    fn key(s: &str) -> McpServerKey {
        s.parse().unwrap()
    }

    #[test]
    fn text_form_round_trips() {
        for text in ["srv", "srv@local", "srv@eu-1.devbox"] {
            assert_eq!(key(text).to_string(), text);
        }
        let scoped = key("srv@devbox");
        assert_eq!(scoped.name().as_str(), "srv");
        assert_eq!(scoped.environment().unwrap().as_str(), "devbox");
        assert!(scoped.is_scoped());
        assert!(!key("srv").is_scoped());
        assert_eq!(key("srv").environment(), None);
    }

    #[test]
    fn local_scope_differs_from_unscoped() {
        let name = ServerName::new("srv").unwrap();
        assert_ne!(
            McpServerKey::in_environment(EnvironmentId::LOCAL, name.clone()),
            McpServerKey::unscoped(name.clone())
        );
        assert_eq!(
            McpServerKey::from(name.clone()),
            McpServerKey::unscoped(name)
        );
    }

    #[test]
    fn orders_by_name_then_unscoped_then_environment() {
        let mut keys = [key("b"), key("a@z"), key("a@b"), key("a"), key("B")];
        keys.sort();
        let texts: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(texts, ["B", "a", "a@b", "a@z", "b"]);
    }

    #[test]
    fn errors_point_into_the_whole_key_text() {
        let err = "srv@dev box".parse::<McpServerKey>().unwrap_err();
        assert!(err.is_invalid_key());
        assert_eq!(
            *err.problem(),
            NameProblem::BadChar {
                ch: ' ',
                position: 7
            }
        );
        let err = "srv@a@b".parse::<McpServerKey>().unwrap_err();
        assert_eq!(
            *err.problem(),
            NameProblem::BadChar {
                ch: '@',
                position: 5
            }
        );
        let err = "@env".parse::<McpServerKey>().unwrap_err();
        assert_eq!(*err.problem(), NameProblem::Empty);
        let err = "srv@".parse::<McpServerKey>().unwrap_err();
        assert!(matches!(
            err,
            KeyError::InvalidKey {
                part: KeyPart::Environment,
                ..
            }
        ));
        assert!("".parse::<McpServerKey>().is_err());
    }
}

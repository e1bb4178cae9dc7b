//! Credentials: where stored OAuth tokens live, how each server authenticates, and the
//! messages for OAuth failures. Used by `login`, `logout`, `auth-status` and by every
//! command that starts servers.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use mcp_auth::{
    AuthError, AuthStatus, CredentialStore, EnterpriseIdp, MemoryStore, OAuthCredentials,
    OAuthSettings,
};
use mcp_catalog::{AuthMode, EmaConfig, HttpConfig, ResolvedCatalog, ServerConfig, Transport};
use mcp_key::McpServerKey;

use crate::error::CliError;

/// Overrides the data directory (credential file and its locks).
pub(crate) const HOME_VAR: &str = "MCPCTL_HOME";

/// The client name sent in dynamic client registration.
pub(crate) const CLIENT_NAME: &str = "mcpctl";

/// What the data directory is, for messages and `--help`.
pub(crate) const DATA_DIR_RULE: &str =
    "$MCPCTL_HOME if set, else $XDG_DATA_HOME/mcpctl, else $HOME/.local/share/mcpctl";

/// The data directory: `$MCPCTL_HOME`, else `$XDG_DATA_HOME/mcpctl` (when absolute), else
/// `$HOME/.local/share/mcpctl`. Empty variables count as unset.
pub(crate) fn data_dir() -> Option<PathBuf> {
    data_dir_from(|name| std::env::var_os(name))
}

fn data_dir_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set(HOME_VAR) {
        return Some(dir);
    }
    if let Some(dir) = set("XDG_DATA_HOME").filter(|d| d.is_absolute()) {
        return Some(dir.join("mcpctl"));
    }
    set("HOME").map(|home| home.join(".local").join("share").join("mcpctl"))
}

/// The credential store of this configuration: the mode its `credentials_store` names
/// (`auto` by default) in the data directory; for the embedded demo, memory only (the demo
/// never touches the keyring or the user's files).
pub(crate) fn open_store(
    catalog: &ResolvedCatalog,
    demo: bool,
) -> Result<Arc<dyn CredentialStore>, CliError> {
    if demo {
        return Ok(Arc::new(MemoryStore::new()));
    }
    let mode = catalog.credentials_store();
    let dir = data_dir().ok_or_else(|| {
        CliError::usage("cannot find a directory for stored credentials: HOME is not set")
            .with_hint(format!(
                "set {HOME_VAR} to a directory for mcpctl's credentials ({DATA_DIR_RULE})"
            ))
    })?;
    Ok(mcp_auth::open_store(mode, &dir))
}

/// How one server authenticates (the first rule that matches wins).
#[derive(Debug, Clone, Copy)]
pub(crate) enum ServerAuth<'a> {
    /// Not streamable HTTP: no OAuth.
    NotHttp(&'a str),
    /// `bearer_token_env_var`.
    BearerEnv(&'a str),
    /// A configured `Authorization` header.
    Header,
    /// Enterprise-managed authorization (`auth = "ema"`).
    Ema,
    /// `auth = "none"`.
    NoAuth,
    /// Stored OAuth tokens.
    OAuth(&'a HttpConfig),
}

impl<'a> ServerAuth<'a> {
    /// Classifies a server's configuration.
    pub(crate) fn of(config: &'a ServerConfig) -> Self {
        let http = match config.transport() {
            Transport::StreamableHttp(http) | Transport::Sse(http) => http,
            other => return Self::NotHttp(other.kind_name()),
        };
        if let Some(var) = http.bearer_token_env_var() {
            return Self::BearerEnv(var);
        }
        if http
            .http_headers()
            .keys()
            .chain(http.env_http_headers().keys())
            .any(|h| h.eq_ignore_ascii_case("authorization"))
        {
            return Self::Header;
        }
        match http.auth() {
            AuthMode::Ema => Self::Ema,
            AuthMode::None => Self::NoAuth,
            _ => Self::OAuth(http),
        }
    }
}

/// The OAuth credentials of an HTTP server, with the settings of its configuration.
pub(crate) fn credentials(
    catalog: &ResolvedCatalog,
    key: &McpServerKey,
    http: &HttpConfig,
    store: Arc<dyn CredentialStore>,
) -> OAuthCredentials {
    OAuthCredentials::new(key.clone(), http.url(), settings(catalog, http), store)
}

/// The OAuth settings of an HTTP server's configuration, with the catalog's callback port
/// and mcpctl's client name.
pub(crate) fn settings(catalog: &ResolvedCatalog, http: &HttpConfig) -> OAuthSettings {
    OAuthSettings::from_config(http, catalog.oauth_callback_port(), CLIENT_NAME)
}

/// The identity provider the configuration's EMA servers name (one, or an error).
pub(crate) fn ema_config(catalog: &ResolvedCatalog) -> Result<EmaConfig, CliError> {
    let mut found: Vec<EmaConfig> = Vec::new();
    for (_, config) in catalog.exposed() {
        if let Transport::StreamableHttp(http) = config.transport()
            && http.auth() == AuthMode::Ema
            && let Some(ema) = http.ema()
            && !found.contains(ema)
        {
            found.push(ema.clone());
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(CliError::usage(
            "no MCP server uses enterprise-managed authorization (auth = \"ema\")",
        )
        .with_hint("add `auth = \"ema\"` and an `[mcp_servers.NAME.ema]` table with `issuer` and `client_id`")),
        _ => Err(CliError::usage(
            "the servers name more than one enterprise identity provider (issuer and client_id in their `ema` tables)",
        )
        .with_hint("use one identity provider for all servers with auth = \"ema\"")),
    }
}

/// The enterprise IdP of `ema`, its record in `store`.
pub(crate) fn idp(
    catalog: &ResolvedCatalog,
    ema: &EmaConfig,
    store: Arc<dyn CredentialStore>,
) -> Result<EnterpriseIdp, CliError> {
    EnterpriseIdp::from_config(ema, catalog.oauth_callback_port(), CLIENT_NAME, store)
        .map_err(|e| CliError::failure(format!("enterprise identity provider: {e}")))
}

/// A server's authentication status, from its configuration and the store (nothing is
/// contacted). An `auth = "ema"` server shows the state of the enterprise sign-in.
pub(crate) async fn status(
    catalog: &ResolvedCatalog,
    key: &McpServerKey,
    config: &ServerConfig,
    store: Option<&Arc<dyn CredentialStore>>,
) -> AuthStatus {
    match ServerAuth::of(config) {
        ServerAuth::NotHttp(_) | ServerAuth::NoAuth => AuthStatus::Unsupported,
        ServerAuth::BearerEnv(_) | ServerAuth::Header => AuthStatus::BearerToken,
        ServerAuth::Ema => match (store, ema_config(catalog)) {
            (Some(store), Ok(ema)) => match idp(catalog, &ema, Arc::clone(store)) {
                Ok(idp) => idp.status().await,
                Err(_) => AuthStatus::Unknown,
            },
            _ => AuthStatus::Unknown,
        },
        ServerAuth::OAuth(http) => match store {
            Some(store) => {
                credentials(catalog, key, http, Arc::clone(store))
                    .status()
                    .await
            }
            None => AuthStatus::Unknown,
        },
    }
}

/// What to do when a server answered 401 (`login_required` / `relogin_required`), by how
/// it authenticates; `None` when it uses no credentials mcpctl knows of.
pub(crate) fn login_hint(key: &McpServerKey, config: &ServerConfig) -> Option<String> {
    let table = format!("[mcp_servers.{}]", key.name());
    match ServerAuth::of(config) {
        ServerAuth::OAuth(_) => Some(format!("run `mcpctl login {key}`")),
        ServerAuth::BearerEnv(var) => Some(format!(
            "the server rejected the token in {var}; set a valid one (bearer_token_env_var of {table})"
        )),
        ServerAuth::Header => Some(format!(
            "the server rejected the Authorization header of {table}; update it"
        )),
        _ => None,
    }
}

/// Whether any enabled server of `catalog` may use stored OAuth tokens (its own, or the
/// enterprise sign-in of `auth = "ema"`).
pub(crate) fn any_oauth(catalog: &ResolvedCatalog) -> bool {
    catalog.exposed().any(|(_, config)| {
        config.enabled()
            && matches!(
                ServerAuth::of(config),
                ServerAuth::OAuth(_) | ServerAuth::Ema
            )
    })
}

/// The server named on the command line among the catalog's servers: its key
/// (`name@env`) or a name only one environment uses.
pub(crate) fn resolve(
    catalog: &ResolvedCatalog,
    given: &str,
    origin: &str,
) -> Result<McpServerKey, CliError> {
    let keys: Vec<&McpServerKey> = catalog.exposed_keys().collect();
    if let Some(key) = keys.iter().find(|k| k.to_string() == given) {
        return Ok((*key).clone());
    }
    if let Ok(parsed) = given.parse::<McpServerKey>()
        && parsed.environment().is_none()
    {
        let same_name: Vec<&&McpServerKey> =
            keys.iter().filter(|k| k.name() == parsed.name()).collect();
        match same_name.as_slice() {
            [one] => return Ok((**one).clone()),
            [] => {}
            several => {
                let names: Vec<String> = several.iter().map(ToString::to_string).collect();
                return Err(CliError::usage(format!(
                    "MCP server name `{given}` is used in several environments: {}",
                    names.join(", ")
                ))
                .with_hint("name the server as NAME@ENVIRONMENT"));
            }
        }
    }
    let known: Vec<String> = keys.iter().map(ToString::to_string).collect();
    let hint = if known.is_empty() {
        format!("no servers are configured in {origin}")
    } else {
        format!("configured servers: {}", known.join(", "))
    };
    Err(CliError::usage(format!("unknown MCP server `{given}`")).with_hint(hint))
}

/// The HTTP configuration of a server `mcpctl login` can log in to, or why it cannot.
pub(crate) fn login_target<'a>(
    key: &McpServerKey,
    config: &'a ServerConfig,
) -> Result<&'a HttpConfig, CliError> {
    let fix = format!("[mcp_servers.{}]", key.name());
    match ServerAuth::of(config) {
        ServerAuth::OAuth(http) => Ok(http),
        ServerAuth::NotHttp(kind) => Err(CliError::usage(format!(
            "MCP server `{key}` uses {kind}: `mcpctl login` is for streamable HTTP servers only"
        ))
        .with_hint(format!(
            "a {kind} server gets its credentials from its own environment (env / env_vars in {fix})"
        ))),
        ServerAuth::BearerEnv(var) => Err(CliError::usage(format!(
            "MCP server `{key}` uses the bearer token in ${var} (bearer_token_env_var): there is nothing to log in to"
        ))
        .with_hint(format!(
            "set {var}, or remove bearer_token_env_var from {fix} to log in with OAuth"
        ))),
        ServerAuth::Header => Err(CliError::usage(format!(
            "MCP server `{key}` sends a configured Authorization header: there is nothing to log in to"
        ))
        .with_hint(format!(
            "remove the Authorization header from {fix} to log in with OAuth"
        ))),
        ServerAuth::NoAuth => Err(CliError::usage(format!(
            "MCP server `{key}` is configured with auth = \"none\": there is nothing to log in to"
        ))
        .with_hint(format!("remove auth = \"none\" from {fix} to log in with OAuth"))),
        ServerAuth::Ema => Err(CliError::usage(format!(
            "MCP server `{key}` uses enterprise-managed authorization (auth = \"ema\"): its tokens come from the enterprise sign-in"
        ))
        .with_hint("sign in once with `mcpctl login --enterprise`")),
    }
}

/// An OAuth failure for a person: the error's own message (which never holds a token) and
/// what to do. `asked` says whether the server answered the probe with a 401.
pub(crate) fn login_error(e: &AuthError, key: &McpServerKey, asked: bool) -> CliError {
    let mut message = e.to_string();
    if let AuthError::Store { source, .. } = e {
        message.push_str(&format!(": {source}"));
        if let Some(cause) = std::error::Error::source(source.as_ref()) {
            message.push_str(&format!(": {cause}"));
        }
    }
    let again = format!("run `mcpctl login {key}` again");
    let hint = match e {
        AuthError::Timeout { .. } => {
            format!("{again} and finish in the browser in time (or pass a larger --timeout)")
        }
        AuthError::Discovery { .. }
        | AuthError::Registration { .. }
        | AuthError::ResourceMismatch { .. }
            if !asked =>
        {
            format!(
                "server `{key}` answered without asking for credentials (no HTTP 401), so it may need no login; `mcpctl status` shows whether it works without one"
            )
        }
        AuthError::Discovery { .. } | AuthError::ResourceMismatch { .. } => {
            format!("check the url of server `{key}`; its OAuth metadata could not be used")
        }
        AuthError::Registration { .. } => format!(
            "register mcpctl with the authorization server and set oauth = {{ client_id = \"...\" }} in [mcp_servers.{}]",
            key.name()
        ),
        AuthError::Callback {
            code: Some(code), ..
        } if code == "access_denied" => {
            format!("the login was denied in the browser; {again} to retry")
        }
        AuthError::Http { .. } => {
            format!(
                "check that server `{key}` and its authorization server are reachable, then {again}"
            )
        }
        AuthError::Store { .. } => format!(
            "check the credential store (credentials_store in the configuration; files live in {DATA_DIR_RULE})"
        ),
        _ => format!("{again}; add -v for debug logs"),
    };
    CliError::failure(message).with_hint(hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_data_dir_follows_mcpctl_home_then_xdg_then_home() {
        let all = [
            ("MCPCTL_HOME", "/m"),
            ("XDG_DATA_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(data_dir_from(vars(&all)), Some(PathBuf::from("/m")));
        assert_eq!(
            data_dir_from(vars(&[
                ("MCPCTL_HOME", ""),
                ("XDG_DATA_HOME", "/x"),
                ("HOME", "/h")
            ])),
            Some(PathBuf::from("/x/mcpctl"))
        );
        assert_eq!(
            data_dir_from(vars(&[("XDG_DATA_HOME", "relative"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.local/share/mcpctl"))
        );
        assert_eq!(data_dir_from(vars(&[])), None);
    }
}

//! [`WorkloadIdentityConfig`]: where a workload finds its platform identity token
//! (`[mcp_servers.<name>.workload_identity]`), and its parsing.

use crate::diagnostic::ConfigErrorKind;
use crate::toml_values::{Reader, Value};

/// Where the platform identity token of a workload is read (each time a token is needed,
/// so a rotated file is picked up).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkloadTokenLocation {
    /// A file (`token_file`).
    File(String),
    /// An environment variable of the host (`token_env_var`).
    EnvVar(String),
}

/// Workload identity federation settings: the server's authorization server redeems the
/// platform's identity token (JWT-bearer grant) instead of a login.
///
/// ```toml
/// [mcp_servers.ci.workload_identity]
/// token_file = "/var/run/secrets/tokens/mcp"   # or token_env_var = "MCP_WORKLOAD_TOKEN"
/// client_id = "ci-agent"                        # optional
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadIdentityConfig {
    pub(crate) token: WorkloadTokenLocation,
    pub(crate) client_id: Option<String>,
}

impl WorkloadIdentityConfig {
    /// The platform token is read from `token`.
    pub fn new(token: WorkloadTokenLocation) -> Self {
        Self {
            token,
            client_id: None,
        }
    }

    /// The client id sent with the grant.
    #[must_use]
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Where the platform token is read.
    pub fn token(&self) -> &WorkloadTokenLocation {
        &self.token
    }

    /// The client id, if configured.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }
}

const KEYS: &[&str] = &["token_file", "token_env_var", "client_id"];

/// Parses the `workload_identity` table: exactly one of `token_file` / `token_env_var`.
pub(crate) fn parse_workload_identity(
    r: &mut Reader<'_, '_>,
    value: &Value<'_>,
) -> Option<WorkloadIdentityConfig> {
    let table = r.table("workload_identity", value)?;
    for (key, _) in table {
        if !KEYS.contains(&key.get_ref().as_ref()) {
            r.unknown_key(key, KEYS);
        }
    }
    let at = value.span().start;
    let file = table
        .get("token_file")
        .and_then(|v| r.string("workload_identity.token_file", v));
    let var = table
        .get("token_env_var")
        .and_then(|v| r.string("workload_identity.token_env_var", v));
    let client_id = table
        .get("client_id")
        .and_then(|v| r.string("workload_identity.client_id", v));
    let token = match (file, var) {
        (Some(file), None) => WorkloadTokenLocation::File(file),
        (None, Some(var)) => WorkloadTokenLocation::EnvVar(var),
        (file, _) => {
            r.error(
                "workload_identity",
                at,
                ConfigErrorKind::InvalidValue,
                if file.is_some() {
                    "`token_file` and `token_env_var` exclude each other"
                } else {
                    "`workload_identity` needs `token_file` or `token_env_var`"
                },
                Some("name exactly one place to read the platform identity token from".to_owned()),
            );
            return None;
        }
    };
    let mut config = WorkloadIdentityConfig::new(token);
    config.client_id = client_id;
    Some(config)
}

//! [`WorkloadIdentityConfig`]: where a workload finds its platform identity token
//! (`[mcp_servers.<name>.workload_identity]`).

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

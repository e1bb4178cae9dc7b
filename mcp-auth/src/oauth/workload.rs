//! A workload identity (where a workload's platform token comes from, and what it
//! asks for), and the reading of that token: the part of workload identity federation that
//! settings hold. The grant that redeems it is in `wif.rs`.

use std::path::PathBuf;

use mcp_key::{McpServerKey, Secret};

use crate::error::AuthError;

/// Where the platform identity token is read from, each time a grant needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkloadTokenSource {
    /// A file the platform writes (and rotates), e.g. a projected service-account token.
    File(PathBuf),
    /// An environment variable.
    EnvVar(String),
    /// A token the host already holds (tests, hosts with their own platform client).
    Value(Secret),
}

/// Largest platform token read from a file.
const MAX_TOKEN_BYTES: u64 = 64 * 1024;

/// A workload identity: where its platform token comes from, and what to ask for.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WorkloadIdentity {
    /// The platform token's source.
    pub source: WorkloadTokenSource,
    /// Our client id at the authorization server, if it wants one.
    pub client_id: Option<String>,
    /// Scopes to request (none: omitted).
    pub scopes: Vec<String>,
}

impl WorkloadIdentity {
    /// A workload whose platform token is read from `source`.
    pub fn new(source: WorkloadTokenSource) -> Self {
        Self {
            source,
            client_id: None,
            scopes: Vec::new(),
        }
    }

    /// The client id sent with the grant.
    #[must_use]
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Scopes to request.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Reads the platform token now (a rotated file is read again every time).
    pub(crate) async fn read_token(&self, server: &McpServerKey) -> Result<Secret, AuthError> {
        let fail = |detail: String| AuthError::WorkloadToken {
            server: server.clone(),
            detail,
        };
        let raw = match &self.source {
            WorkloadTokenSource::Value(s) => s.expose().to_owned(),
            WorkloadTokenSource::EnvVar(var) => match std::env::var(var) {
                Ok(v) => v,
                Err(_) => return Err(fail(format!("variable `{var}` is unset or not UTF-8"))),
            },
            WorkloadTokenSource::File(path) => {
                let shown = path.display();
                let meta = tokio::fs::metadata(path)
                    .await
                    .map_err(|e| fail(format!("file `{shown}` cannot be read ({})", e.kind())))?;
                if !meta.is_file() {
                    return Err(fail(format!(
                        "`{shown}` is not a regular file; point token_file at the file the platform writes its token to"
                    )));
                }
                let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
                if let Some(store) = credential_store(path, home.as_deref()) {
                    return Err(fail(format!(
                        "file `{shown}` is inside {store}, which holds other credentials: refused (a project file must not send them to a token endpoint)"
                    )));
                }
                if meta.len() > MAX_TOKEN_BYTES {
                    return Err(fail(format!("file `{shown}` is larger than 64 KiB")));
                }
                let bytes = tokio::fs::read(path)
                    .await
                    .map_err(|e| fail(format!("file `{shown}` cannot be read ({})", e.kind())))?;
                String::from_utf8(bytes)
                    .map_err(|_| fail(format!("file `{shown}` is not UTF-8")))?
            }
        };
        let token = raw.trim();
        if token.is_empty() {
            return Err(fail(format!("from {} is empty", self.source_name())));
        }
        Ok(Secret::new(token.to_owned()))
    }

    fn source_name(&self) -> String {
        match &self.source {
            WorkloadTokenSource::File(p) => format!("file `{}`", p.display()),
            WorkloadTokenSource::EnvVar(v) => format!("variable `{v}`"),
            WorkloadTokenSource::Value(_) => "the host".to_owned(),
        }
    }
}

/// Folders (and files) under `$HOME` where other programs keep credentials.
const HOME_CREDENTIAL_STORES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".config/gcloud",
    ".password-store",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
];

/// The credential store `path` lies in (resolved through symlinks), if any: a folder of
/// [`HOME_CREDENTIAL_STORES`] under `home`, or `/etc/ssh` and `/etc/shadow`.
fn credential_store(path: &std::path::Path, home: Option<&std::path::Path>) -> Option<String> {
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(home) = home {
        let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
        for store in HOME_CREDENTIAL_STORES {
            if resolved.starts_with(home.join(store)) {
                return Some(format!("~/{store}"));
            }
        }
    }
    ["/etc/ssh", "/etc/shadow"]
        .iter()
        .find(|store| resolved.starts_with(store))
        .map(|store| (*store).to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;

    fn server() -> McpServerKey {
        "ci".parse().unwrap()
    }

    #[tokio::test]
    async fn a_rotated_file_is_read_again_and_problems_name_the_source_not_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "first-token\n").unwrap();
        let wif = WorkloadIdentity::new(WorkloadTokenSource::File(path.clone()));
        let c = server();
        assert_eq!(wif.read_token(&c).await.unwrap().expose(), "first-token");
        std::fs::write(&path, "second-token").unwrap();
        assert_eq!(wif.read_token(&c).await.unwrap().expose(), "second-token");
        std::fs::write(&path, "  \n").unwrap();
        let err = wif.read_token(&c).await.unwrap_err().to_string();
        assert!(err.contains("is empty") && err.contains("token"), "{err}");
        std::fs::remove_file(&path).unwrap();
        let err = wif.read_token(&c).await.unwrap_err().to_string();
        assert!(err.contains("cannot be read"), "{err}");
        let missing = WorkloadIdentity::new(WorkloadTokenSource::EnvVar(
            "MCP_AUTH_TEST_SURELY_UNSET_VAR".to_owned(),
        ));
        let err = missing.read_token(&c).await.unwrap_err().to_string();
        assert!(err.contains("MCP_AUTH_TEST_SURELY_UNSET_VAR"), "{err}");
    }

    #[tokio::test]
    async fn a_folder_is_not_a_token_file() {
        let dir = tempfile::tempdir().unwrap();
        let wif = WorkloadIdentity::new(WorkloadTokenSource::File(dir.path().to_path_buf()));
        let err = wif.read_token(&server()).await.unwrap_err().to_string();
        assert!(err.contains("is not a regular file"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn keys_and_other_credential_stores_are_no_token_files() {
        let home = tempfile::tempdir().unwrap();
        let ssh = home.path().join(".ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        let key = ssh.join("id_ed25519");
        std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----").unwrap();
        assert_eq!(
            credential_store(&key, Some(home.path())).as_deref(),
            Some("~/.ssh")
        );
        // Through a symlink that looks harmless, too.
        let innocent = home.path().join("token");
        std::os::unix::fs::symlink(&key, &innocent).unwrap();
        assert_eq!(
            credential_store(&innocent, Some(home.path())).as_deref(),
            Some("~/.ssh")
        );
        let platform = home.path().join("run/token");
        std::fs::create_dir_all(platform.parent().unwrap()).unwrap();
        std::fs::write(&platform, "jwt").unwrap();
        assert_eq!(credential_store(&platform, Some(home.path())), None);
        assert_eq!(
            credential_store(std::path::Path::new("/etc/ssh/ssh_host_ed25519_key"), None)
                .as_deref(),
            Some("/etc/ssh")
        );
    }
}

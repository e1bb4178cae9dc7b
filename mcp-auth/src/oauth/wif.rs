//! Workload identity federation: a workload (CI job, container, cloud VM) trades the
//! identity token its platform gives it for an access token with the JWT-bearer grant
//! (RFC 7523 section 2.1). No browser and no refresh token: when the access token expires
//! or is rejected, the grant runs again with the platform token read afresh (platforms
//! rotate the file).

use std::path::PathBuf;

use mcp_key::Secret;

use super::credentials::OAuthCredentials;
use super::discovery::{map_rmcp, new_manager};
use super::dpop::{self, DpopKey};
use super::grant::{ClientAuth, GrantOutcome, request_token};
use super::http::{self as oauth_http, now_unix};
use crate::error::AuthError;
use crate::store::StoredCredentials;

/// The JWT-bearer grant type (RFC 7523).
pub(crate) const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

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
    pub(crate) async fn read_token(&self, creds: &OAuthCredentials) -> Result<Secret, AuthError> {
        let fail = |detail: String| AuthError::WorkloadToken {
            server: creds.server().clone(),
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

/// The workload login of [`OAuthCredentials::login_workload_identity`].
pub(super) async fn workload_identity_login(
    creds: &OAuthCredentials,
    identity: &WorkloadIdentity,
) -> Result<(), AuthError> {
    let server = creds.server().clone();
    let manager = new_manager(&server, creds.url(), creds.settings()).await?;
    let metadata = manager
        .resolve_metadata()
        .await
        .map_err(|e| map_rmcp(&server, e))?
        .metadata;
    let assertion = identity.read_token(creds).await?;
    let resource = creds
        .settings()
        .resource
        .clone()
        .unwrap_or_else(|| creds.url().to_owned());
    let scopes = if identity.scopes.is_empty() {
        creds.settings().scopes.join(" ")
    } else {
        identity.scopes.join(" ")
    };
    let mut form: Vec<(&str, &str)> = vec![
        ("grant_type", JWT_BEARER_GRANT),
        ("assertion", assertion.expose()),
        ("resource", &resource),
    ];
    if !scopes.is_empty() {
        form.push(("scope", &scopes));
    }
    let dpop_key = if creds.settings().dpop && dpop::supported_by(&metadata) {
        Some(DpopKey::generate()?)
    } else {
        None
    };
    let http = oauth_http::client(&server)?;
    let token = match request_token(
        &server,
        &http,
        &metadata.token_endpoint,
        form,
        ClientAuth::None(identity.client_id.as_deref()),
        dpop_key.as_ref(),
    )
    .await?
    {
        GrantOutcome::Issued(token) => token,
        GrantOutcome::Refused(code) => {
            return Err(AuthError::TokenEndpoint { server, code });
        }
    };
    let mut record = StoredCredentials::new(identity.client_id.clone().unwrap_or_default())
        .with_access_token(Secret::new(token.access_token.clone()))
        .with_token_endpoint(metadata.token_endpoint.clone())
        .with_token_endpoint_auth_method(JWT_BEARER_GRANT)
        .with_resource(resource.clone())
        .with_scopes(
            token
                .scope
                .as_deref()
                .unwrap_or(&scopes)
                .split_whitespace()
                .map(str::to_owned),
        );
    if let Some(issuer) = &metadata.issuer {
        record = record.with_issuer(issuer.clone());
    }
    if let Some(expires_in) = token.expires_in {
        record = record.with_expires_at(now_unix().saturating_add(expires_in));
    }
    if let (Some(key), true) = (dpop_key, token.is_dpop()) {
        record = record.with_dpop_key(key);
    }
    tracing::debug!(server = %server, "workload identity token redeemed");
    creds.persist(&record).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use std::sync::Arc;

    use super::*;
    use crate::{MemoryStore, OAuthSettings};

    fn creds() -> OAuthCredentials {
        OAuthCredentials::new(
            "ci".parse().unwrap(),
            "http://127.0.0.1:1/mcp",
            OAuthSettings::new(),
            Arc::new(MemoryStore::new()),
        )
    }

    #[tokio::test]
    async fn a_rotated_file_is_read_again_and_problems_name_the_source_not_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "first-token\n").unwrap();
        let wif = WorkloadIdentity::new(WorkloadTokenSource::File(path.clone()));
        let c = creds();
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
        let err = wif.read_token(&creds()).await.unwrap_err().to_string();
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

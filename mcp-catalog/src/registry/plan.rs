//! What a registry entry becomes: the configuration (or the bundle to fetch), its inputs,
//! and where it came from.

use std::collections::BTreeMap;
use std::fmt;

use crate::diagnostic::{ConfigErrorKind, ConfigErrors};
use crate::model::server::ServerConfig;
use crate::model::transport::Transport;
use crate::registry::digest::FileSha256;
use crate::registry::document::PackageType;
use crate::registry::inputs::RegistryInput;
use crate::registry::reader::Spot;

/// One package or remote of a [`RegistryServer`](crate::RegistryServer) turned into what a
/// host writes: [`InstallPlan::launch`], the [`InstallPlan::inputs`] it asked for and the
/// [`InstallPlan::provenance`] to record beside the entry. Nothing has run.
#[derive(Clone, Debug)]
pub struct InstallPlan {
    pub(crate) launch: Launch,
    pub(crate) inputs: Vec<RegistryInput>,
    pub(crate) provenance: Provenance,
}

impl InstallPlan {
    /// The configuration, or the bundle still to download and check.
    pub fn launch(&self) -> &Launch {
        &self.launch
    }

    /// The configuration, when the target is not an `mcpb` bundle.
    pub fn server_config(&self) -> Option<&ServerConfig> {
        match &self.launch {
            Launch::Server(config) => Some(config),
            Launch::Bundle(_) => None,
        }
    }

    /// The bundle, when the target is an `mcpb` package.
    pub fn bundle(&self) -> Option<&McpbBundle> {
        match &self.launch {
            Launch::Bundle(bundle) => Some(bundle),
            Launch::Server(_) => None,
        }
    }

    /// Every input of the target, answered or not, in the order the command line uses them.
    pub fn inputs(&self) -> &[RegistryInput] {
        &self.inputs
    }

    /// Where the entry came from, pinned.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// This plan with the secrets of `variables` stored by the host: each moves from the
    /// entry's `env_vars` (read from the host's environment at start) to its `env` as a
    /// reference ([`RegistryInput::secret_reference`]) that the host resolves when it starts
    /// the server. A variable the entry does not read from the environment is left alone.
    ///
    /// ```
    /// # use mcp_catalog::{InputValues, InstallTarget, RegistryServer};
    /// let text = r#"{"name": "io.github.user/notes", "version": "1.0.2", "description": "Notes",
    ///     "packages": [{"registryType": "npm", "identifier": "notes-mcp", "version": "1.0.2",
    ///     "transport": {"type": "stdio"}, "environmentVariables": [
    ///         {"name": "NOTES_TOKEN", "isSecret": true, "isRequired": true}]}]}"#;
    /// let server = RegistryServer::from_json_str(text, "server.json")?;
    /// let plan = server.install_plan(InstallTarget::Package(0), &InputValues::new())?;
    /// let stdio = plan.server_config().and_then(|c| c.transport().as_stdio()).unwrap();
    /// assert_eq!(stdio.env_vars(), ["NOTES_TOKEN"]);
    /// let stored = plan.with_stored_secrets(&["NOTES_TOKEN"]);
    /// let stdio = stored.server_config().and_then(|c| c.transport().as_stdio()).unwrap();
    /// assert!(stdio.env_vars().is_empty());
    /// assert_eq!(stdio.env()["NOTES_TOKEN"], "${secret:NOTES_TOKEN}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_stored_secrets<S: AsRef<str>>(mut self, variables: &[S]) -> Self {
        if let Launch::Server(config) = &mut self.launch
            && let Transport::Stdio(stdio) = &mut config.transport
        {
            for variable in variables {
                let variable = variable.as_ref();
                if stdio.env_vars.iter().any(|v| v == variable) {
                    stdio.env_vars.retain(|v| v != variable);
                    stdio.env.insert(
                        variable.to_owned(),
                        RegistryInput::secret_reference(variable),
                    );
                }
            }
        }
        self
    }

    /// The program and arguments that will run (for a bundle, none yet: its manifest says).
    pub fn command_line(&self) -> Option<Vec<&str>> {
        let stdio = self.server_config()?.transport().as_stdio()?;
        Some(
            std::iter::once(stdio.command())
                .chain(stdio.args().iter().map(String::as_str))
                .collect(),
        )
    }
}

/// What a registry target becomes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Launch {
    /// A configuration ready to write: a stdio command (`npx`, `uvx`, `docker`, `dnx`) or a
    /// remote server.
    Server(Box<ServerConfig>),
    /// An MCP bundle: download it, check it ([`McpbBundle::verify`]) and unpack it; its
    /// manifest says how to start it.
    Bundle(Box<McpbBundle>),
}

/// An `mcpb` package: the download, its pinned SHA-256, and the arguments and environment
/// the registry entry adds to the bundle's own command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpbBundle {
    pub(crate) url: String,
    pub(crate) sha256: FileSha256,
    pub(crate) sha256_spot: Spot,
    pub(crate) version: Option<String>,
    pub(crate) args: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) env_vars: Vec<String>,
}

impl McpbBundle {
    /// The https:// URL to download the bundle from.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The SHA-256 its bytes must have (`fileSha256`).
    pub fn sha256(&self) -> &FileSha256 {
        &self.sha256
    }

    /// The package `version`, when the entry gives one.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// Arguments to add after the bundle's own (runtime, then package arguments).
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// Literal environment variables for the bundle's server.
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// Host environment variables (secrets) copied into the bundle's server.
    pub fn env_vars(&self) -> &[String] {
        &self.env_vars
    }

    /// Checks downloaded `bytes` against `fileSha256`. Call it before unpacking or running
    /// anything; on a mismatch the one error points at `fileSha256` in the `server.json`.
    pub fn verify(&self, bytes: &[u8]) -> Result<(), ConfigErrors> {
        let actual = FileSha256::of(bytes);
        if actual == self.sha256 {
            return Ok(());
        }
        Err(ConfigErrors::new(vec![self.sha256_spot.error(
            ConfigErrorKind::InvalidValue,
            format!(
                "the bundle downloaded from `{}` has SHA-256 {}, not the pinned {}",
                self.url,
                actual.to_hex(),
                self.sha256.to_hex()
            ),
            "do not run it: download it again, and if it still differs the file was changed \
             after publishing; ask its publisher",
        )]))
    }
}

/// Where a configured server came from: the registry entry's name and version, and the
/// package (with its exact version and digest) or remote URL. Two provenances compare
/// equal when the same pinned thing would run.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Provenance {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) source: ProvenanceSource,
}

/// The package or remote a [`Provenance`] names.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProvenanceSource {
    /// A package.
    Package {
        /// Its type.
        registry_type: PackageType,
        /// Its `identifier` (name, image, or download URL).
        identifier: String,
        /// The exact version, or the image tag.
        version: Option<String>,
        /// The image digest (`sha256:…`) or `fileSha256` (as `sha256:…`), when given.
        digest: Option<String>,
    },
    /// A remote server.
    Remote {
        /// Its URL after variable substitution.
        url: String,
    },
}

impl Provenance {
    /// The registry server name (`io.github.user/weather`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The registry entry's version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The package or remote.
    pub fn source(&self) -> &ProvenanceSource {
        &self.source
    }

    /// The pinned digest, when the entry gives one.
    pub fn digest(&self) -> Option<&str> {
        match &self.source {
            ProvenanceSource::Package { digest, .. } => digest.as_deref(),
            ProvenanceSource::Remote { .. } => None,
        }
    }
}

impl fmt::Display for Provenance {
    /// `io.github.user/weather@1.0.2 (npm @scope/weather@1.0.2)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{} (", self.name, self.version)?;
        match &self.source {
            ProvenanceSource::Package {
                registry_type,
                identifier,
                version,
                digest,
            } => {
                write!(f, "{registry_type} {identifier}")?;
                if let Some(version) = version {
                    let separator = match registry_type {
                        PackageType::Pypi => "==",
                        PackageType::Oci => ":",
                        _ => "@",
                    };
                    write!(f, "{separator}{version}")?;
                }
                if let Some(digest) = digest {
                    write!(f, " {digest}")?;
                }
            }
            ProvenanceSource::Remote { url } => write!(f, "remote {url}")?,
        }
        f.write_str(")")
    }
}

//! A [`Provenance`] written beside a configuration entry and read back, and what changed
//! between two of them.

use serde_json::{Map, Value, json};

use crate::model::server::ServerConfig;
use crate::model::transport::Transport;
use crate::registry::document::PackageType;
use crate::registry::mcpb::folder_holds;
use crate::registry::plan::{Provenance, ProvenanceSource};
use crate::registry::version::ImageRef;

impl Provenance {
    /// The provenance as one JSON object, for a host to record beside the entry it wrote:
    /// `{"name", "version", "registryType", "identifier", "packageVersion"?, "digest"?}`
    /// for a package, `{"name", "version", "remoteUrl"}` for a remote.
    ///
    /// ```
    /// # use mcp_catalog::{InputValues, InstallTarget, Provenance, RegistryServer};
    /// let text = r#"{"name": "io.github.user/notes", "version": "1.0.2", "description": "Notes",
    ///     "packages": [{"registryType": "npm", "identifier": "notes-mcp", "version": "1.0.2",
    ///     "transport": {"type": "stdio"}}]}"#;
    /// let server = RegistryServer::from_json_str(text, "server.json")?;
    /// let plan = server.install_plan(InstallTarget::Package(0), &InputValues::new())?;
    /// let recorded = plan.provenance().to_json();
    /// assert_eq!(recorded["packageVersion"], "1.0.2");
    /// assert_eq!(Provenance::from_json(&recorded).as_ref(), Some(plan.provenance()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_json(&self) -> Value {
        let mut out = json!({ "name": self.name, "version": self.version });
        match &self.source {
            ProvenanceSource::Package {
                registry_type,
                identifier,
                version,
                digest,
            } => {
                out["registryType"] = json!(registry_type.as_str());
                out["identifier"] = json!(identifier);
                if let Some(version) = version {
                    out["packageVersion"] = json!(version);
                }
                if let Some(digest) = digest {
                    out["digest"] = json!(digest);
                }
            }
            ProvenanceSource::Remote { url } => out["remoteUrl"] = json!(url),
        }
        out
    }

    /// Reads what [`Provenance::to_json`] wrote; `None` when `value` is not such an object.
    pub fn from_json(value: &Value) -> Option<Self> {
        let object: &Map<String, Value> = value.as_object()?;
        let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
        let source = match text("remoteUrl") {
            Some(url) => ProvenanceSource::Remote { url },
            None => ProvenanceSource::Package {
                registry_type: package_type(&text("registryType")?)?,
                identifier: text("identifier")?,
                version: text("packageVersion"),
                digest: text("digest"),
            },
        };
        Some(Self {
            name: text("name")?,
            version: text("version")?,
            source,
        })
    }

    /// What differs from `self` in `newer`, one line each (`version: 1.0.1 -> 1.0.2`,
    /// `package version: …`, `digest: …`, `package: …`, `remote: …`, `server: …`); empty
    /// when the same pinned thing would run.
    pub fn changes_to(&self, newer: &Provenance) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |what: &str, old: Option<&str>, new: Option<&str>| {
            if old != new {
                let show = |v: Option<&str>| v.unwrap_or("(none)").to_owned();
                out.push(format!("{what}: {} -> {}", show(old), show(new)));
            }
        };
        differ("server", Some(&self.name), Some(&newer.name));
        differ("version", Some(&self.version), Some(&newer.version));
        match (&self.source, &newer.source) {
            (
                ProvenanceSource::Package {
                    registry_type: old_type,
                    identifier: old_id,
                    version: old_version,
                    digest: old_digest,
                },
                ProvenanceSource::Package {
                    registry_type: new_type,
                    identifier: new_id,
                    version: new_version,
                    digest: new_digest,
                },
            ) => {
                let package = |t: &PackageType, id: &str| format!("{t} {id}");
                differ(
                    "package",
                    Some(&package(old_type, old_id)),
                    Some(&package(new_type, new_id)),
                );
                differ(
                    "package version",
                    old_version.as_deref(),
                    new_version.as_deref(),
                );
                differ("digest", old_digest.as_deref(), new_digest.as_deref());
            }
            (ProvenanceSource::Remote { url: old }, ProvenanceSource::Remote { url: new }) => {
                differ("remote", Some(old), Some(new));
            }
            _ => {
                let old = self.to_string();
                let new = newer.to_string();
                differ("source", Some(&old), Some(&new));
            }
        }
        out
    }
}

/// What a configuration entry runs now, against the [`Provenance`] recorded when it was
/// written ([`Provenance::check_entry`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryCheck {
    /// The entry still runs the recorded package version or connects to the recorded URL.
    Same,
    /// The entry runs the recorded package at another version (or image tag or digest).
    VersionChanged {
        /// The version recorded (`1.0.2`, an image's `tag@digest`).
        recorded: String,
        /// The version the entry runs now.
        now: String,
    },
    /// The entry no longer runs the recorded package or remote at all: what it was.
    Replaced {
        /// The recorded package or remote, as [`Provenance`] shows it.
        recorded: String,
    },
}

impl Provenance {
    /// What stays the same when only the version changes: the registry name and the
    /// package's type and identifier (`io.github.user/notes (npm notes-mcp)`), or the
    /// remote's URL.
    pub fn identity(&self) -> String {
        match &self.source {
            ProvenanceSource::Package {
                registry_type,
                identifier,
                ..
            } => format!("{} ({registry_type} {identifier})", self.name),
            ProvenanceSource::Remote { url } => format!("{} ({url})", self.name),
        }
    }

    /// The pinned version as [`Provenance::check_entry`] compares it: the package version
    /// (`1.0.2`), an image's `tag@digest`, a bundle's digest, a remote's entry version.
    pub fn pinned_version(&self) -> String {
        match &self.source {
            ProvenanceSource::Package {
                registry_type: PackageType::Oci,
                version,
                digest,
                ..
            } => {
                let mut out = version.clone().unwrap_or_default();
                if let Some(digest) = digest {
                    out.push('@');
                    out.push_str(digest);
                }
                out
            }
            ProvenanceSource::Package {
                registry_type: PackageType::Mcpb,
                version,
                digest,
                ..
            } => digest
                .clone()
                .or_else(|| version.clone())
                .unwrap_or_default(),
            ProvenanceSource::Package { version, .. } => version.clone().unwrap_or_default(),
            ProvenanceSource::Remote { .. } => self.version.clone(),
        }
    }
}

impl Provenance {
    /// Whether `config` (the entry as it is now, perhaps edited by hand) still runs what
    /// was recorded: the package's pinned argument (`pkg@1.0.2`, `pkg==1.0.2`, an image
    /// `repo:tag@digest`) among its stdio arguments, a bundle's folder
    /// ([`mcpb_folder_name`](crate::mcpb_folder_name)) as its `cwd`, or the remote's URL.
    ///
    /// ```
    /// # use mcp_catalog::{EntryCheck, InputValues, InstallTarget, RegistryServer, ServerConfig};
    /// let text = r#"{"name": "io.github.user/notes", "version": "1.0.2", "description": "Notes",
    ///     "packages": [{"registryType": "npm", "identifier": "notes-mcp", "version": "1.0.2",
    ///     "transport": {"type": "stdio"}}]}"#;
    /// let server = RegistryServer::from_json_str(text, "server.json")?;
    /// let plan = server.install_plan(InstallTarget::Package(0), &InputValues::new())?;
    /// let edited = ServerConfig::stdio("npx").with_args(["-y", "notes-mcp@1.1.0"]);
    /// assert_eq!(
    ///     plan.provenance().check_entry(&edited),
    ///     EntryCheck::VersionChanged { recorded: "1.0.2".into(), now: "1.1.0".into() }
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_entry(&self, config: &ServerConfig) -> EntryCheck {
        let replaced = || EntryCheck::Replaced {
            recorded: self.to_string(),
        };
        let compare = |recorded: String, now: String| {
            if recorded == now {
                EntryCheck::Same
            } else {
                EntryCheck::VersionChanged { recorded, now }
            }
        };
        match (&self.source, config.transport()) {
            (ProvenanceSource::Remote { url }, Transport::StreamableHttp(http))
            | (ProvenanceSource::Remote { url }, Transport::Sse(http)) => {
                if http.url() == url {
                    EntryCheck::Same
                } else {
                    replaced()
                }
            }
            (
                ProvenanceSource::Package {
                    registry_type,
                    identifier,
                    ..
                },
                Transport::Stdio(stdio),
            ) => {
                let args = stdio.args();
                let versioned = |separator: &str| {
                    let prefix = format!("{identifier}{separator}");
                    args.iter()
                        .find_map(|arg| arg.strip_prefix(&prefix).map(str::to_owned))
                };
                match registry_type {
                    PackageType::Npm | PackageType::Nuget => match versioned("@") {
                        Some(now) => compare(self.pinned_version(), now),
                        None => replaced(),
                    },
                    PackageType::Pypi => match versioned("==") {
                        Some(now) => compare(self.pinned_version(), now),
                        None => replaced(),
                    },
                    PackageType::Oci => {
                        let repository = ImageRef::parse(identifier).repository;
                        match args
                            .iter()
                            .map(|arg| ImageRef::parse(arg))
                            .find(|r| r.repository == repository)
                        {
                            Some(now) => {
                                let mut image = now.tag.unwrap_or_default().to_owned();
                                if let Some(digest) = now.digest {
                                    image.push('@');
                                    image.push_str(digest);
                                }
                                compare(self.pinned_version(), image)
                            }
                            None => replaced(),
                        }
                    }
                    PackageType::Mcpb => {
                        // Unpacked by the host into a folder named for its digest.
                        let unpacked = self.digest().is_some_and(|digest| {
                            stdio
                                .cwd()
                                .and_then(std::path::Path::file_name)
                                .and_then(std::ffi::OsStr::to_str)
                                .is_some_and(|name| folder_holds(name, digest))
                        });
                        if unpacked || args.iter().any(|arg| arg == identifier) {
                            EntryCheck::Same
                        } else {
                            replaced()
                        }
                    }
                }
            }
            _ => replaced(),
        }
    }
}

/// The package type written as `text`.
fn package_type(text: &str) -> Option<PackageType> {
    [
        PackageType::Npm,
        PackageType::Pypi,
        PackageType::Oci,
        PackageType::Nuget,
        PackageType::Mcpb,
    ]
    .into_iter()
    .find(|t| t.as_str() == text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn npm(version: &str, digest: Option<&str>) -> Provenance {
        Provenance {
            name: "io.github.user/notes".to_owned(),
            version: version.to_owned(),
            source: ProvenanceSource::Package {
                registry_type: PackageType::Npm,
                identifier: "notes-mcp".to_owned(),
                version: Some(version.to_owned()),
                digest: digest.map(str::to_owned),
            },
        }
    }

    #[test]
    fn an_entry_is_checked_against_what_was_recorded() {
        let stdio = |args: &[&str]| ServerConfig::stdio("x").with_args(args.to_vec());
        let recorded = npm("1.0.2", None);
        assert_eq!(
            recorded.check_entry(&stdio(&["-y", "notes-mcp@1.0.2"])),
            EntryCheck::Same
        );
        assert_eq!(recorded.pinned_version(), "1.0.2");
        // The identity is the same at another version: what a pin is kept under.
        assert_eq!(recorded.identity(), npm("2.0.0", None).identity());
        assert_eq!(recorded.identity(), "io.github.user/notes (npm notes-mcp)");
        assert_eq!(
            recorded.check_entry(&stdio(&["-y", "notes-mcp@2.0.0"])),
            EntryCheck::VersionChanged {
                recorded: "1.0.2".to_owned(),
                now: "2.0.0".to_owned()
            }
        );
        // Another package whose name starts the same is not this one.
        assert!(matches!(
            recorded.check_entry(&stdio(&["-y", "notes-mcp-extra@1.0.2"])),
            EntryCheck::Replaced { recorded } if recorded.contains("notes-mcp@1.0.2")
        ));
        assert!(matches!(
            recorded.check_entry(&ServerConfig::http("https://x.example/mcp")),
            EntryCheck::Replaced { .. }
        ));

        let pypi = Provenance {
            source: ProvenanceSource::Package {
                registry_type: PackageType::Pypi,
                identifier: "weather".to_owned(),
                version: Some("0.5.0".to_owned()),
                digest: None,
            },
            ..npm("0.5.0", None)
        };
        assert_eq!(
            pypi.check_entry(&stdio(&["weather==0.5.0"])),
            EntryCheck::Same
        );
        assert!(matches!(
            pypi.check_entry(&stdio(&["weather==0.6.0"])),
            EntryCheck::VersionChanged { now, .. } if now == "0.6.0"
        ));

        let digest = format!("sha256:{}", "a".repeat(64));
        let oci = Provenance {
            source: ProvenanceSource::Package {
                registry_type: PackageType::Oci,
                identifier: "ghcr.io/user/notes".to_owned(),
                version: Some("1.0.2".to_owned()),
                digest: Some(digest.clone()),
            },
            ..npm("1.0.2", None)
        };
        let pinned = format!("ghcr.io/user/notes:1.0.2@{digest}");
        assert_eq!(
            oci.check_entry(&stdio(&["run", "-i", "--rm", &pinned])),
            EntryCheck::Same
        );
        assert_eq!(oci.pinned_version(), format!("1.0.2@{digest}"));
        assert_eq!(
            oci.identity(),
            "io.github.user/notes (oci ghcr.io/user/notes)"
        );
        assert_eq!(
            oci.check_entry(&stdio(&["run", "-i", "--rm", "ghcr.io/user/notes:1.0.3"])),
            EntryCheck::VersionChanged {
                recorded: format!("1.0.2@{digest}"),
                now: "1.0.3".to_owned()
            }
        );

        let remote = Provenance {
            source: ProvenanceSource::Remote {
                url: "https://x.example/mcp".to_owned(),
            },
            ..npm("1.0.2", None)
        };
        assert_eq!(
            remote.check_entry(&ServerConfig::http("https://x.example/mcp")),
            EntryCheck::Same
        );
        assert!(matches!(
            remote.check_entry(&ServerConfig::http("https://y.example/mcp")),
            EntryCheck::Replaced { .. }
        ));
    }

    #[test]
    fn recorded_and_read_back_and_compared() {
        let old = npm("1.0.1", None);
        let new = npm("1.0.2", Some("sha256:ab"));
        assert_eq!(Provenance::from_json(&new.to_json()), Some(new.clone()));
        assert_eq!(
            old.changes_to(&new),
            [
                "version: 1.0.1 -> 1.0.2",
                "package version: 1.0.1 -> 1.0.2",
                "digest: (none) -> sha256:ab"
            ]
        );
        assert!(new.changes_to(&new).is_empty());
        let remote = Provenance {
            source: ProvenanceSource::Remote {
                url: "https://x.example/mcp".to_owned(),
            },
            ..npm("1.0.2", None)
        };
        assert_eq!(Provenance::from_json(&remote.to_json()), Some(remote));
        assert_eq!(Provenance::from_json(&json!({"name": "x"})), None);
    }
}

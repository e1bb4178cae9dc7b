//! A [`Provenance`] written beside a configuration entry and read back, and what changed
//! between two of them.

use serde_json::{Map, Value, json};

use crate::registry::document::PackageType;
use crate::registry::plan::{Provenance, ProvenanceSource};

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

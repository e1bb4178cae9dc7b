//! The record file beside a configuration file ([`Provenance::RECORD_FILE`]): where each
//! entry `mcpctl add` wrote came from, as [`Provenance::to_json`] writes it, under
//! `servers.NAME` (with the registry's base URL as `registry`). The one place that reads and
//! writes it: the host that adds entries and the connection set that holds a pin when an
//! entry no longer runs what was recorded both come here. The only I/O of this module's
//! folder.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::registry::plan::Provenance;

impl Provenance {
    /// The name of the record file, in the folder of the configuration file it describes.
    pub const RECORD_FILE: &'static str = "mcp.registry.json";

    /// The record file beside `config_file`.
    pub fn record_path(config_file: &Path) -> PathBuf {
        config_file
            .parent()
            .unwrap_or(Path::new("."))
            .join(Self::RECORD_FILE)
    }

    /// The provenance recorded for server `name` beside `config_file`; `None` when there
    /// is no record file, it is not JSON, or it records nothing (usable) for `name`.
    pub fn recorded(config_file: &Path, name: &str) -> Option<Self> {
        let text = std::fs::read_to_string(Self::record_path(config_file)).ok()?;
        let record: Value = serde_json::from_str(&text).ok()?;
        Self::from_json(record.get("servers")?.get(name)?)
    }

    /// Records this provenance (and `registry`, the base URL it came from) for server
    /// `name` beside `config_file`, keeping the other servers' records; a record file that
    /// is not a JSON object is started over.
    ///
    /// ```
    /// # use mcp_catalog::{InputValues, InstallTarget, Provenance, RegistryServer};
    /// let text = r#"{"name": "io.github.user/notes", "version": "1.0.2", "description": "Notes",
    ///     "packages": [{"registryType": "npm", "identifier": "notes-mcp", "version": "1.0.2",
    ///     "transport": {"type": "stdio"}}]}"#;
    /// let server = RegistryServer::from_json_str(text, "server.json")?;
    /// let plan = server.install_plan(InstallTarget::Package(0), &InputValues::new())?;
    /// let dir = std::env::temp_dir().join(format!("record-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let config = dir.join("mcp.toml");
    /// plan.provenance().record(&config, "notes", "https://registry.example")?;
    /// assert_eq!(Provenance::recorded(&config, "notes").as_ref(), Some(plan.provenance()));
    /// assert_eq!(Provenance::recorded(&config, "other"), None);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn record(&self, config_file: &Path, name: &str, registry: &str) -> io::Result<()> {
        let path = Self::record_path(config_file);
        let mut record: Value = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        let mut entry = self.to_json();
        entry["registry"] = json!(registry);
        if !record.get("servers").is_some_and(Value::is_object) {
            record["servers"] = json!({});
        }
        record["servers"][name] = entry;
        let mut text = serde_json::to_string_pretty(&record).map_err(io::Error::other)?;
        text.push('\n');
        std::fs::write(path, text)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::registry::plan::ProvenanceSource;

    fn remote(url: &str) -> Provenance {
        Provenance {
            name: "io.github.user/notes".to_owned(),
            version: "1.0.0".to_owned(),
            source: ProvenanceSource::Remote {
                url: url.to_owned(),
            },
        }
    }

    #[test]
    fn other_servers_are_kept_and_a_file_that_is_no_object_is_started_over() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("mcp.toml");
        assert_eq!(Provenance::recorded(&config, "a"), None);
        std::fs::write(Provenance::record_path(&config), "[1, 2]").unwrap();
        remote("https://a.example")
            .record(&config, "a", "r")
            .unwrap();
        remote("https://b.example")
            .record(&config, "b", "r")
            .unwrap();
        assert_eq!(
            Provenance::recorded(&config, "a"),
            Some(remote("https://a.example"))
        );
        assert_eq!(
            Provenance::recorded(&config, "b"),
            Some(remote("https://b.example"))
        );
        let text = std::fs::read_to_string(dir.path().join(Provenance::RECORD_FILE)).unwrap();
        assert!(text.contains("\"registry\": \"r\""), "{text}");
    }
}

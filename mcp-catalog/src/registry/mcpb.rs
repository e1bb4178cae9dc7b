//! An MCP bundle's (`mcpb`) `manifest.json` read and checked, and turned with the registry
//! entry's [`McpbBundle`] into the [`ServerConfig`] that starts the unpacked server. No I/O:
//! the host unzips the bundle (each entry name checked with [`mcpb_entry_path`]), reads the
//! manifest, and gives the folder it unpacked into.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::model::server::ServerConfig;
use crate::model::transport::{StdioConfig, Transport};
use crate::registry::digest::FileSha256;
use crate::registry::plan::McpbBundle;

/// The largest `manifest.json` read, in bytes.
pub const MCPB_MANIFEST_MAX_BYTES: u64 = 1024 * 1024;

/// Why a bundle's manifest or one of its entries is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpbError {
    /// `manifest.json` is not JSON.
    #[error(
        "the bundle's manifest.json is not JSON ({0}); the bundle is broken: ask its publisher"
    )]
    Syntax(String),
    /// A required field is missing or has the wrong type.
    #[error("the bundle's manifest.json has no valid `{field}` ({what}); ask its publisher")]
    Field {
        /// The field, as a dotted path (`server.mcp_config.command`).
        field: String,
        /// What it must be.
        what: &'static str,
    },
    /// `server.type` is not `node`, `python`, `binary` or `uv`.
    #[error(
        "the bundle's server.type is `{0}`; mcpctl runs `node`, `python`, `uv` and `binary` \
         bundles only"
    )]
    ServerType(String),
    /// A `${...}` variable that cannot be given without asking.
    #[error(
        "the bundle's `{field}` uses `${{{variable}}}`, which mcpctl cannot fill in; a \
         `user_config` value needs a default, and only `__dirname`, `user_config.*`, `/` and \
         `pathSeparator` are substituted"
    )]
    Variable {
        /// Where it is used.
        field: String,
        /// The variable's name.
        variable: String,
    },
    /// An archive entry whose name would land outside the bundle's folder, or means
    /// something else on another system (a drive, a stream, a NUL). The name is shown
    /// escaped.
    #[error(
        "the bundle's entry `{}` is not a plain relative path inside the bundle (absolute, \
         `..`, a drive or `:`, a backslash, a NUL, or empty); refusing the whole bundle",
        .0.escape_debug()
    )]
    EntryPath(String),
}

/// What runs the bundle's server (`server.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpbServerType {
    /// Node.js.
    Node,
    /// Python.
    Python,
    /// Python through `uv`.
    Uv,
    /// A program in the bundle.
    Binary,
}

/// A bundle's `manifest.json`: its name and version, the server's type and entry point,
/// and the command (`server.mcp_config`) that starts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpbManifest {
    name: String,
    version: String,
    server_type: McpbServerType,
    entry_point: String,
    command: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    /// `user_config` keys to their default, as text.
    defaults: BTreeMap<String, String>,
}

impl McpbManifest {
    /// Reads and checks `manifest.json`: `name`, `version`, `server.type`,
    /// `server.entry_point` (a relative path inside the bundle) and
    /// `server.mcp_config.command` are required; `args` must be strings and `env` string
    /// values. The overrides for this platform (`platform_overrides.linux`, `.darwin` or
    /// `.win32`) replace the command and arguments they give and add their environment.
    ///
    /// ```
    /// # use mcp_catalog::McpbManifest;
    /// let manifest = McpbManifest::from_json_str(r#"{"manifest_version": "0.2",
    ///     "name": "notes", "version": "1.0.0",
    ///     "server": {"type": "node", "entry_point": "server/index.js",
    ///         "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"]}}}"#)?;
    /// assert_eq!(manifest.entry_point(), "server/index.js");
    /// assert!(McpbManifest::from_json_str(r#"{"name": "x"}"#).is_err());
    /// # Ok::<(), mcp_catalog::McpbError>(())
    /// ```
    pub fn from_json_str(text: &str) -> Result<Self, McpbError> {
        Self::parse(text, PLATFORM)
    }

    /// [`McpbManifest::from_json_str`] with `platform`'s overrides.
    fn parse(text: &str, platform: &str) -> Result<Self, McpbError> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| McpbError::Syntax(e.to_string()))?;
        let string = |value: Option<&Value>, field: &str| {
            value
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| McpbError::Field {
                    field: field.to_owned(),
                    what: "a non-empty string",
                })
        };
        let name = string(root.get("name"), "name")?;
        let version = string(root.get("version"), "version")?;
        let server = root.get("server");
        let kind = string(server.and_then(|s| s.get("type")), "server.type")?;
        let server_type = match kind.as_str() {
            "node" => McpbServerType::Node,
            "python" => McpbServerType::Python,
            "uv" => McpbServerType::Uv,
            "binary" => McpbServerType::Binary,
            _ => return Err(McpbError::ServerType(kind)),
        };
        let entry_point = string(
            server.and_then(|s| s.get("entry_point")),
            "server.entry_point",
        )?;
        mcpb_entry_path(&entry_point)?;
        let config = server.and_then(|s| s.get("mcp_config"));
        let command = string(
            config.and_then(|c| c.get("command")),
            "server.mcp_config.command",
        )?;
        let mut args = strings(config.and_then(|c| c.get("args")), "server.mcp_config.args")?;
        let mut env = strings_map(config.and_then(|c| c.get("env")), "server.mcp_config.env")?;
        let mut command = command;
        // `platform_overrides.PLATFORM` replaces the command and arguments it gives and
        // adds its environment over the rest.
        if let Some(over) = config
            .and_then(|c| c.get("platform_overrides"))
            .and_then(|o| o.get(platform))
        {
            let field = format!("server.mcp_config.platform_overrides.{platform}");
            if let Some(value) = over.get("command") {
                command = string(Some(value), &format!("{field}.command"))?;
            }
            if let Some(value) = over.get("args") {
                args = strings(Some(value), &format!("{field}.args"))?;
            }
            env.extend(strings_map(over.get("env"), &format!("{field}.env"))?);
        }
        let mut defaults = BTreeMap::new();
        if let Some(Value::Object(fields)) = root.get("user_config") {
            for (key, field) in fields {
                let text = match field.get("default") {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(v @ (Value::Number(_) | Value::Bool(_))) => Some(v.to_string()),
                    _ => None,
                };
                if let Some(text) = text {
                    defaults.insert(key.clone(), text);
                }
            }
        }
        Ok(Self {
            name,
            version,
            server_type,
            entry_point,
            command,
            args,
            env,
            defaults,
        })
    }

    /// The bundle's `name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The bundle's `version`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// `server.type`.
    pub fn server_type(&self) -> McpbServerType {
        self.server_type
    }

    /// `server.entry_point`, relative to the bundle's folder.
    pub fn entry_point(&self) -> &str {
        &self.entry_point
    }

    /// The configuration that starts the bundle unpacked in `dir`: the manifest's
    /// `mcp_config` command with `${__dirname}` replaced by `dir`, `${user_config.KEY}` by
    /// the field's default and `${/}`/`${pathSeparator}` by `/`, run in `dir`; then the
    /// registry entry's arguments after the manifest's, and its environment over the
    /// manifest's. A variable it cannot fill in is an error naming it.
    ///
    /// ```
    /// # use mcp_catalog::{InputValues, InstallTarget, McpbManifest, RegistryServer};
    /// # use std::path::Path;
    /// let text = r#"{"name": "io.github.user/notes", "version": "1.0.2", "description": "Notes",
    ///     "packages": [{"registryType": "mcpb", "version": "1.0.2",
    ///     "identifier": "https://example.com/notes.mcpb", "transport": {"type": "stdio"},
    ///     "fileSha256": "fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce",
    ///     "packageArguments": [{"type": "named", "name": "--verbose"}]}]}"#;
    /// let server = RegistryServer::from_json_str(text, "server.json")?;
    /// let plan = server.install_plan(InstallTarget::Package(0), &InputValues::new())?;
    /// let manifest = McpbManifest::from_json_str(r#"{"name": "notes", "version": "1.0.2",
    ///     "server": {"type": "node", "entry_point": "index.js",
    ///         "mcp_config": {"command": "node", "args": ["${__dirname}/index.js"]}}}"#)?;
    /// let config = manifest.server_config(plan.bundle().unwrap(), Path::new("/data/notes"))?;
    /// let stdio = config.transport().as_stdio().unwrap();
    /// assert_eq!(stdio.command(), "node");
    /// assert_eq!(stdio.args(), ["/data/notes/index.js", "--verbose"]);
    /// assert_eq!(stdio.cwd(), Some(Path::new("/data/notes")));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn server_config(
        &self,
        bundle: &McpbBundle,
        dir: &Path,
    ) -> Result<ServerConfig, McpbError> {
        let dir_text = dir.to_string_lossy();
        let command = self.substitute(&self.command, "server.mcp_config.command", &dir_text)?;
        let mut args = Vec::with_capacity(self.args.len() + bundle.args().len());
        for arg in &self.args {
            args.push(self.substitute(arg, "server.mcp_config.args", &dir_text)?);
        }
        args.extend(bundle.args().iter().cloned());
        let mut stdio = StdioConfig::new(command)
            .with_args(args)
            .with_cwd(PathBuf::from(dir));
        for (name, value) in &self.env {
            let field = format!("server.mcp_config.env.{name}");
            stdio
                .env
                .insert(name.clone(), self.substitute(value, &field, &dir_text)?);
        }
        for (name, value) in bundle.env() {
            stdio.env.insert(name.clone(), value.clone());
        }
        for name in bundle.env_vars() {
            if !stdio.env_vars.contains(name) {
                stdio.env_vars.push(name.clone());
            }
        }
        Ok(ServerConfig::new(Transport::Stdio(stdio)))
    }

    /// `text` with its `${...}` variables filled in.
    fn substitute(&self, text: &str, field: &str, dir: &str) -> Result<String, McpbError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                out.push_str(&rest[start..]);
                return Ok(out);
            };
            let variable = &after[..end];
            let value = match variable {
                "__dirname" => Some(dir),
                "/" | "pathSeparator" => Some("/"),
                _ => variable
                    .strip_prefix("user_config.")
                    .and_then(|key| self.defaults.get(key))
                    .map(String::as_str),
            };
            let Some(value) = value else {
                return Err(McpbError::Variable {
                    field: field.to_owned(),
                    variable: variable.to_owned(),
                });
            };
            out.push_str(value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// How many hex digits of the bundle's SHA-256 its folder's name carries.
const FOLDER_DIGEST_DIGITS: usize = 16;

/// The name of the folder a host unpacks the bundle pinned to `sha256` into, for the
/// entry `local`: `LOCAL-` and the first 16 hex digits of the digest. An entry whose `cwd`
/// is such a folder runs that bundle ([`Provenance::check_entry`](crate::Provenance::check_entry)).
///
/// ```
/// # use mcp_catalog::{FileSha256, mcpb_folder_name};
/// let sha = FileSha256::of(b"bundle");
/// assert_eq!(mcpb_folder_name("notes", &sha), format!("notes-{}", &sha.to_hex()[..16]));
/// ```
pub fn mcpb_folder_name(local: &str, sha256: &FileSha256) -> String {
    let hex = sha256.to_hex();
    format!("{local}-{}", &hex[..hex.len().min(FOLDER_DIGEST_DIGITS)])
}

/// Whether a folder named `name` holds the bundle whose recorded digest is `digest`
/// (`sha256:HEX`): the name ends with `-` and the digest's first 16 hex digits.
pub(crate) fn folder_holds(name: &str, digest: &str) -> bool {
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    hex.len() >= FOLDER_DIGEST_DIGITS
        && name
            .strip_suffix(&hex[..FOLDER_DIGEST_DIGITS])
            .is_some_and(|rest| rest.ends_with('-'))
}

/// The manifest's name of the platform this runs on (`platform_overrides`).
const PLATFORM: &str = if cfg!(target_os = "macos") {
    "darwin"
} else if cfg!(windows) {
    "win32"
} else {
    std::env::consts::OS
};

/// A list of strings (none: empty).
fn strings(value: Option<&Value>, field: &str) -> Result<Vec<String>, McpbError> {
    let wrong = || McpbError::Field {
        field: field.to_owned(),
        what: "a list of strings",
    };
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(wrong),
        Some(_) => Err(wrong()),
    }
}

/// An object of strings (none: empty).
fn strings_map(value: Option<&Value>, field: &str) -> Result<BTreeMap<String, String>, McpbError> {
    let wrong = || McpbError::Field {
        field: field.to_owned(),
        what: "an object of strings",
    };
    match value {
        None => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
            .collect::<Option<BTreeMap<_, _>>>()
            .ok_or_else(wrong),
        Some(_) => Err(wrong()),
    }
}

/// The relative path an archive entry named `name` unpacks to, or an error when the name is
/// absolute, has a drive or root, a `..`, or no file name: nothing of a bundle may land
/// outside its folder. A name with a backslash, a NUL or a `:` is refused on every system,
/// since on some it is a separator, the name's end, or a drive (`C:`) or a file's stream
/// (`a:b`).
///
/// ```
/// # use mcp_catalog::mcpb_entry_path;
/// assert_eq!(mcpb_entry_path("server/index.js")?, std::path::Path::new("server/index.js"));
/// assert!(mcpb_entry_path("../evil").is_err());
/// assert!(mcpb_entry_path("/etc/passwd").is_err());
/// assert!(mcpb_entry_path("a/../../evil").is_err());
/// assert!(mcpb_entry_path("C:/evil").is_err());
/// assert!(mcpb_entry_path("a\0b").is_err());
/// # Ok::<(), mcp_catalog::McpbError>(())
/// ```
pub fn mcpb_entry_path(name: &str) -> Result<PathBuf, McpbError> {
    let refuse = || McpbError::EntryPath(name.to_owned());
    if name.is_empty() || name.contains(['\\', '\0', ':']) {
        return Err(refuse());
    }
    let mut path = PathBuf::new();
    for component in Path::new(name).components() {
        match component {
            Component::Normal(part) => path.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(refuse());
            }
        }
    }
    if path.as_os_str().is_empty() {
        return Err(refuse());
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(server: &str) -> Result<McpbManifest, McpbError> {
        McpbManifest::from_json_str(&format!(
            r#"{{"name": "n", "version": "1", "user_config": {{"dir": {{"type": "string",
            "default": "/srv"}}, "key": {{"type": "string", "required": true}}}},
            "server": {server}}}"#
        ))
    }

    #[test]
    fn refuses_missing_fields_and_unknown_types() {
        assert_eq!(
            manifest(r#"{"type": "node", "entry_point": "i.js"}"#).unwrap_err(),
            McpbError::Field {
                field: "server.mcp_config.command".into(),
                what: "a non-empty string"
            }
        );
        assert_eq!(
            manifest(r#"{"type": "java", "entry_point": "i.js", "mcp_config": {"command": "j"}}"#)
                .unwrap_err(),
            McpbError::ServerType("java".into())
        );
        assert_eq!(
            manifest(
                r#"{"type": "node", "entry_point": "../i.js", "mcp_config": {"command": "n"}}"#
            )
            .unwrap_err(),
            McpbError::EntryPath("../i.js".into())
        );
    }

    #[test]
    fn substitutes_defaults_and_refuses_unknown_variables() {
        let m = manifest(
            r#"{"type": "binary", "entry_point": "bin/s", "mcp_config": {"command":
            "${__dirname}${/}bin/s", "args": ["--root=${user_config.dir}"]}}"#,
        )
        .unwrap();
        assert_eq!(m.substitute(&m.command, "c", "/d").unwrap(), "/d/bin/s");
        assert_eq!(m.substitute(&m.args[0], "a", "/d").unwrap(), "--root=/srv");
        assert_eq!(
            m.substitute("${user_config.key}", "a", "/d").unwrap_err(),
            McpbError::Variable {
                field: "a".into(),
                variable: "user_config.key".into()
            }
        );
        assert!(m.substitute("${HOME}", "a", "/d").is_err());
    }

    #[test]
    fn a_folder_holds_the_bundle_its_name_pins() {
        let sha = FileSha256::of(b"x");
        let name = mcpb_folder_name("notes", &sha);
        assert!(folder_holds(&name, &sha.to_string()));
        assert!(!folder_holds(&name, &FileSha256::of(b"y").to_string()));
        assert!(!folder_holds("notes", "sha256:"));
    }

    #[test]
    fn a_bundle_downloads_over_https_or_plain_http_on_loopback_only() {
        let parse = |url: &str| {
            crate::RegistryServer::from_json_str(
                &format!(
                    r#"{{"name": "io.github.user/notes", "version": "1.0.0",
                    "description": "Notes", "packages": [{{"registryType": "mcpb",
                    "identifier": "{url}", "transport": {{"type": "stdio"}},
                    "fileSha256": "{}"}}]}}"#,
                    FileSha256::of(b"x").to_hex()
                ),
                "server.json",
            )
        };
        for url in [
            "https://example.com/n.mcpb",
            "http://127.0.0.1:8080/n.mcpb",
            "http://localhost/n.mcpb",
            "http://[::1]:9/n.mcpb",
        ] {
            assert!(parse(url).is_ok(), "{url}");
        }
        for url in [
            "http://example.com/n.mcpb",
            "http://127.0.0.1.example.com/n.mcpb",
            "http://localhost.example.com/n.mcpb",
        ] {
            assert!(parse(url).is_err(), "{url}");
        }
    }

    #[test]
    fn this_platforms_overrides_replace_the_command_and_add_environment() {
        let text = r#"{"name": "n", "version": "1", "server": {"type": "binary",
            "entry_point": "bin/s", "mcp_config": {"command": "bin/s", "args": ["a"],
            "env": {"A": "1", "B": "2"}, "platform_overrides": {
                "linux": {"command": "bin/s-linux", "env": {"B": "3"}},
                "darwin": {"args": ["d"], "env": {"C": 4}}}}}}"#;
        let linux = McpbManifest::parse(text, "linux").unwrap();
        assert_eq!(linux.command, "bin/s-linux");
        assert_eq!(linux.args, ["a"]);
        assert_eq!(linux.env["B"], "3");
        assert_eq!(linux.env["A"], "1");
        assert_eq!(
            McpbManifest::parse(text, "darwin").unwrap_err(),
            McpbError::Field {
                field: "server.mcp_config.platform_overrides.darwin.env".into(),
                what: "an object of strings"
            }
        );
        let other = McpbManifest::parse(text, "freebsd").unwrap();
        assert_eq!((other.command.as_str(), other.env.len()), ("bin/s", 2));
    }

    #[test]
    fn entry_paths_stay_inside() {
        assert!(mcpb_entry_path("./a/b").is_ok());
        for bad in [
            "",
            ".",
            "..",
            "a/..",
            "/a",
            "a\\..\\b",
            "../x",
            "x/../../y",
            "C:/evil",
            "C:evil",
            "c:\\evil",
            "a/file.txt:stream",
            "a\0b",
            "a/\0",
        ] {
            assert!(mcpb_entry_path(bad).is_err(), "{bad:?}");
        }
        // Shown escaped: a NUL or a control character never reaches the terminal.
        assert_eq!(
            mcpb_entry_path("a\0b\u{1b}[2J").unwrap_err().to_string(),
            "the bundle's entry `a\\0b\\u{1b}[2J` is not a plain relative path inside the \
             bundle (absolute, `..`, a drive or `:`, a backslash, a NUL, or empty); refusing the \
             whole bundle"
        );
    }
}

//! Trust in configuration files: a project's file runs commands and sends values to URLs,
//! so it is used only once the user has trusted its exact content.
//!
//! Hosts decide which files need trust: the user's own configuration and a file named
//! explicitly (`--config FILE`) are trusted; a project file found by discovery (e.g.
//! `./mcp.toml` or `./.mcp.json` in the working directory) is not, until the user trusts it.
//! Until then a host loads it with [`review_file`], which expands no environment variable
//! (every `${VAR}` stays as written and is only named in the [`Review`]), starts nothing,
//! and shows the [`Review`]: every command with its arguments, every URL, every variable the
//! file would read, every plugin folder. Trusting records the file's content hash in a
//! [`TrustStore`]; a changed file is [`TrustState::Changed`] and needs trust again.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mcp_key::{Fingerprint, ServerName};

use crate::env::EnvLookup;
use crate::error::Error;
use crate::model::config::{Config, EnvironmentConfig, LoadedConfig};
use crate::model::remote_line::server_remote_line;
use crate::model::server::{ApprovalMode, ServerConfig};
use crate::model::ssh::SshConfig;
use crate::model::transport::{AuthMode, HttpConfig, StdioConfig, Transport};
use crate::model::workload::WorkloadTokenLocation;
use crate::resolve::plugin::{PLUGIN_JSON_FILE, PLUGIN_TOML_FILE};

/// The fingerprint domain of trusted content.
const TRUST_DOMAIN: &str = "mcp-catalog/trust/v1";

/// The version written in a trust store file.
pub const TRUST_STORE_VERSION: u64 = 1;

/// Whether a file may be used as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrustState {
    /// Trusted with exactly this content.
    Trusted,
    /// Never trusted.
    Unknown,
    /// Trusted once, but its content changed since.
    Changed,
}

impl TrustState {
    /// True for [`TrustState::Trusted`].
    pub fn is_trusted(self) -> bool {
        self == Self::Trusted
    }
}

/// The content hash recorded for a trusted file (hex SHA-256, domain-separated).
pub fn content_hash(content: &str) -> String {
    Fingerprint::builder(TRUST_DOMAIN)
        .str("content", content)
        .finish()
        .to_hex()
}

/// The file trusted for `path`: the file itself, or for a plugin folder its `.mcp.json` or
/// `mcp.toml` (the first that exists).
pub fn trust_target(path: &Path) -> PathBuf {
    if path.is_dir() {
        for name in [PLUGIN_JSON_FILE, PLUGIN_TOML_FILE] {
            let file = path.join(name);
            if file.is_file() {
                return file;
            }
        }
    }
    path.to_path_buf()
}

/// Trusted files and their content hashes, kept in one JSON file of the host's choosing
/// (`{"version": 1, "trusted": {"/abs/path": "hex"}}`), written by atomic replace.
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    trusted: BTreeMap<String, String>,
}

impl TrustStore {
    /// Opens the store at `path`; a missing file is an empty store.
    ///
    /// Errors: [`Error::TrustStore`] when the file cannot be read or is not a trust store
    /// (it is never overwritten then: fix or remove it).
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, Error> {
        let path = path.into();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    path,
                    trusted: BTreeMap::new(),
                });
            }
            Err(source) => {
                return Err(Error::TrustStore {
                    path,
                    problem: format!("cannot be read: {source}"),
                });
            }
        };
        let trusted = parse_store(&text).ok_or_else(|| Error::TrustStore {
            path: path.clone(),
            problem: format!(
                "is not a version-{TRUST_STORE_VERSION} trust store; remove it to start over"
            ),
        })?;
        Ok(Self { path, trusted })
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `file` (a configuration file, or a plugin folder) is trusted with its current
    /// content.
    ///
    /// Errors: [`Error::Read`] when the file cannot be read.
    pub fn state(&self, file: &Path) -> Result<TrustState, Error> {
        let (key, hash) = identify(file)?;
        Ok(match self.trusted.get(&key) {
            Some(recorded) if *recorded == hash => TrustState::Trusted,
            Some(_) => TrustState::Changed,
            None => TrustState::Unknown,
        })
    }

    /// Trusts `file` (a configuration file, or a plugin folder) with its current content and
    /// saves the store. Returns the file that was recorded.
    ///
    /// Errors: [`Error::Read`] for the file; [`Error::TrustStore`] when the store cannot be
    /// written.
    pub fn trust(&mut self, file: &Path) -> Result<PathBuf, Error> {
        let (key, hash) = identify(file)?;
        self.trusted.insert(key.clone(), hash);
        self.save()?;
        Ok(PathBuf::from(key))
    }

    fn save(&self) -> Result<(), Error> {
        let store_error = |source: std::io::Error| Error::TrustStore {
            path: self.path.clone(),
            problem: format!("cannot be written: {source}"),
        };
        let trusted: serde_json::Map<String, serde_json::Value> = self
            .trusted
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        let doc = serde_json::json!({ "version": TRUST_STORE_VERSION, "trusted": trusted });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            private_dir(dir).map_err(store_error)?;
        }
        let tmp = self.path.with_extension("json.tmp");
        write_private(&tmp, (text + "\n").as_bytes()).map_err(store_error)?;
        std::fs::rename(&tmp, &self.path).map_err(store_error)
    }
}

/// Creates `dir` (and its parents) readable by its owner only (0700 on Unix); a folder
/// that exists keeps its mode.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Writes `bytes` to a new or truncated `path` readable by its owner only (0600 on Unix):
/// which project files are trusted is nobody else's business.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    #[cfg(unix)]
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    file.write_all(bytes)
}

fn parse_store(text: &str) -> Option<BTreeMap<String, String>> {
    let doc: serde_json::Value = serde_json::from_str(text).ok()?;
    if doc.get("version")?.as_u64()? != TRUST_STORE_VERSION {
        return None;
    }
    doc.get("trusted")?
        .as_object()?
        .iter()
        .map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect()
}

/// The canonical path of the trusted file and the hash of its content.
/// The key a file is trusted under and the hash of its content. The key is the file's
/// place (its folder, resolved, and its own name), not where a symlink points: relative
/// commands run from the folder the configuration is found in, so `B/mcp.toml ->
/// ../A/mcp.toml` is another configuration than `A/mcp.toml` and needs its own trust.
fn identify(file: &Path) -> Result<(String, String), Error> {
    let target = trust_target(file);
    let read_error = |source| Error::Read {
        path: target.clone(),
        source,
    };
    let folder = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = target.file_name().ok_or_else(|| {
        read_error(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file name",
        ))
    })?;
    let key = std::fs::canonicalize(folder)
        .map_err(read_error)?
        .join(name);
    let text = std::fs::read_to_string(&target).map_err(read_error)?;
    let files = if file.is_dir() {
        // A plugin's own manifest: plugins load no plugins.
        Supplied::default()
    } else {
        supplied_files(&target)
    };
    Ok((key.display().to_string(), trusted_hash(&text, &files)))
}

/// The files a configuration file names whose content is part of its trust: each as
/// written, with its content (`None` when it cannot be read).
#[derive(Debug, Default)]
struct Supplied {
    /// `[[plugins]]` folders and their manifests.
    plugins: Vec<(PathBuf, Option<String>)>,
    /// The project's `identity_file` / `known_hosts` of ssh environments.
    ssh_files: Vec<(PathBuf, Option<Vec<u8>>)>,
}

/// The hash trusted for a configuration file with `content` and the files it supplies: a
/// file that supplies none hashes as [`content_hash`], and an edit of any plugin's
/// manifest or of an ssh environment's key or known hosts file of the project changes the
/// hash, so the project file needs trust again.
fn trusted_hash(content: &str, files: &Supplied) -> String {
    if files.plugins.is_empty() && files.ssh_files.is_empty() {
        return content_hash(content);
    }
    let mut builder = Fingerprint::builder(TRUST_DOMAIN).str("content", content);
    for (folder, manifest) in &files.plugins {
        builder = builder.str("plugin", &folder.display().to_string()).str(
            "plugin-content",
            manifest.as_deref().unwrap_or("<unreadable>"),
        );
    }
    for (path, bytes) in &files.ssh_files {
        // Hex: a key file need not be text.
        let content = bytes.as_deref().map_or_else(
            || "<unreadable>".to_owned(),
            |b| b.iter().map(|byte| format!("{byte:02x}")).collect(),
        );
        builder = builder
            .str("ssh-file", &path.display().to_string())
            .str("ssh-file-content", &content);
    }
    builder.finish().to_hex()
}

/// Every `[[plugins]]` folder of the configuration file `config` (as written) with its
/// manifest's content, and every file of the project its ssh environments name (see
/// [`project_supplies`]) with its content. A file that cannot be parsed names nothing (it
/// is refused when it is loaded).
fn supplied_files(config: &Path) -> Supplied {
    let env = Unexpanded::default();
    let Ok(loaded) = crate::formats::load::load_file_with_env(config, &env) else {
        return Supplied::default();
    };
    let base = config.parent().unwrap_or(Path::new(""));
    let plugins = loaded
        .config()
        .plugins()
        .iter()
        .map(|p| {
            let manifest = trust_target(&base.join(p.path()));
            (
                p.path().to_path_buf(),
                std::fs::read_to_string(manifest).ok(),
            )
        })
        .collect();
    let ssh_files = loaded
        .config()
        .environments()
        .values()
        .filter_map(EnvironmentConfig::ssh)
        .flat_map(ssh_files)
        .filter(|file| file.project)
        .map(|file| {
            let bytes = std::fs::read(base.join(&file.path)).ok();
            (file.path, bytes)
        })
        .collect();
    Supplied { plugins, ssh_files }
}

/// Whether a file an ssh environment names (as written) is one the project supplies, so
/// its content is covered by trust: every path but one under `~` (the user's own files,
/// such as `~/.ssh/known_hosts`, which change without the project).
fn project_supplies(path: &Path) -> bool {
    !path.to_string_lossy().starts_with('~')
}

/// The `identity_file` and `known_hosts` of an ssh environment.
fn ssh_files(ssh: &SshConfig) -> Vec<ReviewedFile> {
    [
        ("ssh.identity_file", ssh.identity_file()),
        ("ssh.known_hosts", ssh.known_hosts()),
    ]
    .into_iter()
    .filter_map(|(field, path)| {
        let path = path?;
        Some(ReviewedFile {
            field: field.to_owned(),
            path: path.to_path_buf(),
            project: project_supplies(path),
        })
    })
    .collect()
}

/// What a configuration would run and read, for a person to vet before trusting it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Review {
    /// The reviewed file.
    pub origin: String,
    /// Per server (sorted by name): what it runs or connects to.
    pub servers: Vec<ReviewedServer>,
    /// Environment wrappers (`[environments.*] wrapper`) that prefix commands.
    pub wrappers: Vec<(String, Vec<String>)>,
    /// `[environments.*]` entries that set variables, a folder or an approval mode.
    pub environments: Vec<ReviewedEnvironment>,
    /// `[[plugins]]` folders, as written.
    pub plugins: Vec<PathBuf>,
    /// What each `[[plugins]]` folder runs, when its manifest could be read (from
    /// [`review_file`]; [`Review::of`] reads no file and leaves this empty).
    pub plugin_reviews: Vec<(PathBuf, Review)>,
    /// Every environment variable the file would read, sorted.
    pub variables: BTreeSet<String>,
    /// The catalog-wide `tool_drift` policy, when the file writes one: whether changed
    /// tools of every server are held back for the user.
    pub tool_drift: Option<String>,
    /// The file's `[gateway]` table, which replaces the user's whole: who `mcpctl serve`
    /// lets in and what each caller may use, one `setting=value` per item as written
    /// (`oauth.issuer=URL`, `oauth.introspection=URL`, `grant=…`, `limits.…=N`).
    pub gateway: Vec<String>,
}

/// A file an ssh environment makes the local `ssh` read ([`ReviewedEnvironment::files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReviewedFile {
    /// The field that names it (`ssh.identity_file`, `ssh.known_hosts`).
    pub field: String,
    /// The path as written (a relative one is relative to the configuration's folder,
    /// where the host runs).
    pub path: PathBuf,
    /// The project supplies it (every path but one under `~`): its content is part of the
    /// trusted hash, so an edit needs trust again. A file under `~` is the user's own.
    pub project: bool,
}

/// One server of a [`Review`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReviewedServer {
    /// The server's name.
    pub name: String,
    /// The command and its arguments (stdio servers).
    pub command: Option<Vec<String>>,
    /// The URL, unexpanded (HTTP servers).
    pub url: Option<String>,
    /// Names of the headers it sends.
    pub headers: Vec<String>,
    /// Literal environment variables it is started with, name and value as written (a
    /// `${VAR}` stays a reference, never the variable's value).
    pub env: Vec<(String, String)>,
    /// The folder it is started in, as written.
    pub cwd: Option<PathBuf>,
    /// Approval modes that change when the user is asked: the default mode when it is not
    /// `auto`, then `tool=mode` for each tool.
    pub approvals: Vec<String>,
    /// Credentials may go over plain http to a host that is not loopback.
    pub allow_plain_http: bool,
    /// Where a workload identity token is read from and sent to the server's token
    /// endpoint (`workload_identity`): `file PATH` or `variable NAME`.
    pub workload_token: Option<String>,
    /// Authorization settings other than the defaults, each `setting=value` as written
    /// (`auth=ema`, `ema.issuer=URL`, `oauth.client_id=ID`, `oauth_resource=URL`,
    /// `scopes=a b`, `dpop=true`, and a gateway's `upstream_identity=caller` or
    /// `upstream_identity=exchange` with `token_exchange.token_endpoint=URL`,
    /// `token_exchange.audience=…`, ...): where the user's credentials are asked for and
    /// sent.
    pub authorization: Vec<String>,
    /// For a server whose environment's wrapper is `ssh`: the one line the remote shell
    /// gets (ssh joins the words with spaces and the remote shell splits them again, so
    /// quotes, spaces, `;` and `$(...)` in the words are the remote shell's to read).
    pub remote_line: Option<String>,
    /// For a server of an ssh environment (`[environments.*] ssh`): where it runs
    /// (`user@host:port`); `remote_line` is then exactly the command ssh sends.
    pub remote_target: Option<String>,
}

/// What an `[environments.*]` entry changes for the servers that run in it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReviewedEnvironment {
    /// The environment's id.
    pub id: String,
    /// Its literal environment variables, as written.
    pub env: Vec<(String, String)>,
    /// Its default folder, as written.
    pub cwd: Option<PathBuf>,
    /// Its approval mode, when it is not `auto`.
    pub approval: Option<String>,
    /// Its elicitation policy, when set (`ask` or `decline`).
    pub elicitation: Option<String>,
    /// The files its `ssh` settings make ssh read (`identity_file`, `known_hosts`); the
    /// content of those the project supplies is part of the trusted hash.
    pub files: Vec<ReviewedFile>,
}

/// Whether setting `name` changes which program, library or script actually runs, or
/// what it loads first: a reviewer must see these before anything else.
pub fn changes_what_runs(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "BASH_ENV",
        "ENV",
        "PERL5LIB",
        "PERL5OPT",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "GCONV_PATH",
        "LUA_PATH",
        "LUA_CPATH",
        "SHELL",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "HOME",
        "XDG_CONFIG_HOME",
        "PROMPT_COMMAND",
    ];
    let upper = name.to_ascii_uppercase();
    EXACT.contains(&upper.as_str())
        || upper.starts_with("DYLD_")
        || upper.starts_with("GIT_")
        || upper.starts_with("NPM_CONFIG_")
        || upper.starts_with("PIP_")
        || upper.ends_with("_ASKPASS")
}

impl Review {
    /// The review of `loaded`, plus the variables named by `${VAR}` in the file (from
    /// [`review_file`]).
    pub fn of(loaded: &LoadedConfig, expanded: &BTreeSet<String>) -> Self {
        let config = loaded.config();
        let mut variables = expanded.clone();
        // The gateway's introspection secret is read from a variable too.
        if let Some(crate::model::gateway::TokenValidation::Introspection(introspection)) = config
            .gateway()
            .and_then(|g| g.oauth())
            .map(|o| o.validation())
        {
            variables.insert(introspection.client_secret_env().to_owned());
        }
        let servers = config
            .servers()
            .iter()
            .map(|(name, server)| review_server(config, name, server, &mut variables))
            .collect();
        Self {
            origin: loaded.origin().to_owned(),
            servers,
            wrappers: review_wrappers(config),
            environments: review_environments(config),
            plugins: config
                .plugins()
                .iter()
                .map(|p| p.path().to_path_buf())
                .collect(),
            plugin_reviews: Vec::new(),
            variables,
            tool_drift: config.tool_drift().map(|p| p.as_str().to_owned()),
            gateway: config.gateway().map(review_gateway).unwrap_or_default(),
        }
    }

    /// True when the file would run nothing, connect nowhere and read nothing.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
            && self.wrappers.is_empty()
            && self.environments.is_empty()
            && self.plugins.is_empty()
            && self.variables.is_empty()
            && self.tool_drift.is_none()
            && self.gateway.is_empty()
    }
}

impl fmt::Display for Review {
    /// One line per item, e.g. `runs: notes: npx -y server` or `reads variable: TOKEN`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for server in &self.servers {
            server_lines(f, server)?;
        }
        for (id, wrapper) in &self.wrappers {
            writeln!(
                f,
                "wraps commands of environment {id} in: {}",
                shell_words(wrapper)
            )?;
        }
        for environment in &self.environments {
            environment_lines(f, environment)?;
        }
        for plugin in &self.plugins {
            writeln!(f, "loads plugin: {}", plugin.display())?;
            let Some((_, review)) = self.plugin_reviews.iter().find(|(p, _)| p == plugin) else {
                continue;
            };
            for line in review.to_string().lines() {
                writeln!(f, "  in plugin {}: {line}", plugin.display())?;
            }
        }
        for variable in &self.variables {
            writeln!(f, "reads variable: {variable}")?;
        }
        if let Some(policy) = &self.tool_drift {
            writeln!(f, "changed tools: every server: tool_drift={policy}")?;
        }
        for setting in &self.gateway {
            writeln!(f, "gateway (replaces yours): {setting}")?;
        }
        Ok(())
    }
}

/// The lines of one server in a [`Review`]: what it runs (and where), the environment
/// it is given, its approvals and credentials, and where it connects.
fn server_lines(f: &mut fmt::Formatter<'_>, server: &ReviewedServer) -> fmt::Result {
    if let Some(command) = &server.command {
        writeln!(f, "runs: {}: {}", server.name, shell_words(command))?;
    }
    if let (Some(line), Some(target)) = (&server.remote_line, &server.remote_target) {
        writeln!(
            f,
            "runs on {target} over ssh, as exactly this remote shell line: {}: {line:?}",
            server.name
        )?;
    } else if let Some(line) = &server.remote_line {
        writeln!(
            f,
            "runs on the remote side as one shell line (ssh joins the words; quotes, `;` and `$(...)` in them are the remote shell's): {}: {line:?}",
            server.name
        )?;
    }
    env_lines(f, &server.name, &server.env)?;
    if let Some(cwd) = &server.cwd {
        writeln!(f, "runs in folder: {}: {}", server.name, cwd.display())?;
    }
    if !server.approvals.is_empty() {
        writeln!(
            f,
            "approval modes: {}: {}",
            server.name,
            server.approvals.join(", ")
        )?;
    }
    if let Some(token) = &server.workload_token {
        writeln!(
            f,
            "sends as its identity to the token endpoint: {}: {token} (workload_identity)",
            server.name
        )?;
    }
    if !server.authorization.is_empty() {
        writeln!(
            f,
            "authorizes: {}: {}",
            server.name,
            server.authorization.join(", ")
        )?;
    }
    if server.allow_plain_http {
        writeln!(
            f,
            "sends credentials over plain http: {} (allow_plain_http)",
            server.name
        )?;
    }
    if let Some(url) = &server.url {
        write!(f, "connects: {}: {url}", server.name)?;
        if !server.headers.is_empty() {
            write!(f, " (headers: {})", server.headers.join(", "))?;
        }
        writeln!(f)?;
    }
    Ok(())
}

/// The lines of one environment in a [`Review`]: its variables, folder, approval and
/// elicitation defaults, and the files its ssh reads.
fn environment_lines(f: &mut fmt::Formatter<'_>, environment: &ReviewedEnvironment) -> fmt::Result {
    let label = format!("environment {}", environment.id);
    env_lines(f, &label, &environment.env)?;
    if let Some(cwd) = &environment.cwd {
        writeln!(f, "runs in folder: {label}: {}", cwd.display())?;
    }
    if let Some(mode) = &environment.approval {
        writeln!(f, "approval modes: {label}: default={mode}")?;
    }
    if let Some(policy) = &environment.elicitation {
        writeln!(f, "elicitation: {label}: {policy}")?;
    }
    for file in &environment.files {
        let whose = if file.project {
            "the project's file, its content is covered by trust"
        } else {
            "your own file under ~, not covered by trust"
        };
        writeln!(
            f,
            "ssh reads file ({whose}): {label}: {} {}",
            file.field,
            shell_words(&[file.path.display().to_string()])
        )?;
    }
    Ok(())
}

/// The `[gateway]` table as [`Review::gateway`] lists it. A table that sets nothing still
/// gets a line: it replaces the user's whole, grants and sign-in included.
fn review_gateway(gateway: &crate::model::gateway::GatewayConfig) -> Vec<String> {
    use crate::model::gateway::TokenValidation;
    let list = |items: &[String]| items.join(" ");
    let mut lines = Vec::new();
    if let Some(oauth) = gateway.oauth() {
        lines.push(format!("oauth.issuer={}", oauth.issuer()));
        if let Some(resource) = oauth.resource() {
            lines.push(format!("oauth.resource={resource}"));
        }
        if !oauth.scopes().is_empty() {
            lines.push(format!("oauth.scopes={}", list(oauth.scopes())));
        }
        if let TokenValidation::Introspection(introspection) = oauth.validation() {
            lines.push(format!(
                "oauth.introspection={} (client {}, secret from ${})",
                introspection.endpoint().unwrap_or("the issuer's"),
                introspection.client_id(),
                introspection.client_secret_env(),
            ));
        }
    }
    for grant in gateway.grants() {
        let mut to = Vec::new();
        for (what, items) in [
            ("subjects", grant.subjects()),
            ("groups", grant.groups()),
            ("scopes", grant.scopes()),
        ] {
            if !items.is_empty() {
                to.push(format!("{what} {}", list(items)));
            }
        }
        let tools = grant.tools().map_or_else(|| "every tool".to_owned(), list);
        lines.push(format!(
            "grant=servers {} ({tools}) to {}{}",
            list(grant.servers()),
            if to.is_empty() {
                "nobody".to_owned()
            } else {
                to.join(", ")
            },
            if grant.accepts_drift() {
                ", who may accept changed tools for everyone"
            } else {
                ""
            },
        ));
    }
    let limits = gateway.limits();
    if let Some(n) = limits.clients_per_principal() {
        lines.push(format!("limits.clients_per_principal={n}"));
    }
    if let Some(n) = limits.calls_per_principal() {
        lines.push(format!("limits.calls_per_principal={n}"));
    }
    if lines.is_empty() {
        lines.push("an empty [gateway] table (no sign-in, no grants, no limits)".to_owned());
    }
    lines
}

/// Whether a wrapper runs its command through `ssh` (its program is `ssh`, by path or not).
fn wraps_in_ssh(wrapper: &[String]) -> bool {
    wrapper
        .first()
        .and_then(|p| Path::new(p).file_name())
        .is_some_and(|name| name == "ssh")
}

/// What one server would run or connect to; the variables it reads are added to
/// `variables`.
fn review_server(
    config: &Config,
    name: &ServerName,
    server: &ServerConfig,
    variables: &mut BTreeSet<String>,
) -> ReviewedServer {
    let mut reviewed = ReviewedServer {
        name: name.to_string(),
        command: None,
        url: None,
        headers: Vec::new(),
        env: Vec::new(),
        cwd: None,
        approvals: approvals(server),
        allow_plain_http: false,
        workload_token: None,
        authorization: Vec::new(),
        remote_line: None,
        remote_target: None,
    };
    match server.transport() {
        Transport::Stdio(stdio) => review_stdio(&mut reviewed, config, server, stdio, variables),
        Transport::StreamableHttp(http) | Transport::Sse(http) => {
            review_http(&mut reviewed, http, variables);
        }
        // Nothing of an unusable entry runs or is sent anywhere.
        Transport::Unusable(_) => {}
    }
    reviewed
}

/// The approval settings a server's entry writes (`default=…`, `tool=…`, `tool_drift=…`).
fn approvals(server: &ServerConfig) -> Vec<String> {
    let mut approvals = Vec::new();
    if server.default_approval_mode() != ApprovalMode::Auto {
        approvals.push(format!(
            "default={}",
            server.default_approval_mode().as_str()
        ));
    }
    approvals.extend(
        server
            .tool_approval_modes()
            .iter()
            .map(|(tool, mode)| format!("{tool}={}", mode.as_str())),
    );
    if let Some(policy) = server.tool_drift() {
        approvals.push(format!("tool_drift={}", policy.as_str()));
    }
    approvals
}

/// The command of a stdio server, and the remote line when it runs over ssh.
fn review_stdio(
    reviewed: &mut ReviewedServer,
    config: &Config,
    server: &ServerConfig,
    stdio: &StdioConfig,
    variables: &mut BTreeSet<String>,
) {
    let mut command = vec![stdio.command().to_owned()];
    command.extend(stdio.args().iter().cloned());
    let environment = config.environments().get(server.environment());
    if let Some((environment, ssh)) = environment.and_then(|e| Some((e, e.ssh()?))) {
        reviewed.remote_line = Some(server_remote_line(
            environment,
            &command,
            stdio.env(),
            stdio.cwd(),
        ));
        reviewed.remote_target = Some(ssh.display_target());
    } else if environment.is_some_and(|e| wraps_in_ssh(e.wrapper())) {
        reviewed.remote_line = Some(command.join(" "));
    }
    reviewed.command = Some(command);
    reviewed.env = stdio
        .env()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    reviewed.cwd = stdio.cwd().map(Path::to_path_buf);
    variables.extend(stdio.env_vars().iter().cloned());
}

/// The URL, headers and authorization of an HTTP server.
fn review_http(reviewed: &mut ReviewedServer, http: &HttpConfig, variables: &mut BTreeSet<String>) {
    reviewed.allow_plain_http = http.allow_plain_http();
    reviewed.workload_token = http.workload_identity().map(|w| match w.token() {
        WorkloadTokenLocation::File(path) => format!("file {path}"),
        WorkloadTokenLocation::EnvVar(var) => {
            variables.insert(var.clone());
            format!("variable {var}")
        }
    });
    reviewed.authorization = authorization_settings(http);
    variables.extend(
        (http.upstream_identity().token_exchange())
            .and_then(|e| e.client_secret_env())
            .map(str::to_owned),
    );
    reviewed.url = Some(http.url().to_owned());
    variables.extend(http.bearer_token_env_var().map(str::to_owned));
    variables.extend(http.env_http_headers().values().cloned());
    reviewed.headers = http
        .http_headers()
        .keys()
        .chain(http.env_http_headers().keys())
        .cloned()
        .collect();
    reviewed.headers.sort();
}

/// The command prefix of each environment that has one (a wrapper, or ssh's argv).
fn review_wrappers(config: &Config) -> Vec<(String, Vec<String>)> {
    config
        .environments()
        .iter()
        .filter_map(|(id, e)| {
            let prefix = match e.ssh() {
                Some(ssh) => {
                    let mut argv = ssh.ssh_argv();
                    argv.push("--".to_owned());
                    argv
                }
                None if !e.wrapper().is_empty() => e.wrapper().to_vec(),
                None => return None,
            };
            Some((id.to_string(), prefix))
        })
        .collect()
}

/// The environments that set variables, a folder, an approval mode or an elicitation
/// policy, or make ssh read files.
fn review_environments(config: &Config) -> Vec<ReviewedEnvironment> {
    config
        .environments()
        .iter()
        .map(|(id, e)| ReviewedEnvironment {
            id: id.to_string(),
            env: e
                .env()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            cwd: e.cwd().map(Path::to_path_buf),
            approval: e
                .default_approval_mode()
                .filter(|m| *m != ApprovalMode::Auto)
                .map(|m| m.as_str().to_owned()),
            elicitation: e.elicitation().map(|p| p.as_str().to_owned()),
            files: e.ssh().map(ssh_files).unwrap_or_default(),
        })
        .filter(|e| {
            !e.env.is_empty()
                || e.cwd.is_some()
                || e.approval.is_some()
                || e.elicitation.is_some()
                || !e.files.is_empty()
        })
        .collect()
}

/// The authorization settings of `http` that differ from the defaults, as written.
fn authorization_settings(http: &HttpConfig) -> Vec<String> {
    let mut settings = Vec::new();
    if http.auth() != AuthMode::Auto {
        settings.push(format!("auth={}", http.auth()));
    }
    if let Some(ema) = http.ema() {
        settings.push(format!("ema.issuer={}", ema.issuer()));
        settings.push(format!("ema.client_id={}", ema.client_id()));
    }
    if let Some(oauth) = http.oauth() {
        settings.push(format!("oauth.client_id={}", oauth.client_id()));
    }
    if let Some(resource) = http.oauth_resource() {
        settings.push(format!("oauth_resource={resource}"));
    }
    if !http.scopes().is_empty() {
        settings.push(format!("scopes={}", http.scopes().join(" ")));
    }
    if http.dpop() {
        settings.push("dpop=true".to_owned());
    }
    settings.extend(http.upstream_identity().review_lines());
    settings
}

/// One line per variable `who` is started with; those that change what runs first, marked.
fn env_lines(f: &mut fmt::Formatter<'_>, who: &str, env: &[(String, String)]) -> fmt::Result {
    let (loaders, others): (Vec<_>, Vec<_>) =
        env.iter().partition(|(name, _)| changes_what_runs(name));
    for (name, value) in loaders {
        writeln!(
            f,
            "sets variable (CHANGES WHAT RUNS): {who}: {name}={}",
            shell_words(std::slice::from_ref(value))
        )?;
    }
    for (name, value) in others {
        writeln!(
            f,
            "sets variable: {who}: {name}={}",
            shell_words(std::slice::from_ref(value))
        )?;
    }
    Ok(())
}

/// Words joined by spaces, each quoted when it holds anything but plain characters.
fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// An [`EnvLookup`] that reads nothing: every `${VAR}` stays as written, and its name is
/// recorded.
#[derive(Debug, Default)]
struct Unexpanded {
    names: Mutex<BTreeSet<String>>,
}

impl EnvLookup for Unexpanded {
    fn get(&self, name: &str) -> Option<String> {
        if let Ok(mut names) = self.names.lock() {
            names.insert(name.to_owned());
        }
        Some(format!("${{{name}}}"))
    }
}

/// Loads `path` for review, without reading a single environment variable: `${VAR}` stays
/// as written. Returns the configuration (not to be started) and its [`Review`].
///
/// Errors: as [`load_file`](crate::load_file).
pub fn review_file(path: impl AsRef<Path>) -> Result<(LoadedConfig, Review), Error> {
    let path = path.as_ref();
    let (loaded, mut review) = review_one(path)?;
    let base = path.parent().unwrap_or(Path::new(""));
    for plugin in &review.plugins {
        let manifest = trust_target(&base.join(plugin));
        if manifest.is_file()
            && let Ok((_, plugin_review)) = review_one(&manifest)
        {
            review.plugin_reviews.push((plugin.clone(), plugin_review));
        }
    }
    Ok((loaded, review))
}

/// The review of one file, without its plugins' reviews.
fn review_one(path: &Path) -> Result<(LoadedConfig, Review), Error> {
    let env = Unexpanded::default();
    let loaded = crate::formats::load::load_file_with_env(path, &env)?;
    let names = env.names.lock().map(|n| n.clone()).unwrap_or_default();
    let review = Review::of(&loaded, &names);
    Ok((loaded, review))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_with_spaces_or_quotes_are_quoted() {
        let words = ["sh", "-c", "touch 'x'"].map(str::to_owned);
        assert_eq!(shell_words(&words), r"sh -c 'touch '\''x'\'''");
    }

    #[test]
    fn the_hash_depends_on_every_byte() {
        assert_ne!(content_hash("a = 1"), content_hash("a = 1 "));
        assert_eq!(content_hash("x"), content_hash("x"));
    }
}

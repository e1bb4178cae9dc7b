//! `server.json` read and validated into located values.

use std::fmt;

use serde_json::{Map, Value};

use crate::diagnostic::{ConfigErrorKind, ConfigErrors};
use crate::formats::json_locate::Step;
use crate::registry::digest::FileSha256;
use crate::registry::reader::{Reader, Spot, join, join_index};
use crate::registry::version::not_exact;

/// The schema dates whose shape this crate reads (camelCase fields, 2025-09-16 onwards).
pub const REGISTRY_SCHEMA_VERSIONS: &[&str] =
    &["2025-09-16", "2025-09-29", "2025-10-17", "2025-12-11"];

/// How a package is distributed (`registryType`), which decides the command that runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum PackageType {
    /// An npm package, run with `npx <identifier>@<version>`.
    Npm,
    /// A PyPI package, run with `uvx <identifier>==<version>`.
    Pypi,
    /// An OCI image, run with `docker run -i --rm <image>:<tag>`.
    Oci,
    /// A NuGet package, run with `dnx <identifier>@<version> --yes`.
    Nuget,
    /// An MCP bundle downloaded from `identifier` and checked against `fileSha256`.
    Mcpb,
}

impl PackageType {
    /// The `registryType` text.
    pub fn as_str(self) -> &'static str {
        match self {
            PackageType::Npm => "npm",
            PackageType::Pypi => "pypi",
            PackageType::Oci => "oci",
            PackageType::Nuget => "nuget",
            PackageType::Mcpb => "mcpb",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "npm" => PackageType::Npm,
            "pypi" => PackageType::Pypi,
            "oci" => PackageType::Oci,
            "nuget" => PackageType::Nuget,
            "mcpb" => PackageType::Mcpb,
            _ => return None,
        })
    }
}

impl fmt::Display for PackageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An input's `format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputFormat {
    /// Any text (the default).
    #[default]
    String,
    /// A decimal number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A path on the user's file system.
    Filepath,
}

/// One `Input` of the schema (an argument's, a variable's, an environment variable's or a
/// header's value).
#[derive(Clone, Debug)]
pub(crate) struct Input {
    pub(crate) spot: Spot,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
    pub(crate) format: InputFormat,
    pub(crate) value: Option<String>,
    pub(crate) secret: bool,
    pub(crate) default: Option<String>,
    pub(crate) placeholder: Option<String>,
    pub(crate) choices: Vec<String>,
    /// `variables`, in the text's order (names sorted).
    pub(crate) variables: Vec<(String, Input)>,
}

#[derive(Clone, Debug)]
pub(crate) enum ArgumentKind {
    Positional { value_hint: Option<String> },
    Named { name: String },
}

#[derive(Clone, Debug)]
pub(crate) struct Argument {
    pub(crate) kind: ArgumentKind,
    pub(crate) input: Input,
    pub(crate) repeated: bool,
}

/// An environment variable or a header.
#[derive(Clone, Debug)]
pub(crate) struct KeyValue {
    pub(crate) name: String,
    pub(crate) input: Input,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TransportKind {
    Stdio,
    StreamableHttp,
    Sse,
}

#[derive(Clone, Debug)]
pub(crate) struct Package {
    pub(crate) kind: PackageType,
    pub(crate) identifier: String,
    pub(crate) identifier_spot: Spot,
    pub(crate) version: Option<String>,
    pub(crate) version_spot: Spot,
    pub(crate) file_sha256: Option<FileSha256>,
    pub(crate) file_sha256_spot: Spot,
    pub(crate) transport: TransportKind,
    pub(crate) transport_spot: Spot,
    pub(crate) runtime_arguments: Vec<Argument>,
    pub(crate) package_arguments: Vec<Argument>,
    pub(crate) environment: Vec<KeyValue>,
}

#[derive(Clone, Debug)]
pub(crate) struct Remote {
    pub(crate) kind: TransportKind,
    pub(crate) url: String,
    pub(crate) url_spot: Spot,
    pub(crate) headers: Vec<KeyValue>,
    pub(crate) variables: Vec<(String, Input)>,
}

/// A parsed, validated `server.json` (or a registry API answer `{"server": {...},
/// "_meta": {...}}` holding one).
///
/// ```
/// use mcp_catalog::{InputValues, InstallTarget, PackageType, RegistryServer};
///
/// let text = r#"{
///   "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
///   "name": "io.github.example/weather-mcp",
///   "description": "Python MCP server for weather data access",
///   "version": "0.5.0",
///   "packages": [{
///     "registryType": "pypi", "identifier": "weather-mcp-server", "version": "0.5.0",
///     "transport": {"type": "stdio"},
///     "environmentVariables": [
///       {"name": "WEATHER_API_KEY", "isRequired": true, "isSecret": true},
///       {"name": "WEATHER_UNITS", "default": "celsius"}
///     ]
///   }]
/// }"#;
/// let server = RegistryServer::from_json_str(text, "server.json")?;
/// let target = server.package_target(PackageType::Pypi).expect("a pypi package");
/// let plan = server.install_plan(target, &InputValues::new())?;
/// let stdio = plan.server_config().and_then(|c| c.transport().as_stdio()).expect("stdio");
/// assert_eq!(stdio.command(), "uvx");
/// assert_eq!(stdio.args(), ["weather-mcp-server==0.5.0"]);
/// // The secret stays in the host's environment: only its name is in the configuration.
/// assert_eq!(stdio.env_vars(), ["WEATHER_API_KEY"]);
/// assert_eq!(stdio.env()["WEATHER_UNITS"], "celsius");
/// assert_eq!(plan.provenance().to_string(), "io.github.example/weather-mcp@0.5.0 (pypi weather-mcp-server==0.5.0)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct RegistryServer {
    pub(crate) spot: Spot,
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) description: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) schema: Option<String>,
    pub(crate) status: Option<String>,
    pub(crate) packages: Vec<Package>,
    pub(crate) remotes: Vec<Remote>,
}

/// Which way of running a [`RegistryServer`] to configure: one of its packages or remotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum InstallTarget {
    /// `packages[i]`.
    Package(usize),
    /// `remotes[i]`.
    Remote(usize),
}

impl fmt::Display for InstallTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstallTarget::Package(index) => write!(f, "packages[{index}]"),
            InstallTarget::Remote(index) => write!(f, "remotes[{index}]"),
        }
    }
}

impl RegistryServer {
    /// Parses and validates `text`, a `server.json` document or a registry answer holding
    /// one under `server`. `origin` (a path or a label such as the registry URL) starts
    /// each error's location. Every problem is reported, each with line, column, field,
    /// what is wrong and what to do.
    pub fn from_json_str(text: &str, origin: &str) -> Result<Self, ConfigErrors> {
        let mut reader = Reader::new(text, origin);
        let server = read_document(&mut reader, text);
        match server {
            Some(server) if reader.errors.is_empty() => Ok(server),
            _ => Err(ConfigErrors::new(reader.errors)),
        }
    }

    /// The server's name in the registry (`io.github.user/weather`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's version (exact: ranges and `latest` are refused when parsing).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Its `description`, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// Its `title`, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Its `$schema` URL, if written.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// The registry's status of this version (`active`, `deprecated`, `deleted`) when the
    /// text is a registry answer that gives one.
    pub fn status(&self) -> Option<&str> {
        self.status.as_deref()
    }

    /// Every package and remote, in the text's order (packages first).
    pub fn targets(&self) -> Vec<InstallTarget> {
        (0..self.packages.len())
            .map(InstallTarget::Package)
            .chain((0..self.remotes.len()).map(InstallTarget::Remote))
            .collect()
    }

    /// The first package of type `kind`.
    pub fn package_target(&self, kind: PackageType) -> Option<InstallTarget> {
        self.packages
            .iter()
            .position(|p| p.kind == kind)
            .map(InstallTarget::Package)
    }

    /// The package type of a package target (`None` for a remote or an index out of range).
    pub fn package_type(&self, target: InstallTarget) -> Option<PackageType> {
        match target {
            InstallTarget::Package(index) => self.packages.get(index).map(|p| p.kind),
            InstallTarget::Remote(_) => None,
        }
    }
}

fn read_document(reader: &mut Reader<'_>, text: &str) -> Option<RegistryServer> {
    let root: Value = match serde_json::from_str(text) {
        Ok(root) => root,
        Err(err) => {
            reader.syntax(&err);
            return None;
        }
    };
    let root = reader.object(&[], &root)?;
    // A registry answer: `{"server": {...}, "_meta": {...}}`.
    if !root.contains_key("name")
        && let Some(inner) = root.get("server")
    {
        let path = vec![Step::Key("server".to_owned())];
        let inner = reader.object(&path, inner)?;
        let mut server = read_server(reader, &path, inner)?;
        server.status = root
            .get("_meta")
            .and_then(|meta| meta.get("io.modelcontextprotocol.registry/official"))
            .and_then(|official| official.get("status"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        return Some(server);
    }
    read_server(reader, &[], root)
}

/// The 2025-07-09 snake_case names and their camelCase replacements.
const SNAKE_CASE: &[(&str, &str)] = &[
    ("registry_name", "registryType"),
    ("registry_type", "registryType"),
    ("registry_base_url", "registryBaseUrl"),
    ("file_sha256", "fileSha256"),
    ("runtime_hint", "runtimeHint"),
    ("runtime_arguments", "runtimeArguments"),
    ("package_arguments", "packageArguments"),
    ("environment_variables", "environmentVariables"),
    ("is_required", "isRequired"),
    ("is_secret", "isSecret"),
    ("value_hint", "valueHint"),
    ("is_repeated", "isRepeated"),
    ("website_url", "websiteUrl"),
    ("version_detail", "version"),
    ("transport_type", "type"),
];

fn check_snake_case(reader: &mut Reader<'_>, path: &[Step], object: &Map<String, Value>) {
    for (old, new) in SNAKE_CASE {
        if object.contains_key(*old) {
            reader.error(
                &join(path, old),
                ConfigErrorKind::InvalidValue,
                format!("`{old}` is the 2025-07-09 schema's name, which is no longer read"),
                format!("rename it `{new}` (schema 2025-09-16 and later use camelCase)"),
            );
        }
    }
}

fn read_server(
    reader: &mut Reader<'_>,
    path: &[Step],
    object: &Map<String, Value>,
) -> Option<RegistryServer> {
    check_snake_case(reader, path, object);
    let schema = reader.string(path, object, "$schema");
    if let Some(schema) = &schema {
        check_schema(reader, &join(path, "$schema"), schema);
    }
    let name = reader.required_string(
        path,
        object,
        "name",
        "the server's name, e.g. `io.github.user/weather`",
    );
    if let Some(name) = &name
        && !valid_name(name)
    {
        reader.error(
            &join(path, "name"),
            ConfigErrorKind::InvalidValue,
            format!("`{name}` is not a registry server name"),
            "write a reverse-DNS namespace, one `/` and a name, e.g. `io.github.user/weather`",
        );
    }
    let version = reader.required_string(
        path,
        object,
        "version",
        "the server's exact version, e.g. `1.0.2`",
    );
    if let Some(version) = &version
        && let Some(problem) = not_exact(version)
    {
        reader.error(
            &join(path, "version"),
            ConfigErrorKind::InvalidValue,
            format!("version `{version}` {problem}"),
            "write one exact version, e.g. `1.0.2`",
        );
    }
    let description = reader.string(path, object, "description");
    let title = reader.string(path, object, "title");
    let packages_path = join(path, "packages");
    let packages = reader
        .array(path, object, "packages")
        .iter()
        .enumerate()
        .filter_map(|(i, value)| read_package(reader, &join_index(&packages_path, i), value))
        .collect();
    let remotes_path = join(path, "remotes");
    let remotes = reader
        .array(path, object, "remotes")
        .iter()
        .enumerate()
        .filter_map(|(i, value)| read_remote(reader, &join_index(&remotes_path, i), value))
        .collect();
    Some(RegistryServer {
        spot: reader.spot(path),
        name: name?,
        version: version?,
        description,
        title,
        schema,
        status: None,
        packages,
        remotes,
    })
}

/// `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3 to 200 characters.
fn valid_name(name: &str) -> bool {
    let Some((namespace, server)) = name.split_once('/') else {
        return false;
    };
    (3..=200).contains(&name.len())
        && !namespace.is_empty()
        && !server.is_empty()
        && namespace
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        && server
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn check_schema(reader: &mut Reader<'_>, path: &[Step], schema: &str) {
    let date = schema
        .strip_prefix("https://static.modelcontextprotocol.io/schemas/")
        .and_then(|rest| rest.strip_suffix("/server.schema.json"));
    match date {
        Some(date) if date < "2025-09-16" => reader.error(
            path,
            ConfigErrorKind::InvalidValue,
            format!("schema {date} uses snake_case fields, which are no longer read"),
            format!(
                "update the document to a current schema ({}), renaming its fields to camelCase",
                REGISTRY_SCHEMA_VERSIONS.join(", ")
            ),
        ),
        // Later dates are read as the newest known one: the registry keeps fields compatible.
        _ => {}
    }
}

fn read_input(
    reader: &mut Reader<'_>,
    path: &[Step],
    object: &Map<String, Value>,
    nested: bool,
) -> Input {
    let format = match reader.string(path, object, "format").as_deref() {
        None | Some("string") => InputFormat::String,
        Some("number") => InputFormat::Number,
        Some("boolean") => InputFormat::Boolean,
        Some("filepath") => InputFormat::Filepath,
        Some(other) => {
            reader.error(
                &join(path, "format"),
                ConfigErrorKind::InvalidValue,
                format!("unknown input format `{other}`"),
                "use `string`, `number`, `boolean` or `filepath`",
            );
            InputFormat::String
        }
    };
    let choices_path = join(path, "choices");
    let choices = reader
        .array(path, object, "choices")
        .iter()
        .enumerate()
        .filter_map(|(i, choice)| match choice {
            Value::String(text) => Some(text.clone()),
            _ => {
                reader.error(
                    &join_index(&choices_path, i),
                    ConfigErrorKind::WrongType,
                    "a choice must be a string",
                    "write each choice in double quotes",
                );
                None
            }
        })
        .collect();
    let mut variables = Vec::new();
    if let Some(value) = object.get("variables") {
        let variables_path = join(path, "variables");
        if nested {
            reader.error(
                &variables_path,
                ConfigErrorKind::InvalidValue,
                "a variable cannot have variables of its own",
                "move them to the argument, header or environment variable that uses them",
            );
        } else if let Some(map) = reader.object(&variables_path, value) {
            for (name, value) in map {
                let variable_path = join(&variables_path, name);
                if let Some(variable) = reader.object(&variable_path, value) {
                    variables.push((
                        name.clone(),
                        read_input(reader, &variable_path, variable, true),
                    ));
                }
            }
        }
    }
    check_snake_case(reader, path, object);
    Input {
        spot: reader.spot(path),
        description: reader.string(path, object, "description"),
        required: reader.flag(path, object, "isRequired"),
        format,
        value: reader.string(path, object, "value"),
        secret: reader.flag(path, object, "isSecret"),
        default: reader.string(path, object, "default"),
        placeholder: reader.string(path, object, "placeholder"),
        choices,
        variables,
    }
}

fn read_argument(reader: &mut Reader<'_>, path: &[Step], value: &Value) -> Option<Argument> {
    let object = reader.object(path, value)?;
    let input = read_input(reader, path, object, false);
    let repeated = reader.flag(path, object, "isRepeated");
    let kind = match reader
        .required_string(path, object, "type", "`positional` or `named`")?
        .as_str()
    {
        "positional" => {
            let value_hint = reader.string(path, object, "valueHint");
            if value_hint.is_none() && input.value.is_none() {
                reader.error(
                    path,
                    ConfigErrorKind::MissingField,
                    "a positional argument needs a `value` or a `valueHint`",
                    "add `\"value\"` for a fixed argument or `\"valueHint\"` naming the one the user supplies",
                );
                return None;
            }
            ArgumentKind::Positional { value_hint }
        }
        "named" => ArgumentKind::Named {
            name: reader.required_string(
                path,
                object,
                "name",
                "the flag, with its dashes, e.g. `--port`",
            )?,
        },
        other => {
            reader.error(
                &join(path, "type"),
                ConfigErrorKind::InvalidValue,
                format!("unknown argument type `{other}`"),
                "use `positional` or `named`",
            );
            return None;
        }
    };
    Some(Argument {
        kind,
        input,
        repeated,
    })
}

fn read_key_value(
    reader: &mut Reader<'_>,
    path: &[Step],
    value: &Value,
    what: &str,
) -> Option<KeyValue> {
    let object = reader.object(path, value)?;
    let input = read_input(reader, path, object, false);
    let name = reader.required_string(path, object, "name", what)?;
    Some(KeyValue { name, input })
}

fn read_list<T>(
    reader: &mut Reader<'_>,
    path: &[Step],
    object: &Map<String, Value>,
    key: &str,
    mut read: impl FnMut(&mut Reader<'_>, &[Step], &Value) -> Option<T>,
) -> Vec<T> {
    let list_path = join(path, key);
    let items = reader.array(path, object, key);
    items
        .iter()
        .enumerate()
        .filter_map(|(i, value)| read(reader, &join_index(&list_path, i), value))
        .collect()
}

/// Reads the package at `path`: `None` when a part it cannot do without is missing or
/// wrong (each problem is reported to `reader`).
fn read_package(reader: &mut Reader<'_>, path: &[Step], value: &Value) -> Option<Package> {
    let object = reader.object(path, value)?;
    check_snake_case(reader, path, object);
    let kind = read_package_type(reader, path, object);
    let identifier = reader.required_string(
        path,
        object,
        "identifier",
        "the package's name, image or download URL",
    );
    let version = read_version(reader, path, object, kind);
    let version_spot = reader.spot(&join(path, "version"));
    let file_sha256_spot = reader.spot(&join(path, "fileSha256"));
    let file_sha256 = read_file_sha256(reader, path, object);
    if kind == Some(PackageType::Mcpb) {
        check_bundle(
            reader,
            path,
            object,
            file_sha256.as_ref(),
            identifier.as_deref(),
        );
    }
    let transport_path = join(path, "transport");
    let transport = read_package_transport(reader, path, object);
    let runtime_arguments = read_list(reader, path, object, "runtimeArguments", read_argument);
    let package_arguments = read_list(reader, path, object, "packageArguments", read_argument);
    let environment = read_list(reader, path, object, "environmentVariables", |r, p, v| {
        read_key_value(r, p, v, "the environment variable's name")
    });
    Some(Package {
        kind: kind?,
        identifier_spot: reader.spot(&join(path, "identifier")),
        identifier: identifier?,
        version,
        version_spot,
        file_sha256,
        file_sha256_spot,
        transport: transport?,
        transport_spot: reader.spot(&transport_path),
        runtime_arguments,
        package_arguments,
        environment,
    })
}

/// The package's `registryType` (required; an unknown one is reported).
fn read_package_type(
    reader: &mut Reader<'_>,
    path: &[Step],
    object: &Map<String, Value>,
) -> Option<PackageType> {
    let text = reader.required_string(
        path,
        object,
        "registryType",
        "`npm`, `pypi`, `oci`, `nuget` or `mcpb`",
    )?;
    let kind = PackageType::parse(&text);
    if kind.is_none() {
        reader.error(
            &join(path, "registryType"),
            ConfigErrorKind::InvalidValue,
            format!("unknown package type `{text}`"),
            "use `npm`, `pypi`, `oci`, `nuget` or `mcpb`",
        );
    }
    kind
}

/// The package's `version`: it must be one exact version, and npm, PyPI and NuGet
/// packages must have one (else they are not pinned).
fn read_version(
    reader: &mut Reader<'_>,
    path: &[Step],
    object: &Map<String, Value>,
    kind: Option<PackageType>,
) -> Option<String> {
    let version = reader.string(path, object, "version");
    if let Some(version) = &version
        && let Some(problem) = not_exact(version)
    {
        reader.error(
            &join(path, "version"),
            ConfigErrorKind::InvalidValue,
            format!("package version `{version}` {problem}"),
            "pin one exact version, e.g. `1.0.2`, so the same code runs every time",
        );
    }
    if version.is_none()
        && matches!(
            kind,
            Some(PackageType::Npm | PackageType::Pypi | PackageType::Nuget)
        )
    {
        reader.error(
            path,
            ConfigErrorKind::MissingField,
            "`version` is missing: the package is not pinned",
            "add `\"version\"` with one exact version, e.g. `1.0.2`",
        );
    }
    version
}

/// The package's `fileSha256`, if it has one that is a SHA-256 digest (another is
/// reported).
fn read_file_sha256(
    reader: &mut Reader<'_>,
    path: &[Step],
    object: &Map<String, Value>,
) -> Option<FileSha256> {
    let hex = reader.string(path, object, "fileSha256")?;
    let digest = FileSha256::parse(&hex);
    if digest.is_none() {
        reader.error(
            &join(path, "fileSha256"),
            ConfigErrorKind::InvalidValue,
            format!("`{hex}` is not a SHA-256 digest"),
            "write the file's SHA-256 as 64 lowercase hex digits (`sha256sum FILE`)",
        );
    }
    digest
}

/// An `http://` URL on this machine (`127.0.0.1`, `localhost`, `[::1]`): nobody on the way
/// can change what it serves (a local mirror, or a test's registry).
fn loopback_http(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = if authority.starts_with('[') {
        authority.split_inclusive(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

/// Reports what an `mcpb` bundle lacks: its `fileSha256` (unless one is given that is
/// wrong, reported already), or an https:// download URL (or http:// on loopback) as its
/// `identifier`.
fn check_bundle(
    reader: &mut Reader<'_>,
    path: &[Step],
    object: &Map<String, Value>,
    file_sha256: Option<&FileSha256>,
    identifier: Option<&str>,
) {
    if file_sha256.is_none() && !object.contains_key("fileSha256") {
        reader.error(
            path,
            ConfigErrorKind::MissingField,
            "an `mcpb` package needs `fileSha256`: without it the downloaded bundle cannot be checked",
            "add `\"fileSha256\"` with the bundle's SHA-256 (64 lowercase hex digits)",
        );
    }
    if let Some(url) = identifier
        && !url.starts_with("https://")
        && !loopback_http(url)
    {
        reader.error(
            &join(path, "identifier"),
            ConfigErrorKind::InvalidUrl,
            format!("`{url}` is not an https:// download URL"),
            "point `identifier` at the bundle's https:// release asset",
        );
    }
}

/// The kind of the package's `transport` (required).
fn read_package_transport(
    reader: &mut Reader<'_>,
    path: &[Step],
    object: &Map<String, Value>,
) -> Option<TransportKind> {
    let Some(value) = object.get("transport") else {
        reader.error(
            path,
            ConfigErrorKind::MissingField,
            "`transport` is missing",
            "add `\"transport\": {\"type\": \"stdio\"}`",
        );
        return None;
    };
    read_transport(reader, &join(path, "transport"), value).map(|(kind, _, _)| kind)
}

/// A transport object: its kind, URL (for HTTP) and the object.
fn read_transport<'v>(
    reader: &mut Reader<'_>,
    path: &[Step],
    value: &'v Value,
) -> Option<(TransportKind, Option<String>, &'v Map<String, Value>)> {
    let object = reader.object(path, value)?;
    let kind = match reader
        .required_string(path, object, "type", "`stdio`, `streamable-http` or `sse`")?
        .as_str()
    {
        "stdio" => TransportKind::Stdio,
        "streamable-http" => TransportKind::StreamableHttp,
        "sse" => TransportKind::Sse,
        other => {
            reader.error(
                &join(path, "type"),
                ConfigErrorKind::InvalidValue,
                format!("unknown transport type `{other}`"),
                "use `stdio`, `streamable-http` or `sse`",
            );
            return None;
        }
    };
    let url = match kind {
        TransportKind::Stdio => None,
        _ => Some(reader.required_string(path, object, "url", "the endpoint URL")?),
    };
    Some((kind, url, object))
}

fn read_remote(reader: &mut Reader<'_>, path: &[Step], value: &Value) -> Option<Remote> {
    let (kind, url, object) = read_transport(reader, path, value)?;
    if kind == TransportKind::Stdio {
        reader.error(
            &join(path, "type"),
            ConfigErrorKind::InvalidValue,
            "a remote cannot use the `stdio` transport",
            "use `streamable-http` or `sse`, or describe a local server under `packages`",
        );
        return None;
    }
    let url = url?;
    if !(url.starts_with("https://") || url.starts_with("http://") || url.starts_with('{')) {
        reader.error(
            &join(path, "url"),
            ConfigErrorKind::InvalidUrl,
            format!("`{url}` is not an http:// or https:// URL"),
            "write an absolute URL such as `https://example.com/mcp`",
        );
    }
    let headers = read_list(reader, path, object, "headers", |r, p, v| {
        read_key_value(r, p, v, "the header's name")
    });
    let mut variables = Vec::new();
    if let Some(value) = object.get("variables") {
        let variables_path = join(path, "variables");
        if let Some(map) = reader.object(&variables_path, value) {
            for (name, value) in map {
                let variable_path = join(&variables_path, name);
                if let Some(variable) = reader.object(&variable_path, value) {
                    variables.push((
                        name.clone(),
                        read_input(reader, &variable_path, variable, true),
                    ));
                }
            }
        }
    }
    Some(Remote {
        kind,
        url_spot: reader.spot(&join(path, "url")),
        url,
        headers,
        variables,
    })
}

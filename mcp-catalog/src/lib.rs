//! Configuration for MCP servers: the TOML and `.mcp.json` model (and the files of other
//! clients, see [`ConfigFormat`]), validation with every error located and actionable, sources merged by precedence into one winner per
//! [`McpServerKey`](mcp_key::McpServerKey), multi-environment resolution, tool filters and
//! connection fingerprints. Pure data: no processes, no network; the only I/O is
//! [`load_file`] and reading plugin folders ([`Plugin::load`]).
//!
//! ```
//! use mcp_catalog::{CatalogBuilder, Config, EmptyEnv, Transport};
//! use mcp_key::{EnvironmentId, McpServerKey, ServerName};
//!
//! let text = r#"
//! [environments.devbox]
//! wrapper = ["ssh", "devbox", "--"]
//!
//! [mcp_servers.files]
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
//! disabled_tools = ["delete"]
//!
//! [mcp_servers.files-remote]
//! command = "files-server"
//! environment = "devbox"
//! "#;
//! let loaded = Config::from_toml_str(text, "config.toml")?;
//! let catalog = CatalogBuilder::new().with_user_config(loaded).build();
//!
//! let files = McpServerKey::unscoped(ServerName::new("files")?);
//! let server = catalog.get(&files).expect("configured above");
//! assert!(matches!(server.transport(), Transport::Stdio(s) if s.command() == "npx"));
//! assert!(!server.tool_filter().allows("delete"));
//!
//! // A server whose environment is not `local` gets an environment-scoped key.
//! let devbox = EnvironmentId::new("devbox")?;
//! let remote = McpServerKey::in_environment(devbox, ServerName::new("files-remote")?);
//! assert_eq!(catalog.resolve_server_name(&ServerName::new("files-remote")?), Some(&remote));
//! let fingerprint = catalog.fingerprint(&remote, &EmptyEnv).expect("active server");
//! assert_eq!(fingerprint.to_hex().len(), 64);
//!
//! // Errors name the place, the server, the field, and what to do. An error inside one
//! // server entry fails only that server: it is kept as an unusable server.
//! let loaded = Config::from_toml_str("[mcp_servers.x]\nurl = \"ftp://host\"\n", "c.toml")?;
//! let (_, unusable) = loaded.config().unusable_servers().next().expect("x is unusable");
//! assert_eq!(
//!     unusable.to_string(),
//!     "c.toml:2:7: server `x`: field `url`: `ftp://host` must be an absolute URL starting \
//!      with http:// or https:// (use an absolute URL such as `https://example.com/mcp`)"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Sources and precedence
//!
//! [`CatalogBuilder`] takes registrations from [`Source`]s in five [`Tier`]s (discovered
//! plugins, selected plugins, user configuration, built-in servers, run-time extensions).
//! See [`CatalogBuilder`] and [`ResolvedCatalog`] for the rules, vetoes and legacy names.
//!
//! # Plugins installed per environment
//!
//! A [`Plugin`] is a folder whose [`PLUGIN_JSON_FILE`] (`.mcp.json`) or
//! [`PLUGIN_TOML_FILE`] (`mcp.toml`) declares servers ([`Plugin::load`]; exactly one of the
//! two files). Installing it ([`CatalogBuilder::add_plugin`], in a [`PluginTier`]) in
//! environments `["local", "devbox"]` registers each server `name` as `name@local` and
//! `name@devbox`; the installation, not the file, decides where a server runs. A user
//! configuration's `[[plugins]] path = "...", environments = [...]` entries are loaded as
//! selected plugins by [`CatalogBuilder::add_user_config_with_plugins`] (paths relative to
//! the configuration's folder) or [`CatalogBuilder::load_plugins`].
//!
//! # Startup policy and the tool catalog cache
//!
//! `startup`, `protocol`, `tool_drift` and `log_level` are the settings a server inherits
//! from the catalog: one struct, [`ServerDefaults`], held catalog-wide
//! ([`Config::server_defaults`]) and as each server's own values
//! ([`ServerConfig::overrides`]); a server's own value wins, else the catalog's, else the
//! setting's default ([`ResolvedCatalog::server_settings`]).
//!
//! The protocol era of each server: `protocol = "auto" | "2026-07-28" | "2025-11-25"` per
//! server, `mcp_protocol` catalog-wide (a server's own value wins; default `auto`: probe
//! with MCP 2026-07-28's `server/discover`, fall back to the 2025-11-25 `initialize`
//! handshake). [`ResolvedCatalog::protocol`] gives the effective [`ProtocolChoice`].
//!
//! ```
//! use mcp_catalog::{CatalogBuilder, Config, ProtocolChoice};
//! use mcp_key::{McpServerKey, ServerName};
//!
//! let text = "mcp_protocol = \"2025-11-25\"\n\
//!             [mcp_servers.new]\ncommand = \"new-server\"\nprotocol = \"auto\"\n\
//!             [mcp_servers.old]\ncommand = \"old-server\"\n";
//! let catalog = CatalogBuilder::new()
//!     .with_user_config(Config::from_toml_str(text, "config.toml")?)
//!     .build();
//! let key = |name: &str| McpServerKey::unscoped(ServerName::new(name).unwrap());
//! assert_eq!(catalog.protocol(&key("new")), ProtocolChoice::Auto);
//! assert_eq!(catalog.protocol(&key("old")), ProtocolChoice::V2025_11_25);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! What a host does when a server changes a tool it pinned (see `mcp-connections`' tool
//! pins): `tool_drift = "notice" | "reapprove" | "block"` per server, or catalog-wide (a
//! server's own value wins). `reapprove`, the default, holds back the changes that add risk
//! until the user accepts them; `notice` holds back nothing; `block` holds back every change
//! and accepts only out of band. [`ResolvedCatalog::tool_drift`] gives the effective
//! [`ToolDriftPolicy`]; the trust review shows a file that sets it.
//!
//! `tool_exposure = "all" | "search"` (catalog-wide) says which tools a gateway in front
//! of the catalog lists: every tool, or one that searches them and one that calls one by
//! name ([`ResolvedCatalog::tool_exposure`], [`ToolExposure`]).
//!
//! A `[gateway]` table says how a gateway in front of the catalog (`mcpctl serve --http`)
//! authenticates its callers (`[gateway.oauth]`: an OAuth 2.1 resource server), the
//! bounds per caller (`[gateway.limits]`) and what each caller may use
//! (`[[gateway.grants]]`): [`ResolvedCatalog::gateway`], [`GatewayConfig`]. A later file's
//! table replaces an earlier one whole.
//!
//! ```
//! use mcp_catalog::{CatalogBuilder, Config, TokenValidation};
//!
//! let text = "[gateway.oauth]\nissuer = \"https://idp.example.com\"\nscopes = [\"mcp\"]\n\
//!             [[gateway.grants]]\ngroups = [\"platform\"]\nservers = [\"*\"]\n";
//! let catalog = CatalogBuilder::new()
//!     .with_user_config(Config::from_toml_str(text, "config.toml")?)
//!     .build();
//! let gateway = catalog.gateway().expect("written");
//! let oauth = gateway.oauth().expect("written");
//! assert_eq!(oauth.issuer(), "https://idp.example.com");
//! assert_eq!(oauth.validation(), &TokenValidation::Jwt);
//! assert!(gateway.grants()[0].applies_to("bob", &["platform".to_owned()], &[]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `log_level = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" |
//! "emergency"` per server, or catalog-wide (a server's own value wins), is the least
//! severe level of log messages a server should send; the connection layer sends it as
//! `logging/setLevel`. [`ResolvedCatalog::log_level`] gives the effective [`LogLevel`], or
//! `None` when neither is written: nothing is sent and the server keeps its own level. It
//! is not part of the [connection fingerprint](connection_fingerprint) (it changes nothing
//! of how the server is reached; a host that shares connections keys them by it itself,
//! since one connection has one level) nor of the trust review (it starts nothing, reads
//! nothing and sends no credentials).
//!
//! ```
//! use mcp_catalog::{CatalogBuilder, Config, LogLevel};
//! use mcp_key::{McpServerKey, ServerName};
//!
//! let text = "log_level = \"info\"\n\
//!             [mcp_servers.noisy]\ncommand = \"noisy\"\nlog_level = \"warning\"\n\
//!             [mcp_servers.quiet]\ncommand = \"quiet\"\n";
//! let catalog = CatalogBuilder::new()
//!     .with_user_config(Config::from_toml_str(text, "config.toml")?)
//!     .build();
//! let key = |name: &str| McpServerKey::unscoped(ServerName::new(name).unwrap());
//! assert_eq!(catalog.log_level(&key("noisy")), Some(LogLevel::Warning));
//! assert_eq!(catalog.log_level(&key("quiet")), Some(LogLevel::Info));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Two settings say how a host may use its tool catalog cache; neither changes the
//! [connection fingerprint](connection_fingerprint), so changing them never restarts a
//! server:
//!
//! ```toml
//! mcp_startup = "lazy_when_cached"  # catalog-wide: eager (default) | lazy_when_cached
//!
//! [mcp_servers.files]
//! command = "npx"
//! startup = "eager"                 # this server's own policy wins over mcp_startup
//! tool_cache = false                # default true; false keeps its tools out of the cache
//! ```
//!
//! [`StartupPolicy::LazyWhenCached`] lets a host show a server's cached tools and start it
//! on first use. [`ResolvedCatalog::startup_policy`] and
//! [`ResolvedCatalog::tool_cache_enabled`] give the effective values; an unknown policy is
//! an error naming the server, the field, the value and the accepted values.
//!
//! ```
//! use mcp_catalog::{CatalogBuilder, Config, StartupPolicy};
//! use mcp_key::{McpServerKey, ServerName};
//!
//! let text = "mcp_startup = \"lazy_when_cached\"\n\
//!             [mcp_servers.files]\ncommand = \"npx\"\ntool_cache = false\n";
//! let catalog = CatalogBuilder::new()
//!     .with_user_config(Config::from_toml_str(text, "config.toml")?)
//!     .build();
//! let files = McpServerKey::unscoped(ServerName::new("files")?);
//! assert_eq!(catalog.startup_policy(&files), StartupPolicy::LazyWhenCached);
//! assert!(!catalog.tool_cache_enabled(&files));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A host that shows a model search tools instead of every tool (search mode) still lists
//! the tools a server pins beside them: `always_load = true` pins every tool of the
//! server, `always_load_tools = ["read_file"]` pins those (raw names; each must pass the
//! server's `enabled_tools`/`disabled_tools`, and the list is an error beside
//! `always_load = true`). [`ServerConfig::always_loads`] answers for one tool.
//!
//! ```
//! use mcp_catalog::Config;
//! use mcp_key::ServerName;
//!
//! let text = "[mcp_servers.files]\ncommand = \"npx\"\nalways_load_tools = [\"read_file\"]\n";
//! let loaded = Config::from_toml_str(text, "config.toml")?;
//! let files = &loaded.config().servers()[&ServerName::new("files")?];
//! assert!(files.always_loads("read_file"));
//! assert!(!files.always_loads("write_file"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Decisions where the specification leaves room
//!
//! - Within the user and built-in tiers the *later* registration wins (a project file
//!   loaded after the global one overrides it); only the two plugin tiers are
//!   earlier-wins, and only the run-time tier is specified as later-wins.
//! - `enabled = false` vetoes the key of the winning registration; `disable(name)` vetoes
//!   the name in every environment. After [`ResolvedCatalog::to_builder`] both keep
//!   vetoing later registrations, except vetoes from selected plugins, which only apply
//!   to registrations made before the catalog was reopened.
//! - Legacy winner of a name: the unscoped key, else the `local`-scoped key, else the
//!   smallest environment id. Only active (non-vetoed) keys compete.
//! - `ResolvedCatalog::iter` lists every active server; hosts start and show
//!   [`ResolvedCatalog::exposed_keys`] (all of them with `multi_environment` on).
//! - A plugin is named after its folder; an `environment` in its file, and any top-level
//!   setting of its `mcp.toml`, is ignored with a warning. With `multi_environment` off,
//!   the legacy winner of a plugin server is its `local` installation unless the user
//!   configuration has an unscoped server of that name. Undeclared environments in
//!   `[[plugins]]` are TOML errors; through the API they are a warning of
//!   [`CatalogBuilder::build`].
//! - `.mcp.json` positions are found by a small scanner over the accepted text (serde_json
//!   keeps none); an error points at the offending key, or at its server's key.
//! - Unknown keys (anywhere) are warnings; the fields of the other transport, inline
//!   secrets and every invalid value are errors. An error inside a server entry whose name
//!   is valid fails only that server ([`Transport::Unusable`], which hosts report as a
//!   failed server); syntax errors, invalid top-level settings and invalid server names fail
//!   the whole text. [`LoadedConfig::into_strict`] restores all-or-nothing.

// The layers, lowest first; each imports only the ones before it (see each `mod.rs`):
// the shared root modules (`diagnostic`, `env`, `error`), then `model`, `formats`,
// `resolve`, and at the top `hosts`, `export` and `registry`. `tests/layering.rs` checks it.
mod diagnostic;
mod env;
mod error;
mod export;
mod formats;
mod hosts;
mod model;
mod registry;
mod resolve;

pub use diagnostic::{
    ConfigError, ConfigErrorKind, ConfigErrors, ConfigWarning, Location, json_type_name,
};
pub use env::{EmptyEnv, EnvLookup, ProcessEnv};
pub use error::{Error, PluginFolderProblem};
pub use export::toml_write::{export_toml, server_toml};
pub use formats::inputs::{DeclaredInput, declared_inputs};
pub use formats::load::{load_file, load_file_with_env};
pub use hosts::clients::{
    ClientKind, Scope, UnknownClient, client_config_paths, client_config_paths_in,
};
pub use hosts::discover::{Discovered, Discovery, PROJECT_FILES, plugins_outside_folder};
pub use hosts::trust::{
    Review, ReviewedEnvironment, ReviewedFile, ReviewedServer, TRUST_STORE_VERSION, TrustState,
    TrustStore, changes_what_runs, content_hash, review_file, trust_target,
};
pub use model::config::{
    Config, CredentialsStore, ElicitationPolicy, EnvironmentConfig, LoadedConfig, PluginRef,
};
pub use model::defaults::ServerDefaults;
pub use model::filter::ToolFilter;
pub use model::fingerprint::{CONNECTION_FINGERPRINT_DOMAIN, connection_fingerprint};
pub use model::format::{CODEX_STARTUP_TIMEOUT, CODEX_TOOL_TIMEOUT, ConfigFormat};
pub use model::gateway::{
    DEFAULT_GROUPS_CLAIM, GatewayConfig, GatewayGrant, GatewayLimits, GatewayOAuth, Introspection,
    TokenValidation, glob_match,
};
pub use model::log_level::LogLevel;
pub use model::policy::{ProtocolChoice, StartupPolicy, ToolDriftPolicy};
pub use model::remote_line::{
    REMOTE_SUPERVISOR, REMOTE_SUPERVISOR_NAME, RemoteCommand, quote_sh, quote_words, remote_line,
    remote_stdin, server_remote_line, server_remote_stdin,
};
pub use model::server::{
    ApprovalMode, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ServerConfig, ToolExposure,
};
pub use model::ssh::{SSH_FIXED_OPTIONS, SSH_PROGRAM, SshConfig};
pub use model::transport::{
    AuthMode, EmaConfig, HttpConfig, OAuthConfig, SSE_LABEL, STDIO_LABEL, STREAMABLE_HTTP_LABEL,
    StdioConfig, Transport, UNUSABLE_LABEL, UnusableServer,
};
pub use model::upstream_identity::{TokenExchangeConfig, UpstreamIdentity};
pub use model::workload::{WorkloadIdentityConfig, WorkloadTokenLocation};
pub use registry::digest::FileSha256;
pub use registry::document::{
    InputFormat, InstallTarget, PackageType, REGISTRY_SCHEMA_VERSIONS, RegistryServer,
};
pub use registry::inputs::{InputValues, RegistryInput};
pub use registry::mcpb::{
    MCPB_MANIFEST_MAX_BYTES, McpbError, McpbManifest, McpbServerType, mcpb_entry_path,
    mcpb_folder_name,
};
pub use registry::plan::{InstallPlan, Launch, McpbBundle, Provenance, ProvenanceSource};
pub use registry::record::EntryCheck;
pub use resolve::builder::CatalogBuilder;
pub use resolve::plugin::{PLUGIN_JSON_FILE, PLUGIN_TOML_FILE, Plugin, PluginTier};
pub use resolve::resolved::ResolvedCatalog;
pub use resolve::source::{Conflict, Source, Tier, VetoReason};

// The README's example, compiled and run as a doc test (not part of the rendered docs).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

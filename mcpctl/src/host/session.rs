//! One run's connection set: configuration, startup, progress, shutdown.

use std::sync::Arc;

use mcp_catalog::{CatalogBuilder, LoadedConfig, ResolvedCatalog};
use mcp_connections::{
    ConnectionEvent, ConnectionSet, ConnectionSetOptions, ServerState, ServerStatus,
    StartupSummary, ToolCache,
};
use mcp_key::McpServerKey;
use mcp_testkit::HttpFakeServer;
use tokio::sync::mpsc;

use crate::cli::GlobalArgs;
use crate::error::CliError;
use crate::host::config;
use crate::term::progress::{self, ProgressMode};

/// The loaded configuration, before any server starts.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The configuration files, lowest precedence first (one for `--config` or a project
    /// file; the demo's configuration for the demo).
    pub(crate) files: Vec<LoadedConfig>,
    /// The catalog builder with the files and their plugins.
    builder: CatalogBuilder,
    /// The demo's HTTP server, when running the demo.
    pub(crate) demo_http: Option<HttpFakeServer>,
    /// Whether this is the embedded demo (credentials stay in memory).
    pub(crate) demo: bool,
    /// False for a project file loaded only for review: nothing expanded, no plugins.
    pub(crate) trusted: bool,
}

impl Loaded {
    /// Finds and loads the configuration ([`crate::host::trust::find`]), or starts the demo
    /// (printing the demo notice). `demo_http` says whether the demo needs its HTTP server
    /// running; `all_warnings` prints every warning instead of summarizing unknown
    /// top-level keys.
    pub(crate) async fn find(
        global: &GlobalArgs,
        demo_http: bool,
        all_warnings: bool,
    ) -> Result<Self, CliError> {
        let discovery = config::discovery(global)?;
        match crate::host::trust::find(&discovery, global.json)? {
            Some((files, builder)) => Ok(Self::ready(files, builder, all_warnings)),
            None => match config::client_not_found(global, &discovery) {
                Some(error) => Err(error),
                None => Self::demo(demo_http).await,
            },
        }
    }

    /// A configuration that may be used; prints its warnings.
    pub(crate) fn ready(
        files: Vec<LoadedConfig>,
        builder: CatalogBuilder,
        all_warnings: bool,
    ) -> Self {
        for file in &files {
            config::print_warnings(file, all_warnings);
        }
        Self {
            files,
            builder,
            demo_http: None,
            demo: false,
            trusted: true,
        }
    }

    /// Starts the demo (printing the demo notice).
    pub(crate) async fn demo(demo_http: bool) -> Result<Self, CliError> {
        eprintln!("{}", config::DEMO_NOTICE);
        let demo = crate::host::demo::start(demo_http).await?;
        Ok(Self {
            builder: CatalogBuilder::new().with_user_config(demo.loaded.clone()),
            files: vec![demo.loaded],
            demo_http: demo.http,
            demo: true,
            trusted: true,
        })
    }

    /// Files of which a project file is not trusted, loaded for review only
    /// ([`mcp_catalog::Discovery::review`]): no variable expanded, no plugin loaded. Never
    /// to be started.
    pub(crate) fn for_review(files: Vec<LoadedConfig>, all_warnings: bool) -> Self {
        let mut builder = CatalogBuilder::new();
        for file in &files {
            config::print_warnings(file, all_warnings);
            builder.add_user_config(file.clone());
        }
        Self {
            builder,
            files,
            demo_http: None,
            demo: false,
            trusted: false,
        }
    }

    /// Where the configuration comes from: its files' paths (or `<embedded demo>`).
    pub(crate) fn origin(&self) -> String {
        self.files
            .iter()
            .map(LoadedConfig::origin)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The resolved catalog of this configuration, with the plugins its `[[plugins]]`
    /// entries install; without plugins when the file is not trusted.
    pub(crate) fn catalog(&self) -> ResolvedCatalog {
        self.builder.build()
    }
}

/// `options` with the secrets `mcpctl add` stored for the entries that refer to them
/// (`${secret:NAME}`), read from the credential store only when some entry does: every
/// program that starts the configuration's servers (the commands and `mcpctl serve`)
/// resolves them the same way.
pub(crate) async fn with_stored_secrets(
    options: ConnectionSetOptions,
    catalog: &ResolvedCatalog,
) -> ConnectionSetOptions {
    let open = || crate::host::auth::open_store(catalog, false).map_err(|e| e.message().to_owned());
    match crate::term::inputs::SecretEnv::for_catalog(catalog, open).await {
        Some(secrets) => options.with_env_lookup(Arc::new(secrets)),
        None => options,
    }
}

/// The options every host of this program starts its connection sets with: its client
/// identity, the persisted tool catalog cache (not for the demo, whose HTTP server gets a
/// new port, so a new fingerprint, on every run) and the credential store, opened only
/// when a server may use it (`auto` probes the keyring). Returns the store too.
pub(crate) fn host_options(
    loaded: &Loaded,
    catalog: &ResolvedCatalog,
) -> (
    ConnectionSetOptions,
    Option<Arc<dyn mcp_auth::CredentialStore>>,
) {
    let mut options = ConnectionSetOptions::new().with_client(|c| {
        c.with_client_info(mcp_connections::model::Implementation::new(
            "mcpctl",
            env!("CARGO_PKG_VERSION"),
        ))
    });
    if let Some(dir) = crate::host::auth::data_dir().filter(|_| !loaded.demo) {
        options = options
            .with_tool_cache(ToolCache::persisted(
                dir.join(TOOL_CACHE_DIR),
                TOOL_CACHE_CAPACITY,
                TOOL_CACHE_TTL,
            ))
            // Tools are pinned as first seen; a risky change waits for `mcpctl accept`.
            .with_tool_pins(Arc::new(mcp_connections::ToolPins::persisted(
                dir.join(TOOL_CACHE_DIR),
            )));
    }
    let mut store = None;
    if loaded.demo || crate::host::auth::any_oauth(catalog) {
        match crate::host::auth::open_store(catalog, loaded.demo) {
            Ok(opened) => {
                options = options.with_credential_store(Arc::clone(&opened));
                store = Some(opened);
            }
            Err(e) => crate::term::render::warn(&format!(
                "{}; HTTP servers connect without stored credentials",
                e.message()
            )),
        }
    }
    (options, store)
}

/// The folder of the tool catalog cache, in the data directory.
pub(crate) const TOOL_CACHE_DIR: &str = "cache";
/// Listings kept in the cache: enough for every server of several configurations.
const TOOL_CACHE_CAPACITY: u64 = 256;
/// How long a cached listing is shown by `tools --cached` (and used by
/// `startup = "lazy_when_cached"` servers): a week.
const TOOL_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// A running connection set and what it needs to shut down.
pub(crate) struct Session {
    /// The connection set.
    pub(crate) set: ConnectionSet,
    /// The configuration's origin (a path or `<embedded demo>`).
    pub(crate) origin: String,
    /// The resolved configuration the set was started from.
    pub(crate) catalog: ResolvedCatalog,
    /// The credential store the set uses (opened only when a server may need it).
    pub(crate) store: Option<Arc<dyn mcp_auth::CredentialStore>>,
    events: Option<mpsc::UnboundedReceiver<ConnectionEvent>>,
    demo_http: Option<HttpFakeServer>,
}

impl Session {
    /// Loads the configuration and starts every server (returns at once). With
    /// `cache_only`, starts nothing: servers with a cached tool listing show it.
    /// With `defer_cached`, a server whose listing is cached is not started (its cached
    /// tools are shown) and the others start.
    pub(crate) async fn start(
        global: &GlobalArgs,
        cache_only: bool,
        defer_cached: bool,
    ) -> Result<Self, CliError> {
        let loaded = Loaded::find(global, true, false).await?;
        let catalog = loaded.catalog();
        let (tx, rx) = mpsc::unbounded_channel();
        let (options, store) = host_options(&loaded, &catalog);
        let options = with_stored_secrets(options, &catalog)
            .await
            // Commands wait for startup themselves (with progress); listing never waits.
            .with_tools_grace(std::time::Duration::ZERO)
            .with_events(tx)
            .with_elicitation_handler(Arc::new(crate::term::elicit::TerminalElicitation::new()))
            .with_approver(Arc::new(crate::term::approve::TerminalApprover::new()))
            .with_cache_only(cache_only)
            .with_defer_cached(defer_cached);
        let set = ConnectionSet::start(&catalog, options);
        Ok(Self {
            set,
            origin: loaded.origin(),
            catalog,
            store,
            events: Some(rx),
            demo_http: loaded.demo_http,
        })
    }

    /// Waits until every server settled, showing progress in `mode`.
    pub(crate) async fn wait_startup(&mut self, mode: ProgressMode) -> StartupSummary {
        match self.events.take() {
            Some(rx) => progress::show_startup(&self.set, rx, mode).await,
            None => self.set.wait_startup().await,
        }
    }

    /// Waits, showing progress in `mode`, until `enough()` is true (checked as each server
    /// settles) or every server settled. Returns whether `enough()` ended the wait.
    pub(crate) async fn wait_until(
        &mut self,
        mode: ProgressMode,
        enough: &(dyn Fn() -> bool + Send + Sync),
    ) -> bool {
        match self.events.take() {
            Some(rx) => progress::show_startup_until(&self.set, rx, mode, enough)
                .await
                .is_none(),
            None => {
                if enough() {
                    return true;
                }
                self.set.wait_startup().await;
                false
            }
        }
    }

    /// Waits for every server, or only for `only`, and returns the state of those servers
    /// (sorted by key).
    pub(crate) async fn wait_servers(
        &mut self,
        mode: ProgressMode,
        only: Option<&McpServerKey>,
    ) -> Vec<ServerStatus> {
        let Some(key) = only else {
            return self.wait_startup(mode).await.servers;
        };
        let set = self.set.clone();
        let wanted = key.clone();
        let settled = move || {
            set.status()
                .iter()
                .any(|s| s.key == wanted && !matches!(s.state, ServerState::Starting))
        };
        self.wait_until(mode, &settled).await;
        self.set
            .status()
            .into_iter()
            .filter(|s| &s.key == key)
            .collect()
    }

    /// The server named on the command line: its key (`name@env`) or its name. A bare
    /// name that several environments share is an error listing them.
    pub(crate) fn server_key(&self, given: &str) -> Result<McpServerKey, CliError> {
        if let Some(key) = self.set.servers().find(|k| k.to_string() == given) {
            return Ok(key.clone());
        }
        let parsed = given.parse::<McpServerKey>().ok();
        if let Some(key) = &parsed {
            match self.set.server_key(key.name(), key.environment()) {
                Ok(key) => return Ok(key),
                Err(e @ mcp_connections::Error::AmbiguousServer { .. }) => {
                    return Err(CliError::usage(e.to_string())
                        .with_kind("ambiguous_server")
                        .with_hint("pass --server NAME@ENVIRONMENT"));
                }
                Err(_) => {}
            }
        }
        let known: Vec<String> = self.set.servers().map(ToString::to_string).collect();
        let hint = if known.is_empty() {
            format!("no servers are enabled in {}", self.origin)
        } else {
            format!("configured servers: {}", known.join(", "))
        };
        Err(CliError::usage(format!("unknown MCP server `{given}`"))
            .with_kind("unknown_server")
            .with_hint(hint))
    }

    /// An error of the connection set for a person; a server that needs a login gets the
    /// hint that fits how it authenticates (`mcpctl login`, or its bearer token).
    pub(crate) fn error(&self, e: mcp_connections::Error) -> CliError {
        let login_hint = match &e {
            mcp_connections::Error::NotReady { server, .. } if e.is_auth_required() => self
                .catalog
                .get(server)
                .and_then(|config| crate::host::auth::login_hint(server, config)),
            _ => None,
        };
        let error = CliError::from(e);
        match login_hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }

    /// Stops every server (and the demo's HTTP server).
    pub(crate) async fn shutdown(self) {
        self.set.shutdown().await;
        if let Some(http) = self.demo_http {
            http.shutdown().await;
        }
    }
}

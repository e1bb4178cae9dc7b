//! The servers every row uses: one `mcp-fake-server` scenario with an `echo` tool, started
//! either through a connection set (catalogs of N servers) or by a bare rmcp client.

#![expect(
    clippy::disallowed_methods,
    reason = "the baseline is a bare rmcp client spawning the server itself, as a host without this workspace would"
)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_catalog::{
    CatalogBuilder, Config, LoadedConfig, ProtocolChoice, ResolvedCatalog, ServerConfig,
    StartupPolicy,
};
use mcp_key::{McpServerKey, ServerName};
use mcp_testkit::{Scenario, TestHome, ToolSpec};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};

use crate::Result;
use crate::spawned::{Spawned, free_port};

/// A running bare rmcp client and its server process.
pub(crate) type Bare = RunningService<RoleClient, ClientConfig>;

/// The temporary home of this run: the scenario file (whose path is in every server's
/// command line, which is how the leftover check finds this run's processes).
pub(crate) struct Fixture {
    home: TestHome,
    bin: PathBuf,
    args: Vec<String>,
    /// The arguments of a server that answers `server/discover` with "method not found".
    refusing_args: Vec<String>,
    /// The arguments of a server that exits on `server/discover`.
    closing_args: Vec<String>,
    /// The arguments of a 2026-era server whose `ask` asks one question (an MRTR round)
    /// and whose `echo` does not.
    asking_args: Vec<String>,
    bare_started: AtomicU64,
}

impl Fixture {
    /// Writes the scenario and finds (or builds) `mcp-fake-server`.
    pub(crate) fn new() -> Result<Self> {
        let home = TestHome::new()?;
        let scenario = home.join("bench.json");
        Scenario::new("bench")
            .with_tool(ToolSpec::echo("echo"))
            .write_json(&scenario)?;
        // Its path starts with the first one's, so the marker finds its processes too.
        let refusing = home.join("bench.json.refusing.json");
        Scenario::new("bench")
            .with_tool(ToolSpec::echo("echo"))
            .with_faults(mcp_testkit::Faults::new().with_refuse_discover())
            .write_json(&refusing)?;
        let closing = home.join("bench.json.closing.json");
        Scenario::new("bench")
            .with_tool(ToolSpec::echo("echo"))
            .with_faults(mcp_testkit::Faults::new().with_close_on_discover())
            .write_json(&closing)?;
        let asking = home.join("bench.json.asking.json");
        Scenario::new("bench")
            .with_tool(ToolSpec::new(
                "ask",
                mcp_testkit::Behavior::ElicitForm {
                    message: "Who is asking?".to_owned(),
                    schema: serde_json::json!({
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    }),
                },
            ))
            .with_tool(ToolSpec::echo("echo"))
            .with_faults(mcp_testkit::Faults::new().with_protocol_version("2026-07-28"))
            .write_json(&asking)?;
        let bin = mcp_testkit::try_fake_server_bin()?;
        let scenario_args = |path: &std::path::Path| {
            vec!["--scenario".to_owned(), path.to_string_lossy().into_owned()]
        };
        Ok(Self {
            home,
            bin,
            args: scenario_args(&scenario),
            refusing_args: scenario_args(&refusing),
            closing_args: scenario_args(&closing),
            asking_args: scenario_args(&asking),
            bare_started: AtomicU64::new(0),
        })
    }

    /// A path inside the temporary home.
    pub(crate) fn join(&self, name: &str) -> PathBuf {
        self.home.join(name)
    }

    /// The text that marks this run's server processes in their command line.
    pub(crate) fn marker(&self) -> &str {
        &self.args[1]
    }

    /// How many bare clients were started.
    pub(crate) fn bare_started(&self) -> u64 {
        self.bare_started.load(Ordering::Relaxed)
    }

    /// A catalog of `servers` copies of the server, named `s00`, `s01`, …; `lazy` sets
    /// `startup = "lazy_when_cached"`.
    pub(crate) fn catalog(&self, servers: usize, lazy: bool) -> Result<ResolvedCatalog> {
        // The bare rmcp clients of the baselines speak the 2025-11-25 handshake: the set
        // does too (no era probe), so rows compare like with like. The probe has its own
        // row ([`Self::catalog_with_protocol`]).
        self.catalog_with_protocol(servers, lazy, ProtocolChoice::V2025_11_25)
    }

    /// [`Self::catalog`] with each server's `protocol`.
    pub(crate) fn catalog_with_protocol(
        &self,
        servers: usize,
        lazy: bool,
        protocol: ProtocolChoice,
    ) -> Result<ResolvedCatalog> {
        self.catalog_of(&self.args, servers, lazy, protocol)
    }

    /// One server that answers `server/discover` with "method not found" (a 2025-era
    /// server of the TypeScript or Python SDK), with `protocol`.
    pub(crate) fn refusing_catalog(&self, protocol: ProtocolChoice) -> Result<ResolvedCatalog> {
        self.catalog_of(&self.refusing_args, 1, false, protocol)
    }

    /// One server that exits on `server/discover` (a 2025-era server built on an rmcp
    /// release before 2026-07-28), with `protocol`.
    pub(crate) fn closing_catalog(&self, protocol: ProtocolChoice) -> Result<ResolvedCatalog> {
        self.catalog_of(&self.closing_args, 1, false, protocol)
    }

    fn catalog_of(
        &self,
        args: &[String],
        servers: usize,
        lazy: bool,
        protocol: ProtocolChoice,
    ) -> Result<ResolvedCatalog> {
        let configs = (0..servers).map(|_| {
            ServerConfig::stdio(self.bin.to_string_lossy())
                .with_args(args.to_vec())
                .with_protocol(protocol)
        });
        let mut config = Self::config_of(configs)?;
        if lazy {
            config = config.with_startup_policy(StartupPolicy::LazyWhenCached);
        }
        Ok(CatalogBuilder::new()
            .with_user_config(LoadedConfig::new("bench", config))
            .build())
    }

    /// A catalog of `servers`, named `s00`, `s01`, … in order.
    pub(crate) fn catalog_from(
        servers: impl IntoIterator<Item = ServerConfig>,
    ) -> Result<ResolvedCatalog> {
        Ok(CatalogBuilder::new()
            .with_user_config(LoadedConfig::new("bench", Self::config_of(servers)?))
            .build())
    }

    fn config_of(servers: impl IntoIterator<Item = ServerConfig>) -> Result<Config> {
        let mut config = Config::new();
        for (i, server) in servers.into_iter().enumerate() {
            config = config.with_server(ServerName::new(format!("s{i:02}"))?, server);
        }
        Ok(config)
    }

    /// The server's program and arguments, for a gateway or proxy that starts it.
    pub(crate) fn server_command(&self) -> (&std::path::Path, &[String]) {
        (&self.bin, &self.args)
    }

    /// The program and arguments of a 2026-era server whose tool `ask` asks its caller
    /// one question (an `input_required` round) and then answers, beside an `echo`.
    pub(crate) fn asking_command(&self) -> (&std::path::Path, &[String]) {
        (&self.bin, &self.asking_args)
    }

    /// The server as `mcp-fake-server --http` (rmcp's streamable-HTTP server) on a free
    /// loopback port; its endpoint is `/mcp`.
    pub(crate) async fn http_server(&self) -> Result<Spawned> {
        let port = free_port()?;
        let mut cmd = tokio::process::Command::new(&self.bin);
        cmd.args(&self.args)
            .arg("--http")
            .arg(format!("127.0.0.1:{port}"));
        Spawned::listening(cmd, "mcp-fake-server --http", port).await
    }

    /// A bare rmcp client over streamable HTTP (rmcp's reqwest client, as rmcp's docs
    /// build it) to `url`, initialized with 2025-11-25.
    pub(crate) async fn bare_http(&self, url: &str) -> Result<Bare> {
        let transport = StreamableHttpClientTransport::with_client(
            reqwest::Client::new(),
            StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
        );
        Ok(bare_info().serve(transport).await?)
    }

    /// The keys of [`Self::catalog`]'s servers.
    pub(crate) fn keys(servers: usize) -> Result<Vec<McpServerKey>> {
        (0..servers)
            .map(|i| Ok(McpServerKey::unscoped(ServerName::new(format!("s{i:02}"))?)))
            .collect()
    }

    /// A bare rmcp client on its own process of the server, initialized.
    pub(crate) async fn bare(&self) -> Result<Bare> {
        let mut cmd = tokio::process::Command::new(&self.bin);
        cmd.args(&self.args);
        let (transport, _stderr) = TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()?;
        self.bare_started.fetch_add(1, Ordering::Relaxed);
        Ok(bare_info().serve(transport).await?)
    }
}

/// What a bare client announces: the 2025-11-25 handshake, no capabilities.
fn bare_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcp-bench-bare", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

/// Cancels bare clients (which closes stdin, then kills their processes) and waits.
pub(crate) async fn cancel_all(clients: Vec<Bare>) {
    futures::future::join_all(clients.into_iter().map(|c| async move {
        let _ = c.cancel().await;
    }))
    .await;
}

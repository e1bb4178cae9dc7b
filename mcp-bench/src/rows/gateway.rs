//! The gateway: a call from a connection set through `mcpctl serve` (over stdio, and over
//! streamable HTTP) versus straight to the same kind of stdio server, and through
//! `mcpctl serve --http` versus npm `mcp-proxy` fronting the same server, and through
//! `mcpctl serve --http` with `[gateway.oauth]` (every request's JWT checked against the
//! testkit's authorization server's keys) versus the same gateway with its static token,
//! and a 2026-era client's call (stateless, no session) versus the 2025-era session's
//! call through the same `mcpctl serve --http`, with its static token and as a caller
//! with grants (the `[gateway.oauth]` gateway's token's subject).
//! The paths are sampled in one loop, each round in a rotated order, so their ratios come
//! from the same minutes of the same machine.

use std::sync::Arc;
use std::time::Instant;

use mcp_catalog::{HttpConfig, ProtocolChoice, ServerConfig, StdioConfig};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_key::McpServerKey;
use mcp_testkit::{AccessTokenClaims, AuthServerOptions, FakeAuthServer};

use crate::fixture::Fixture;
use crate::installs::{self, Install};
use crate::rows::calls::{Echo, ready_set};
use crate::rows::http::http_server_config;
use crate::spawned::{Spawned, free_port};
use crate::stats::quantile;
use crate::table::{Row, Unit};
use crate::{Result, Settings, fail};

/// The gateway's bearer token (`MCPCTL_SERVE_TOKEN`), and the variable the set reads it
/// from.
pub(crate) const TOKEN: &str = "mcp-bench-gateway-token-0123456789";
pub(crate) const TOKEN_VAR: &str = "MCP_BENCH_GATEWAY_TOKEN";
/// The upstream server's name in the gateway's configuration.
const UPSTREAM: &str = "notes";
/// The scope the `[gateway.oauth]` gateway asks of every token.
const SCOPE: &str = "mcp:tools";

/// The paths, in the order `start_paths` pushes them.
const STRAIGHT: usize = 0;
const VIA_STDIO: usize = 1;
const VIA_HTTP: usize = 2;
const VIA_OAUTH: usize = 3;
const VIA_HTTP_2026: usize = 4;
const VIA_OAUTH_2026: usize = 5;
const VIA_PROXY: usize = 6;

/// One way to reach the server: a set, its server and the tool's name there.
pub(crate) struct Path {
    pub(crate) set: ConnectionSet,
    key: McpServerKey,
    call: Echo,
    pub(crate) samples: Vec<f64>,
}

impl Path {
    pub(crate) async fn over(set: ConnectionSet, call: Echo) -> Result<Self> {
        Ok(Self {
            set,
            key: Fixture::keys(1)?.remove(0),
            call,
            samples: Vec::new(),
        })
    }

    async fn call(&self) -> Result<()> {
        self.structured().await.map(drop)
    }

    /// One call; its structured content (`null` when none).
    pub(crate) async fn structured(&self) -> Result<serde_json::Value> {
        let arguments = self.call.arguments.clone().map(serde_json::Value::Object);
        let result = self
            .set
            .call_tool(&self.key, &self.call.tool, arguments, CallOptions::new())
            .await?;
        if result.is_error == Some(true) {
            return Err(fail(format!(
                "`{}` answered an error: {result:?}",
                self.call.tool
            )));
        }
        Ok(result.structured_content.unwrap_or_default())
    }
}

/// Rows of the gateway: over stdio and HTTP versus straight, and HTTP versus mcp-proxy.
pub(crate) async fn gateway(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let Some(mcpctl) = installs::mcpctl() else {
        return Ok(pending_rows());
    };
    let auth = FakeAuthServer::start(AuthServerOptions::new().with_jwt_access_tokens())
        .await
        .map_err(|e| fail(format!("cannot start the fake authorization server: {e}")))?;
    let mut processes = Vec::new();
    let mut paths = Vec::new();
    let result = start_paths(fx, &mcpctl, &auth, &mut processes, &mut paths).await;
    let result = match result {
        Ok(proxy) => sample(&mut paths, &s.slower(4)).await.map(|()| proxy),
        Err(e) => Err(e),
    };
    for path in &paths {
        path.set.shutdown().await;
    }
    crate::spawned::stop_all(processes).await;
    auth.shutdown().await;
    let proxied = result?;
    Ok(measured_rows(&paths, proxied))
}

/// The gateway's rows when mcpctl of the same build is missing: each says how to build it.
fn pending_rows() -> Vec<Row> {
    let hint = "needs mcpctl of the same build: cargo build --release -p mcpctl";
    vec![
        Row::pending(
            "gateway over stdio: call p50 via `mcpctl serve`",
            "≤ 2.2× straight",
            hint,
        ),
        Row::pending(
            "gateway over HTTP: call p50 via `mcpctl serve --http`",
            "—",
            hint,
        ),
        Row::pending(
            "gateway over HTTP vs mcp-proxy: call p50",
            "≤ 0.5× mcp-proxy",
            hint,
        ),
        Row::pending(OAUTH_ROW, "≤ 1.2× static token", hint),
        Row::pending(MODERN_ROW, "≤ 1.2× a 2025-era session", hint),
        Row::pending(MODERN_GRANTS_ROW, "≤ 1.2× a 2025-era session", hint),
    ]
}

/// The gateway's rows from the sampled paths (`proxied`: whether mcp-proxy's path ran).
fn measured_rows(paths: &[Path], proxied: bool) -> Vec<Row> {
    let p50 = |i: usize| quantile(&paths[i].samples, 0.5);
    let calls = paths[0].samples.len();
    let note = format!("{calls} calls per path, rotated order, one run");
    let mut rows = vec![
        Row::versus(
            "gateway over stdio: call p50 via `mcpctl serve`",
            Unit::Seconds,
            p50(VIA_STDIO),
            p50(STRAIGHT),
            "straight to the stdio server",
            "≤ 2.2× straight",
            |_, r| r <= 2.2,
        )
        .with_note(note.clone()),
        Row::reported(
            "gateway over HTTP: call p50 via `mcpctl serve --http`",
            Unit::Seconds,
            p50(VIA_HTTP),
            p50(STRAIGHT),
            "straight to the stdio server",
        )
        .with_note(note.clone()),
        Row::versus(
            OAUTH_ROW,
            Unit::Seconds,
            p50(VIA_OAUTH),
            p50(VIA_HTTP),
            "the same gateway with its static token",
            "≤ 1.2× static token",
            |_, r| r <= 1.2,
        )
        .with_note(note.clone()),
        Row::versus(
            MODERN_ROW,
            Unit::Seconds,
            p50(VIA_HTTP_2026),
            p50(VIA_HTTP),
            "a 2025-era session's call through the same gateway",
            "≤ 1.2× a 2025-era session",
            |_, r| r <= 1.2,
        )
        .with_note(note.clone()),
        Row::versus(
            MODERN_GRANTS_ROW,
            Unit::Seconds,
            p50(VIA_OAUTH_2026),
            p50(VIA_OAUTH),
            "the same caller's 2025-era session's call through the same gateway",
            "≤ 1.2× a 2025-era session",
            |_, r| r <= 1.2,
        )
        .with_note(note.clone()),
    ];
    rows.push(if proxied {
        Row::versus(
            "gateway over HTTP vs mcp-proxy: call p50",
            Unit::Seconds,
            p50(VIA_HTTP),
            p50(VIA_PROXY),
            "npm mcp-proxy (stream) in front of the same server",
            "≤ 0.5× mcp-proxy",
            |_, r| r <= 0.5,
        )
        .with_note(note)
    } else {
        Row::pending(
            "gateway over HTTP vs mcp-proxy: call p50",
            "≤ 0.5× mcp-proxy",
            installs::INSTALL_HINT,
        )
    });
    rows
}

/// The row of the OAuth-protected gateway.
const OAUTH_ROW: &str = "gateway over HTTP with `[gateway.oauth]`: call p50";
/// The row of a 2026-era client's call (no session: each call stands alone).
const MODERN_ROW: &str = "gateway over HTTP: a 2026-era client's call p50 vs a 2025-era session's";
/// The row of a 2026-era call of a caller with grants (checked on the set lent to it).
const MODERN_GRANTS_ROW: &str = "gateway over HTTP with `[gateway.oauth]`, a caller with grants: a 2026-era call p50 vs a 2025-era session's";

/// Starts the paths in order: straight, via `mcpctl serve`, via `mcpctl serve --http`,
/// via `mcpctl serve --http` with `[gateway.oauth]` for `auth`, a 2026-era client via the
/// same `mcpctl serve --http` as the 2025-era session, the same caller's 2026-era client
/// via the `[gateway.oauth]` gateway, and via mcp-proxy when installed (returns whether
/// it is).
async fn start_paths(
    fx: &Fixture,
    mcpctl: &std::path::Path,
    auth: &FakeAuthServer,
    processes: &mut Vec<Spawned>,
    paths: &mut Vec<Path>,
) -> Result<bool> {
    let (bin, args) = fx.server_command();
    let config = fx.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp_servers.{UPSTREAM}]\ncommand = {}\nargs = {}\nprotocol = \"2025-11-25\"\ndefault_tools_approval_mode = \"approve\"\n",
            toml_string(&bin.to_string_lossy()),
            toml_array(args),
        ),
    )?;
    let gateway = Gateway {
        mcpctl,
        config,
        home: fx.join("mcpctl-home"),
        tool: format!("mcp__{UPSTREAM}__echo"),
    };
    paths.push(
        Path::over(
            ready_set(fx, 1, ConnectionSetOptions::new()).await?,
            Echo::plain(),
        )
        .await?,
    );
    paths.push(gateway.over_stdio().await?);
    let (via_http, url) = gateway.over_http(processes).await?;
    paths.push(via_http);
    let (via_oauth, oauth_2026) = gateway.over_oauth(fx, auth, processes).await?;
    paths.push(via_oauth);
    paths.push(gateway.modern_client(url).await?);
    paths.push(oauth_2026);
    let Some(proxied) = via_proxy(bin, args, processes).await? else {
        return Ok(false);
    };
    paths.push(proxied);
    Ok(true)
}

/// The gateway's side of the paths through `mcpctl serve`: its configuration (the
/// upstream server), its home, and the upstream tool's name through it.
struct Gateway<'a> {
    mcpctl: &'a std::path::Path,
    config: std::path::PathBuf,
    home: std::path::PathBuf,
    tool: String,
}

impl Gateway<'_> {
    /// The path through `mcpctl serve` over stdio, the set's own child.
    async fn over_stdio(&self) -> Result<Path> {
        let stdio = StdioConfig::new(self.mcpctl.to_string_lossy())
            .with_args([
                "--config".to_owned(),
                self.config.to_string_lossy().into_owned(),
                "serve".to_owned(),
            ])
            .with_env("MCPCTL_HOME", self.home.to_string_lossy())
            .with_env("RUST_LOG", "off");
        let stdio = ServerConfig::from(stdio).with_protocol(ProtocolChoice::V2025_11_25);
        Path::over(
            ready(Fixture::catalog_from([stdio])?, None).await?,
            Echo::named(&self.tool),
        )
        .await
    }

    /// The path through `mcpctl serve --http` with its static token (the process is
    /// added to `processes`), and the gateway's URL.
    async fn over_http(&self, processes: &mut Vec<Spawned>) -> Result<(Path, String)> {
        let served = serve_http(self.mcpctl, &self.config, &self.home, Some(TOKEN)).await?;
        let url = served.url("/mcp");
        processes.push(served);
        let http =
            ServerConfig::from(HttpConfig::new(url.clone()).with_bearer_token_env_var(TOKEN_VAR))
                .with_protocol(ProtocolChoice::V2025_11_25);
        let path = Path::over(
            ready(Fixture::catalog_from([http])?, Some(TOKEN.to_owned())).await?,
            Echo::named(&self.tool),
        )
        .await?;
        Ok((path, url))
    }

    /// The path of a 2026-era client (stateless requests) through the `mcpctl serve
    /// --http` at `url`.
    async fn modern_client(&self, url: String) -> Result<Path> {
        let http = ServerConfig::from(HttpConfig::new(url).with_bearer_token_env_var(TOKEN_VAR))
            .with_protocol(ProtocolChoice::V2026_07_28);
        Path::over(
            ready(Fixture::catalog_from([http])?, Some(TOKEN.to_owned())).await?,
            Echo::named(&self.tool),
        )
        .await
    }

    /// The paths through `mcpctl serve --http` with `[gateway.oauth]` trusting `auth`,
    /// called with a JWT `auth` minted for it whose subject has grants (the upstream's
    /// `echo`): a 2025-era session's, and a 2026-era client's (the process is added to
    /// `processes`).
    async fn over_oauth(
        &self,
        fx: &Fixture,
        auth: &FakeAuthServer,
        processes: &mut Vec<Spawned>,
    ) -> Result<(Path, Path)> {
        let protected = fx.join("gateway-oauth.toml");
        std::fs::write(
            &protected,
            format!(
                "{}\n[gateway.oauth]\nissuer = {}\nscopes = [\"{SCOPE}\"]\n\n[[gateway.grants]]\nsubjects = [\"bench\"]\nservers = [\"{UPSTREAM}\"]\ntools = [\"echo\"]\n",
                std::fs::read_to_string(&self.config)?,
                toml_string(&auth.issuer()),
            ),
        )?;
        let served = serve_http(self.mcpctl, &protected, &self.home, None).await?;
        let url = served.url("/mcp");
        processes.push(served);
        let jwt = auth.mint_jwt(
            &AccessTokenClaims::new("bench")
                .with_scopes([SCOPE])
                .with_audience(url.clone()),
        );
        let era = |protocol| {
            ServerConfig::from(HttpConfig::new(url.clone()).with_bearer_token_env_var(TOKEN_VAR))
                .with_protocol(protocol)
        };
        let session = Path::over(
            ready(
                Fixture::catalog_from([era(ProtocolChoice::V2025_11_25)])?,
                Some(jwt.clone()),
            )
            .await?,
            Echo::named(&self.tool),
        )
        .await?;
        let modern = Path::over(
            ready(
                Fixture::catalog_from([era(ProtocolChoice::V2026_07_28)])?,
                Some(jwt),
            )
            .await?,
            Echo::named(&self.tool),
        )
        .await?;
        Ok((session, modern))
    }
}

/// The path through npm `mcp-proxy` (streamable HTTP) in front of the server `bin args`,
/// when it is installed (the process is added to `processes`).
async fn via_proxy(
    bin: &std::path::Path,
    args: &[String],
    processes: &mut Vec<Spawned>,
) -> Result<Option<Path>> {
    let Install::Found {
        node_entry,
        preload,
    } = installs::mcp_proxy()
    else {
        return Ok(None);
    };
    let port = free_port()?;
    let mut cmd = crate::spawned::command("node");
    cmd.arg("--require")
        .arg(preload)
        .arg(node_entry)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--server",
            "stream",
            "--",
        ])
        .arg(bin)
        .args(args);
    let proxy = Spawned::listening(cmd, "mcp-proxy", port).await?;
    let url = proxy.url("/mcp");
    processes.push(proxy);
    let path = Path::over(
        ready(Fixture::catalog_from([http_server_config(url)])?, None).await?,
        Echo::plain(),
    )
    .await?;
    Ok(Some(path))
}

/// `mcpctl serve --http` on a free loopback port with `config` and `home`, its static
/// token `token` (`None`: one of its own, for a configuration with `[gateway.oauth]`).
pub(crate) async fn serve_http(
    mcpctl: &std::path::Path,
    config: &std::path::Path,
    home: &std::path::Path,
    token: Option<&str>,
) -> Result<Spawned> {
    serve_http_with_env(mcpctl, config, home, token, &[]).await
}

/// [`serve_http`] with the variables `env` set in the gateway's environment too.
pub(crate) async fn serve_http_with_env(
    mcpctl: &std::path::Path,
    config: &std::path::Path,
    home: &std::path::Path,
    token: Option<&str>,
    env: &[(&str, &str)],
) -> Result<Spawned> {
    let port = free_port()?;
    let mut cmd = crate::spawned::command(mcpctl);
    cmd.arg("--config")
        .arg(config)
        .arg("serve")
        .arg("--http")
        .arg(format!("127.0.0.1:{port}"))
        .env("MCPCTL_HOME", home)
        .env("RUST_LOG", "off")
        .envs(env.iter().copied());
    if let Some(token) = token {
        cmd.env("MCPCTL_SERVE_TOKEN", token);
    }
    let what = format!("mcpctl serve --http with {}", config.display());
    Spawned::listening(cmd, &what, port).await
}

/// A set of `catalog`'s one server, ready; `token` is what `$MCP_BENCH_GATEWAY_TOKEN` reads.
async fn ready(
    catalog: mcp_catalog::ResolvedCatalog,
    token: Option<String>,
) -> Result<ConnectionSet> {
    ready_with(catalog, token, ConnectionSetOptions::new()).await
}

/// [`ready`] with `options` (the token's lookup added to them).
pub(crate) async fn ready_with(
    catalog: mcp_catalog::ResolvedCatalog,
    token: Option<String>,
    mut options: ConnectionSetOptions,
) -> Result<ConnectionSet> {
    if let Some(token) = token {
        options = options.with_env_lookup(Arc::new(move |name: &str| {
            (name == TOKEN_VAR).then(|| token.clone())
        }));
    }
    let set = ConnectionSet::start(&catalog, options);
    if set.wait_startup().await.ready() != 1 {
        let status = set.status();
        set.shutdown().await;
        return Err(fail(format!(
            "the gateway path did not become ready: {status:?}"
        )));
    }
    Ok(set)
}

/// Warm-up, then rounds of `calls_per_round` calls on every path, each round starting at
/// another path.
pub(crate) async fn sample(paths: &mut [Path], s: &Settings) -> Result<()> {
    for path in paths.iter() {
        for _ in 0..s.warmup_calls {
            path.call().await?;
        }
    }
    let n = paths.len();
    for round in 0..s.rounds_calls {
        for i in 0..n {
            let path = &mut paths[(round + i) % n];
            for _ in 0..s.calls_per_round {
                let t = Instant::now();
                path.call().await?;
                path.samples.push(t.elapsed().as_secs_f64());
            }
        }
    }
    Ok(())
}

pub(crate) fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

pub(crate) fn toml_array(items: &[String]) -> String {
    toml::Value::Array(items.iter().cloned().map(toml::Value::String).collect()).to_string()
}

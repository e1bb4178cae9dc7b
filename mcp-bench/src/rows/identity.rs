//! The gateway acting as each caller upstream (`upstream_identity`): one caller's call
//! through `mcpctl serve --http` with `[gateway.oauth]` to the testkit's protected
//! upstream (streamable HTTP, its tokens checked against the testkit's authorization
//! server) three ways, through the same gateway to the same upstream:
//!
//! - `upstream_identity = "gateway"`: the gateway's own token (its bearer variable), the
//!   baseline;
//! - `upstream_identity = "caller"`: the caller's own upstream credentials, stored in the
//!   gateway's vault (SQLite, sealed with AES-256-GCM) before sampling, as a finished
//!   sign-in leaves them;
//! - `upstream_identity = "exchange"`: an RFC 8693 exchange of the caller's token for one
//!   whose audience is the upstream, made once before sampling (when the caller's set
//!   first lists the tools) and then cached.
//!
//! Before its rows are given, the run checks each path did what its row says: the
//! upstream saw the three subjects (the gateway's, the caller's stored upstream account,
//! the caller itself through the exchange) and the authorization server made exactly one
//! exchange, so every timed exchange path call used the cached token. The paths are
//! sampled in one loop, each round in a rotated order. The gateway's configuration file
//! is named after the run's scenario, so the run's leftover check looks for the gateway
//! process too.

use std::os::unix::fs::DirBuilderExt;

use mcp_catalog::{HttpConfig, ProtocolChoice, ServerConfig};
use mcp_connections::ConnectionSetOptions;
use mcp_testkit::{
    AccessTokenClaims, AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, OAuthClient,
    ProtectedOptions, Scenario, ToolSpec,
};

use crate::fixture::Fixture;
use crate::installs;
use crate::rows::calls::Echo;
use crate::rows::gateway::{Path, TOKEN_VAR, ready_with, sample, serve_http_with_env, toml_string};
use crate::spawned::Spawned;
use crate::stats::quantile;
use crate::table::{Row, Unit};
use crate::{Result, Settings, fail};

/// The rows' names.
const ROW_STORED: &str = "gateway as each caller: call p50 with a stored per-user credential";
const ROW_EXCHANGED: &str = "gateway as each caller: call p50 with a cached exchanged token";
/// The rows' target.
const TARGET: &str = "≤ 1.2× the gateway's own token";

/// The paths, in the order `start_paths` pushes them.
const OWN: usize = 0;
const STORED: usize = 1;
const EXCHANGED: usize = 2;

/// The upstream's name in the gateway's configuration for each path (same order).
const SERVERS: [&str; 3] = ["own", "stored", "exchanged"];

/// The scope the gateway asks of every caller's token.
const SCOPE: &str = "mcp:tools";
/// The caller, its id in the gateway's vault, and its account at the upstream.
const CALLER: &str = "alice";
const CALLER_ID: &str = "sub:alice";
const CALLER_UPSTREAM: &str = "alice-upstream";
/// The subject of the gateway's own upstream token.
const GATEWAY_SUBJECT: &str = "gateway";
/// The gateway's client at the token endpoint, for the exchanges, and the variable
/// holding its secret.
const EXCHANGE_CLIENT: (&str, &str) = ("mcp-bench-gateway", "mcp-bench-exchange-secret");
const SECRET_VAR: &str = "MCP_BENCH_EXCHANGE_SECRET";
/// The variable holding the gateway's own upstream token.
const OWN_TOKEN_VAR: &str = "MCP_BENCH_UPSTREAM_TOKEN";
/// The vault key (`$MCPCTL_VAULT_KEY`, every byte this one) and its id.
const VAULT_KEY_BYTE: u8 = 0xb3;
const VAULT_KEY_ID: &str = "k1";

/// The two rows: a call with a stored per-user credential and with a cached exchanged
/// token, each versus the same call with the gateway's own token.
pub(crate) async fn identity(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let Some(mcpctl) = installs::mcpctl() else {
        let hint = "needs mcpctl of the same build: cargo build --release -p mcpctl";
        return Ok(vec![
            Row::pending(ROW_STORED, TARGET, hint),
            Row::pending(ROW_EXCHANGED, TARGET, hint),
        ]);
    };
    let auth = FakeAuthServer::start(AuthServerOptions::new().with_jwt_access_tokens())
        .await
        .map_err(|e| fail(format!("cannot start the fake authorization server: {e}")))?;
    auth.add_client(OAuthClient::confidential(
        EXCHANGE_CLIENT.0,
        EXCHANGE_CLIENT.1,
    ));
    let upstream = match FakeProtectedMcpServer::start(
        Scenario::new("upstream").with_tool(ToolSpec::echo("echo")),
        &auth,
        ProtectedOptions::new(),
    )
    .await
    {
        Ok(upstream) => upstream,
        Err(e) => {
            auth.shutdown().await;
            return Err(fail(format!("cannot start the protected upstream: {e}")));
        }
    };
    let mut processes = Vec::new();
    let mut paths = Vec::new();
    let result = match start_paths(fx, &mcpctl, &auth, &upstream, &mut processes, &mut paths).await
    {
        Ok(()) => sample(&mut paths, &s.slower(4)).await,
        Err(e) => Err(e),
    };
    let result = result.and_then(|()| went_as_said(&auth, &upstream));
    for path in &paths {
        path.set.shutdown().await;
    }
    crate::spawned::stop_all(processes).await;
    upstream.shutdown().await;
    auth.shutdown().await;
    result?;
    Ok(measured_rows(&paths))
}

/// The rows from the sampled paths.
fn measured_rows(paths: &[Path]) -> Vec<Row> {
    let p50 = |i: usize| quantile(&paths[i].samples, 0.5);
    let note = format!(
        "{} calls per path, rotated order, one run",
        paths[OWN].samples.len()
    );
    let baseline = "the same call with the gateway's own token";
    [(ROW_STORED, STORED), (ROW_EXCHANGED, EXCHANGED)]
        .into_iter()
        .map(|(name, path)| {
            Row::versus(
                name,
                Unit::Seconds,
                p50(path),
                p50(OWN),
                baseline,
                TARGET,
                |_, r| r <= 1.2,
            )
            .with_note(note.clone())
        })
        .collect()
}

/// Checks each path reached the upstream as its row says: three subjects upstream (the
/// gateway's own, the caller's stored account, the caller through the exchange), and one
/// exchange in all, so the exchange path's timed calls used the cached token.
fn went_as_said(auth: &FakeAuthServer, upstream: &FakeProtectedMcpServer) -> Result<()> {
    let mut subjects = upstream.subjects();
    subjects.sort();
    subjects.dedup();
    let mut expected = [CALLER, CALLER_UPSTREAM, GATEWAY_SUBJECT];
    expected.sort_unstable();
    if subjects != expected {
        return Err(fail(format!(
            "the upstream saw the subjects {subjects:?}, not {expected:?}: a path did not act as its row says"
        )));
    }
    let exchanges = auth.counters().token_exchange;
    if exchanges != 1 {
        return Err(fail(format!(
            "the authorization server made {exchanges} token exchanges, not one: the exchanged token was not cached"
        )));
    }
    Ok(())
}

/// The gateway's configuration: the upstream at `url` three times, once per identity.
fn config(auth: &FakeAuthServer, url: &str) -> String {
    let url = toml_string(url);
    let [own, stored, exchanged] = SERVERS;
    format!(
        "[mcp_servers.{own}]\nurl = {url}\nupstream_identity = \"gateway\"\nbearer_token_env_var = \"{OWN_TOKEN_VAR}\"\ndefault_tools_approval_mode = \"approve\"\n\n\
         [mcp_servers.{stored}]\nurl = {url}\nupstream_identity = \"caller\"\ndefault_tools_approval_mode = \"approve\"\n\n\
         [mcp_servers.{exchanged}]\nurl = {url}\nupstream_identity = \"exchange\"\ndefault_tools_approval_mode = \"approve\"\n\n\
         [mcp_servers.{exchanged}.token_exchange]\ntoken_endpoint = {}\naudience = \"{exchanged}\"\nresource = {url}\nclient_id = \"{}\"\nclient_secret_env = \"{SECRET_VAR}\"\n\n\
         [gateway.oauth]\nissuer = {}\nscopes = [\"{SCOPE}\"]\n",
        toml_string(&auth.token_endpoint()),
        EXCHANGE_CLIENT.0,
        toml_string(&auth.issuer()),
    )
}

/// Stores the caller's upstream credentials (`token`) for the `stored` server in the
/// vault of the gateway whose data directory is `home`, as a finished sign-in does.
async fn store_sign_in(home: &std::path::Path, token: String) -> Result<()> {
    let dir = home.join("gateway");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    let key = mcp_auth::VaultKey::from_slice(VAULT_KEY_ID, &[VAULT_KEY_BYTE; 32])?;
    let vault = mcp_auth::CredentialVault::open_sqlite(
        dir.join("credentials.db"),
        mcp_auth::VaultKeys::new(key),
    )
    .await?;
    let mut credentials = mcp_auth::StoredCredentials::new("mcp-bench-upstream-client");
    credentials.access_token = Some(mcp_key::Secret::new(token));
    let stored = vault
        .put(CALLER_ID, &SERVERS[STORED].parse()?, &credentials)
        .await;
    vault.close().await;
    Ok(stored?)
}

/// Starts the gateway (added to `processes`) with the caller's sign-in stored, and the
/// caller's set through it; pushes the paths in the order of [`SERVERS`].
async fn start_paths(
    fx: &Fixture,
    mcpctl: &std::path::Path,
    auth: &FakeAuthServer,
    upstream: &FakeProtectedMcpServer,
    processes: &mut Vec<Spawned>,
    paths: &mut Vec<Path>,
) -> Result<()> {
    // Tokens the testkit's authorization server mints for the subject it is set to.
    auth.set_subject(GATEWAY_SUBJECT, &[]);
    let own_token = auth.mint_token(
        "mcp-bench-upstream-client",
        &["mcp:read"],
        Some(&upstream.url()),
    );
    auth.set_subject(CALLER_UPSTREAM, &[]);
    let stored_token = auth.mint_token(
        "mcp-bench-upstream-client",
        &["mcp:read"],
        Some(&upstream.url()),
    );
    let home = fx.join("mcpctl-home-identity");
    store_sign_in(&home, stored_token).await?;

    // Named after the scenario, so the leftover check finds the gateway's process.
    let file = std::path::PathBuf::from(format!("{}.identity.toml", fx.marker()));
    std::fs::write(&file, config(auth, &upstream.url()))?;
    let vault_key: String = [VAULT_KEY_BYTE; 32]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let served = serve_http_with_env(
        mcpctl,
        &file,
        &home,
        None,
        &[
            (OWN_TOKEN_VAR, &own_token),
            (SECRET_VAR, EXCHANGE_CLIENT.1),
            ("MCPCTL_VAULT_KEY", &vault_key),
            ("MCPCTL_VAULT_KEY_ID", VAULT_KEY_ID),
        ],
    )
    .await?;
    let url = served.url("/mcp");
    processes.push(served);

    let jwt = auth.mint_jwt(
        &AccessTokenClaims::new(CALLER)
            .with_scopes([SCOPE])
            .with_audience(url.clone()),
    );
    let http = ServerConfig::from(HttpConfig::new(url).with_bearer_token_env_var(TOKEN_VAR))
        .with_protocol(ProtocolChoice::V2025_11_25);
    let set = ready_with(
        Fixture::catalog_from([http])?,
        Some(jwt),
        ConnectionSetOptions::new(),
    )
    .await?;
    for server in SERVERS {
        paths.push(Path::over(set.clone(), Echo::named(&format!("mcp__{server}__echo"))).await?);
    }
    Ok(())
}

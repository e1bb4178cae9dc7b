//! 2026-era calls through `mcpctl serve --http` versus straight to the same kind of
//! 2026-era stdio server: a plain call, and a call with one input round (`input_required`,
//! then the retry with the answer and `requestState`). Through the gateway the round costs
//! two calls there, plus sealing the state the client carries (AES-256-GCM, so any
//! instance behind a load balancer can resume the call) and opening it on the retry. The
//! four paths are sampled in one loop, each round in a rotated order.

use mcp_catalog::{HttpConfig, ProtocolChoice, ServerConfig, StdioConfig};
use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{ConnectionSetOptions, elicitation_fn};

use crate::fixture::Fixture;
use crate::installs;
use crate::rows::calls::Echo;
use crate::rows::gateway::{
    Path, TOKEN, TOKEN_VAR, ready_with, sample, serve_http, toml_array, toml_string,
};
use crate::spawned::Spawned;
use crate::stats::quantile;
use crate::table::{Row, Unit};
use crate::{Result, Settings, fail};

/// The rows' names.
const ROW_PLAIN: &str = "gateway over HTTP: a 2026-era call p50";
const ROW: &str = "gateway over HTTP: a 2026-era call with one input round (sealed state), p50";

/// The paths, in the order `start_paths` pushes them.
const STRAIGHT_ASK: usize = 0;
const VIA_ASK: usize = 1;
const STRAIGHT_ECHO: usize = 2;
const VIA_ECHO: usize = 3;

/// Options of a set whose elicitation handler answers at once.
fn answering() -> ConnectionSetOptions {
    ConnectionSetOptions::new().with_elicitation_handler(elicitation_fn(|_| async {
        ElicitResult::new(ElicitationAction::Accept)
            .with_content(serde_json::json!({"name": "bench"}))
    }))
}

/// The rows: a plain call and the round, each through the gateway versus straight.
pub(crate) async fn input_round(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let Some(mcpctl) = installs::mcpctl() else {
        let hint = "needs mcpctl of the same build: cargo build --release -p mcpctl";
        return Ok(vec![
            Row::pending(ROW_PLAIN, "—", hint),
            Row::pending(ROW, "—", hint),
        ]);
    };
    let mut processes = Vec::new();
    let mut paths = Vec::new();
    let result = match start_paths(fx, &mcpctl, &mut processes, &mut paths).await {
        Ok(()) => answered(&paths).await,
        Err(e) => Err(e),
    };
    let result = match result {
        Ok(()) => sample(&mut paths, &s.slower(4)).await,
        Err(e) => Err(e),
    };
    for path in &paths {
        path.set.shutdown().await;
    }
    crate::spawned::stop_all(processes).await;
    result?;
    let p50 = |i: usize| quantile(&paths[i].samples, 0.5);
    let note = format!(
        "{} calls per path, rotated order, one run",
        paths[0].samples.len()
    );
    Ok(vec![
        Row::reported(
            ROW_PLAIN,
            Unit::Seconds,
            p50(VIA_ECHO),
            p50(STRAIGHT_ECHO),
            "the same call straight to the stdio server",
        )
        .with_note(note.clone()),
        Row::reported(
            ROW,
            Unit::Seconds,
            p50(VIA_ASK),
            p50(STRAIGHT_ASK),
            "the same call straight to the stdio server",
        )
        .with_note(note),
    ])
}

/// Checks that each asking path's call went through its round: the server saw the
/// handler's answer, not a refusal the row would time instead.
async fn answered(paths: &[Path]) -> Result<()> {
    for path in [&paths[STRAIGHT_ASK], &paths[VIA_ASK]] {
        let got = path.structured().await?;
        if got.get("action").and_then(serde_json::Value::as_str) != Some("accept") {
            return Err(fail(format!(
                "the input round was not answered as the bench's handler answers: {got}"
            )));
        }
    }
    Ok(())
}

/// Starts the paths in order: `ask` straight and through the gateway, then `echo` on
/// the same two sets again.
async fn start_paths(
    fx: &Fixture,
    mcpctl: &std::path::Path,
    processes: &mut Vec<Spawned>,
    paths: &mut Vec<Path>,
) -> Result<()> {
    let (bin, args) = fx.asking_command();
    let straight =
        ServerConfig::from(StdioConfig::new(bin.to_string_lossy()).with_args(args.iter().cloned()))
            .with_protocol(ProtocolChoice::V2026_07_28);
    let straight = ready_with(Fixture::catalog_from([straight])?, None, answering()).await?;
    paths.push(Path::over(straight.clone(), Echo::named("ask")).await?);

    let config = fx.join("gateway-asking.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp_servers.asker]\ncommand = {}\nargs = {}\nprotocol = \"2026-07-28\"\ndefault_tools_approval_mode = \"approve\"\n",
            toml_string(&bin.to_string_lossy()),
            toml_array(args),
        ),
    )?;
    let served = serve_http(mcpctl, &config, &fx.join("mcpctl-home-asking"), Some(TOKEN)).await?;
    let url = served.url("/mcp");
    processes.push(served);
    let http = ServerConfig::from(HttpConfig::new(url).with_bearer_token_env_var(TOKEN_VAR))
        .with_protocol(ProtocolChoice::V2026_07_28);
    let via = ready_with(
        Fixture::catalog_from([http])?,
        Some(TOKEN.to_owned()),
        answering(),
    )
    .await?;
    paths.push(Path::over(via.clone(), Echo::named("mcp__asker__ask")).await?);
    paths.push(Path::over(straight, Echo::plain()).await?);
    paths.push(Path::over(via, Echo::named("mcp__asker__echo")).await?);
    Ok(())
}

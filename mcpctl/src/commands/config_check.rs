//! `mcpctl config check`: validate the configuration without starting any server.

use mcp_catalog::{ConfigError, ConfigWarning, ResolvedCatalog, Transport};
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::config::{self, ConfigChoice};
use crate::error::{CliError, EXIT_USAGE};
use crate::progress::plural;
use crate::session::Loaded;
use crate::style::Style;

/// Runs `config check`: exit code 0 when valid, 2 when not.
pub(crate) async fn run(global: &GlobalArgs) -> Result<u8, CliError> {
    let choice = config::choose(global.config.as_deref());
    let (path, trusted) = match &choice {
        ConfigChoice::File(path) => (Some(path.clone()), true),
        ConfigChoice::Discovered(path) => (Some(path.clone()), crate::trust::is_trusted(path)),
        ConfigChoice::Demo => (None, true),
    };
    if let Some(path) = &path {
        // An untrusted project file is validated without expanding any variable. Other
        // commands start the usable servers of a file whose entries are partly broken; the
        // check fails on any error, per-server ones included.
        let checked = if trusted {
            mcp_catalog::load_file(path)
        } else {
            mcp_catalog::review_file(path).map(|(loaded, _)| loaded)
        }
        .and_then(|loaded| loaded.into_strict().map_err(mcp_catalog::Error::from));
        match checked {
            Ok(_) => {}
            Err(e) => match e.config_errors() {
                Some(errors) if global.json => {
                    let origin = path.display().to_string();
                    crate::render::out_json(&json!({
                        "config": origin,
                        "valid": false,
                        "errors": errors.iter().map(error_json).collect::<Vec<_>>(),
                    }));
                    return Ok(EXIT_USAGE);
                }
                // Read errors and human output: the usual error display.
                _ => return Err(config::load_error(path, &e, true)),
            },
        }
    }
    let loaded = match &path {
        Some(path) if !trusted => Loaded::for_review(path, !global.json)?,
        _ => Loaded::find(global, false, !global.json).await?,
    };
    let review = match &path {
        Some(path) => Some(config::review(path)?.1),
        None => None,
    };
    let catalog = loaded.catalog()?;
    if global.json {
        crate::render::out_json(&json!({
            "config": loaded.loaded.origin(),
            "format": loaded.loaded.format().map(|f| f.name()),
            "valid": true,
            "errors": [],
            "warnings": loaded.loaded.warnings().iter().map(warning_json).collect::<Vec<_>>(),
            "conflicts": catalog.conflicts().iter().map(ToString::to_string).collect::<Vec<_>>(),
            "servers": servers(&catalog).into_iter().map(|r| json!({
                "server": r[0], "transport": r[1], "state": r[2],
            })).collect::<Vec<_>>(),
            "trusted": trusted,
            "review": review.as_ref().map(|r| r.to_string().lines().map(str::to_owned).collect::<Vec<_>>()),
        }));
        return Ok(0);
    }
    let s = Style::stdout();
    let rows: Vec<Vec<String>> = servers(&catalog)
        .into_iter()
        .map(|[key, transport, state]| vec![format!("  {key}"), transport, state])
        .collect();
    let format = loaded
        .loaded
        .format()
        .map(|f| format!(" (read as {f})"))
        .unwrap_or_default();
    let mut lines = vec![format!(
        "{} {}{format}: valid, {}",
        s.green("ok:"),
        loaded.loaded.origin(),
        plural(rows.len(), "server")
    )];
    lines.extend(crate::render::table(&rows));
    for conflict in catalog.conflicts() {
        lines.push(format!("{} {conflict}", s.yellow("conflict:")));
    }
    if let Some(review) = review.filter(|r| !r.is_empty()) {
        lines.push("it will:".to_owned());
        lines.extend(
            review
                .to_string()
                .lines()
                .map(|l| format!("  {}", crate::render::terminal_safe(l))),
        );
    }
    if !trusted {
        lines.push(format!(
            "{} this project file is not trusted: nothing of it starts and no variable is expanded until you run `mcpctl trust {}`",
            s.yellow("untrusted:"),
            loaded.loaded.origin()
        ));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    crate::render::out(&text);
    Ok(0)
}

/// `[key, transport, state]` of every configured server, sorted by key.
fn servers(catalog: &ResolvedCatalog) -> Vec<[String; 3]> {
    catalog
        .iter()
        .map(|(key, config)| {
            let transport = match config.transport() {
                Transport::Stdio(_) => "stdio".to_owned(),
                Transport::StreamableHttp(_) => "streamable_http".to_owned(),
                other => other.kind_name().to_owned(),
            };
            let mut state = match catalog.veto(key) {
                Some(veto) => veto.to_string(),
                None if !config.enabled() => "disabled".to_owned(),
                None => "enabled".to_owned(),
            };
            if config.required() {
                state.push_str(", required");
            }
            [key.to_string(), transport, state]
        })
        .collect()
}

fn error_json(e: &ConfigError) -> Value {
    json!({
        "origin": e.location().origin(),
        "line": e.location().line(),
        "column": e.location().column(),
        "server": e.server(),
        "field": e.field(),
        "message": e.message(),
        "hint": e.hint(),
        "text": e.to_string(),
    })
}

fn warning_json(w: &ConfigWarning) -> Value {
    json!({
        "origin": w.location().origin(),
        "line": w.location().line(),
        "column": w.location().column(),
        "server": w.server(),
        "message": w.message(),
        "text": w.to_string(),
    })
}

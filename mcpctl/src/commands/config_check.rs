//! `mcpctl config check`: validate the configuration without starting any server.

use std::path::{Path, PathBuf};

use mcp_catalog::{
    ConfigError, ConfigWarning, Discovered, Discovery, LoadedConfig, ProcessEnv, ResolvedCatalog,
};
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::error::{CliError, EXIT_USAGE};
use crate::host::config;
use crate::host::session::Loaded;
use crate::term::progress::plural;
use crate::term::style::Style;

/// Runs `config check`: exit code 0 when valid, 2 when not.
pub(crate) async fn run(global: &GlobalArgs) -> Result<u8, CliError> {
    let discovery = config::discovery(global)?;
    let shown = discovery.path().unwrap_or_default();
    let found = match find_strict(&discovery) {
        Ok(found) => found,
        Err(e) => return invalid(global, &shown, &e),
    };
    let (loaded, untrusted) = load(global, &discovery, &shown, found).await?;
    let review = review(&loaded)?;
    let catalog = loaded.catalog();
    if global.json {
        print_json(&loaded, &catalog, review);
    } else {
        print_human(&loaded, &catalog, review, untrusted.as_deref());
    }
    Ok(0)
}

/// Finds the configuration and fails on any error of its files. An untrusted project
/// file is validated without expanding any variable. Other commands start the usable
/// servers of a file whose entries are partly broken; the check fails on any error,
/// per-server ones included.
fn find_strict(discovery: &Discovery) -> Result<Discovered, mcp_catalog::Error> {
    // Without a trust store every project file is only reviewed.
    let store = if discovery.uses_trust() {
        crate::host::trust::open_store().ok()
    } else {
        None
    };
    let found = discovery.find(store.as_ref(), &ProcessEnv)?;
    match &found {
        Discovered::Ready { files, .. } => {
            for file in files {
                file.clone().into_strict()?;
            }
        }
        Discovered::NeedsTrust { .. } => {
            for file in discovery.review()? {
                file.into_strict()?;
            }
        }
        _ => {}
    }
    Ok(found)
}

/// The outcome of a configuration that could not be found, read or validated: with
/// `--json`, its errors as JSON and exit code 2; otherwise (and for read errors) the usual
/// error display.
fn invalid(global: &GlobalArgs, shown: &Path, e: &mcp_catalog::Error) -> Result<u8, CliError> {
    match e.config_errors() {
        Some(errors) if global.json && !e.is_plugin_entry() => {
            let origin = errors.iter().next().map_or_else(
                || shown.display().to_string(),
                |e| e.location().origin().to_owned(),
            );
            crate::term::render::out_json(&json!({
                "config": origin,
                "valid": false,
                "errors": errors.iter().map(error_json).collect::<Vec<_>>(),
            }));
            Ok(EXIT_USAGE)
        }
        // Read errors and human output: the usual error display.
        _ => Err(config::load_error(shown, e, true)),
    }
}

/// The configuration that was found, loaded for the check (prints its warnings), and the
/// project file that is not trusted, if any: then every file is loaded for review only.
/// No configuration at all is the embedded demo (or, with `--from`, an error).
async fn load(
    global: &GlobalArgs,
    discovery: &Discovery,
    shown: &Path,
    found: Discovered,
) -> Result<(Loaded, Option<PathBuf>), CliError> {
    let all_warnings = !global.json;
    match found {
        Discovered::Ready { files, builder, .. } => {
            Ok((Loaded::ready(files, builder, all_warnings), None))
        }
        Discovered::NeedsTrust {
            config, untrusted, ..
        } if config != untrusted => Err(crate::host::trust::untrusted_plugin_error(
            &config, &untrusted,
        )),
        Discovered::NeedsTrust { config, .. } => {
            // Every file, the trusted user files of a client too, for review only.
            let files = discovery
                .review()
                .map_err(|e| config::load_error(shown, &e, true))?;
            Ok((Loaded::for_review(files, all_warnings), Some(config)))
        }
        _ => match config::client_not_found(global, discovery) {
            Some(error) => Err(error),
            None => Ok((Loaded::demo(false).await?, None)),
        },
    }
}

/// What the configuration's files would run (their review lines); `None` for the demo.
fn review(loaded: &Loaded) -> Result<Option<Vec<String>>, CliError> {
    if loaded.demo {
        return Ok(None);
    }
    let mut review = Vec::new();
    for file in &loaded.files {
        review.extend(
            config::review(Path::new(file.origin()))?
                .1
                .to_string()
                .lines()
                .map(str::to_owned),
        );
    }
    Ok(Some(review))
}

/// The report of a valid configuration for scripts.
fn print_json(loaded: &Loaded, catalog: &ResolvedCatalog, review: Option<Vec<String>>) {
    crate::term::render::out_json(&json!({
        "config": loaded.origin(),
        "format": loaded.files.last().and_then(LoadedConfig::format).map(|f| f.name()),
        "files": loaded.files.iter().filter(|_| !loaded.demo).map(|f| json!({
            "path": f.origin(),
            "format": f.format().map(|f| f.id()),
        })).collect::<Vec<_>>(),
        "valid": true,
        "errors": [],
        "warnings": loaded.files.iter().flat_map(LoadedConfig::warnings).map(warning_json).collect::<Vec<_>>(),
        "conflicts": catalog.conflicts().iter().map(ToString::to_string).collect::<Vec<_>>(),
        "servers": servers(catalog).into_iter().map(|r| json!({
            "server": r[0], "transport": r[1], "state": r[2],
        })).collect::<Vec<_>>(),
        "trusted": loaded.trusted,
        "review": review,
    }));
}

/// The report of a valid configuration for people: a summary line, the files' formats,
/// the servers, conflicts, what it would run, and whether a project file is untrusted.
fn print_human(
    loaded: &Loaded,
    catalog: &ResolvedCatalog,
    review: Option<Vec<String>>,
    untrusted: Option<&Path>,
) {
    let s = Style::stdout();
    let rows: Vec<Vec<String>> = servers(catalog)
        .into_iter()
        .map(|[key, transport, state]| vec![format!("  {key}"), transport, state])
        .collect();
    let format = match loaded.files.as_slice() {
        [file] => file.format().map(|f| format!(" (read as {f})")),
        _ => None,
    }
    .unwrap_or_default();
    let mut lines = vec![format!(
        "{} {}{format}: valid, {}",
        s.green("ok:"),
        loaded.origin(),
        plural(rows.len(), "server")
    )];
    for file in loaded.files.iter().filter(|_| !loaded.demo) {
        if let Some(format) = file.format() {
            lines.push(format!("format: {} ({})", format.id(), file.origin()));
        }
    }
    lines.extend(crate::term::render::table(&rows));
    for conflict in catalog.conflicts() {
        lines.push(format!("{} {conflict}", s.yellow("conflict:")));
    }
    if let Some(review) = review.filter(|r| !r.is_empty()) {
        lines.push("it will:".to_owned());
        lines.extend(
            review
                .iter()
                .map(|l| format!("  {}", crate::term::render::terminal_safe(l))),
        );
    }
    if let Some(path) = untrusted {
        lines.push(format!(
            "{} project file {} is not trusted: nothing of it starts and no variable is expanded until you run `mcpctl trust {}`",
            s.yellow("untrusted:"),
            path.display(),
            path.display()
        ));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    crate::term::render::out(&text);
}

/// `[key, transport, state]` of every configured server, sorted by key.
fn servers(catalog: &ResolvedCatalog) -> Vec<[String; 3]> {
    catalog
        .iter()
        .map(|(key, config)| {
            let transport = config.transport().label().to_owned();
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

//! Trust in project configuration files. A file found in the working directory
//! (`./mcp.toml`, `./.mcp.json`) may come from a cloned repository: nothing of it starts,
//! and none of its `${VAR}` is expanded, until the user trusts its exact content (an
//! interactive prompt on a terminal, `mcpctl trust` otherwise). `--config FILE` is an explicit
//! choice and trusted as it is. Plugins of a project file that live outside its folder need
//! their own trust. The `mcpctl trust` command itself is `commands::trust`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use mcp_catalog::{
    CatalogBuilder, Discovered, Discovery, LoadedConfig, Review, TrustState, TrustStore,
};

use crate::error::CliError;

/// The trust store's file in the data directory.
pub(crate) const TRUST_FILE: &str = "trusted-configs.json";

/// Opens the trust store in the data directory.
pub(crate) fn open_store() -> Result<TrustStore, CliError> {
    let dir = crate::host::auth::data_dir().ok_or_else(|| {
        CliError::usage("cannot find a directory for mcpctl's trust records: HOME is not set")
            .with_hint(format!(
                "set {} to a directory for mcpctl's data ({})",
                crate::host::auth::HOME_VAR,
                crate::host::auth::DATA_DIR_RULE
            ))
    })?;
    TrustStore::open(dir.join(TRUST_FILE)).map_err(catalog_error)
}

/// A trust store error for a person, with its cause.
pub(crate) fn catalog_error(e: mcp_catalog::Error) -> CliError {
    let cause = std::error::Error::source(&e)
        .map(|s| format!(": {s}"))
        .unwrap_or_default();
    CliError::usage(format!("{e}{cause}"))
}

/// Review lines, indented, with terminal-unsafe characters escaped.
pub(crate) fn review_lines(review: &Review) -> Vec<String> {
    review
        .to_string()
        .lines()
        .map(|l| format!("  {}", crate::term::render::terminal_safe(l)))
        .collect()
}

/// What [`find`] found: the files of the configuration (lowest precedence first) and the
/// catalog builder holding them with their plugins.
pub(crate) type Found = (Vec<LoadedConfig>, CatalogBuilder);

/// Finds and loads the configuration through [`Discovery::find`]. A project file that is
/// not trusted is trusted at an interactive prompt (then looked for again), or is an error
/// that shows what the file would run and how to trust it; nothing has been started or
/// expanded then. `None`: no configuration.
pub(crate) fn find(discovery: &Discovery, json: bool) -> Result<Option<Found>, CliError> {
    let shown = discovery.path().unwrap_or_default();
    let mut store = if discovery.uses_trust() {
        Some(open_store()?)
    } else {
        None
    };
    let env = crate::term::inputs::InputEnv::for_discovery(discovery, json);
    loop {
        let found = discovery
            .find(store.as_ref(), &env)
            .map_err(|e| crate::host::config::load_error(&shown, &e, false))?;
        let (config, untrusted, state, review) = match found {
            Discovered::Ready { files, builder, .. } => return Ok(Some((files, builder))),
            Discovered::NotFound => return Ok(None),
            Discovered::NeedsTrust {
                config,
                untrusted,
                state,
                review,
                ..
            } => (config, untrusted, state, review),
            _ => {
                return Err(CliError::usage(
                    "unexpected outcome of configuration discovery",
                ));
            }
        };
        if untrusted != config {
            return Err(untrusted_plugin_error(&config, &untrusted));
        }
        let why = match state {
            TrustState::Changed => "changed since you trusted it",
            _ => "not trusted yet",
        };
        let interactive =
            !json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        match store.as_mut() {
            Some(store) if interactive && ask(&config, why, &review)? => {
                let recorded = store.trust(&config).map_err(catalog_error)?;
                eprintln!("trusted {}", recorded.display());
            }
            _ => return Err(untrusted_error(&config, why, &review)),
        }
    }
}

/// The error for a plugin outside its project's folder that is not trusted; `manifest` is
/// the plugin's `.mcp.json` or `mcp.toml`.
pub(crate) fn untrusted_plugin_error(config: &Path, manifest: &Path) -> CliError {
    let dir = manifest.parent().unwrap_or(manifest);
    let shown = dir.display();
    CliError::untrusted(format!(
        "project configuration `{}` loads plugin `{shown}` from outside its folder, and that plugin is not trusted; nothing was started",
        config.display()
    ))
    .with_hint(format!("review the plugin, then run `mcpctl trust {shown}`"))
}

/// The error for an untrusted file: what it would run, and how to trust it.
fn untrusted_error(path: &Path, why: &str, review: &Review) -> CliError {
    let shown = path.display();
    CliError::untrusted(format!(
        "project configuration `{shown}` is {why}; nothing was started"
    ))
    .with_details(review_lines(review))
    .with_hint(format!(
        "review what it runs above; to use it, run `mcpctl trust {shown}` (or pass --config {shown} to use it once)"
    ))
}

/// Asks on the terminal; true for yes.
fn ask(path: &Path, why: &str, review: &Review) -> Result<bool, CliError> {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "project configuration `{}` is {why}. It would:",
        path.display()
    );
    for line in review_lines(review) {
        let _ = writeln!(err, "{line}");
    }
    let _ = write!(err, "Trust this file and run it? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| CliError::failure(format!("cannot read the answer: {e}")))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

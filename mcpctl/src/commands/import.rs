//! `mcpctl config import`: another client's configuration written as an equivalent
//! `mcp.toml` (through [`mcp_catalog::export_toml`]), to stdout or to a new file.

use std::io::Write as _;

use serde_json::json;

use crate::cli::{GlobalArgs, ImportArgs};
use crate::error::CliError;
use crate::host::config;

/// Runs `config import`: exit code 0 once written.
pub(crate) fn run(global: &GlobalArgs, args: &ImportArgs) -> Result<u8, CliError> {
    if global.from.is_none() && global.config.is_none() {
        return Err(
            CliError::usage("`config import` needs the configuration to import")
                .with_hint("pass --from CLIENT (e.g. --from vscode) or --config FILE"),
        );
    }
    let discovery = config::discovery(global)?;
    let shown = discovery.path().unwrap_or_default();
    // Read for review only: nothing is expanded (no secret is written out), nothing runs,
    // so a project file needs no trust to be converted.
    let files = discovery
        .review()
        .map_err(|e| config::load_error(&shown, &e, false))?;
    if files.is_empty() {
        return Err(config::client_not_found(global, &discovery)
            .unwrap_or_else(|| CliError::usage("no configuration found to import")));
    }
    let text = mcp_catalog::export_toml(&files);
    let origins: Vec<&str> = files
        .iter()
        .map(mcp_catalog::LoadedConfig::origin)
        .collect();
    let Some(output) = &args.output else {
        if global.json {
            crate::term::render::out_json(&json!({ "imported": origins, "toml": text }));
        } else {
            crate::term::render::out(&text);
        }
        return Ok(0);
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if args.force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let shown = output.display();
    let mut file = options.open(output).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::usage(format!("`{shown}` already exists; nothing was written"))
                .with_hint("pass --force to replace it, or choose another --output")
        } else {
            CliError::failure(format!("cannot write `{shown}`: {e}"))
        }
    })?;
    file.write_all(text.as_bytes())
        .map_err(|e| CliError::failure(format!("cannot write `{shown}`: {e}")))?;
    if global.json {
        crate::term::render::out_json(
            &json!({ "imported": origins, "written": shown.to_string() }),
        );
    } else {
        crate::term::render::out(&format!(
            "wrote {shown} from {}; check it with `mcpctl --config {shown} config check`\n",
            origins.join(", ")
        ));
    }
    Ok(0)
}

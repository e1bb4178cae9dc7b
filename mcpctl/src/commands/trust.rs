//! `mcpctl trust [PATH]`: shows what a project file (or plugin folder) would run and
//! records its current content as trusted. What trust means, and how other commands ask
//! for it, is `host::trust`.

use std::path::Path;

use crate::cli::GlobalArgs;
use crate::error::CliError;
use crate::host::trust;

/// `mcpctl trust [PATH]`: shows what the file would run and records its content as trusted.
pub(crate) fn run(path: Option<&Path>, global: &GlobalArgs) -> Result<u8, CliError> {
    let json = global.json;
    let found = match path {
        Some(path) => Some(path.to_path_buf()),
        None => crate::host::config::discovery(global)?.path(),
    };
    let path = match found {
        Some(path) => path,
        None => {
            return Err(
                CliError::usage("no project configuration here (./mcp.toml, ./.mcp.json)")
                    .with_hint("name the file or plugin folder to trust: `mcpctl trust PATH`"),
            );
        }
    };
    let target = mcp_catalog::trust_target(&path);
    let (_, review) = crate::host::config::review(&target)?;
    let mut store = trust::open_store()?;
    let recorded = store.trust(&path).map_err(trust::catalog_error)?;
    if json {
        crate::term::render::out_json(&serde_json::json!({
            "trusted": recorded.display().to_string(),
            "review": review.to_string().lines().collect::<Vec<_>>(),
        }));
    } else {
        let mut text = format!("trusted {}; it will:\n", recorded.display());
        for line in trust::review_lines(&review) {
            text.push_str(&line);
            text.push('\n');
        }
        crate::term::render::out(&text);
    }
    Ok(0)
}

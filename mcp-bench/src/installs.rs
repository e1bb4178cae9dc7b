//! Programs some rows need beside the workspace's own: the pinned npm packages that
//! `scripts/reference-servers.sh` installs under `target/reference-servers/`, and the
//! `mcpctl` binary of the same build. A row whose program is missing is printed as
//! pending with the command that installs it, never silently dropped.

use std::path::{Path, PathBuf};

use crate::table::Row;

/// The command that installs the npm packages.
pub(crate) const INSTALL_HINT: &str =
    "needs the pinned npm installs: bash scripts/reference-servers.sh";

/// A Node program found (its entry point and the loopback-only preload), or not.
#[derive(Debug)]
pub(crate) enum Install {
    /// Installed.
    Found {
        /// The script `node` runs.
        node_entry: PathBuf,
        /// `loopback-only.cjs`, for `node --require`.
        preload: PathBuf,
    },
    /// Not installed.
    Missing,
}

/// `$MCP_REFERENCE_SERVERS`, else `target/reference-servers` of this workspace.
fn reference_dir() -> PathBuf {
    std::env::var_os("MCP_REFERENCE_SERVERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/reference-servers"),
        PathBuf::from,
    )
}

fn node_program(entry: &str) -> Install {
    let dir = reference_dir();
    let node_entry = dir.join("node_modules").join(entry);
    let preload = dir.join("loopback-only.cjs");
    if node_entry.is_file() && preload.is_file() {
        Install::Found {
            node_entry,
            preload,
        }
    } else {
        Install::Missing
    }
}

/// `@modelcontextprotocol/server-everything`.
pub(crate) fn server_everything() -> Install {
    node_program("@modelcontextprotocol/server-everything/dist/index.js")
}

/// npm `mcp-proxy` (stdio servers behind streamable HTTP).
pub(crate) fn mcp_proxy() -> Install {
    node_program("mcp-proxy/dist/bin/mcp-proxy.mjs")
}

/// `mcpctl` of the same build (`target/<profile>/mcpctl`, beside this binary).
pub(crate) fn mcpctl() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let candidate = exe.parent()?.join("mcpctl");
    candidate.is_file().then_some(candidate)
}

/// Pending rows `name label` for a program that is not installed.
pub(crate) fn missing_rows(name: &str, labels: &[&str], hint: &str) -> Vec<Row> {
    labels
        .iter()
        .map(|label| Row::pending(format!("{name} {label}"), "—", hint))
        .collect()
}

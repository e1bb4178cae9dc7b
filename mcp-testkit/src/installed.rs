//! The pinned third-party MCP clients and servers the workspace's test command installs
//! (`scripts/gateway-clients.sh`, under `target/gateway-clients`): where a test finds
//! them, and what it does when they are missing (skips, saying so, or fails where they
//! must be there).

use std::path::{Path, PathBuf};

/// The variable that turns a missing third-party client or server into a test failure
/// instead of a skip (set by `scripts/test.sh` once its installs succeeded, as CI runs it).
pub const REQUIRE_GATEWAY_CLIENTS_ENV: &str = "MCP_REQUIRE_GATEWAY_CLIENTS";

/// The folder the test command installs them in, below the workspace root.
pub const INSTALLED_CLIENTS_DIR: &str = "target/gateway-clients";

/// `relative` below [`INSTALLED_CLIENTS_DIR`] (`venv/bin/python`,
/// `fastmcp-venv/bin/python`, `node_modules/…`), found from `manifest_dir`, the calling
/// test crate's `CARGO_MANIFEST_DIR` (a member folder of the workspace): `Some(path)` when
/// it exists; else `None`, after a `SKIPPED:` line on stderr naming `what` and the
/// install script.
///
/// ```
/// # if std::env::var_os(mcp_testkit::REQUIRE_GATEWAY_CLIENTS_ENV).is_none() {
/// let program = mcp_testkit::installed_test_client(
///     env!("CARGO_MANIFEST_DIR"),
///     "a/program/that/is/never/installed",
///     "nothing",
/// );
/// assert_eq!(program, None);
/// # }
/// ```
///
/// # Panics
/// When it is missing and [`REQUIRE_GATEWAY_CLIENTS_ENV`] is set: a test that must run
/// fails, naming what to install.
#[allow(
    clippy::print_stderr,
    reason = "the skip notice goes to the test's stderr"
)]
pub fn installed_test_client(manifest_dir: &str, relative: &str, what: &str) -> Option<PathBuf> {
    let path = Path::new(manifest_dir)
        .join("..")
        .join(INSTALLED_CLIENTS_DIR)
        .join(relative);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os(REQUIRE_GATEWAY_CLIENTS_ENV).is_none(),
        "{what} is not installed at {}: run scripts/gateway-clients.sh",
        path.display()
    );
    eprintln!(
        "SKIPPED: {what} is not installed at {}; run scripts/gateway-clients.sh",
        path.display()
    );
    None
}

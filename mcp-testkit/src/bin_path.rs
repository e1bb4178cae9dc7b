//! Finding (and if needed building) the `mcp-fake-server` binary from another crate's
//! tests.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::Error;

/// The binary's file name.
pub const FAKE_SERVER_BIN_NAME: &str = "mcp-fake-server";

/// Environment variable that, when set, names the binary to use (skips the search).
pub const FAKE_SERVER_BIN_ENV: &str = "MCP_FAKE_SERVER_BIN";

/// The path of the `mcp-fake-server` binary, building it once if needed.
///
/// # Panics
/// When the binary can neither be found nor built (the message says what was tried);
/// use [`try_fake_server_bin`] to handle that yourself.
pub fn fake_server_bin() -> PathBuf {
    match try_fake_server_bin() {
        Ok(path) => path,
        Err(e) => panic!("{e}"),
    }
}

/// The path of the `mcp-fake-server` binary.
///
/// Search order:
/// 1. `$MCP_FAKE_SERVER_BIN`, if set;
/// 2. the Cargo profile directory of the running test (`target/<profile>/`, the parent
///    of the `deps/` folder holding the test executable), unless the testkit's sources are
///    newer than that binary;
/// 3. otherwise `$CARGO build --manifest-path <this testkit's Cargo.toml> --bin
///    mcp-fake-server` into that target directory and profile, done once per process
///    (later callers wait for it and share the result). The build uses the testkit's own
///    manifest, not the calling project's, so it works from any project: one that has
///    `mcp-testkit` only in its `[dev-dependencies]` needs nothing else.
///
/// A downstream crate therefore needs only `mcp-testkit` in its `[dev-dependencies]`:
/// the first test that asks builds the binary (a minute or two, once; later runs find it).
/// To build it before the tests instead (e.g. in CI), or to use one binary for several
/// projects, `cargo install --path <checkout>/mcp-testkit --bin mcp-fake-server` and set
/// `MCP_FAKE_SERVER_BIN=$(command -v mcp-fake-server)`.
///
/// # Errors
/// [`Error::Binary`] when no binary is found and the build fails.
pub fn try_fake_server_bin() -> Result<PathBuf, Error> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND
        .get_or_init(locate)
        .clone()
        .map_err(|message| Error::Binary { message })
}

fn locate() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(FAKE_SERVER_BIN_ENV) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "${FAKE_SERVER_BIN_ENV} names {}, which is not a file",
                path.display()
            ))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("current_exe failed: {e}"))?;
    let profile_dir = profile_dir(&exe).ok_or_else(|| {
        format!(
            "{} is not inside a Cargo target directory; set ${FAKE_SERVER_BIN_ENV}",
            exe.display()
        )
    })?;
    let candidate = profile_dir.join(FAKE_SERVER_BIN_NAME);
    if candidate.is_file() && !is_stale(&candidate) {
        return Ok(candidate);
    }
    build(&profile_dir)?;
    if candidate.is_file() {
        Ok(candidate)
    } else {
        Err(format!(
            "built mcp-fake-server but {} does not exist",
            candidate.display()
        ))
    }
}

/// Whether the testkit's sources (when they are on this machine, as in a checkout or the
/// Cargo registry) are newer than the binary: `cargo test -p <other crate>` does not rebuild
/// another package's binaries, so a binary left from before a testkit change would be used.
fn is_stale(binary: &Path) -> bool {
    let Ok(built) = std::fs::metadata(binary).and_then(|m| m.modified()) else {
        return true;
    };
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    newest_mtime(&sources).is_some_and(|newest| newest > built)
}

fn newest_mtime(dir: &Path) -> Option<std::time::SystemTime> {
    let mut newest = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let time = if path.is_dir() {
            newest_mtime(&path)
        } else {
            entry.metadata().and_then(|m| m.modified()).ok()
        };
        newest = newest.max(time);
    }
    newest
}

/// `target/<profile>` for an executable in `target/<profile>/deps/` or `target/<profile>/`.
fn profile_dir(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    let dir = if dir.file_name()? == "deps" || dir.file_name()? == "examples" {
        dir.parent()?
    } else {
        dir
    };
    Some(dir.to_owned())
}

fn build(profile_dir: &Path) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = profile_dir
        .parent()
        .ok_or_else(|| format!("{} has no parent", profile_dir.display()))?;
    let profile = profile_dir
        .file_name()
        .and_then(|p| p.to_str())
        .unwrap_or("debug");
    let profile = if profile == "debug" { "dev" } else { profile };
    // The testkit's own manifest: `-p mcp-testkit` from the caller's project fails inside
    // Cargo when the testkit is only a dev-dependency there.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let output = std::process::Command::new(&cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .args([
            "--bin",
            FAKE_SERVER_BIN_NAME,
            "--profile",
            profile,
            "--target-dir",
        ])
        .arg(target_dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`cargo build --manifest-path {} --bin mcp-fake-server` failed ({}): {}; build it yourself and set ${FAKE_SERVER_BIN_ENV}",
            manifest.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_dir_skips_deps() {
        assert_eq!(
            profile_dir(Path::new("/t/debug/deps/x-123")),
            Some(PathBuf::from("/t/debug"))
        );
        assert_eq!(
            profile_dir(Path::new("/t/release/mcp-fake-server")),
            Some(PathBuf::from("/t/release"))
        );
    }
}

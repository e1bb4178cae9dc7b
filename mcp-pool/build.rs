//! Builds the launcher's exec helper (`exec-helper/main.rs`, Linux only) into
//! `OUT_DIR/mcp-pool-exec`; the library embeds its bytes (`src/launch/exec_helper.rs`).
//!
//! The helper is compiled with the same `rustc` as the crate. First without the C
//! library (`exec-helper/minimal.rs`, Linux on x86_64 and aarch64: no start-up of its
//! own, about a tenth of the CPU per spawn), then on the standard library statically
//! linked when the C library allows it (no dynamic loader), then dynamically linked. If
//! no build works, an empty file is written and a warning printed: the launcher then
//! spawns with `fork` as it did before the helper existed (slower, with the same
//! guarantees).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = "exec-helper/main.rs";
const MINIMAL: &str = "exec-helper/minimal.rs";

fn main() {
    println!("cargo::rerun-if-changed={SOURCE}");
    println!("cargo::rerun-if-changed={MINIMAL}");
    println!("cargo::rerun-if-changed=build.rs");
    let Some(out_dir) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        println!("cargo::warning=OUT_DIR is not set; the exec helper is not built");
        return;
    };
    let output = out_dir.join("mcp-pool-exec");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        write_empty(&output);
        return;
    }
    let statically = ["-Ctarget-feature=+crt-static", "-Crelocation-model=static"];
    let minimal = matches!(
        env::var("CARGO_CFG_TARGET_ARCH").as_deref(),
        Ok("x86_64" | "aarch64")
    ) && compile(
        MINIMAL,
        &output,
        &[
            statically[0],
            statically[1],
            "-Clink-arg=-nostartfiles",
            "-Clink-arg=-nostdlib",
            "-Clink-arg=-static",
        ],
    );
    if minimal || compile(SOURCE, &output, &statically) || compile(SOURCE, &output, &[]) {
        return;
    }
    println!(
        "cargo::warning=mcp-pool: could not build the exec helper ({MINIMAL} or {SOURCE}); servers will be \
         spawned with fork (slower in a large host, same guarantees)"
    );
    write_empty(&output);
}

/// Compiles the helper's `source` with the crate's `rustc` for the crate's target.
fn compile(source: &str, output: &Path, extra: &[&str]) -> bool {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let manifest_dir = env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let source = manifest_dir.unwrap_or_default().join(source);
    #[expect(
        clippy::disallowed_methods,
        reason = "a build script compiling the exec helper, not a server spawn"
    )]
    let mut cmd = Command::new(rustc);
    cmd.args([
        "--edition=2024",
        "--crate-type=bin",
        "--crate-name=mcp_pool_exec",
        "-Copt-level=s",
        "-Cpanic=abort",
        "-Cdebuginfo=0",
        "-Cstrip=symbols",
        "-Ccodegen-units=1",
    ])
    .args(extra)
    .arg("-o")
    .arg(output)
    .arg(&source);
    if let Ok(target) = env::var("TARGET") {
        cmd.arg(format!("--target={target}"));
    }
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        let mut flag = std::ffi::OsString::from("-Clinker=");
        flag.push(linker);
        cmd.arg(flag);
    }
    matches!(cmd.output(), Ok(out) if out.status.success())
}

fn write_empty(output: &Path) {
    if let Err(err) = std::fs::write(output, []) {
        println!("cargo::warning=could not write {}: {err}", output.display());
    }
}

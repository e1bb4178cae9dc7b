//! Builds the launcher's exec helper (`exec-helper/main.rs`, Linux only) into
//! `OUT_DIR/mcp-pool-exec`; the library embeds its bytes (`src/launch/exec_helper.rs`).
//!
//! The helper is compiled with the same `rustc` as the crate, statically linked when
//! the C library allows it (it then starts faster: no dynamic loader). If neither a
//! static nor a dynamic build works, an empty file is written and a warning printed:
//! the launcher then spawns with `fork` as it did before the helper existed (slower,
//! with the same guarantees).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = "exec-helper/main.rs";

fn main() {
    println!("cargo::rerun-if-changed={SOURCE}");
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
    if compile(&output, &statically) || compile(&output, &[]) {
        return;
    }
    println!(
        "cargo::warning=mcp-pool: could not build the exec helper ({SOURCE}); servers will be \
         spawned with fork (slower in a large host, same guarantees)"
    );
    write_empty(&output);
}

/// Compiles the helper with the crate's `rustc` for the crate's target.
fn compile(output: &Path, extra: &[&str]) -> bool {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let manifest_dir = env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let source = manifest_dir.unwrap_or_default().join(SOURCE);
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

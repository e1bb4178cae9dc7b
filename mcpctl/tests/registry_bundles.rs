//! `mcpctl add` of an `mcpb` bundle against the testkit's registry on loopback: checked
//! before consent (digest, entry names, symlinks, duplicate names, declared sizes) and
//! unpacked only after it, its server started from the unpacked folder; an archive that
//! lies (a zip bomb whose directory declares small sizes, names listed twice, a NUL or a
//! drive in a name) is refused and leaves nothing behind.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::path::{Path, PathBuf};

use mcp_testkit::{FakeRegistry, RegistryContents, Scenario, ToolSpec};
use support::{MCPCTL, Workdir};

/// The fake registry, served by a runtime of its own while the test runs mcpctl.
struct Registry {
    registry: Option<FakeRegistry>,
    runtime: tokio::runtime::Runtime,
}

impl Registry {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let registry = runtime
            .block_on(FakeRegistry::start(RegistryContents::examples()))
            .unwrap();
        Self {
            registry: Some(registry),
            runtime,
        }
    }

    fn url(&self) -> String {
        self.registry.as_ref().unwrap().url()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Some(registry) = self.registry.take() {
            self.runtime.block_on(registry.shutdown());
        }
    }
}

/// A zip archive of `entries` (name, bytes); a name ending in `/` is a folder, a name
/// starting with `@` a symbolic link to the bytes (as text).
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write as _;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        if let Some(link) = name.strip_prefix('@') {
            writer
                .add_symlink(link, std::str::from_utf8(bytes).unwrap(), options)
                .unwrap();
        } else if name.ends_with('/') {
            writer.add_directory(*name, options).unwrap();
        } else {
            writer.start_file(*name, options).unwrap();
            writer.write_all(bytes).unwrap();
        }
    }
    writer.finish().unwrap().into_inner()
}

/// A bundle whose manifest runs this build's fake server on the scenario it carries
/// (`${__dirname}/scenario.json`), so the server starts only from the unpacked folder.
fn fake_server_bundle(extra: &[(&str, &[u8])]) -> Vec<u8> {
    let manifest = serde_json::json!({
        "manifest_version": "0.2",
        "name": "notes",
        "version": "1.0.0",
        "server": {
            "type": "binary",
            "entry_point": "scenario.json",
            "mcp_config": {
                "command": MCPCTL,
                "args": ["fake-server", "--scenario", "${__dirname}/scenario.json"]
            }
        }
    })
    .to_string();
    let scenario =
        serde_json::to_string(&Scenario::new("bundled").with_tool(ToolSpec::echo("bundled_echo")))
            .unwrap();
    let mut entries: Vec<(&str, &[u8])> = vec![
        ("manifest.json", manifest.as_bytes()),
        ("data/", b""),
        ("scenario.json", scenario.as_bytes()),
    ];
    entries.extend_from_slice(extra);
    zip_of(&entries)
}

/// Serves `bundle` and publishes `io.github.example/NAME` 1.0.0 whose one package is that
/// bundle pinned to `sha256` (its own digest when `None`), with an environment variable
/// of its own (`NOTES_MODE`, default `fast`). Returns the bundle's digest.
fn publish_bundle(
    registry: &Registry,
    name: &str,
    bundle: Vec<u8>,
    sha256: Option<&str>,
) -> String {
    let fake = registry.registry.as_ref().unwrap();
    let own = mcp_catalog::FileSha256::of(&bundle).to_hex().to_owned();
    let digest = sha256.unwrap_or(&own).to_owned();
    fake.add_file(&format!("{name}.mcpb"), bundle);
    fake.publish(mcp_testkit::RegistryEntry::new(serde_json::json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": format!("io.github.example/{name}"),
        "description": "Notes in a bundle",
        "version": "1.0.0",
        "packages": [{
            "registryType": "mcpb",
            "identifier": fake.file_url(&format!("{name}.mcpb")),
            "version": "1.0.0",
            "fileSha256": digest,
            "transport": {"type": "stdio"},
            "environmentVariables": [
                {"name": "NOTES_MODE", "description": "How to keep notes", "default": "fast"}
            ]
        }]
    })));
    own
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn an_mcpb_bundle_is_unpacked_after_consent_and_its_server_starts_from_there() {
    let registry = Registry::start();
    let wd = Workdir::new();
    let digest = publish_bundle(&registry, "notes", fake_server_bundle(&[]), None);
    let url = registry.url();
    let args = ["add", "io.github.example/notes", "--registry", url.as_str()];
    let bundles = wd.path().join("home").join("bundles");

    // Enter keeps NOTES_MODE's default; then the question.
    let no = wd.run_on_terminal(&args, "\nn\n");
    assert_eq!(no.code, 1, "{}", no.stdout);
    for shown in [
        "pinned: io.github.example/notes@1.0.0 (mcpb ",
        "unpack the bundle (2 files, ",
        "fake-server --scenario",
        "write it to mcp.toml? [y]es / [N]o:",
        "nothing was written",
    ] {
        assert!(
            no.stdout.contains(shown),
            "{shown:?} not in:\n{}",
            no.stdout
        );
    }
    assert!(!wd.path().join("mcp.toml").exists());
    assert!(!bundles.exists(), "nothing unpacked before consent");

    let yes = wd.run_on_terminal(&args, "slow\ny\n");
    assert_eq!(yes.code, 0, "{}", yes.stdout);
    let folders: Vec<PathBuf> = std::fs::read_dir(&bundles)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let folder = &folders[0];
    assert!(
        folder
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("notes-"),
        "{folder:?}"
    );
    assert_eq!(files_under(folder), ["manifest.json", "scenario.json"]);
    let written = std::fs::read_to_string(wd.path().join("mcp.toml")).unwrap();
    let scenario = format!("{}/scenario.json", folder.display());
    for expected in [
        "# from the MCP Registry: io.github.example/notes@1.0.0 (mcpb ",
        MCPCTL,
        scenario.as_str(),
        "cwd = ",
        "env = { NOTES_MODE = \"slow\" }",
    ] {
        assert!(
            written.contains(expected),
            "{expected:?} not in:\n{written}"
        );
    }
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(wd.path().join("mcp.registry.json")).unwrap(),
    )
    .unwrap();
    assert!(
        record["servers"]["notes"].to_string().contains(&digest),
        "{record}"
    );

    // The server really starts from the unpacked folder.
    let tools = wd.run(&["--config", "mcp.toml", "tools"]);
    assert_eq!(tools.code, 0, "{}", tools.stderr);
    assert!(tools.stdout.contains("bundled_echo"), "{}", tools.stdout);
    // The entry runs the recorded bundle: its pin holds, nothing is held back.
    assert!(!tools.stderr.contains("held back"), "{}", tools.stderr);

    // Added again, the same bundle replaces its unpacked folder and still starts.
    let again = wd.run_on_terminal(&args, "\ny\n");
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert_eq!(std::fs::read_dir(&bundles).unwrap().count(), 1);
    assert_eq!(files_under(folder), ["manifest.json", "scenario.json"]);
    let tools = wd.run(&["--config", "mcp.toml", "tools"]);
    assert!(tools.stdout.contains("bundled_echo"), "{}", tools.stdout);
    wd.assert_no_server_left();
}

#[test]
fn a_bundle_escaping_its_folder_linking_out_or_not_matching_its_digest_is_refused() {
    let registry = Registry::start();
    let wd = Workdir::new();
    let cases: [(&str, Vec<u8>, Option<&str>, &str); 4] = [
        (
            "dotdot",
            fake_server_bundle(&[("../evil", b"x")]),
            None,
            "the bundle's entry `../evil` is not a plain relative path",
        ),
        (
            "absolute",
            fake_server_bundle(&[("/tmp/evil", b"x")]),
            None,
            "the bundle's entry `/tmp/evil` is not a plain relative path",
        ),
        (
            "symlink",
            fake_server_bundle(&[("@link", b"/etc/passwd")]),
            None,
            "the entry `link` is a symbolic link",
        ),
        (
            "mismatch",
            fake_server_bundle(&[]),
            Some("0000000000000000000000000000000000000000000000000000000000000000"),
            "SHA-256",
        ),
    ];
    for (name, bundle, digest, _) in &cases {
        publish_bundle(&registry, name, bundle.clone(), *digest);
    }
    let url = registry.url();
    for (name, _, _, said) in &cases {
        let full = format!("io.github.example/{name}");
        let run = wd.run(&["add", full.as_str(), "--registry", url.as_str(), "--yes"]);
        assert_ne!(run.code, 0, "{name}: {}", run.stdout);
        assert!(
            run.stderr.contains(said),
            "{name}: {said:?} not in:\n{}",
            run.stderr
        );
        assert!(!wd.path().join("mcp.toml").exists(), "{name}");
        assert!(!wd.path().join("mcp.registry.json").exists(), "{name}");
        assert!(!wd.path().join("home").join("bundles").exists(), "{name}");
        assert!(!wd.path().join("evil").exists(), "{name}");
    }
}

/// `bundle` with the size entry `name` declares (in its local header and in the central
/// directory) set to `declared`, its data left as it is: how a zip bomb lies.
fn declaring(bundle: &[u8], name: &str, declared: u32) -> Vec<u8> {
    let (local, central) = {
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bundle)).unwrap();
        let entry = archive.by_name(name).unwrap();
        (
            usize::try_from(entry.header_start()).unwrap(),
            usize::try_from(entry.central_header_start()).unwrap(),
        )
    };
    let mut out = bundle.to_vec();
    out[local + 22..local + 26].copy_from_slice(&declared.to_le_bytes());
    out[central + 24..central + 28].copy_from_slice(&declared.to_le_bytes());
    out
}

/// `bundle` with every occurrence of `from` replaced by `to` (of the same length): an entry
/// renamed in its local header and the central directory, past what a zip writer allows.
fn renaming(bundle: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut out = bundle.to_vec();
    let mut at = 0;
    let mut renamed = 0;
    while let Some(found) = out[at..].windows(from.len()).position(|w| w == from) {
        out[at + found..at + found + to.len()].copy_from_slice(to);
        at += found + to.len();
        renamed += 1;
    }
    assert_eq!(
        renamed, 2,
        "the name in the local header and the central directory"
    );
    out
}

/// Adds `io.github.example/NAME` with `--yes` and checks it was refused saying `said`, with
/// nothing written: no entry, no record, no partial folder beside the bundles.
fn assert_refused(wd: &Workdir, url: &str, name: &str, said: &str) {
    let full = format!("io.github.example/{name}");
    let run = wd.run(&["add", full.as_str(), "--registry", url, "--yes"]);
    assert_ne!(run.code, 0, "{name}: {}", run.stdout);
    assert!(
        run.stderr.contains(said),
        "{name}: {said:?} not in:\n{}",
        run.stderr
    );
    assert!(!wd.path().join("mcp.toml").exists(), "{name}");
    assert!(!wd.path().join("mcp.registry.json").exists(), "{name}");
    let bundles = wd.path().join("home").join("bundles");
    let left: Vec<_> = std::fs::read_dir(&bundles)
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{name}: left behind {left:?}");
}

/// A zip bomb: an entry whose directory declares a small size and whose data inflates to
/// far more is stopped one byte past its declared size while unpacking (after consent),
/// and the partial folder goes. One declaring more than the limit is refused before
/// consent, without unpacking anything.
#[test]
fn a_zip_bomb_is_refused_and_leaves_nothing_behind() {
    let registry = Registry::start();
    let wd = Workdir::new();
    let zeros = vec![0u8; 16 * 1024 * 1024];
    let bomb = fake_server_bundle(&[("big.bin", zeros.as_slice())]);
    assert!(bomb.len() < 1024 * 1024, "{} bytes", bomb.len());
    publish_bundle(&registry, "lies", declaring(&bomb, "big.bin", 1000), None);
    publish_bundle(
        &registry,
        "huge",
        declaring(&bomb, "big.bin", 0x7fff_ffff),
        None,
    );
    let url = registry.url();
    assert_refused(
        &wd,
        &url,
        "huge",
        "it unpacks to more than 1073741824 bytes",
    );
    assert!(
        !wd.path().join("home").join("bundles").exists(),
        "the refusal before consent created nothing"
    );
    assert_refused(
        &wd,
        &url,
        "lies",
        "`big.bin` is larger than the 1000 bytes it declares",
    );
}

/// Names listed twice (a second entry the zip reader would hide), two names for one path,
/// a NUL in a name, and a Windows drive are refused before consent.
#[test]
fn a_bundle_naming_an_entry_twice_or_with_a_nul_or_a_drive_is_refused() {
    let registry = Registry::start();
    let wd = Workdir::new();
    let cases: [(&str, Vec<u8>, &str); 6] = [
        (
            "listed-twice",
            renaming(
                &fake_server_bundle(&[("dup-a.js", b"one"), ("dup-b.js", b"two")]),
                b"dup-b.js",
                b"dup-a.js",
            ),
            "its central directory lists 5 entries under 4 distinct names",
        ),
        (
            "dot-slash",
            fake_server_bundle(&[("./scenario.json", b"{}")]),
            "the entry `./scenario.json` unpacks to `scenario.json`, as another entry does",
        ),
        (
            "file-and-folder",
            fake_server_bundle(&[("data", b"x")]),
            "the entry `data` unpacks to `data`, as another entry does",
        ),
        (
            "nul",
            renaming(
                &fake_server_bundle(&[("nulXname.js", b"x")]),
                b"nulXname.js",
                b"nul\0name.js",
            ),
            "the bundle's entry `nul\\0name.js` is not a plain relative path",
        ),
        (
            "drive",
            fake_server_bundle(&[("C:/evil.js", b"x")]),
            "the bundle's entry `C:/evil.js` is not a plain relative path",
        ),
        (
            "drive-relative",
            fake_server_bundle(&[("C:evil.js", b"x")]),
            "the bundle's entry `C:evil.js` is not a plain relative path",
        ),
    ];
    for (name, bundle, _) in &cases {
        publish_bundle(&registry, name, bundle.clone(), None);
    }
    let url = registry.url();
    for (name, _, said) in &cases {
        assert_refused(&wd, &url, name, said);
    }
    assert!(!wd.path().join("home").join("bundles").exists());
    assert!(!wd.path().join("C:").exists());
}

//! Skills (SEP-2640) of a real third-party server through the connection set: FastMCP
//! 4.1.6 (PyPI) serving a folder of skills through its own `SkillsDirectoryProvider` and
//! Skills extension (the fixture script of mcp-client's test,
//! mcp-client/tests/fixtures/fastmcp_skills_server.py, used by path), over stdio. The set
//! lists its skills named like tools without reading any file (the server's own log of the
//! requests it received says so), loads one verified under an authority that allows it,
//! and refuses a file edited on disk after the listing, with an error naming the server,
//! the skill and the file. No process is left.
//!
//! FastMCP is installed by `scripts/gateway-clients.sh` into
//! target/gateway-clients/fastmcp-venv (CI runs it and sets `MCP_REQUIRE_GATEWAY_CLIENTS=1`,
//! which makes a missing install a failure). Without it and without that variable, each
//! test says so on stderr and does nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "tests; the skip notice goes to stderr"
)]

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Fixture;
use mcp_catalog::{ProtocolChoice, ServerConfig};
use mcp_connections::{
    ConnectionSet, ConnectionSetOptions, HostAuthority, SkillError, SkillInfo, SkillLoadError,
    SkillLoading, SkillReadSettings,
};
use pretty_assertions::assert_eq;
use rmcp::model::sha256_digest;

const PDF_SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: MIT\n---\n# PDF processing\n\nUse references/FORMS.md for forms.\n";
const FORMS_MD: &str = "Forms: fill every field.\n";
const NOTES_SKILL_MD: &str = "---\nname: notes\ndescription: Take notes\n---\nWrite it down.\n";
const BOUND: Duration = Duration::from_secs(30);

/// The FastMCP venv's Python, or `None` (test skipped) when it is not installed.
fn python() -> Option<PathBuf> {
    mcp_testkit::installed_test_client(
        env!("CARGO_MANIFEST_DIR"),
        "fastmcp-venv/bin/python",
        "FastMCP",
    )
}

/// The skills folder (two skills), the server's request log and pid file, under the
/// fixture's home, and the server `fastmcp` in its catalog.
struct Served {
    fx: Fixture,
}

impl Served {
    fn new(python: &Path) -> Self {
        let mut fx = Fixture::new();
        let pdf = fx.home.join("skills/pdf-processing");
        std::fs::create_dir_all(pdf.join("references")).unwrap();
        std::fs::write(pdf.join("SKILL.md"), PDF_SKILL_MD).unwrap();
        std::fs::write(pdf.join("references/FORMS.md"), FORMS_MD).unwrap();
        let notes = fx.home.join("skills/notes");
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(notes.join("SKILL.md"), NOTES_SKILL_MD).unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../mcp-client/tests/fixtures/fastmcp_skills_server.py");
        assert!(script.is_file(), "{}", script.display());
        let args = [
            script,
            fx.home.join("skills"),
            fx.home.join("requests.jsonl"),
            fx.home.join("server.pid"),
        ]
        .map(|p| p.display().to_string());
        fx.add(
            "fastmcp",
            ServerConfig::stdio(python.display().to_string())
                .with_args(args)
                // FastMCP serves skills only in the 2026-07-28 era; under `auto`, a Python
                // start slower than the probe's bound falls back to the 2025 era.
                .with_protocol(ProtocolChoice::V2026_07_28)
                .with_startup_timeout(BOUND),
        );
        Self { fx }
    }

    async fn start(&self) -> ConnectionSet {
        let set = ConnectionSet::start(&self.fx.catalog(), ConnectionSetOptions::new());
        let summary = set.wait_startup().await;
        assert_eq!(summary.ready(), 1, "{summary:?}");
        set.set_authority(HostAuthority::new().with_skill_loading(SkillLoading::Allow));
        set
    }

    /// Every request the server received, in order: `(method, uri)` (the URI of a read).
    fn requests(&self) -> Vec<(String, Option<String>)> {
        let Ok(text) = std::fs::read_to_string(self.fx.home.join("requests.jsonl")) else {
            return Vec::new();
        };
        text.lines()
            .map(|line| {
                let entry: serde_json::Value = serde_json::from_str(line).unwrap();
                (
                    entry["method"].as_str().unwrap().to_owned(),
                    entry["uri"].as_str().map(str::to_owned),
                )
            })
            .collect()
    }

    /// The URIs of the `resources/read` requests the server received, in order.
    fn reads(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|(method, _)| method == "resources/read")
            .filter_map(|(_, uri)| uri)
            .collect()
    }

    fn count(&self, method: &str) -> usize {
        self.requests().iter().filter(|(m, _)| m == method).count()
    }

    /// Shuts the set down and checks that the server process (and its group) is gone.
    async fn shutdown(&self, set: ConnectionSet) {
        set.shutdown().await;
        let pid = mcp_testkit::read_pid_file(self.fx.home.join("server.pid"))
            .expect("the server wrote its pid");
        assert!(
            mcp_testkit::wait_gone(pid, BOUND).await,
            "FastMCP server process {pid} outlived the connection set"
        );
        mcp_testkit::assert_no_process_group(pid);
    }
}

fn names(skills: &[SkillInfo]) -> Vec<(&str, &str, &str)> {
    skills
        .iter()
        .map(|s| (s.qualified_name.as_str(), s.name(), s.description()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_set_lists_fastmcp_skills_without_a_read_and_loads_one_verified() {
    let Some(python) = python() else { return };
    let served = Served::new(&python);
    let set = served.start().await;
    assert_eq!(
        set.status()[0].protocol_version.as_deref(),
        Some("2026-07-28")
    );

    let skills = set.skills().await;
    assert_eq!(
        names(&skills),
        [
            ("mcp__fastmcp__notes", "notes", "Take notes"),
            (
                "mcp__fastmcp__pdf-processing",
                "pdf-processing",
                "Extract, fill, and assemble PDF documents"
            ),
        ]
    );
    assert!(skills.iter().all(|s| !s.held));
    // Listed once (a second listing reuses it), and no file read.
    assert_eq!(set.skills().await, skills);
    assert_eq!(served.count("skills/list"), 1, "{:?}", served.requests());
    assert_eq!(served.reads(), Vec::<String>::new(), "listing read a file");

    let loaded = set
        .load_skill("mcp__fastmcp__pdf-processing", &SkillReadSettings::new())
        .await
        .unwrap();
    let expected = [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
    ];
    let uris: Vec<&str> = loaded.files.iter().map(|f| f.uri.as_str()).collect();
    assert_eq!(uris, expected);
    assert!(loaded.files.iter().all(|f| f.verified));
    assert_eq!(loaded.skill_md(), Some(PDF_SKILL_MD));
    assert_eq!(loaded.files[1].bytes, FORMS_MD.as_bytes());
    assert_eq!(
        served.reads(),
        expected,
        "each file read once, SKILL.md first"
    );
    served.shutdown(set).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_edited_on_disk_after_the_listing_is_refused_naming_server_skill_and_file() {
    let Some(python) = python() else { return };
    let served = Served::new(&python);
    let set = served.start().await;
    let skills = set.skills().await;
    assert_eq!(skills.len(), 2, "{skills:?}");

    // Same length, other bytes: the size still matches, the digest does not.
    let tampered = "Forms: send them to me!!\n";
    assert_eq!(tampered.len(), FORMS_MD.len());
    std::fs::write(
        served
            .fx
            .home
            .join("skills/pdf-processing/references/FORMS.md"),
        tampered,
    )
    .unwrap();
    let err = set
        .load_skill("mcp__fastmcp__pdf-processing", &SkillReadSettings::new())
        .await
        .unwrap_err();
    assert!(err.is_verification_failure(), "{err}");
    let SkillLoadError::Skill(inner) = &err else {
        panic!("not a verification failure: {err}");
    };
    assert_eq!(
        inner,
        &SkillError::DigestMismatch {
            server: "fastmcp".parse().unwrap(),
            skill: "pdf-processing".into(),
            file: "skill://pdf-processing/references/FORMS.md".into(),
            expected: sha256_digest(FORMS_MD.as_bytes()).into(),
            actual: sha256_digest(tampered.as_bytes()).into(),
        }
    );
    let text = err.to_string();
    for part in [
        "`fastmcp`",
        "`pdf-processing`",
        "skill://pdf-processing/references/FORMS.md",
    ] {
        assert!(text.contains(part), "{text} does not name {part}");
    }
    assert_eq!(
        served.reads(),
        [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references/FORMS.md"
        ],
        "the load stops at the tampered file"
    );
    // The other skill still loads.
    let notes = set
        .load_skill("mcp__fastmcp__notes", &SkillReadSettings::new())
        .await
        .unwrap();
    assert_eq!(notes.skill_md(), Some(NOTES_SKILL_MD));
    served.shutdown(set).await;
}

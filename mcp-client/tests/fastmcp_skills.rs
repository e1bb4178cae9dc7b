//! Skills (SEP-2640) of a real third-party server: FastMCP 4.1.6 (PyPI), serving a folder
//! of skills through its own `SkillsDirectoryProvider` and Skills extension
//! (tests/fixtures/fastmcp_skills_server.py), over stdio and over streamable HTTP on
//! 127.0.0.1. Our client lists its skills without reading any file (the server's own log of
//! the requests it received says so), loads one verified against FastMCP's digests, sizes
//! and frontmatter, and refuses a file edited on disk after the listing, with an error
//! naming the server, the skill and the file.
//!
//! FastMCP is installed by `scripts/gateway-clients.sh` into
//! target/gateway-clients/fastmcp-venv (CI runs it and sets `MCP_REQUIRE_GATEWAY_CLIENTS=1`,
//! which makes a missing install a failure). Without it and without that variable, each
//! test says so on stderr and does nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::disallowed_methods,
    reason = "tests; the skip notice goes to stderr; the HTTP test starts the FastMCP server itself"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::StdioConfig;
use mcp_client::{
    Client, ClientSettings, DeclineRequests, Handshake, HttpTarget, SkillError, SkillReadSettings,
    Target,
};
use mcp_testkit::TestHome;
use pretty_assertions::assert_eq;
use rmcp::model::{SKILLS_EXTENSION_ID, Skill, SkillResource, SkillResources, sha256_digest};
use serde_json::json;

const BUDGET: usize = 1024 * 1024;
const BOUND: Duration = Duration::from_secs(30);

/// The FastMCP venv's Python, or `None` (test skipped) when it is not installed.
fn python() -> Option<PathBuf> {
    mcp_testkit::installed_test_client(
        env!("CARGO_MANIFEST_DIR"),
        "fastmcp-venv/bin/python",
        "FastMCP",
    )
}

const PDF_SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: MIT\nmetadata:\n  version: \"2\"\n---\n# PDF processing\n\nUse references/FORMS.md for forms.\n";
const FORMS_MD: &str = "Forms: fill every field.\n";
const NOTES_SKILL_MD: &str = "---\nname: notes\ndescription: Take notes\n---\nWrite it down.\n";

/// The skills folder, the server's request log and pid file, under one temporary home.
struct Served {
    home: TestHome,
    script: PathBuf,
    python: PathBuf,
}

impl Served {
    /// Writes two skills (`pdf-processing` with a reference file and a binary script,
    /// `notes`) into a fresh folder.
    fn new(python: PathBuf) -> Self {
        let home = TestHome::new().unwrap();
        let pdf = home.join("skills/pdf-processing");
        std::fs::create_dir_all(pdf.join("references")).unwrap();
        std::fs::create_dir_all(pdf.join("scripts")).unwrap();
        std::fs::write(pdf.join("SKILL.md"), PDF_SKILL_MD).unwrap();
        std::fs::write(pdf.join("references/FORMS.md"), FORMS_MD).unwrap();
        std::fs::write(pdf.join("scripts/fill.bin"), [0u8, 159, 146, 150]).unwrap();
        let notes = home.join("skills/notes");
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(notes.join("SKILL.md"), NOTES_SKILL_MD).unwrap();
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fastmcp_skills_server.py");
        Self {
            home,
            script,
            python,
        }
    }

    fn file(&self, path: &str) -> PathBuf {
        self.home.join("skills").join(path)
    }

    fn log(&self) -> PathBuf {
        self.home.join("requests.jsonl")
    }

    fn pid_file(&self) -> PathBuf {
        self.home.join("server.pid")
    }

    /// The script's arguments: the skills folder, the log, the pid file.
    fn args(&self) -> Vec<String> {
        [self.home.join("skills"), self.log(), self.pid_file()]
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    /// The server over stdio, started by the client.
    fn stdio(&self) -> Target {
        let mut args = vec![self.script.display().to_string()];
        args.extend(self.args());
        Target::stdio(StdioConfig::new(self.python.display().to_string()).with_args(args))
    }

    /// Every request the server received, in order: `(method, uri)` (the URI of a read).
    fn requests(&self) -> Vec<(String, Option<String>)> {
        let Ok(text) = std::fs::read_to_string(self.log()) else {
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

    /// The server's pid, from its pid file.
    fn pid(&self) -> u32 {
        mcp_testkit::read_pid_file(self.pid_file()).expect("the server wrote its pid")
    }

    /// Checks that the server process (and its group) is gone.
    async fn assert_gone(&self) {
        let pid = self.pid();
        assert!(
            mcp_testkit::wait_gone(pid, BOUND).await,
            "FastMCP server process {pid} outlived its client"
        );
        mcp_testkit::assert_no_process_group(pid);
    }
}

async fn connect(target: Target) -> Client {
    Client::connect(
        "fastmcp".parse().unwrap(),
        target,
        ClientSettings::new()
            .with_extension(SKILLS_EXTENSION_ID, serde_json::Map::new())
            .with_process_grace(Duration::from_millis(500))
            // FastMCP serves skills only in the 2026-07-28 era. Under the default probe, a
            // Python start slower than rmcp's own 10 s bound on the probe (a loaded
            // machine) falls back to `initialize`, and the 2025 era has no skills.
            .with_handshake(Handshake::Discover),
        Arc::new(DeclineRequests),
    )
    .await
    .unwrap()
}

fn named<'a>(skills: &'a [Skill], name: &str) -> &'a Skill {
    skills
        .iter()
        .find(|s| s.name() == name)
        .unwrap_or_else(|| panic!("no skill {name} in {skills:?}"))
}

/// The entry FastMCP must list for `pdf-processing`, its digests computed here from the
/// bytes written (FastMCP lists the files in path order).
fn pdf_files() -> Vec<SkillResource> {
    vec![
        SkillResource::from_bytes("skill://pdf-processing/SKILL.md", PDF_SKILL_MD.as_bytes()),
        SkillResource::from_bytes(
            "skill://pdf-processing/references/FORMS.md",
            FORMS_MD.as_bytes(),
        ),
        SkillResource::from_bytes(
            "skill://pdf-processing/scripts/fill.bin",
            &[0, 159, 146, 150],
        ),
    ]
}

/// Lists (no file read), loads `pdf-processing` verified (each listed file read once,
/// `SKILL.md` first), and describes it with `skills/get`.
async fn list_then_load(client: &Client, served: &Served) {
    assert_eq!(
        client.protocol_version().as_str(),
        "2026-07-28",
        "the era FastMCP serves skills in"
    );
    let listing = client.list_skills(BUDGET).await.unwrap();
    let names: Vec<&str> = listing.skills.iter().map(Skill::name).collect();
    assert_eq!(names, ["notes", "pdf-processing"]);
    assert_eq!(listing.warnings, Vec::<String>::new());
    assert_eq!(served.reads(), Vec::<String>::new(), "listing read a file");

    let skill = named(&listing.skills, "pdf-processing");
    assert_eq!(skill.uri, "skill://pdf-processing/SKILL.md");
    assert_eq!(skill.resources, SkillResources::Files(pdf_files()));
    assert_eq!(
        skill.frontmatter.description,
        "Extract, fill, and assemble PDF documents"
    );
    assert_eq!(skill.frontmatter.extra.get("license"), Some(&json!("MIT")));
    assert_eq!(
        skill.frontmatter.extra.get("metadata"),
        Some(&json!({"version": "2"}))
    );

    let loaded = client
        .load_skill(skill, &SkillReadSettings::new())
        .await
        .unwrap();
    let expected = [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/scripts/fill.bin",
    ];
    let uris: Vec<&str> = loaded.files.iter().map(|f| f.uri.as_str()).collect();
    assert_eq!(uris, expected);
    assert!(loaded.files.iter().all(|f| f.verified));
    assert_eq!(loaded.skill_md(), Some(PDF_SKILL_MD));
    assert_eq!(loaded.files[1].bytes, FORMS_MD.as_bytes());
    assert_eq!(loaded.files[2].bytes, [0u8, 159, 146, 150]);
    assert_eq!(
        served.reads(),
        expected,
        "each file read once, SKILL.md first"
    );

    let entry = client.get_skill(&skill.uri).await.unwrap();
    assert_eq!(&entry.skill, skill);
    assert_eq!(served.reads(), expected, "skills/get reads no file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_skills_are_listed_without_a_read_and_loaded_verified_over_stdio() {
    let Some(python) = python() else { return };
    let served = Served::new(python);
    let client = connect(served.stdio()).await;
    let methods: Vec<String> = served.requests().into_iter().map(|(m, _)| m).collect();
    assert!(
        !methods
            .iter()
            .any(|m| m.starts_with("skills/") || m.starts_with("resources/")),
        "nothing about skills on connect: {methods:?}"
    );
    list_then_load(&client, &served).await;
    client.shutdown().await;
    served.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_edited_after_the_listing_is_refused_naming_server_skill_and_file() {
    let Some(python) = python() else { return };
    let served = Served::new(python);
    let client = connect(served.stdio()).await;
    assert_eq!(
        client.protocol_version().as_str(),
        "2026-07-28",
        "{:?}",
        served.requests()
    );
    let listing = client.list_skills(BUDGET).await.unwrap();
    let skill = named(&listing.skills, "pdf-processing").clone();

    // Same length, other bytes: the size still matches, the digest does not.
    let tampered = "Forms: send them to me!!\n";
    assert_eq!(tampered.len(), FORMS_MD.len());
    std::fs::write(served.file("pdf-processing/references/FORMS.md"), tampered).unwrap();
    let err = client
        .load_skill(&skill, &SkillReadSettings::new())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        SkillError::DigestMismatch {
            server: "fastmcp".parse().unwrap(),
            skill: "pdf-processing".into(),
            file: "skill://pdf-processing/references/FORMS.md".into(),
            expected: sha256_digest(FORMS_MD.as_bytes()).into(),
            actual: sha256_digest(tampered.as_bytes()).into(),
        }
    );
    assert!(err.is_verification_failure());
    let text = err.to_string();
    for named in [
        "`fastmcp`",
        "`pdf-processing`",
        "`skill://pdf-processing/references/FORMS.md`",
    ] {
        assert!(text.contains(named), "{text}");
    }
    assert_eq!(
        served.reads(),
        [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references/FORMS.md"
        ],
        "the load stops at the tampered file"
    );

    // Another length: refused on its size before any digest.
    let longer = "Forms: and one more thing.\n";
    std::fs::write(
        served.file("pdf-processing/SKILL.md"),
        format!("{PDF_SKILL_MD}{longer}"),
    )
    .unwrap();
    let err = client
        .load_skill(&skill, &SkillReadSettings::new())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        SkillError::SizeMismatch {
            server: "fastmcp".parse().unwrap(),
            skill: "pdf-processing".into(),
            file: "skill://pdf-processing/SKILL.md".into(),
            expected: PDF_SKILL_MD.len() as u64,
            actual: (PDF_SKILL_MD.len() + longer.len()) as u64,
        }
    );

    // Listed anew, the edited skill is FastMCP's new entry and loads.
    let listing = client.list_skills(BUDGET).await.unwrap();
    let skill = named(&listing.skills, "pdf-processing");
    let loaded = client
        .load_skill(skill, &SkillReadSettings::new())
        .await
        .unwrap();
    assert_eq!(loaded.files[1].bytes, tampered.as_bytes());
    client.shutdown().await;
    served.assert_gone().await;
}

/// A free port on 127.0.0.1 (the listener is closed before the server binds it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_skills_are_listed_without_a_read_and_loaded_verified_over_http() {
    let Some(python) = python() else { return };
    let served = Served::new(python.clone());
    let port = free_port();
    let mut child = tokio::process::Command::new(&python)
        .arg(&served.script)
        .args(served.args())
        .arg("--http")
        .arg(port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    tokio::time::timeout(BOUND, async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the FastMCP server listens");
    let client = connect(Target::Http(HttpTarget::new(format!(
        "http://127.0.0.1:{port}/mcp"
    ))))
    .await;
    list_then_load(&client, &served).await;
    client.shutdown().await;
    child.kill().await.unwrap();
    assert!(mcp_testkit::wait_gone(pid, BOUND).await);
    mcp_testkit::assert_no_process(pid);
}

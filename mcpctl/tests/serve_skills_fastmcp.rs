//! Skills through `mcpctl serve` between two real third-party programs: FastMCP 4.1.6's
//! skills client (tests/fastmcp_skills_client.py) talks to the gateway over stdio, and the
//! gateway to FastMCP's skills server (mcp-client/tests/fixtures/fastmcp_skills_server.py,
//! a folder of skills). The client lists the skills under URIs naming the server without
//! the server reading a file, gets each, reads every file of one and finds each matches
//! its entry's digest and size; a file edited on disk after the listing is refused by the
//! gateway, naming the server and the file, and never passed on.
//!
//! FastMCP is installed by `scripts/gateway-clients.sh` into
//! target/gateway-clients/fastmcp-venv; without it the test says so on stderr and does
//! nothing, and under `MCP_REQUIRE_GATEWAY_CLIENTS=1` it fails.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the skip notice goes to stderr; the test runs the Python client as a person would"
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::Value;
use support::Workdir;

/// The FastMCP venv's Python, or `None` (test skipped) when it is not installed.
fn python() -> Option<PathBuf> {
    mcp_testkit::installed_test_client(
        env!("CARGO_MANIFEST_DIR"),
        "fastmcp-venv/bin/python",
        "FastMCP",
    )
}

const PDF_SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n# PDF processing\n\nUse references/FORMS.md for forms.\n";
const FORMS_MD: &str = "Forms: fill every field.\n";
const NOTES_SKILL_MD: &str = "---\nname: notes\ndescription: Take notes\n---\nWrite it down.\n";

/// The requests the FastMCP server logged: (method, URI of a read).
fn logged(path: &Path) -> Vec<(String, Option<String>)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["method"].as_str().unwrap().to_owned(),
                v["uri"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

#[test]
fn fastmcp_lists_gets_and_reads_verified_skills_of_a_fastmcp_server_through_the_gateway() {
    let Some(python) = python() else { return };
    let wd = Workdir::new();
    let dir = wd.path().canonicalize().unwrap();
    let skills = dir.join("skills");
    std::fs::create_dir_all(skills.join("pdf-processing/references")).unwrap();
    std::fs::create_dir_all(skills.join("notes")).unwrap();
    std::fs::write(skills.join("pdf-processing/SKILL.md"), PDF_SKILL_MD).unwrap();
    std::fs::write(skills.join("pdf-processing/references/FORMS.md"), FORMS_MD).unwrap();
    std::fs::write(skills.join("notes/SKILL.md"), NOTES_SKILL_MD).unwrap();
    let server = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp-client/tests/fixtures/fastmcp_skills_server.py")
        .canonicalize()
        .unwrap();
    let (log, pid) = (dir.join("fm.requests"), dir.join("fm.pid"));
    let args: Vec<String> = [&server, &skills, &log, &pid]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let config = wd.write(
        "mcp.toml",
        &format!(
            "[mcp_servers.fm]\ncommand = {}\nargs = {}\n",
            support::toml_str(&python.display().to_string()),
            serde_json::to_string(&args).unwrap()
        ),
    );
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fastmcp_skills_client.py");
    let run = Command::new(&python)
        .arg(&client)
        .arg(env!("CARGO_BIN_EXE_mcpctl"))
        .arg(&config)
        .arg(dir.join("home"))
        .arg(skills.join("notes/SKILL.md"))
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "the FastMCP client failed: {stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    let pdf = "mcpctl-server://fm/skill://pdf-processing/SKILL.md";
    let notes = "mcpctl-server://fm/skill://notes/SKILL.md";
    assert_eq!(seen["listed"], serde_json::json!([notes, pdf]));
    assert_eq!(seen["got"], serde_json::json!([notes, pdf]));
    assert_eq!(
        seen["verified"],
        serde_json::json!([
            pdf,
            "mcpctl-server://fm/skill://pdf-processing/references/FORMS.md"
        ])
    );
    let refused = seen["tampered"]["refused"]
        .as_str()
        .unwrap_or_else(|| panic!("a tampered file was passed on: {seen}"));
    for part in ["`fm`", "skill://notes/SKILL.md"] {
        assert!(refused.contains(part), "no {part} in {refused}");
    }

    // The server was asked for its skills before any file was read, and only for the
    // files the entries list, under its own URIs, each once (the gateway keeps the skill
    // it loaded for the client's next read).
    let requests = logged(&log);
    let first_read = requests.iter().position(|(m, _)| m == "resources/read");
    let listing = requests.iter().position(|(m, _)| m == "skills/list");
    assert!(
        listing.is_some() && listing < first_read,
        "listing came first: {requests:?}"
    );
    let mut read: Vec<&str> = requests.iter().filter_map(|(_, u)| u.as_deref()).collect();
    read.sort_unstable();
    assert_eq!(
        read,
        [
            "skill://notes/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references/FORMS.md"
        ]
    );

    // The gateway ended with its client, and the server with the gateway.
    let pid: u32 = std::fs::read_to_string(&pid)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while mcp_testkit::process_alive(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the FastMCP server {pid} outlived the gateway"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    wd.assert_no_server_left();
}

//! `mcpctl skills` against the real binary and `mcpctl fake-server`: the list (human and
//! `--json`) reads no file; `skills show` prints the verified SKILL.md and the files with
//! their digests, and refuses a tampered file naming it; a skill whose SKILL.md changed
//! between runs is held back with its change until `mcpctl accept`.

#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

mod support;

use mcp_testkit::{RecordedRequest, Recording, Scenario, SkillFault, SkillSpec, ToolSpec};
use support::Workdir;

fn pdf() -> SkillSpec {
    SkillSpec::new(
        "pdf-processing",
        "Extract, fill, and assemble PDF documents",
    )
    .with_body("Use references/FORMS.md for forms.")
    .with_file("references/FORMS.md", "Forms.\n")
}

/// Writes `name.json` serving `skill`, recording requests in `name.requests`.
fn scenario(wd: &Workdir, name: &str, skill: SkillSpec) {
    let mut record = Recording::default();
    record.request_log = Some(wd.path().join(format!("{name}.requests")));
    Scenario::new(name)
        .with_tool(ToolSpec::echo("echo"))
        .with_skill(skill)
        .with_record(record)
        .write_json(wd.path().join(format!("{name}.json")))
        .unwrap();
}

fn config(wd: &Workdir, names: &[&str]) -> String {
    let mut text = String::new();
    for name in names {
        text.push_str(&format!(
            "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario\", \"{name}.json\"]\n"
        ));
    }
    wd.write("mcp.toml", &text).to_str().unwrap().to_owned()
}

fn reads(wd: &Workdir, name: &str) -> Vec<String> {
    RecordedRequest::read_log(wd.path().join(format!("{name}.requests")))
        .iter()
        .filter(|r| r.method == "resources/read")
        .map(|r| r.params["uri"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn skills_are_listed_without_reading_a_file_and_shown_verified() {
    let wd = Workdir::new();
    scenario(&wd, "docs", pdf());
    scenario(
        &wd,
        "bad",
        pdf().with_fault(SkillFault::WrongDigest {
            path: "references/FORMS.md".into(),
        }),
    );
    let config = config(&wd, &["docs", "bad"]);

    let list = wd.run(&["--config", &config, "skills"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    for part in [
        "mcp__docs__pdf-processing",
        "mcp__bad__pdf-processing",
        "Extract, fill, and assemble PDF documents",
        "2 skills",
    ] {
        assert!(list.stdout.contains(part), "no {part} in {}", list.stdout);
    }
    let json = wd.run(&["--config", &config, "--json", "skills", "--server", "docs"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let listed: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["qualified_name"], "mcp__docs__pdf-processing");
    assert_eq!(listed[0]["held"], false);
    let files = listed[0]["files"].as_array().unwrap();
    assert_eq!(files[0]["uri"], "skill://pdf-processing/SKILL.md");
    assert!(files[0]["digest"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(files[1]["size"], 7);
    assert_eq!(
        reads(&wd, "docs"),
        Vec::<String>::new(),
        "listing read a file"
    );

    let show = wd.run(&[
        "--config",
        &config,
        "skills",
        "show",
        "mcp__docs__pdf-processing",
    ]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    let digest = files[1]["digest"].as_str().unwrap();
    for part in [
        "name: \"pdf-processing\"",
        "Use references/FORMS.md for forms.",
        "skill://pdf-processing/references/FORMS.md",
        digest,
        "yes",
    ] {
        assert!(show.stdout.contains(part), "no {part} in {}", show.stdout);
    }
    assert_eq!(
        reads(&wd, "docs"),
        [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references/FORMS.md"
        ]
    );

    let bad = wd.run(&[
        "--config",
        &config,
        "skills",
        "show",
        "mcp__bad__pdf-processing",
    ]);
    assert_ne!(bad.code, 0, "{}", bad.stdout);
    assert!(!bad.stdout.contains("Forms."), "{}", bad.stdout);
    for part in [
        "`bad`",
        "`pdf-processing`",
        "skill://pdf-processing/references/FORMS.md",
        "digest",
    ] {
        assert!(bad.stderr.contains(part), "no {part} in {}", bad.stderr);
    }
    let unknown = wd.run(&["--config", &config, "skills", "show", "mcp__docs__nope"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("mcp__docs__pdf-processing"),
        "{}",
        unknown.stderr
    );
    wd.assert_no_server_left();
}

#[test]
fn a_skill_changed_between_runs_is_held_until_accepted() {
    let wd = Workdir::new();
    scenario(&wd, "docs", pdf());
    let config = config(&wd, &["docs"]);
    let first = wd.run(&["--config", &config, "skills"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(!first.stdout.contains("held"), "{}", first.stdout);

    scenario(&wd, "docs", pdf().with_revision(1));
    let held = wd.run(&["--config", &config, "skills"]);
    assert_eq!(held.code, 0, "{}", held.stderr);
    assert!(
        held.stdout
            .contains("mcp__docs__pdf-processing (held: changed)"),
        "{}",
        held.stdout
    );
    assert!(
        held.stderr.contains(
            "skill `pdf-processing` of server `docs` changed since it was first seen and is held back: description changed; file skill://pdf-processing/SKILL.md changed (digest or size) (if you trust the change: mcpctl accept docs pdf-processing)"
        ),
        "{}",
        held.stderr
    );
    let show = wd.run(&[
        "--config",
        &config,
        "skills",
        "show",
        "mcp__docs__pdf-processing",
    ]);
    assert_ne!(show.code, 0, "{}", show.stdout);
    assert!(
        show.stderr.contains("accept the change first"),
        "{}",
        show.stderr
    );
    assert_eq!(
        reads(&wd, "docs"),
        Vec::<String>::new(),
        "a held skill was read"
    );

    let accept = wd.run(&["--config", &config, "accept", "docs", "pdf-processing"]);
    assert_eq!(accept.code, 0, "{}", accept.stderr);
    assert!(
        accept
            .stdout
            .contains("accepted skill `pdf-processing`: description changed")
            && accept.stdout.contains("accepted 1 changed skill"),
        "{}",
        accept.stdout
    );
    let after = wd.run(&[
        "--config",
        &config,
        "skills",
        "show",
        "mcp__docs__pdf-processing",
    ]);
    assert_eq!(after.code, 0, "{}", after.stderr);
    assert!(after.stdout.contains("Revision 1."), "{}", after.stdout);
    let nothing = wd.run(&["--config", &config, "accept", "docs", "pdf-processing"]);
    assert_eq!(nothing.code, 2, "{}", nothing.stderr);
    wd.assert_no_server_left();
}

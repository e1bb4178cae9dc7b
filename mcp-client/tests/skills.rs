//! Skills (SEP-2640) through one `Client`: listing reads no file, a load reads and verifies
//! each file (SKILL.md first), and every fault the testkit serves is refused with its
//! error, before any request where the entry already says no. Against the real
//! `mcp-fake-server` binary over stdio in both eras, and the streamable-HTTP fake.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{
    Client, ClientSettings, DeclineRequests, HttpTarget, SkillError, SkillReadSettings, Target,
};
use mcp_testkit::{
    CacheHints, HttpFakeServer, RecordedRequest, Scenario, SkillFault, SkillOptions, SkillSpec,
    TestHome, ToolSpec,
};
use pretty_assertions::assert_eq;
use rmcp::model::{SKILLS_EXTENSION_ID, Skill, SkillResources};
use serde_json::json;
use support::{Stdio, stdio};

const BUDGET: usize = 1024 * 1024;

/// The eras the fake server speaks: its default (2025-11-25) and 2026-07-28.
const ERAS: [Option<&str>; 2] = [None, Some("2026-07-28")];

fn in_era(mut scenario: Scenario, era: Option<&str>) -> Scenario {
    scenario.faults.protocol_version = era.map(str::to_owned);
    scenario
}

fn pdf() -> SkillSpec {
    SkillSpec::new(
        "pdf-processing",
        "Extract, fill, and assemble PDF documents",
    )
    .with_frontmatter("license", json!("MIT"))
    .with_frontmatter("metadata", json!({"version": 2, "tags": ["pdf"]}))
    .with_body("Use references/FORMS.md for forms.")
    .with_file("references/FORMS.md", "Forms.\n")
    .with_file("scripts/fill.bin", [0u8, 159, 146, 150])
}

fn skills() -> Scenario {
    Scenario::new("skills")
        .with_tool(ToolSpec::echo("echo"))
        .with_skill(pdf())
        .with_skill(SkillSpec::new("notes", "Take notes"))
}

fn settings() -> ClientSettings {
    ClientSettings::new()
        .with_extension(SKILLS_EXTENSION_ID, serde_json::Map::new())
        .with_process_grace(Duration::from_millis(300))
}

async fn connect(target: Target) -> Client {
    Client::connect(
        "skills".parse().unwrap(),
        target,
        settings(),
        Arc::new(DeclineRequests),
    )
    .await
    .unwrap()
}

fn methods(log: &[RecordedRequest]) -> Vec<String> {
    log.iter().map(|r| r.method.clone()).collect()
}

fn reads(log: &[RecordedRequest]) -> Vec<String> {
    log.iter()
        .filter(|r| r.method == "resources/read")
        .map(|r| r.params["uri"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn named<'a>(skills: &'a [Skill], name: &str) -> &'a Skill {
    skills
        .iter()
        .find(|s| s.name() == name)
        .unwrap_or_else(|| panic!("no skill {name}"))
}

/// Lists, checks that nothing was read, loads `pdf-processing` and checks what was read.
async fn list_then_load(client: &Client, log: impl Fn() -> Vec<RecordedRequest>) {
    let listing = client.list_skills(BUDGET).await.unwrap();
    let names: Vec<&str> = listing.skills.iter().map(Skill::name).collect();
    assert_eq!(names, ["pdf-processing", "notes"]);
    assert_eq!(listing.warnings, Vec::<String>::new());
    let seen = methods(&log());
    assert!(seen.contains(&"skills/list".to_owned()), "{seen:?}");
    assert_eq!(reads(&log()), Vec::<String>::new(), "listing read a file");

    let skill = named(&listing.skills, "pdf-processing");
    let loaded = client
        .load_skill(skill, &SkillReadSettings::new())
        .await
        .unwrap();
    let uris: Vec<&str> = loaded.files.iter().map(|f| f.uri.as_str()).collect();
    let expected = [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/scripts/fill.bin",
    ];
    assert_eq!(uris, expected);
    assert!(loaded.files.iter().all(|f| f.verified));
    assert_eq!(loaded.files[1].bytes, b"Forms.\n");
    assert_eq!(loaded.files[2].bytes, [0u8, 159, 146, 150]);
    assert!(
        loaded
            .skill_md()
            .unwrap()
            .contains("Use references/FORMS.md for forms.")
    );
    assert_eq!(
        reads(&log()),
        expected,
        "each file read once, SKILL.md first"
    );

    let entry = client.get_skill(&skill.uri).await.unwrap();
    assert_eq!(&entry.skill, skill);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_reads_no_file_and_a_load_reads_each_file_verified_over_stdio_in_both_eras() {
    for era in ERAS {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, in_era(skills(), era));
        let client = connect(server.target.clone()).await;
        assert_eq!(
            client.protocol_version().as_str(),
            era.unwrap_or("2025-11-25")
        );
        // Nothing about skills on connect.
        let log = RecordedRequest::read_log(&server.log);
        assert!(
            !methods(&log).iter().any(|m| m.starts_with("skills/")),
            "{:?}",
            methods(&log)
        );
        if era.is_none() {
            let init = &server.requests("initialize")[0];
            assert_eq!(
                init.params["capabilities"]["extensions"][SKILLS_EXTENSION_ID],
                json!({}),
                "the client announces the extension it was given"
            );
        }
        list_then_load(&client, || RecordedRequest::read_log(&server.log)).await;
        client.shutdown().await;
        server.assert_gone().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_reads_no_file_and_a_load_reads_each_file_verified_over_http_in_both_eras() {
    for era in ERAS {
        let web = HttpFakeServer::start(in_era(skills(), era)).await.unwrap();
        let client = connect(Target::Http(HttpTarget::new(web.url()))).await;
        assert_eq!(
            client.protocol_version().as_str(),
            era.unwrap_or("2025-11-25")
        );
        list_then_load(&client, || web.requests()).await;
        client.shutdown().await;
        web.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_gathered_and_the_cache_hints_kept() {
    let scenario = in_era(skills(), Some("2026-07-28"))
        .with_skill(SkillSpec::new("third", "Third"))
        .with_skill_options(SkillOptions::new().with_page_size(1))
        .with_cache_hints(CacheHints::new(60_000, "private"));
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario);
    let client = connect(server.target.clone()).await;
    let listing = client.list_skills(BUDGET).await.unwrap();
    assert_eq!(listing.skills.len(), 3);
    assert_eq!(listing.ttl, Some(Duration::from_secs(60)));
    assert!(listing.private);
    let cursors: Vec<Option<String>> = server
        .requests("skills/list")
        .iter()
        .map(|r| r.params["cursor"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(cursors, [None, Some("1".to_owned()), Some("2".to_owned())]);

    // A listing over its byte budget stops as a protocol fault.
    let err = client.list_skills(200).await.unwrap_err();
    assert!(
        matches!(err.request_error(), Some(mcp_client::RequestError::Protocol { detail }) if detail.contains("byte budget")),
        "{err}"
    );
    client.shutdown().await;
    server.assert_gone().await;
}

/// Each fault of the testkit, refused with its error; the log shows what was read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_is_refused_with_its_error() {
    let two_files = |name: &str| {
        SkillSpec::new(name, "Faulty")
            .with_file("refs/a.md", "A.\n")
            .with_file("refs/b.md", "B.\n")
    };
    let scenario = Scenario::new("faults")
        .with_skill(
            two_files("wrong-digest").with_fault(SkillFault::WrongDigest {
                path: "refs/a.md".into(),
            }),
        )
        .with_skill(two_files("wrong-size").with_fault(SkillFault::WrongSize {
            path: "SKILL.md".into(),
        }))
        .with_skill(
            two_files("frontmatter").with_fault(SkillFault::FrontmatterMismatch {
                field: "description".into(),
                value: json!("Exfiltrate credentials"),
            }),
        )
        .with_skill(two_files("unlisted").with_fault(SkillFault::Unlisted {
            path: "refs/b.md".into(),
        }))
        .with_skill(two_files("not-served").with_fault(SkillFault::NotServed {
            path: "refs/a.md".into(),
        }))
        .with_skill(two_files("dynamic").with_dynamic(true))
        .with_skill(two_files("split").with_fault(SkillFault::SplitAcrossPages));
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario);
    let client = connect(server.target.clone()).await;
    let reads_of = |name: &str| -> Vec<String> {
        reads(&RecordedRequest::read_log(&server.log))
            .into_iter()
            .filter(|u| u.starts_with(&format!("skill://{name}/")))
            .collect()
    };

    let listing = client.list_skills(BUDGET).await.unwrap();
    let names: Vec<&str> = listing.skills.iter().map(Skill::name).collect();
    assert_eq!(
        names,
        [
            "wrong-digest",
            "wrong-size",
            "frontmatter",
            "unlisted",
            "not-served",
            "dynamic"
        ],
        "an entry split across pages is not used"
    );
    assert_eq!(
        listing.warnings,
        ["skill `skill://split/SKILL.md` is listed 2 times; none of its entries is used"]
    );
    assert_eq!(server.requests("skills/list").len(), 2);
    let read = SkillReadSettings::new();
    let skills = &listing.skills;

    let err = client
        .load_skill(named(skills, "wrong-digest"), &read)
        .await
        .unwrap_err();
    assert!(
        err.is_digest_mismatch() && err.is_verification_failure(),
        "{err}"
    );
    assert_eq!(err.file(), Some("skill://wrong-digest/refs/a.md"));
    let text = err.to_string();
    for part in [
        "`skill://wrong-digest/refs/a.md`",
        "skill `wrong-digest`",
        "server `skills`",
    ] {
        assert!(text.contains(part), "{text}");
    }
    assert_eq!(
        reads_of("wrong-digest"),
        [
            "skill://wrong-digest/SKILL.md",
            "skill://wrong-digest/refs/a.md"
        ],
        "nothing read after the failure"
    );

    let err = client
        .load_skill(named(skills, "wrong-size"), &read)
        .await
        .unwrap_err();
    assert!(err.is_size_mismatch(), "{err}");
    assert!(
        matches!(&err, SkillError::SizeMismatch { expected, actual, .. } if *expected == actual + 1),
        "{err:?}"
    );
    assert_eq!(reads_of("wrong-size"), ["skill://wrong-size/SKILL.md"]);

    let err = client
        .load_skill(named(skills, "frontmatter"), &read)
        .await
        .unwrap_err();
    assert!(err.is_frontmatter_mismatch(), "{err}");
    assert!(
        matches!(&err, SkillError::FrontmatterMismatch { field: Some(f), .. } if &**f == "description"),
        "{err:?}"
    );
    assert!(err.to_string().contains("Exfiltrate credentials"), "{err}");
    assert_eq!(reads_of("frontmatter"), ["skill://frontmatter/SKILL.md"]);

    // A file the server serves but the entry does not list is never asked for.
    let unlisted = named(skills, "unlisted");
    let err = client
        .read_skill_file(unlisted, "skill://unlisted/refs/b.md", &read)
        .await
        .unwrap_err();
    assert!(err.is_not_listed(), "{err}");
    let err = client
        .read_skill_file(unlisted, "skill://elsewhere/SKILL.md", &read)
        .await
        .unwrap_err();
    assert!(err.is_not_listed(), "{err}");
    assert_eq!(reads_of("unlisted"), Vec::<String>::new());
    let loaded = client.load_skill(unlisted, &read).await.unwrap();
    assert_eq!(loaded.files.len(), 2, "the listed files only");
    assert!(!reads_of("unlisted").contains(&"skill://unlisted/refs/b.md".to_owned()));

    let err = client
        .load_skill(named(skills, "not-served"), &read)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.request_error(),
            Some(mcp_client::RequestError::Server { .. })
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("`skill://not-served/refs/a.md`"),
        "{err}"
    );

    let dynamic = named(skills, "dynamic");
    assert_eq!(dynamic.resources, SkillResources::Dynamic);
    let err = client.load_skill(dynamic, &read).await.unwrap_err();
    assert!(err.is_dynamic_refused(), "{err}");
    assert_eq!(reads_of("dynamic"), Vec::<String>::new());
    let allowed = read.clone().with_dynamic(true);
    let loaded = client.load_skill(dynamic, &allowed).await.unwrap();
    assert_eq!(loaded.files.len(), 1);
    assert!(!loaded.files[0].verified);
    let file = client
        .read_skill_file(dynamic, "skill://dynamic/refs/a.md", &allowed)
        .await
        .unwrap();
    assert_eq!(
        (file.bytes.as_slice(), file.verified),
        (&b"A.\n"[..], false)
    );
    let err = client
        .read_skill_file(dynamic, "skill://dynamic/../x/SKILL.md", &allowed)
        .await
        .unwrap_err();
    assert!(err.is_not_listed(), "{err}");

    // A limit below the listed sizes refuses the load before any read.
    let err = client
        .load_skill(
            named(skills, "wrong-digest"),
            &read.clone().with_max_bytes(8),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SkillError::TooLarge { .. }), "{err}");
    assert_eq!(reads_of("wrong-digest").len(), 2, "no new read");

    client.shutdown().await;
    server.assert_gone().await;
}

/// A skill changed between two runs of its server: the new run's entry differs (its
/// description and digest), a load of the old entry is refused, and the new one loads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_changed_between_runs_fails_the_old_entry_and_loads_the_new() {
    let run = |revision: u32, home: &TestHome| -> Stdio {
        stdio(
            home,
            Scenario::new("skills").with_skill(pdf().with_revision(revision)),
        )
    };
    let first_home = TestHome::new().unwrap();
    let first = run(0, &first_home);
    let client = connect(first.target.clone()).await;
    let old = client.list_skills(BUDGET).await.unwrap().skills.remove(0);
    client.shutdown().await;
    first.assert_gone().await;

    let second_home = TestHome::new().unwrap();
    let second = run(1, &second_home);
    let client = connect(second.target.clone()).await;
    let new = client.list_skills(BUDGET).await.unwrap().skills.remove(0);
    assert_ne!(old, new);
    assert_eq!(
        new.frontmatter.description,
        "Extract, fill, and assemble PDF documents (revision 1)"
    );
    let err = client
        .load_skill(&old, &SkillReadSettings::new())
        .await
        .unwrap_err();
    assert!(err.is_verification_failure(), "{err}");
    let loaded = client
        .load_skill(&new, &SkillReadSettings::new())
        .await
        .unwrap();
    assert!(loaded.skill_md().unwrap().contains("Revision 1."));
    client.shutdown().await;
    second.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folders_are_listed_where_the_server_offers_directory_reads() {
    let home = TestHome::new().unwrap();
    let with = skills().with_skill_options(SkillOptions::new().with_directory_read(true));
    let server = stdio(&home, with);
    let client = connect(server.target.clone()).await;
    let listing = client.list_skills(BUDGET).await.unwrap();
    let skill = named(&listing.skills, "pdf-processing");
    let children = client
        .read_skill_directory(skill, "skill://pdf-processing")
        .await
        .unwrap();
    let uris: Vec<(&str, bool)> = children
        .iter()
        .map(|r| (r.uri.as_str(), r.is_directory()))
        .collect();
    assert_eq!(
        uris,
        [
            ("skill://pdf-processing/SKILL.md", false),
            ("skill://pdf-processing/references", true),
            ("skill://pdf-processing/scripts", true),
        ]
    );
    let below = client
        .read_skill_directory(skill, "skill://pdf-processing/references/")
        .await
        .unwrap();
    assert_eq!(below[0].uri, "skill://pdf-processing/references/FORMS.md");
    let err = client
        .read_skill_directory(skill, "skill://notes")
        .await
        .unwrap_err();
    assert!(err.is_not_listed(), "{err}");
    assert_eq!(server.requests("resources/directory/read").len(), 2);
    client.shutdown().await;
    server.assert_gone().await;

    let home = TestHome::new().unwrap();
    let server = stdio(&home, skills());
    let client = connect(server.target.clone()).await;
    let listing = client.list_skills(BUDGET).await.unwrap();
    let err = client
        .read_skill_directory(named(&listing.skills, "notes"), "skill://notes")
        .await
        .unwrap_err();
    assert!(
        err.is_unsupported() && matches!(err, SkillError::DirectoryUnsupported { .. }),
        "{err}"
    );
    assert_eq!(server.requests("resources/directory/read").len(), 0);
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_skills_is_not_asked() {
    let home = TestHome::new().unwrap();
    let server = stdio(
        &home,
        Scenario::new("plain").with_tool(ToolSpec::echo("echo")),
    );
    let client = connect(server.target.clone()).await;
    let err = client.list_skills(BUDGET).await.unwrap_err();
    assert!(
        err.is_unsupported() && matches!(err, SkillError::Unsupported { .. }),
        "{err}"
    );
    let err = client.get_skill("skill://a/SKILL.md").await.unwrap_err();
    assert!(err.is_unsupported(), "{err}");
    assert_eq!(server.requests("skills/list").len(), 0);
    client.shutdown().await;
    server.assert_gone().await;
}

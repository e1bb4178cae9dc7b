//! Skills (SEP-2640) through the connection set, against real `mcp-fake-server`
//! processes: every server's skills in one catalog named like tools, listed without
//! reading a file and listed again after a resource list change; each entry pinned beside
//! the tools, a changed `SKILL.md` held under `reapprove` with its change shown; loading
//! through the host's authority (deny and decline read nothing) and verified (a tampered
//! digest is refused naming server, skill and file).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use mcp_catalog::ToolDriftPolicy;
use mcp_connections::{
    ApprovalAnswer, CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions,
    HostAuthority, SkillChange, SkillInfo, SkillLoadError, SkillLoading, SkillReadSettings,
    SkillRefusal, ToolPins, skill_approver_fn,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    Behavior, CapabilityFlags, RecordedRequest, ResourceSpec, Scenario, SkillFault, SkillSpec,
    ToolSpec,
};
use pretty_assertions::assert_eq;

fn key(name: &str) -> McpServerKey {
    name.parse().unwrap()
}

fn pdf() -> SkillSpec {
    SkillSpec::new(
        "pdf-processing",
        "Extract, fill, and assemble PDF documents",
    )
    .with_body("Use references/FORMS.md for forms.")
    .with_file("references/FORMS.md", "Forms.\n")
}

fn docs(skill: SkillSpec) -> Scenario {
    Scenario::new("docs")
        .with_capabilities(CapabilityFlags::default().with_resources_list_changed(true))
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "new_resource",
            Behavior::ChangeResources {
                add: vec![ResourceSpec::new(
                    "file:///later.md",
                    "later",
                    "added later",
                )],
                remove: Vec::new(),
            },
        ))
        .with_skill(skill)
}

fn log(fx: &Fixture, server: &str) -> Vec<RecordedRequest> {
    RecordedRequest::read_log(fx.request_log(server))
}

fn count(fx: &Fixture, server: &str, method: &str) -> usize {
    log(fx, server)
        .iter()
        .filter(|r| r.method == method)
        .count()
}

fn reads(fx: &Fixture, server: &str) -> Vec<String> {
    log(fx, server)
        .iter()
        .filter(|r| r.method == "resources/read")
        .map(|r| r.params["uri"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn names(skills: &[SkillInfo]) -> Vec<(&str, &str, bool)> {
    skills
        .iter()
        .map(|s| (s.qualified_name.as_str(), s.name(), s.held))
        .collect()
}

async fn start(fx: &Fixture, options: ConnectionSetOptions) -> ConnectionSet {
    let set = ConnectionSet::start(&fx.catalog(), options);
    set.wait_startup().await;
    set
}

fn allow() -> HostAuthority {
    HostAuthority::new().with_skill_loading(SkillLoading::Allow)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_servers_skills_are_listed_by_qualified_name_without_reading_a_file() {
    let mut fx = Fixture::new();
    fx.stdio("docs", docs(pdf()));
    fx.stdio(
        "notes",
        Scenario::new("notes")
            .with_tool(ToolSpec::echo("echo"))
            .with_skill(SkillSpec::new("pdf-processing", "Another server's skill"))
            .with_skill(SkillSpec::new("notes", "Take notes")),
    );
    fx.stdio(
        "plain",
        Scenario::new("plain").with_tool(ToolSpec::echo("echo")),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let set = start(&fx, ConnectionSetOptions::new().with_events(tx)).await;

    let skills = set.skills().await;
    assert_eq!(
        names(&skills),
        [
            ("mcp__docs__pdf-processing", "pdf-processing", false),
            ("mcp__notes__notes", "notes", false),
            ("mcp__notes__pdf-processing", "pdf-processing", false),
        ]
    );
    assert_eq!(skills[0].server, key("docs"));
    assert_eq!(
        skills[0].description(),
        "Extract, fill, and assemble PDF documents"
    );
    // Listed once, and a second listing reuses it; no file read; a server without the
    // extension is not asked.
    assert_eq!(set.skills().await, skills);
    assert_eq!(count(&fx, "docs", "skills/list"), 1);
    assert_eq!(count(&fx, "notes", "skills/list"), 1);
    assert_eq!(count(&fx, "plain", "skills/list"), 0);
    for server in ["docs", "notes", "plain"] {
        assert_eq!(
            reads(&fx, server),
            Vec::<String>::new(),
            "{server} had a file read"
        );
    }

    // A resource list change (how a server says its skills changed) lists them again.
    set.call_qualified("mcp__docs__new_resource", None, CallOptions::new())
        .await
        .unwrap();
    wait_event(
        &mut rx,
        std::time::Duration::from_secs(20),
        |e| matches!(e, ConnectionEvent::ResourcesChanged { server } if *server == key("docs")),
    )
    .await;
    assert_eq!(set.skills().await, skills);
    assert_eq!(count(&fx, "docs", "skills/list"), 2);
    assert_eq!(count(&fx, "notes", "skills/list"), 1);
    assert_eq!(reads(&fx, "docs"), Vec::<String>::new());
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loading_goes_through_the_authority_and_returns_verified_bytes_only() {
    let mut fx = Fixture::new();
    fx.stdio("docs", docs(pdf()));
    fx.stdio(
        "bad",
        Scenario::new("bad")
            .with_tool(ToolSpec::echo("echo"))
            .with_skill(pdf().with_fault(SkillFault::WrongDigest {
                path: "references/FORMS.md".into(),
            })),
    );
    let set = start(&fx, ConnectionSetOptions::new()).await;
    let settings = SkillReadSettings::new();
    let name = "mcp__docs__pdf-processing";

    // Ask (the default) without an approver, deny, and a declining approver: refused,
    // nothing read.
    let refusal = |e: SkillLoadError| match e {
        SkillLoadError::Refused { reason, .. } => reason,
        other => panic!("not refused: {other}"),
    };
    let e = set.load_skill(name, &settings).await.unwrap_err();
    assert!(e.to_string().contains("no skill approver"), "{e}");
    assert_eq!(refusal(e), SkillRefusal::NoApprover);
    set.set_authority(HostAuthority::new().with_skill_loading(SkillLoading::Deny));
    let e = set.load_skill(name, &settings).await.unwrap_err();
    assert_eq!(refusal(e), SkillRefusal::Denied);
    let asked = Arc::new(AtomicUsize::new(0));
    let answer = Arc::new(std::sync::Mutex::new(ApprovalAnswer::Decline));
    let (asked2, answer2) = (Arc::clone(&asked), Arc::clone(&answer));
    let approver = skill_approver_fn(move |request| {
        asked2.fetch_add(1, Ordering::SeqCst);
        assert_eq!(request.qualified_name, "mcp__docs__pdf-processing");
        assert_eq!(
            request.fingerprint,
            mcp_connections::skill_fingerprint(&request.skill)
        );
        let answer = *answer2.lock().unwrap();
        async move { answer }
    });
    set.set_authority(HostAuthority::new().with_skill_approver(approver));
    let e = set.load_skill(name, &settings).await.unwrap_err();
    assert_eq!(refusal(e), SkillRefusal::Declined);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(
        reads(&fx, "docs"),
        Vec::<String>::new(),
        "a refused skill was read"
    );

    // Approved for the session: loaded, verified, SKILL.md first; not asked again.
    *answer.lock().unwrap() = ApprovalAnswer::ApproveForSession;
    for _ in 0..2 {
        let loaded = set.load_skill(name, &settings).await.unwrap();
        let uris: Vec<&str> = loaded.files.iter().map(|f| f.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://pdf-processing/SKILL.md",
                "skill://pdf-processing/references/FORMS.md"
            ]
        );
        assert!(loaded.files.iter().all(|f| f.verified));
        assert!(
            loaded
                .skill_md()
                .unwrap()
                .contains("Use references/FORMS.md")
        );
    }
    assert_eq!(asked.load(Ordering::SeqCst), 2);

    // A tampered file: refused, naming the server, the skill and the file.
    set.set_authority(allow());
    let e = set
        .load_skill("mcp__bad__pdf-processing", &settings)
        .await
        .unwrap_err();
    assert!(e.is_verification_failure(), "{e}");
    assert!(e.skill_error().unwrap().is_digest_mismatch(), "{e}");
    let text = e.to_string();
    for part in [
        "`bad`",
        "`pdf-processing`",
        "skill://pdf-processing/references/FORMS.md",
    ] {
        assert!(text.contains(part), "{text} does not name {part}");
    }
    // An unknown name says which exist.
    let e = set
        .load_skill("mcp__docs__nope", &settings)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("mcp__docs__pdf-processing"), "{e}");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_changed_between_runs_is_held_under_reapprove_with_its_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut fx = Fixture::new();
    fx.stdio("docs", docs(pdf()));
    let options = || {
        ConnectionSetOptions::new()
            .with_authority(allow())
            .with_tool_pins(Arc::new(ToolPins::persisted(dir.path())))
    };
    // First sight: pinned, loadable.
    let set = start(&fx, options()).await;
    assert_eq!(
        names(&set.skills().await),
        [("mcp__docs__pdf-processing", "pdf-processing", false)]
    );
    assert_eq!(set.skill_drift(&key("docs")), []);
    set.shutdown().await;

    // The same command now serves another revision: SKILL.md and the description changed.
    fx.stdio("docs", docs(pdf().with_revision(1)));
    let set = start(&fx, options()).await;
    assert_eq!(
        set.tool_drift_policy(&key("docs")),
        ToolDriftPolicy::Reapprove
    );
    assert_eq!(
        names(&set.skills().await),
        [("mcp__docs__pdf-processing", "pdf-processing", true)]
    );
    let drift = set.skill_drift(&key("docs"));
    assert_eq!(drift.len(), 1);
    assert_eq!(drift[0].skill, "pdf-processing");
    assert!(
        drift[0].changes.contains(&SkillChange::FileChanged {
            uri: "skill://pdf-processing/SKILL.md".into()
        }),
        "{drift:?}"
    );
    assert_eq!(
        drift[0].describe(),
        "description changed; file skill://pdf-processing/SKILL.md changed (digest or size)"
    );
    let e = set
        .load_skill("mcp__docs__pdf-processing", &SkillReadSettings::new())
        .await
        .unwrap_err();
    assert!(e.is_held(), "{e}");
    assert!(e.to_string().contains("SKILL.md changed"), "{e}");
    assert_eq!(
        reads(&fx, "docs"),
        Vec::<String>::new(),
        "a held skill was read"
    );

    // Accepted: pinned as shown, loadable, and still so in a new process.
    assert_eq!(
        set.accept_skill_changes(&key("docs"), Some("pdf-processing"))
            .unwrap(),
        1
    );
    assert_eq!(
        names(&set.skills().await),
        [("mcp__docs__pdf-processing", "pdf-processing", false)]
    );
    let loaded = set
        .load_skill("mcp__docs__pdf-processing", &SkillReadSettings::new())
        .await
        .unwrap();
    assert!(loaded.skill_md().unwrap().contains("Revision 1."));
    set.shutdown().await;
    let set = start(&fx, options()).await;
    assert!(!set.skills().await[0].held);
    set.shutdown().await;

    // Under `notice` a change is re-pinned and listed as a notice, not held.
    fx.stdio_with("docs", docs(pdf().with_revision(2)), |c| {
        c.with_tool_drift(ToolDriftPolicy::Notice)
    });
    let set = start(&fx, options()).await;
    assert!(!set.skills().await[0].held);
    assert_eq!(set.skill_drift(&key("docs")), []);
    assert_eq!(set.skill_notices(&key("docs")).len(), 1);
    set.shutdown().await;

    // Under `reapprove` the skill approver is shown the change in band; a yes accepts the
    // entry shown and loads it. Under `block` nobody is asked: it stays held.
    let shown = Arc::new(std::sync::Mutex::new(Vec::new()));
    let shown2 = Arc::clone(&shown);
    let approver = skill_approver_fn(move |request| {
        shown2.lock().unwrap().push(request.drift.clone());
        async { ApprovalAnswer::Approve }
    });
    let asking = || {
        ConnectionSetOptions::new()
            .with_authority(HostAuthority::new().with_skill_approver(Arc::clone(&approver)))
            .with_tool_pins(Arc::new(ToolPins::persisted(dir.path())))
    };
    fx.stdio("docs", docs(pdf().with_revision(3)));
    let set = start(&fx, asking()).await;
    assert!(set.skills().await[0].held);
    let loaded = set
        .load_skill("mcp__docs__pdf-processing", &SkillReadSettings::new())
        .await
        .unwrap();
    assert!(loaded.skill_md().unwrap().contains("Revision 3."));
    let asked = std::mem::take(&mut *shown.lock().unwrap());
    assert_eq!(asked.len(), 1, "{asked:?}");
    let drift = asked[0].as_ref().expect("asked as a re-approval");
    assert!(
        drift.changes.contains(&SkillChange::FileChanged {
            uri: "skill://pdf-processing/SKILL.md".into()
        }),
        "{drift:?}"
    );
    assert!(!set.skills().await[0].held, "accepted by the re-approval");
    set.shutdown().await;

    fx.stdio_with("docs", docs(pdf().with_revision(4)), |c| {
        c.with_tool_drift(ToolDriftPolicy::Block)
    });
    let set = start(&fx, asking()).await;
    let e = set
        .load_skill("mcp__docs__pdf-processing", &SkillReadSettings::new())
        .await
        .unwrap_err();
    assert!(e.is_held(), "{e}");
    assert_eq!(shown.lock().unwrap().len(), 0, "asked under block");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// A deferred server (its tools from the cache) is not started for its skills: it lists
/// those a set listed while its tools were cached, and loading one starts it and loads the
/// entry it lists then, verified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_server_lists_its_cached_skills_and_starts_to_load_one() {
    use mcp_catalog::StartupPolicy;
    use mcp_connections::{ServerPool, ToolCache};
    let mut fx = Fixture::new();
    fx.stdio("docs", docs(pdf()));
    let catalog = fx.catalog_with(
        |_, config| Some(config),
        |c| c.with_startup_policy(StartupPolicy::LazyWhenCached),
    );
    let dir = tempfile::tempdir().unwrap();
    let options = |pool: &ServerPool| {
        ConnectionSetOptions::new()
            .with_shared_pool(pool.clone())
            .with_authority(allow())
            .with_tool_cache(ToolCache::persisted(
                dir.path(),
                8,
                std::time::Duration::from_secs(3600),
            ))
    };
    // The first host lists the tools and the skills (and so fills the cache).
    let pool = ServerPool::new();
    let first = ConnectionSet::start(&catalog, options(&pool));
    assert_eq!(first.wait_startup().await.ready(), 1);
    let listed = first.skills().await;
    assert_eq!(listed.len(), 1);
    first.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
    let lists_before = count(&fx, "docs", "skills/list");

    // The second host: from the cache, no process, no request.
    let pool = ServerPool::new();
    let second = ConnectionSet::start(&catalog, options(&pool));
    assert_eq!(second.tools().await.len(), 2);
    assert_eq!(second.skills().await, listed);
    assert_eq!(
        pool.stats().starts,
        0,
        "listing skills started a deferred server"
    );
    assert_eq!(count(&fx, "docs", "skills/list"), lists_before);

    // Loading starts it and loads what it lists now, verified.
    let loaded = second
        .load_skill("mcp__docs__pdf-processing", &SkillReadSettings::new())
        .await
        .unwrap();
    assert_eq!(pool.stats().starts, 1);
    assert_eq!(count(&fx, "docs", "skills/list"), lists_before + 1);
    assert!(loaded.files.iter().all(|f| f.verified));
    assert_eq!(
        reads(&fx, "docs"),
        [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references/FORMS.md"
        ]
    );
    second.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

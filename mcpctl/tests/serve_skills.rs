//! Skills through `mcpctl serve`, in front of two `mcpctl fake-server`s that serve the same
//! skill: the gateway announces the skills extension, lists both servers' skills under
//! URIs that name their servers without reading a file, passes a verified file on, refuses
//! a file whose digest is wrong naming the server and the file, and shows a caller only
//! the skills of the servers its grants name.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers may panic"
)]

mod support;
mod team;

use mcp_testkit::{RecordedRequest, Recording, Scenario, SkillFault, SkillSpec, ToolSpec};
use pretty_assertions::assert_eq;
use rmcp::model::{GetSkillRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};
use support::{Served, Workdir};

fn pdf() -> SkillSpec {
    SkillSpec::new(
        "pdf-processing",
        "Extract, fill, and assemble PDF documents",
    )
    .with_body("Use references/FORMS.md for forms.")
    .with_file("references/FORMS.md", "Forms.\n")
}

/// Writes `name.json` serving `skill`, logging requests in `name.requests`.
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

/// `docs` (the skill as listed) and `bad` (the digest of its `references/FORMS.md` is
/// wrong): the `[mcp_servers]` lines.
fn servers(wd: &Workdir) -> String {
    scenario(wd, "docs", pdf());
    scenario(
        wd,
        "bad",
        pdf().with_fault(SkillFault::WrongDigest {
            path: "references/FORMS.md".into(),
        }),
    );
    let mut text = String::new();
    for name in ["docs", "bad"] {
        text.push_str(&format!(
            "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario\", \"{name}.json\"]\n"
        ));
    }
    text
}

/// The `resources/read` URIs `name` got.
fn reads(wd: &Workdir, name: &str) -> Vec<String> {
    RecordedRequest::read_log(wd.path().join(format!("{name}.requests")))
        .iter()
        .filter(|r| r.method == "resources/read")
        .map(|r| r.params["uri"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Whether `name` got a `skills/list`.
fn listed(wd: &Workdir, name: &str) -> bool {
    RecordedRequest::read_log(wd.path().join(format!("{name}.requests")))
        .iter()
        .any(|r| r.method == "skills/list")
}

const DOCS_SKILL: &str = "mcpctl-server://docs/skill://pdf-processing/SKILL.md";
const DOCS_FORMS: &str = "mcpctl-server://docs/skill://pdf-processing/references/FORMS.md";
const BAD_SKILL: &str = "mcpctl-server://bad/skill://pdf-processing/SKILL.md";
const BAD_FORMS: &str = "mcpctl-server://bad/skill://pdf-processing/references/FORMS.md";

#[test]
fn both_servers_skills_are_listed_without_a_read_and_files_pass_on_only_verified() {
    let wd = Workdir::new();
    let config = wd.write("mcp.toml", &servers(&wd));
    support::runtime().block_on(async {
        let client = support::serve_stdio(&wd, &config, &[]).await;
        let info = client.peer().peer_info().unwrap();
        assert!(
            info.capabilities.supports_skills(),
            "the gateway announces skills when an upstream serves them: {:?}",
            info.capabilities
        );

        let listing = client.peer().list_skills(None).await.unwrap();
        let mut uris: Vec<&str> = listing.skills.iter().map(|s| s.uri.as_str()).collect();
        uris.sort_unstable();
        assert_eq!(uris, [BAD_SKILL, DOCS_SKILL]);
        assert_eq!(listing.cache_scope, Some(rmcp::model::CacheScope::Private));
        let docs = listing
            .skills
            .iter()
            .find(|s| s.uri == DOCS_SKILL)
            .unwrap()
            .clone();
        assert_eq!(docs.frontmatter.name, "pdf-processing");
        let rmcp::model::SkillResources::Files(files) = &docs.resources else {
            panic!("the docs skill lists its files: {docs:?}");
        };
        let file_uris: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
        assert_eq!(file_uris, [DOCS_SKILL, DOCS_FORMS]);
        // Listing asked both servers and read no file.
        assert!(listed(&wd, "docs") && listed(&wd, "bad"));
        assert_eq!(reads(&wd, "docs"), Vec::<String>::new());
        assert_eq!(reads(&wd, "bad"), Vec::<String>::new());

        // skills/get: the same entry.
        let got = client
            .peer()
            .get_skill(GetSkillRequestParams::new(DOCS_SKILL))
            .await
            .unwrap();
        assert_eq!(got.skill, docs);
        let unknown = client
            .peer()
            .get_skill(GetSkillRequestParams::new(
                "mcpctl-server://nowhere/skill://pdf-processing/SKILL.md",
            ))
            .await
            .unwrap_err();
        assert!(
            unknown.to_string().contains("is available to you"),
            "{unknown}"
        );

        // A read passes on the file's bytes, which match the entry the client was shown.
        let read = client
            .peer()
            .read_resource(ReadResourceRequestParams::new(DOCS_FORMS))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { uri, text, .. } = &read.contents[0] else {
            panic!("text expected: {read:?}");
        };
        assert_eq!((uri.as_str(), text.as_str()), (DOCS_FORMS, "Forms.\n"));
        files[1].verify(text.as_bytes()).unwrap();
        let read = client
            .peer()
            .read_resource(ReadResourceRequestParams::new(DOCS_SKILL))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("text expected: {read:?}");
        };
        assert!(
            text.contains("Use references/FORMS.md for forms."),
            "{text}"
        );
        files[0].verify(text.as_bytes()).unwrap();
        // Only the files the entry lists were read upstream, with the server's own URIs,
        // each once: the first read loaded the skill, the second was answered from it.
        let asked = reads(&wd, "docs");
        assert_eq!(
            asked,
            [
                "skill://pdf-processing/SKILL.md",
                "skill://pdf-processing/references/FORMS.md"
            ]
        );

        // A file whose digest is not the entry's is refused, naming the server and file.
        let refused = client
            .peer()
            .read_resource(ReadResourceRequestParams::new(BAD_FORMS))
            .await
            .unwrap_err()
            .to_string();
        for part in [
            "`bad`",
            "skill://pdf-processing/references/FORMS.md",
            "digest",
        ] {
            assert!(refused.contains(part), "no {part} in {refused}");
        }
        assert!(!refused.contains("Forms."), "no byte passed on: {refused}");
        assert!(
            reads(&wd, "bad").contains(&"skill://pdf-processing/references/FORMS.md".to_owned()),
            "the gateway read the file to verify it"
        );
        client.cancel().await.unwrap();
    });
    wd.assert_no_server_left();
}

#[test]
fn without_a_skill_extension_upstream_none_is_announced() {
    let wd = Workdir::new();
    Scenario::new("plain")
        .with_tool(ToolSpec::echo("echo"))
        .write_json(wd.path().join("plain.json"))
        .unwrap();
    let config = wd.write(
        "mcp.toml",
        "[mcp_servers.plain]\ncommand = \"{MCPCTL}\"\nargs = [\"fake-server\", \"--scenario\", \"plain.json\"]\n",
    );
    support::runtime().block_on(async {
        let client = support::serve_stdio(&wd, &config, &[]).await;
        let info = client.peer().peer_info().unwrap();
        assert!(
            !info.capabilities.supports_skills(),
            "{:?}",
            info.capabilities
        );
        client.cancel().await.unwrap();
    });
    wd.assert_no_server_left();
}

/// Alice (group `readers`) may use `docs` only; bob may use both.
const GRANTS: &str = r#"
[[gateway.grants]]
groups = ["readers"]
servers = ["docs"]

[[gateway.grants]]
subjects = ["bob"]
servers = ["docs", "bad"]
"#;

#[test]
fn a_caller_sees_and_reads_only_the_skills_of_servers_its_grants_name() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let text = format!(
        "tool_exposure = \"search\"\n{}[gateway.oauth]\nissuer = {}\nscopes = [\"{}\"]\n{GRANTS}",
        servers(&wd),
        support::toml_str(&auth.issuer()),
        team::SCOPE
    );
    let config = wd.write("mcp.toml", &text);
    let mut served = Served::start(&wd, &config, team::STATIC_TOKEN, &[]);
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &["readers"]);
        let bob = team::token(&auth, &url, "bob", &[]);
        let ask = |token: &str, method: &str, mut params: Value| {
            params["_meta"] = team::modern_meta();
            let message = team::request(method, params);
            let (url, token) = (url.clone(), token.to_owned());
            async move { team::post(&url, Some(&team::bearer(&token)), None, &message).await }
        };
        let uris = |answer: &team::Answer| {
            let mut uris: Vec<String> = answer.body["result"]["skills"]
                .as_array()
                .unwrap_or_else(|| panic!("no skills: {answer:?}"))
                .iter()
                .map(|s| s["uri"].as_str().unwrap().to_owned())
                .collect();
            uris.sort();
            uris
        };
        let theirs = ask(&alice, "skills/list", json!({})).await;
        assert_eq!(uris(&theirs), [DOCS_SKILL]);
        assert_eq!(theirs.body["result"]["cacheScope"], "private", "{theirs:?}");
        assert_eq!(
            uris(&ask(&bob, "skills/list", json!({})).await),
            [BAD_SKILL, DOCS_SKILL]
        );
        // What is not alice's answers like what does not exist, and nothing is read.
        let got = ask(&alice, "skills/get", json!({"uri": BAD_SKILL})).await;
        assert!(
            got.body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("is available to you")),
            "{got:?}"
        );
        let read = ask(&alice, "resources/read", json!({"uri": BAD_SKILL})).await;
        assert!(read.body["error"].is_object(), "{read:?}");
        assert_eq!(reads(&wd, "bad"), Vec::<String>::new());
        // Hers reads, verified.
        let read = ask(&alice, "resources/read", json!({"uri": DOCS_FORMS})).await;
        assert_eq!(
            read.body["result"]["contents"][0]["text"], "Forms.\n",
            "{read:?}"
        );
        let got = ask(&bob, "skills/get", json!({"uri": BAD_SKILL})).await;
        assert_eq!(got.body["result"]["skill"]["uri"], BAD_SKILL, "{got:?}");
        // Search mode finds only the skills of the servers a caller may use.
        let search =
            json!({"name": "search_tools", "arguments": {"query": "assemble pdf documents"}});
        let found = |answer: team::Answer| -> Vec<String> {
            let mut names: Vec<String> = answer.body["result"]["structuredContent"]["tools"]
                .as_array()
                .unwrap_or_else(|| panic!("no search answer: {answer:?}"))
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(
            found(ask(&alice, "tools/call", search.clone()).await),
            ["mcp__docs__pdf-processing"]
        );
        assert_eq!(
            found(ask(&bob, "tools/call", search).await),
            ["mcp__bad__pdf-processing", "mcp__docs__pdf-processing"]
        );
    });
    served.stop();
    wd.assert_no_server_left();
}

#[test]
fn a_skill_changed_since_it_was_pinned_is_held_back_and_a_dynamic_skill_passes_through() {
    let wd = Workdir::new();
    scenario(&wd, "docs", pdf());
    scenario(
        &wd,
        "live",
        SkillSpec::new("now", "What is happening now")
            .with_body("Read data/now.txt.")
            .with_file("data/now.txt", "now\n")
            .with_dynamic(true),
    );
    let mut text = String::new();
    for name in ["docs", "live"] {
        text.push_str(&format!(
            "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario\", \"{name}.json\"]\n"
        ));
    }
    let config = wd.write("mcp.toml", &text);
    let live_skill = "mcpctl-server://live/skill://now/SKILL.md";
    let runtime = support::runtime();
    runtime.block_on(async {
        let client = support::serve_stdio(&wd, &config, &[]).await;
        let listing = client.peer().list_skills(None).await.unwrap();
        let mut uris: Vec<&str> = listing.skills.iter().map(|s| s.uri.as_str()).collect();
        uris.sort_unstable();
        assert_eq!(uris, [DOCS_SKILL, live_skill]);
        let live = listing.skills.iter().find(|s| s.uri == live_skill).unwrap();
        assert_eq!(live.resources, rmcp::model::SkillResources::Dynamic);
        // Its SKILL.md is checked against the entry's frontmatter; its other files have
        // no digest and pass through.
        for (uri, expected) in [
            (live_skill, "Read data/now.txt."),
            ("mcpctl-server://live/skill://now/data/now.txt", "now\n"),
        ] {
            let read = client
                .peer()
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
                .unwrap();
            let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
                panic!("text expected: {read:?}");
            };
            assert!(text.contains(expected), "{uri}: {text}");
        }
        client.cancel().await.unwrap();
    });
    wd.assert_no_server_left();

    // The next gateway meets another SKILL.md than the one pinned: the skill is held back,
    // neither listed nor read, until the change is accepted.
    scenario(&wd, "docs", pdf().with_revision(1));
    let read_before = reads(&wd, "docs").len();
    runtime.block_on(async {
        let client = support::serve_stdio(&wd, &config, &[]).await;
        let listing = client.peer().list_skills(None).await.unwrap();
        let uris: Vec<&str> = listing.skills.iter().map(|s| s.uri.as_str()).collect();
        assert_eq!(uris, [live_skill]);
        let refused = client
            .peer()
            .read_resource(ReadResourceRequestParams::new(DOCS_SKILL))
            .await
            .unwrap_err()
            .to_string();
        for part in [
            "`docs`",
            "changed since it was pinned",
            "mcpctl accept docs",
        ] {
            assert!(refused.contains(part), "no {part} in {refused}");
        }
        assert!(
            client
                .peer()
                .get_skill(GetSkillRequestParams::new(DOCS_SKILL))
                .await
                .is_err()
        );
        client.cancel().await.unwrap();
    });
    assert_eq!(
        reads(&wd, "docs").len(),
        read_before,
        "a held skill was read"
    );
    wd.assert_no_server_left();
}

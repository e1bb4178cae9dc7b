//! `mcpctl serve --tool-exposure search`: `search_tools` answers as the library's search
//! mode does: tools and skills ranked together (a skill named as a skill), weak matches
//! left out, and "no good match" with the closest names instead of weak hits. Through a
//! real rmcp client over stdio, in front of a fake server with tools and a skill.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers may panic"
)]

mod support;

use mcp_testkit::{Scenario, SkillSpec, ToolSpec};
use pretty_assertions::assert_eq;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use support::Workdir;

/// The structured answer of `search_tools` for `query`.
async fn search(client: &rmcp::Peer<rmcp::RoleClient>, query: &str) -> Value {
    let arguments = json!({"query": query}).as_object().cloned();
    let result = client
        .call_tool(CallToolRequestParams::new("search_tools").with_arguments(arguments.unwrap()))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result.structured_content.expect("a structured answer")
}

#[test]
fn search_finds_tools_and_skills_and_says_when_nothing_matches_well() {
    let wd = Workdir::new();
    Scenario::new("docs")
        .with_tool(ToolSpec::echo("read_file").with_description("Read a file from the disk"))
        .with_tool(ToolSpec::echo("write_file").with_description("Write a file to the disk"))
        .with_skill(SkillSpec::new(
            "pdf-processing",
            "Extract, fill, and assemble PDF documents",
        ))
        .write_json(wd.path().join("docs.json"))
        .unwrap();
    let config = wd.write(
        "mcp.toml",
        "tool_exposure = \"search\"\n[mcp_servers.docs]\ncommand = \"{MCPCTL}\"\nargs = [\"fake-server\", \"--scenario\", \"docs.json\"]\n",
    );
    support::runtime().block_on(async {
        let client = support::serve_stdio(&wd, &config, &[]).await;

        let answer = search(client.peer(), "read a file").await;
        assert_eq!(
            answer["tools"][0]["name"], "mcp__docs__read_file",
            "{answer}"
        );
        assert!(answer.get("no_match").is_none(), "{answer}");

        let answer = search(client.peer(), "assemble pdf documents").await;
        assert_eq!(
            answer["tools"][0],
            json!({
                "name": "mcp__docs__pdf-processing",
                "kind": "skill",
                "description": "Extract, fill, and assemble PDF documents",
                "uri": "skill://pdf-processing/SKILL.md",
            }),
            "{answer}"
        );

        // A query the catalog does not speak to: no weak hits, a sentence instead.
        let answer = search(client.peer(), "quantum zebra lasagna").await;
        assert_eq!(answer["tools"], json!([]), "{answer}");
        assert!(
            answer["no_match"]
                .as_str()
                .is_some_and(|t| t.contains("quantum zebra lasagna")),
            "{answer}"
        );
        client.cancel().await.unwrap();
    });
    wd.assert_no_server_left();
}

//! `mcpctl serve` names prompts as it names tools: with the catalog's naming options (here
//! `tool_name_prefix = false`), so a client sees one naming scheme. Through a real rmcp
//! client over stdio.

#![allow(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway as a client would"
)]

mod support;

use support::Workdir;

#[test]
fn prompts_follow_the_catalogs_naming_options_like_tools() {
    let wd = Workdir::new();
    let scenario = serde_json::json!({
        "tools": [{"name": "echo", "behavior": {"kind": "echo"}}],
        "prompts": [{"name": "greet", "text": "hello"}],
    })
    .to_string();
    wd.write(
        "gateway.toml",
        &format!(
            "tool_name_prefix = false\n[mcp_servers.notes]\ncommand = {:?}\n\
             args = [\"fake-server\", \"--scenario-json\", {}]\n",
            env!("CARGO_BIN_EXE_mcpctl"),
            serde_json::to_string(&scenario).unwrap()
        ),
    );
    let runtime = support::runtime();
    let (tools, prompts) = runtime.block_on(async {
        let client = support::serve_stdio(&wd, &wd.path().join("gateway.toml"), &[]).await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let tools = loop {
            let names: Vec<String> = client
                .list_all_tools()
                .await
                .unwrap()
                .iter()
                .map(|t| t.name.to_string())
                .collect();
            if !names.is_empty() || std::time::Instant::now() > deadline {
                break names;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        };
        let prompts: Vec<String> = client
            .list_all_prompts()
            .await
            .unwrap()
            .iter()
            .map(|p| p.name.clone())
            .collect();
        client.cancel().await.unwrap();
        (tools, prompts)
    });
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert!(!tools[0].starts_with("mcp__"), "no prefix asked: {tools:?}");
    assert_eq!(
        prompts,
        [tools[0].replace("echo", "greet")],
        "the prompt is named like the tool"
    );
    wd.assert_no_server_left();
}

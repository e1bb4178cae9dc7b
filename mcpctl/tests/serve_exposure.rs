//! Which tools `mcpctl serve` lists: the configuration's `tool_exposure`, unless the
//! `--tool-exposure` flag says otherwise. Through a real rmcp client over stdio.

#![allow(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway as a client would"
)]

mod support;

use support::Workdir;

/// The tool names the gateway lists to a client once its one upstream server is up (or,
/// in search mode, at once), for `mcpctl --config gateway.toml serve <flags>`.
fn listed(wd: &Workdir, flags: &[&str]) -> Vec<String> {
    let runtime = support::runtime();
    runtime.block_on(async {
        let client = support::serve_stdio(wd, &wd.path().join("gateway.toml"), flags).await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let names = loop {
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
        client.cancel().await.unwrap();
        names
    })
}

#[test]
fn the_configured_exposure_applies_and_the_flag_wins() {
    let wd = Workdir::new();
    let scenario =
        serde_json::json!({"tools": [{"name": "echo", "behavior": {"kind": "echo"}}]}).to_string();
    wd.write(
        "gateway.toml",
        &format!(
            "tool_exposure = \"search\"\n[mcp_servers.notes]\ncommand = {:?}\n\
             args = [\"fake-server\", \"--scenario-json\", {}]\n",
            env!("CARGO_BIN_EXE_mcpctl"),
            serde_json::to_string(&scenario).unwrap()
        ),
    );
    assert_eq!(
        listed(&wd, &[]),
        ["search_tools", "call_tool"],
        "the configuration asks for search mode"
    );
    assert_eq!(
        listed(&wd, &["--tool-exposure", "all"]),
        ["mcp__notes__echo"],
        "the flag overrides the configuration"
    );
    wd.assert_no_server_left();
}

#[test]
fn an_unknown_exposure_flag_names_the_choices() {
    let wd = Workdir::new();
    let run = wd.run(&["serve", "--tool-exposure", "some"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("use `all` or `search`"),
        "{}",
        run.stderr
    );
}

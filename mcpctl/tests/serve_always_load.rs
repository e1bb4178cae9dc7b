//! In search mode `mcpctl serve` lists the tools a server pins (`always_load`,
//! `always_load_tools`) beside `search_tools` and `call_tool`, and nothing else. Through a
//! real rmcp client over stdio.

#![allow(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway as a client would"
)]

mod support;

use support::Workdir;

#[test]
fn search_mode_lists_the_pinned_tools_beside_the_search_tools() {
    let wd = Workdir::new();
    let scenario = serde_json::json!({"tools": [
        {"name": "read_file", "behavior": {"kind": "echo"}},
        {"name": "write_file", "behavior": {"kind": "echo"}},
    ]})
    .to_string();
    let server = |name: &str, pin: &str| {
        format!(
            "[mcp_servers.{name}]\ncommand = {:?}\nargs = [\"fake-server\", \"--scenario-json\", {}]\n{pin}\n",
            env!("CARGO_BIN_EXE_mcpctl"),
            serde_json::to_string(&scenario).unwrap()
        )
    };
    wd.write(
        "gateway.toml",
        &format!(
            "tool_exposure = \"search\"\n{}{}",
            server("files", "always_load_tools = [\"read_file\"]"),
            server("other", "")
        ),
    );
    let runtime = support::runtime();
    let names = runtime.block_on(async {
        let client = support::serve_stdio(&wd, &wd.path().join("gateway.toml"), &[]).await;
        // The pinned tool is listed once its server has listed it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let names = loop {
            let names: Vec<String> = client
                .list_all_tools()
                .await
                .unwrap()
                .iter()
                .map(|t| t.name.to_string())
                .collect();
            if names.len() > 2 || std::time::Instant::now() > deadline {
                break names;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        };
        client.cancel().await.unwrap();
        names
    });
    assert_eq!(
        names,
        ["search_tools", "call_tool", "mcp__files__read_file"]
    );
    wd.assert_no_server_left();
}

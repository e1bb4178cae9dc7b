//! A host in one file: load a configuration, start its servers with events, list tools,
//! call one with progress, answer an elicitation, read a resource, shut down.
//!
//! The server is the testkit's fake server (`mcp-fake-server`), so this runs offline:
//! `cargo run --example host -p mcp-connections`. The rest of what a host needs (search
//! mode, enforced approvals, sampling, timeouts, a crash and its recovery) is in
//! `examples/host_full.rs`.

#![allow(
    clippy::print_stdout,
    reason = "an example host prints what a host would show"
)]

use std::sync::Arc;

use mcp_catalog::{Discovered, Discovery, ProcessEnv, TrustStore};
use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{
    CallOptions, CallToolResultExt, ConnectionEvent, ConnectionSet, ConnectionSetOptions,
    ProgressCallback, ReadResourceResultExt, elicitation_fn,
};
use mcp_testkit::{Behavior, ResourceSpec, Scenario, TestHome, ToolSpec};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A server to talk to, and a configuration file naming it (a real host has its own).
    let home = TestHome::new()?;
    let scenario = Scenario::new("demo")
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new("count", Behavior::Progress { steps: 3 }))
        .with_tool(ToolSpec::new(
            "greet",
            Behavior::ElicitForm {
                message: "What is your name?".to_owned(),
                schema: json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }),
            },
        ))
        .with_resource(ResourceSpec::new(
            "demo://readme",
            "readme",
            "Hello from a resource.",
        ));
    let scenario_path = home.join("demo.json");
    scenario.write_json(&scenario_path)?;
    let config_path = home.join("mcp.toml");
    std::fs::write(
        &config_path,
        format!(
            "[mcp_servers.demo]\ncommand = '{}'\nargs = ['--scenario', '{}']\n",
            mcp_testkit::fake_server_bin().display(),
            scenario_path.display()
        ),
    )?;

    // 1. Load the configuration: a project file is used only once the user trusted its
    //    exact content; until then the host gets a review of what it would run.
    let mut trust = TrustStore::open(home.join("trusted-configs.json"))?;
    let builder = loop {
        match Discovery::new(home.path()).find(Some(&trust), &ProcessEnv)? {
            Discovered::Ready { builder, path, .. } => {
                println!("config: {}", path.display());
                break builder;
            }
            Discovered::NeedsTrust {
                untrusted, review, ..
            } => {
                // A real host asks the user here.
                println!("{} would run:\n{review}", untrusted.display());
                trust.trust(&untrusted)?;
            }
            _ => return Err("no configuration found".into()),
        }
    };
    let catalog = builder.build();

    // 2. Start, with events and an elicitation handler (a closure: a real host asks the user).
    let (events, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let answer = elicitation_fn(|request| async move {
        println!("{} asks: {}", request.server, request.message());
        ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}))
    });
    let set = ConnectionSet::start(
        &catalog,
        ConnectionSetOptions::new()
            .with_events(events)
            .with_elicitation_handler(answer),
    );
    while let Some(event) = rx.recv().await {
        match event {
            ConnectionEvent::Ready {
                server, tools, pid, ..
            } => println!("ready: {server} ({tools} tools, pid {pid:?})"),
            ConnectionEvent::Failed { server, error, .. } => println!("failed: {server}: {error}"),
            ConnectionEvent::StartupComplete { .. } => break,
            _ => {}
        }
    }

    // 3. The tools, as a model would see them.
    let tools = set.tools().await;
    for tool in &tools {
        println!(
            "tool: {} (server {}, raw name {})",
            tool.qualified_name,
            tool.server,
            tool.raw_name()
        );
    }

    // 4. A call with progress.
    let progress: ProgressCallback =
        Arc::new(|p| println!("progress: {} of {:?}", p.progress, p.total));
    let result = set
        .call_qualified(
            "mcp__demo__count",
            None,
            CallOptions::new().with_call(|c| c.with_progress(Some(progress))),
        )
        .await?;
    println!("count: {}", result.text());

    // 5. A call that asks the user (answered by the handler above).
    let result = set
        .call_qualified("mcp__demo__greet", None, CallOptions::new())
        .await?;
    if let Some(answer) = result.structured() {
        println!("greet: {answer}");
    }

    // 6. A resource.
    let Some(server) = tools.first().map(|t| t.server.clone()) else {
        return Err("the demo server listed no tools".into());
    };
    let read = set.read_resource(&server, "demo://readme").await?;
    println!("resource: {}", read.text());

    // 7. Shut down: every server process is gone when this returns. The launcher's reaper
    //    helper stays while this process lives (it kills the servers if the host is
    //    SIGKILLed); a leak check skips `ConnectionSet::reaper_pid()`.
    set.shutdown().await;
    Ok(())
}

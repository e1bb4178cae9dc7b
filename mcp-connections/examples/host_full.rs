//! The rest of what a host needs, beside `examples/host.rs`: tool search mode (two tools
//! instead of the whole catalog), approvals enforced by the set (`call_approved` and an
//! approver), the host's model answering a server's sampling request, a call timing out,
//! and a server that crashes (its tools stay listed, not ready) and comes back on the next
//! call.
//!
//! The server is the testkit's fake server (`mcp-fake-server`), so this runs offline:
//! `cargo run --example host_full -p mcp-connections`. CI checks its output.

#![allow(
    clippy::print_stdout,
    reason = "an example host prints what a host would show"
)]

use std::time::Duration;

use mcp_catalog::{CatalogBuilder, Config, LoadedConfig, ServerConfig};
use mcp_connections::model::{CreateMessageResult, SamplingMessage};
use mcp_connections::{
    ApprovalAnswer, CALL_TOOL, CallOptions, CallToolResultExt, ConnectionEvent, ConnectionSet,
    ConnectionSetOptions, SEARCH_TOOL, SearchModeCall, approver_fn, sampling_fn, search_mode_tools,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, Scenario, TestHome, ToolSpec};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A server to talk to (a real host reads its configuration as host.rs does).
    let home = TestHome::new()?;
    let read_only = json!({"readOnlyHint": true});
    let scenario = Scenario::new("files")
        .with_tool(
            ToolSpec::echo("read_file")
                .with_description("Read a file and return its text.")
                .with_annotations(read_only.clone()),
        )
        .with_tool(ToolSpec::echo("write_file").with_description("Write text to a file."))
        .with_tool(
            ToolSpec::echo("wipe_disk")
                .with_description("Erase every file.")
                .with_annotations(json!({"destructiveHint": true})),
        )
        .with_tool(
            ToolSpec::new(
                "summarize",
                Behavior::Sample {
                    prompt: "Summarize the notes.".to_owned(),
                    max_tokens: 50,
                    tools: Vec::new(),
                },
            )
            .with_description("Summarize the notes with the host's model.")
            .with_annotations(read_only.clone()),
        )
        .with_tool(
            ToolSpec::new("index", Behavior::Sleep { ms: 30_000 })
                .with_description("Index every file (slow).")
                .with_annotations(read_only),
        );
    let scenario_path = home.join("files.json");
    scenario.write_json(&scenario_path)?;
    let server = ServerConfig::stdio(mcp_testkit::fake_server_bin().to_string_lossy())
        .with_args(["--scenario".to_owned(), scenario_path.display().to_string()]);
    let config = Config::new().with_server("files".parse()?, server);
    let catalog = CatalogBuilder::new()
        .with_user_config(LoadedConfig::new("example", config))
        .build();

    // The approver: a real host asks the user; this one approves all but destructive
    // tools. The set asks it only when the tool's approval mode asks (`auto` here: a tool
    // without a read-only hint), and calls exactly the definition it approved.
    let approver = approver_fn(|request| async move {
        let destructive = request
            .tool
            .annotations
            .as_ref()
            .and_then(|a| a.destructive_hint)
            .unwrap_or(false);
        let answer = if destructive {
            ApprovalAnswer::Decline
        } else {
            ApprovalAnswer::Approve
        };
        println!(
            "approval asked: {} of {} with {} -> {answer:?}",
            request.tool_name(),
            request.server,
            request
                .arguments
                .as_ref()
                .map_or("no arguments".to_owned(), |a| a.to_string()),
        );
        answer
    });
    // The host's model, for servers that ask for a completion (sampling).
    let model = sampling_fn(|request| async move {
        println!(
            "sampling asked by {} (at most {} tokens)",
            request.server,
            request.max_tokens()
        );
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("Three notes: milk, eggs, bread."),
            "example-model".into(),
        ))
    });
    let (events, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &catalog,
        ConnectionSetOptions::new()
            .with_events(events)
            .with_approver(approver)
            .with_sampling_handler(model)
            // Restart a crashed server on its next call at once (the default waits 1 s
            // after a crash before restarting).
            .with_restart_backoff(Duration::ZERO, Duration::from_secs(5)),
    );
    let mut pid = None;
    while let Some(event) = rx.recv().await {
        match event {
            ConnectionEvent::Ready { server, pid: p, .. } => {
                println!("ready: {server}");
                pid = p;
            }
            ConnectionEvent::Failed { server, error, .. } => println!("failed: {server}: {error}"),
            ConnectionEvent::StartupComplete { .. } => break,
            _ => {}
        }
    }

    // 1. Search mode: the model sees two tools, searches, then calls what it found.
    let offered: Vec<String> = search_mode_tools()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    println!("search mode offers: {}", offered.join(", "));
    let query = json!({"query": "write text to a file", "limit": 2});
    let found = set
        .answer_search_mode(SEARCH_TOOL, query.as_object(), CallOptions::new())
        .await
        .ok_or("search_tools is a search-mode tool")??;
    let best = found
        .structured()
        .and_then(|s| s["tools"][0]["name"].as_str().map(ToOwned::to_owned))
        .ok_or("the search found nothing")?;
    println!("search: best match {best}");
    // The model's call of `call_tool`: read it, then call with approvals enforced.
    let call = json!({"name": best, "arguments": {"text": "hello"}});
    let Some(Ok(SearchModeCall::Call { name, arguments })) =
        SearchModeCall::parse(CALL_TOOL, call.as_object())
    else {
        return Err("call_tool's arguments were refused".into());
    };

    // 2. Approvals, enforced: asked (write_file), not asked (read_file), declined
    //    (wipe_disk: nothing is sent to the server).
    let written = set
        .call_approved(
            &name,
            arguments.map(serde_json::Value::Object),
            CallOptions::new(),
        )
        .await?;
    println!("called {name}: {}", written.text());
    let read = set
        .call_approved(
            "mcp__files__read_file",
            Some(json!({"path": "notes.txt"})),
            CallOptions::new(),
        )
        .await?;
    println!(
        "called mcp__files__read_file without a question: {}",
        read.text()
    );
    match set
        .call_approved("mcp__files__wipe_disk", None, CallOptions::new())
        .await
    {
        Err(e) if e.is_not_approved() => println!("refused: {e}"),
        other => return Err(format!("wipe_disk was not refused: {other:?}").into()),
    }

    // 3. Sampling: the server asks the host's model in the middle of its call.
    let summary = set
        .call_approved("mcp__files__summarize", None, CallOptions::new())
        .await?;
    println!("summarize: {}", summary.text());

    // 4. Timeouts: the call's own (the smaller of it and the server's tool_timeout_sec).
    //    The server is told to cancel, and stays usable.
    match set
        .call_approved(
            "mcp__files__index",
            None,
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_millis(300))),
        )
        .await
    {
        Err(e) if e.is_timeout() => println!("timed out: {e}"),
        other => return Err(format!("index did not time out: {other:?}").into()),
    }

    // 5. A crash: the process dies (killed here); its tools stay listed, not ready, and
    //    the next call brings the server back.
    let key: McpServerKey = "files".parse()?;
    let pid = pid.ok_or("the stdio server has a pid")?;
    mcp_testkit::kill_process(pid);
    wait_for_failure(&mut rx, &key).await?;
    let listed = set.tools().await;
    let down = listed.iter().filter(|t| !t.ready).count();
    println!(
        "after the crash: {} tools listed, {down} not ready",
        listed.len()
    );
    let again = set
        .call_approved(
            "mcp__files__read_file",
            Some(json!({"path": "notes.txt"})),
            CallOptions::new(),
        )
        .await?;
    let ready = set.tools().await.iter().filter(|t| t.ready).count();
    // The restart's own Ready event came before the call's result.
    let mut restarted = None;
    while let Ok(event) = rx.try_recv() {
        if let ConnectionEvent::Ready { pid: p, .. } = event {
            restarted = p;
        }
    }
    let process = match restarted {
        Some(p) if p != pid => "a new process",
        _ => "the same process?",
    };
    println!(
        "recovered: {} ({ready} tools ready again, {process})",
        again.text()
    );

    // 6. Shut down: every server process is gone when this returns.
    set.shutdown().await;
    Ok(())
}

/// Waits (at most 10 s) for the set to see `server` fail.
async fn wait_for_failure(
    rx: &mut UnboundedReceiver<ConnectionEvent>,
    server: &McpServerKey,
) -> Result<(), Box<dyn std::error::Error>> {
    let failed = async {
        while let Some(event) = rx.recv().await {
            if let ConnectionEvent::Failed { server: s, .. } = &event
                && s == server
            {
                println!("crashed: {server}");
                return true;
            }
        }
        false
    };
    match tokio::time::timeout(Duration::from_secs(10), failed).await {
        Ok(true) => Ok(()),
        _ => Err(format!("the set never saw {server} fail").into()),
    }
}

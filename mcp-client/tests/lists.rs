//! What one `Client` lists and reads back, and the bounds it keeps: paginated tools,
//! resources, templates and prompts gathered whole or walked page by page with the
//! server's cursors; a list over the byte budget, a repeated cursor or endless pages
//! stopped as protocol faults; replies that cannot be read failing their call at once.
//! Against the `mcp-fake-server` binary over stdio: the counterparts, at the client level,
//! of `mcp-connections/tests/{budgets,broken_replies}.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, FailureReason, MAX_PAGES, RequestError,
};
use mcp_testkit::{
    Behavior, Faults, PromptSpec, ReplyFault, ResourceSpec, ResourceTemplateSpec, Scenario,
    TestHome, ToolSpec,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::{Stdio, args, key, stdio};

const CALL: Duration = Duration::from_secs(20);

/// A tool whose input schema holds `elements` array elements (about 2 bytes each).
fn fat_tool(name: &str, elements: usize) -> ToolSpec {
    ToolSpec::echo(name).with_input_schema(json!({
        "type": "object",
        "properties": {"x": {"enum": vec![0; elements]}},
    }))
}

/// `tools` fat tools, one per page.
fn fat(tools: usize, elements: usize) -> Scenario {
    let mut s = Scenario::new("fat").with_faults(Faults::new().with_page_size(1));
    for i in 0..tools {
        s = s.with_tool(fat_tool(&format!("t{i}"), elements));
    }
    s
}

async fn try_connect(
    server: &Stdio,
    settings: ClientSettings,
) -> Result<Client, mcp_client::StartupFailure> {
    Client::connect(
        key("lists"),
        server.target.clone(),
        settings.with_process_grace(Duration::from_millis(300)),
        Arc::new(DeclineRequests),
    )
    .await
}

/// Five resources, three templates and three prompts, in pages of two.
fn catalog() -> Scenario {
    let mut s = Scenario::new("lists")
        .with_tool(ToolSpec::echo("echo"))
        .with_faults(Faults::new().with_page_size(2));
    for i in 0..5 {
        s = s.with_resource(ResourceSpec::new(
            format!("file:///r{i}.txt"),
            format!("r{i}"),
            format!("text {i}"),
        ));
    }
    for i in 0..3 {
        s = s
            .with_resource_template(ResourceTemplateSpec::new(
                format!("file:///t{i}/{{name}}"),
                format!("t{i}"),
            ))
            .with_prompt(PromptSpec::new(format!("p{i}"), format!("prompt {i}")));
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_amplified_tool_list_fails_the_connect_at_the_budget() {
    let home = TestHome::new().unwrap();
    // 40 pages of ~40 KiB each against a 256 KiB budget.
    let server = stdio(&home, fat(40, 20_000));
    let failure = try_connect(
        &server,
        ClientSettings::new().with_list_byte_budget(256 * 1024),
    )
    .await
    .unwrap_err();
    assert_eq!(failure.reason(), &FailureReason::Protocol, "{failure}");
    let text = mcp_key::error_chain(&failure);
    assert!(text.contains("byte budget"), "{text}");
    assert!(text.contains("262144"), "{text}");
    // It stopped at the budget instead of reading all 40 pages.
    let listed = server.requests("tools/list").len();
    assert!(listed < 10, "{listed} pages read");
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_within_the_budget_is_served_from_every_page() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, fat(4, 20_000));
    let client = try_connect(
        &server,
        ClientSettings::new().with_list_byte_budget(256 * 1024),
    )
    .await
    .unwrap();
    let names: Vec<String> = client.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["t0", "t1", "t2", "t3"]);
    // One page per tool, and the page asking for nothing more.
    assert_eq!(server.requests("tools/list").len(), 4);
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_templates_and_prompts_are_gathered_from_every_page() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, catalog());
    let client = try_connect(&server, ClientSettings::new()).await.unwrap();

    let resources = client.list_resources(usize::MAX).await.unwrap();
    let uris: Vec<String> = resources.iter().map(|r| r.uri.clone()).collect();
    assert_eq!(
        uris,
        [
            "file:///r0.txt",
            "file:///r1.txt",
            "file:///r2.txt",
            "file:///r3.txt",
            "file:///r4.txt"
        ]
    );
    assert_eq!(server.requests("resources/list").len(), 3);

    let templates = client.list_resource_templates(usize::MAX).await.unwrap();
    let names: Vec<String> = templates.iter().map(|t| t.name.clone()).collect();
    assert_eq!(names, ["t0", "t1", "t2"]);
    assert_eq!(server.requests("resources/templates/list").len(), 2);

    let prompts = client.list_prompts(usize::MAX).await.unwrap();
    let names: Vec<String> = prompts.iter().map(|p| p.name.clone()).collect();
    assert_eq!(names, ["p0", "p1", "p2"]);
    assert_eq!(server.requests("prompts/list").len(), 2);

    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_walked_with_the_servers_cursors() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, catalog());
    let client = try_connect(&server, ClientSettings::new()).await.unwrap();

    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let (items, next) = client.list_resources_page(cursor).await.unwrap();
        pages.push(items.iter().map(|r| r.name.clone()).collect::<Vec<_>>());
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, [vec!["r0", "r1"], vec!["r2", "r3"], vec!["r4"]]);
    // The cursors sent are the ones the server gave, in order.
    let sent: Vec<Option<String>> = server
        .requests("resources/list")
        .iter()
        .map(|r| r.params["cursor"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(sent, [None, Some("2".to_owned()), Some("4".to_owned())]);

    let (first, next) = client.list_resource_templates_page(None).await.unwrap();
    let names: Vec<String> = first.iter().map(|t| t.name.clone()).collect();
    assert_eq!(
        (names, next.as_deref()),
        (vec!["t0".to_owned(), "t1".to_owned()], Some("2"))
    );
    let (last, next) = client.list_resource_templates_page(next).await.unwrap();
    assert_eq!((last.len(), next), (1, None));

    // A cursor the server never gave is the server's error, passed on.
    let err = client
        .list_resources_page(Some("not-a-cursor".to_owned()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RequestError::Server { message, .. } if message.contains("unknown cursor")),
        "{err:?}"
    );
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_list_over_its_budget_is_a_protocol_fault() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, catalog());
    let client = try_connect(&server, ClientSettings::new()).await.unwrap();
    // The first page alone is more than 64 bytes of JSON.
    let err = client.list_resources(64).await.unwrap_err();
    let RequestError::Protocol { detail } = &err else {
        panic!("{err:?}");
    };
    assert!(detail.contains("byte budget"), "{detail}");
    assert!(detail.contains("budget 64"), "{detail}");
    assert_eq!(
        server.requests("resources/list").len(),
        1,
        "stopped at the first page"
    );
    // The connection is fine.
    assert_eq!(client.list_resources(usize::MAX).await.unwrap().len(), 5);
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_cursor_and_endless_pages_stop_at_the_limits() {
    let home = TestHome::new().unwrap();
    let repeating = stdio(
        &home,
        Scenario::new("lists")
            .with_tool(ToolSpec::echo("echo"))
            .with_faults(Faults::new().with_repeating_cursor()),
    );
    let failure = try_connect(&repeating, ClientSettings::new())
        .await
        .unwrap_err();
    assert_eq!(failure.reason(), &FailureReason::Protocol, "{failure}");
    let text = mcp_key::error_chain(&failure);
    assert!(text.contains("repeated a cursor"), "{text}");
    // The first page, then the one whose cursor came back.
    assert_eq!(repeating.requests("tools/list").len(), 2);
    repeating.assert_gone().await;

    let home = TestHome::new().unwrap();
    let endless = stdio(
        &home,
        Scenario::new("lists")
            .with_tool(ToolSpec::echo("echo"))
            .with_faults(Faults::new().with_endless_pages()),
    );
    let failure = try_connect(&endless, ClientSettings::new())
        .await
        .unwrap_err();
    assert_eq!(failure.reason(), &FailureReason::Protocol, "{failure}");
    let text = mcp_key::error_chain(&failure);
    assert!(
        text.contains(&format!("more than {MAX_PAGES} pages")),
        "{text}"
    );
    assert_eq!(endless.requests("tools/list").len(), MAX_PAGES);
    endless.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_of_a_server_without_them_are_none_without_asking() {
    let home = TestHome::new().unwrap();
    let server = stdio(
        &home,
        Scenario::new("lists").with_tool(ToolSpec::echo("echo")),
    );
    let client = try_connect(&server, ClientSettings::new()).await.unwrap();
    assert_eq!(client.list_prompts(usize::MAX).await.unwrap(), []);
    // Asked of the server by a call afterwards, so the log is complete up to it.
    client
        .call_tool("echo", None, CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(server.requests("prompts/list").len(), 0);
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_replies_fail_the_call_at_once_as_protocol_errors() {
    let faults = [
        (ReplyFault::ResultAndError, "both `result` and `error`"),
        (
            ReplyFault::TooDeep,
            "not valid JSON (recursion limit exceeded",
        ),
        (ReplyFault::InvalidUtf8, "not valid UTF-8"),
        (ReplyFault::NotJson, "not a JSON object"),
        (
            ReplyFault::Unterminated,
            "not valid JSON (EOF while parsing",
        ),
    ];
    let mut scenario = Scenario::new("odd").with_tool(ToolSpec::echo("echo"));
    for (i, (fault, _)) in faults.iter().enumerate() {
        scenario = scenario.with_tool(ToolSpec::new(
            format!("broken{i}"),
            Behavior::BrokenReply { fault: *fault },
        ));
    }
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario);
    let client = try_connect(&server, ClientSettings::new()).await.unwrap();
    for (i, (fault, expected)) in faults.iter().enumerate() {
        let started = Instant::now();
        let err = client
            .call_tool(
                &format!("broken{i}"),
                None,
                CallSettings::new(Duration::from_secs(60)),
            )
            .await
            .unwrap_err();
        let took = started.elapsed();
        let RequestError::Protocol { detail } = &err else {
            panic!("{fault:?}: {err:?}");
        };
        assert!(detail.contains(expected), "{fault:?}: {detail}");
        // Far from the 60 s timeout: the error comes with the broken line (half of it is a
        // bound for a loaded machine, not a measurement).
        assert!(took < Duration::from_secs(30), "{fault:?} took {took:?}");
        // The connection is still usable.
        let r = client
            .call_tool("echo", args(json!({"i": i})), CallSettings::new(CALL))
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"i": i})));
    }
    client.shutdown().await;
    server.assert_gone().await;
}

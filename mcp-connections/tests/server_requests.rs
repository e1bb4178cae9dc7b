//! What servers send a host besides answers: sampling requests (both eras), log messages,
//! completions, and prompt and resource list changes. Real `mcp-fake-server` processes
//! over stdio.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]
#![allow(
    deprecated,
    reason = "rmcp marks sampling and logging deprecated (SEP-2577)"
)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_connections::model::{
    ArgumentInfo, CreateMessageResult, LoggingLevel, Reference, Role, SamplingMessage,
    SamplingMessageContentBlock,
};
use mcp_connections::{
    ApprovalPolicy, CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions,
    HostAuthority, SamplingRefusal, ServerPool, sampling_fn, sampling_reviewer_fn,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, PromptSpec, RecordedRequest, ResourceSpec, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

const MODERN: &str = "2026-07-28";

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

fn sample(name: &str, max_tokens: u32, tools: &[&str]) -> ToolSpec {
    ToolSpec::new(
        name,
        Behavior::Sample {
            prompt: "Say hi".to_owned(),
            max_tokens,
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
        },
    )
}

/// A server of `era` (`None`: 2025-11-25) that asks for samples, logs, completes and
/// changes its prompts.
fn scenario(era: Option<&str>) -> Scenario {
    let mut scenario = Scenario::new("asker")
        .with_tool(sample("sample", 4_000_000_000, &[]))
        .with_tool(sample("sample_tools", 50, &["weather"]))
        .with_tool(ToolSpec::new(
            "log",
            Behavior::Log {
                level: "info".to_owned(),
                logger: Some("db".to_owned()),
                data: json!("connected\n\u{1b}[31mred"),
                count: 1,
            },
        ))
        .with_tool(ToolSpec::new(
            "debug_log",
            Behavior::Log {
                level: "debug".to_owned(),
                logger: None,
                data: json!("details"),
                count: 1,
            },
        ))
        .with_tool(ToolSpec::new(
            "flood",
            Behavior::Log {
                level: "warning".to_owned(),
                logger: None,
                data: json!("spam"),
                count: 100_000,
            },
        ))
        .with_tool(ToolSpec::new(
            "new_prompt",
            Behavior::ChangePrompts {
                add: vec![PromptSpec::new("later", "added later")],
                remove: Vec::new(),
            },
        ))
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
        .with_prompt(
            PromptSpec::new("greet", "Hello {name}")
                .with_argument("name")
                .with_completions("name", ["Ada", "Alan", "Grace"]),
        )
        .with_faults(faults(|f| f.protocol_version = era.map(str::to_owned)));
    scenario.capabilities = scenario
        .capabilities
        .with_logging(true)
        .with_completions(true)
        .with_prompts_list_changed(true)
        .with_resources_list_changed(true);
    scenario
}

/// A model that answers with its name and the request's `maxTokens`, recording each
/// request's server; with `use_tool`, it calls that tool instead.
fn model(
    who: &'static str,
    use_tool: Option<&'static str>,
    seen: &Arc<Mutex<Vec<String>>>,
) -> ConnectionSetOptions {
    let seen = Arc::clone(seen);
    ConnectionSetOptions::new().with_sampling_handler(sampling_fn(move |request| {
        let seen = Arc::clone(&seen);
        async move {
            seen.lock()
                .unwrap()
                .push(format!("{who}:{}", request.server));
            let message = match use_tool {
                Some(tool) => SamplingMessage::new(
                    Role::Assistant,
                    SamplingMessageContentBlock::tool_use("c1", tool, Map::new()),
                ),
                None => SamplingMessage::assistant_text(format!("{who} {}", request.max_tokens())),
            };
            let mut answer = CreateMessageResult::new(message, format!("model-{who}"));
            if use_tool.is_some() {
                answer = answer.with_stop_reason(CreateMessageResult::STOP_REASON_TOOL_USE);
            }
            Ok(answer)
        }
    }))
}

async fn start(fx: &Fixture, options: ConnectionSetOptions) -> ConnectionSet {
    let set = ConnectionSet::start(&fx.catalog(), options);
    assert_eq!(set.wait_startup().await.ready(), 1);
    set
}

async fn call(set: &ConnectionSet, tool: &str) -> Result<Value, mcp_connections::Error> {
    set.call_tool(&key("asker"), tool, None, CallOptions::new())
        .await
        .map(|r| r.structured_content.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_is_answered_by_the_hosts_model_in_both_eras() {
    for era in [None, Some(MODERN)] {
        let mut fx = Fixture::new();
        fx.stdio("asker", scenario(era));
        let seen = Arc::default();
        let set = start(&fx, model("A", None, &seen)).await;
        let answer = call(&set, "sample").await.unwrap();
        // maxTokens reaches the model as the server asked, however large.
        assert_eq!(
            answer["result"]["content"]["text"],
            json!("A 4000000000"),
            "{era:?}"
        );
        assert_eq!(answer["result"]["model"], json!("model-A"), "{era:?}");
        assert_eq!(answer["result"]["role"], json!("assistant"), "{era:?}");
        assert_eq!(*seen.lock().unwrap(), ["A:asker"], "{era:?}");
        let log = RecordedRequest::read_log(fx.request_log("asker"));
        if era.is_none() {
            let init = log.iter().find(|r| r.method == "initialize").unwrap();
            assert_eq!(
                init.params["capabilities"]["sampling"],
                json!({"tools": {}}),
                "the capability is announced with a handler"
            );
        } else {
            let calls: Vec<_> = log.iter().filter(|r| r.method == "tools/call").collect();
            assert_eq!(calls.len(), 2, "an input_required round");
            assert_eq!(
                calls[1].params["inputResponses"]["input"]["model"],
                json!("model-A")
            );
        }
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_handler_sampling_is_refused_and_not_announced() {
    for era in [None, Some(MODERN)] {
        let mut fx = Fixture::new();
        fx.stdio("asker", scenario(era));
        let set = start(&fx, ConnectionSetOptions::new()).await;
        match era {
            None => {
                let answer = call(&set, "sample").await.unwrap();
                assert_eq!(
                    answer["error"],
                    json!({"code": -1, "message": "this client does not offer sampling"})
                );
                let log = RecordedRequest::read_log(fx.request_log("asker"));
                let init = log.iter().find(|r| r.method == "initialize").unwrap();
                assert_eq!(init.params["capabilities"].get("sampling"), None);
            }
            Some(_) => {
                let err = mcp_key::error_chain(&call(&set, "sample").await.unwrap_err());
                assert!(
                    err.contains("sampling") && err.contains("this client does not offer sampling"),
                    "{err}"
                );
            }
        }
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_authority_decides_before_the_model() {
    let mut fx = Fixture::new();
    fx.stdio("asker", scenario(None));
    let seen = Arc::default();
    // Headless: nobody may approve spending the model.
    let headless = model("A", None, &seen)
        .with_authority(HostAuthority::new().with_approval_policy(ApprovalPolicy::Never));
    let set = start(&fx, headless).await;
    let answer = call(&set, "sample").await.unwrap();
    assert_eq!(answer["error"]["code"], json!(-1));
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("approval policy never"),
        "{answer}"
    );
    // A reviewer refuses above a budget, whatever the handler would say.
    let budget = sampling_reviewer_fn(|request| async move {
        (request.max_tokens() > 1_000).then(|| Err(SamplingRefusal::new("over the budget")))
    });
    set.set_authority(HostAuthority::new().with_sampling_reviewer(budget));
    let answer = call(&set, "sample").await.unwrap();
    assert_eq!(
        answer["error"],
        json!({"code": -1, "message": "over the budget"})
    );
    assert!(seen.lock().unwrap().is_empty(), "the model was never asked");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_tool_use_is_checked_against_the_tools_the_server_offered() {
    let mut fx = Fixture::new();
    fx.stdio("asker", scenario(None));
    let seen = Arc::default();
    let set = start(&fx, model("A", Some("weather"), &seen)).await;
    let answer = call(&set, "sample_tools").await.unwrap();
    assert_eq!(answer["result"]["stopReason"], json!("toolUse"));
    assert_eq!(answer["result"]["content"]["name"], json!("weather"));
    // The same model answering a request without tools: not passed to the server.
    let answer = call(&set, "sample").await.unwrap();
    assert_eq!(answer["error"]["code"], json!(-1));
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("did not offer"), "{message}");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_reaches_only_the_session_whose_call_caused_it() {
    for era in [None, Some(MODERN)] {
        let mut fx = Fixture::new();
        fx.stdio("asker", scenario(era));
        let catalog = fx.catalog();
        let pool = ServerPool::new();
        let (seen_a, seen_b) = (Arc::default(), Arc::default());
        let options = |who, seen| {
            model(who, None, seen)
                .with_shared_pool(pool.clone())
                .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
        };
        let a = ConnectionSet::start(&catalog, options("A", &seen_a));
        let b = ConnectionSet::start(&catalog, options("B", &seen_b));
        assert_eq!(a.wait_startup().await.ready(), 1);
        assert_eq!(b.wait_startup().await.ready(), 1);
        assert_eq!(pool.stats().starts, 1, "one process for both");
        for _ in 0..3 {
            let (ra, rb) = tokio::join!(call(&a, "sample"), call(&b, "sample"));
            assert_eq!(ra.unwrap()["result"]["model"], json!("model-A"), "{era:?}");
            assert_eq!(rb.unwrap()["result"]["model"], json!("model-B"), "{era:?}");
        }
        assert_eq!(seen_a.lock().unwrap().len(), 3);
        assert_eq!(seen_b.lock().unwrap().len(), 3);
        a.shutdown().await;
        b.shutdown().await;
        pool.shutdown().await;
        fx.assert_no_processes().await;
    }
}

/// The next `ServerLog` event.
async fn next_log(rx: &mut mpsc::UnboundedReceiver<ConnectionEvent>) -> ConnectionEvent {
    wait_event(rx, Duration::from_secs(20), |e| {
        matches!(e, ConnectionEvent::ServerLog { .. })
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_logs_arrive_as_events_in_both_eras() {
    for era in [None, Some(MODERN)] {
        let mut fx = Fixture::new();
        fx.stdio("asker", scenario(era));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let set = start(&fx, ConnectionSetOptions::new().with_events(tx)).await;
        call(&set, "log").await.unwrap();
        let event = next_log(&mut rx).await;
        assert_eq!(
            event,
            ConnectionEvent::ServerLog {
                server: key("asker"),
                level: LoggingLevel::Info,
                logger: Some("db".to_owned()),
                data: json!("connected\n\u{1b}[31mred"),
                dropped: 0,
            },
            "{era:?}"
        );
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_flood_is_bounded_and_what_was_dropped_is_counted() {
    let mut fx = Fixture::new();
    fx.stdio("asker", scenario(None));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = start(&fx, ConnectionSetOptions::new().with_events(tx)).await;
    let sent = call(&set, "flood").await.unwrap();
    assert_eq!(sent, json!({"sent": 100_000}));
    // The flood is over. One more message carries the count of what was held back; the
    // rate limit's bucket may still be empty when it comes, so one is sent, events are
    // taken until none comes for a while, and another is sent until every message sent is
    // delivered or counted (a marker slow to arrive only means one more is sent; the
    // totals can never exceed what was sent).
    let (mut delivered, mut dropped, mut markers) = (0u64, 0u64, 0u64);
    while markers < 100 && delivered + dropped < 100_000 + markers {
        call(&set, "log").await.unwrap();
        markers += 1;
        while let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_millis(500), rx.recv()).await
        {
            if let ConnectionEvent::ServerLog { dropped: d, .. } = event {
                dropped += d;
                delivered += 1;
            }
            if delivered + dropped == 100_000 + markers {
                break;
            }
        }
    }
    assert_eq!(
        delivered + dropped,
        100_000 + markers,
        "every message delivered or counted"
    );
    assert!(
        delivered < 20_000,
        "the rate limit held the flood back: {delivered} delivered"
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_are_routed_to_the_server_of_the_prompt() {
    for era in [None, Some(MODERN)] {
        let mut fx = Fixture::new();
        fx.stdio("asker", scenario(era));
        let set = start(&fx, ConnectionSetOptions::new()).await;
        let info = set
            .complete(
                &key("asker"),
                Reference::for_prompt("greet"),
                ArgumentInfo::new("name", "A"),
                None,
            )
            .await
            .unwrap();
        assert_eq!(info.values, ["Ada", "Alan"], "{era:?}");
        assert_eq!(info.total, Some(2));
        let err = set
            .complete(
                &key("asker"),
                Reference::for_prompt("nope"),
                ArgumentInfo::new("name", ""),
                None,
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("asker") && err.contains("nope"), "{err}");
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_and_resource_list_changes_are_events_in_both_eras() {
    for era in [None, Some(MODERN)] {
        let mut fx = Fixture::new();
        fx.stdio("asker", scenario(era));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let set = start(&fx, ConnectionSetOptions::new().with_events(tx)).await;
        call(&set, "new_prompt").await.unwrap();
        let event = wait_event(&mut rx, Duration::from_secs(20), |e| {
            matches!(e, ConnectionEvent::PromptsChanged { .. })
        })
        .await;
        assert_eq!(
            event,
            ConnectionEvent::PromptsChanged {
                server: key("asker")
            }
        );
        let names: Vec<String> = set
            .list_prompts()
            .await
            .items
            .into_iter()
            .map(|p| p.item.name)
            .collect();
        assert_eq!(names, ["greet", "later"], "{era:?}");
        call(&set, "new_resource").await.unwrap();
        let event = wait_event(&mut rx, Duration::from_secs(20), |e| {
            matches!(e, ConnectionEvent::ResourcesChanged { .. })
        })
        .await;
        assert_eq!(
            event,
            ConnectionEvent::ResourcesChanged {
                server: key("asker")
            }
        );
        let uris: Vec<String> = set
            .list_resources()
            .await
            .items
            .into_iter()
            .map(|r| r.item.uri)
            .collect();
        assert_eq!(uris, ["file:///later.md"], "{era:?}");
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configured_log_level_is_sent_to_servers_that_offer_logging() {
    let mut fx = Fixture::new();
    fx.stdio_with("asker", scenario(None), |c| {
        c.with_log_level(Some(mcp_catalog::LogLevel::Warning))
    });
    let set = start(&fx, ConnectionSetOptions::new()).await;
    // An info message is below the level: the server sends nothing.
    assert_eq!(call(&set, "log").await.unwrap(), json!({"sent": 0}));
    let log = RecordedRequest::read_log(fx.request_log("asker"));
    let set_level: Vec<_> = log
        .iter()
        .filter(|r| r.method == "logging/setLevel")
        .map(|r| r.params["level"].clone())
        .collect();
    assert_eq!(set_level, [json!("warning")]);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// The `ServerLog` events left in `rx` once its set is gone.
async fn logs_left(mut rx: mpsc::UnboundedReceiver<ConnectionEvent>) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(event) = rx.recv().await {
        if let ConnectionEvent::ServerLog { data, .. } = event {
            out.push(data);
        }
    }
    out
}

/// Sets that share a connection and answer server requests take turns on it; a log
/// message read while one set's call runs is that set's alone. (Sets that answer nothing
/// do not take turns; their calls overlap, and a stdio server's log message, which does
/// not say whose call it belongs to, goes to every set.) Over stdio only: a streamable-HTTP
/// server may send a call's log message on its session's own stream, which is not ordered
/// with the call's reply (with rmcp's server, now and then one went to the next call).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_written_during_one_sessions_call_reaches_that_session_only() {
    let mut fx = Fixture::new();
    let mut scenario = scenario(None);
    for who in ["a", "b"] {
        scenario = scenario.with_tool(ToolSpec::new(
            format!("log_{who}"),
            Behavior::Log {
                level: "info".to_owned(),
                logger: None,
                data: json!(who),
                count: 1,
            },
        ));
    }
    fx.stdio("asker", scenario);
    let catalog = fx.catalog();
    let pool = ServerPool::new();
    let (tx_a, rx_a) = mpsc::unbounded_channel();
    let (tx_b, rx_b) = mpsc::unbounded_channel();
    // The sets answer server requests (sampling), so their calls take turns on the shared
    // connection and each log message is known to belong to the call running.
    let seen = Arc::default();
    let options = |who, tx| {
        model(who, None, &seen)
            .with_events(tx)
            .with_shared_pool(pool.clone())
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
    };
    let a = ConnectionSet::start(&catalog, options("A", tx_a));
    let b = ConnectionSet::start(&catalog, options("B", tx_b));
    assert_eq!(a.wait_startup().await.ready(), 1);
    assert_eq!(b.wait_startup().await.ready(), 1);
    for _ in 0..3 {
        let (ra, rb) = tokio::join!(call(&a, "log_a"), call(&b, "log_b"));
        ra.unwrap();
        rb.unwrap();
    }
    a.shutdown().await;
    b.shutdown().await;
    drop((a, b));
    assert_eq!(logs_left(rx_a).await, [json!("a"), json!("a"), json!("a")]);
    assert_eq!(logs_left(rx_b).await, [json!("b"), json!("b"), json!("b")]);
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_sampling_request_is_refused_as_invalid_and_the_model_never_sees_it() {
    let mut fx = Fixture::new();
    let odd = |name: &str, params: Value| ToolSpec::new(name, Behavior::SampleRaw { params });
    let scenario = scenario(None)
        .with_tool(odd(
            "video",
            json!({"messages": [{"role": "user", "content": {"type": "video", "url": "x"}}],
                   "maxTokens": 10}),
        ))
        .with_tool(odd("no_tokens", json!({"messages": []})))
        .with_tool(odd(
            "unpaired",
            json!({"messages": [{"role": "user", "content":
                {"type": "tool_result", "toolUseId": "nope", "content": []}}],
                   "maxTokens": 10}),
        ));
    fx.stdio("asker", scenario);
    let seen = Arc::default();
    let set = start(&fx, model("A", None, &seen)).await;
    for tool in ["video", "no_tokens", "unpaired"] {
        let answer = call(&set, tool).await.unwrap();
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("malformed sampling/createMessage request"),
            "{tool}: {answer}"
        );
    }
    assert!(
        seen.lock().unwrap().is_empty(),
        "the model saw a malformed request"
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// A 2026-era server's calls take no turns, and over stdio its log message does not say
/// whose call it belongs to: while the calls in flight are one set's it is that set's,
/// and no other set attached to the connection sees it (the other set once received
/// every line a call of the first one wrote).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_era_calls_log_reaches_only_the_session_whose_call_wrote_it() {
    let mut fx = Fixture::new();
    let mut scenario = scenario(Some(MODERN));
    for who in ["a", "b"] {
        scenario = scenario.with_tool(ToolSpec::new(
            format!("log_{who}"),
            Behavior::Log {
                level: "info".to_owned(),
                logger: None,
                data: json!(who),
                count: 1,
            },
        ));
    }
    fx.stdio("asker", scenario);
    let catalog = fx.catalog();
    let pool = ServerPool::new();
    let (tx_a, rx_a) = mpsc::unbounded_channel();
    let (tx_b, rx_b) = mpsc::unbounded_channel();
    let options = |tx| {
        ConnectionSetOptions::new()
            .with_events(tx)
            .with_shared_pool(pool.clone())
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
    };
    let a = ConnectionSet::start(&catalog, options(tx_a));
    let b = ConnectionSet::start(&catalog, options(tx_b));
    assert_eq!(a.wait_startup().await.ready(), 1);
    assert_eq!(b.wait_startup().await.ready(), 1);
    assert_eq!(pool.stats().starts, 1, "one process for both");
    call(&a, "log_a").await.unwrap();
    call(&a, "log_a").await.unwrap();
    call(&b, "log_b").await.unwrap();
    a.shutdown().await;
    b.shutdown().await;
    drop((a, b));
    assert_eq!(logs_left(rx_a).await, [json!("a"), json!("a")]);
    assert_eq!(logs_left(rx_b).await, [json!("b")]);
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

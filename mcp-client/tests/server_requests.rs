//! What a server asks of the host on one `Client`, in both eras: elicitations and sampling
//! routed to the connection's `ServerRequests` (a 2025-11-25 server's requests of its own,
//! a 2026-07-28 server's `input_required` rounds), roots from the settings, nothing
//! announced or answered without them, malformed requests refused as invalid before the
//! host sees them, a 2026 call's questions handed back and resumed on another connection,
//! log messages on `server_logs()` (a flood bounded and counted) and list changes
//! announced. Against the `mcp-fake-server` binary over stdio and the testkit's HTTP
//! server: the counterparts, at the client level, of
//! `mcp-connections/tests/{input_requests,server_requests}.rs` and the malformed
//! elicitation of `misbehave.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]
#![expect(
    deprecated,
    reason = "rmcp marks sampling deprecated (SEP-2577), yet MCP 2025-11-25 defines it"
)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{
    BoxFuture, CallSettings, Client, ClientSettings, DeclineRequests, HttpTarget, Root,
    SamplingRefusal, ServerRequests, Target,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    Behavior, HttpFakeServer, PromptSpec, RecordedRequest, ResourceSpec, Scenario, TestHome,
    ToolSpec,
};
use pretty_assertions::assert_eq;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, LoggingLevel, Role, SamplingMessage, SamplingMessageContentBlock,
};
use serde_json::{Map, Value, json};
use support::{PATIENCE, connect, in_era, stdio};

const CALL: Duration = Duration::from_secs(20);
const MODERN: Option<&str> = Some("2026-07-28");

/// Log messages the `flood` tool sends in one call.
const FLOOD: u32 = 10_000;

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

/// A server that elicits, asks for roots and samples, logs, and changes its prompts and
/// resources.
fn scenario() -> Scenario {
    let mut scenario = Scenario::new("asker")
        .with_tool(ToolSpec::new(
            "ask",
            Behavior::ElicitForm {
                message: "Who are you?".to_owned(),
                schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            },
        ))
        .with_tool(ToolSpec::new("roots", Behavior::ListRoots))
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
            "flood",
            Behavior::Log {
                level: "warning".to_owned(),
                logger: None,
                data: json!("spam"),
                count: FLOOD,
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
        .with_prompt(PromptSpec::new("greet", "Hello"));
    scenario.capabilities = scenario
        .capabilities
        .with_logging(true)
        .with_prompts_list_changed(true)
        .with_resources_list_changed(true);
    scenario
}

/// Accepts elicitations with a name and answers sampling with its model (or a tool use),
/// recording what it was asked.
#[derive(Default)]
struct Host {
    use_tool: Option<&'static str>,
    elicited: Mutex<Vec<(String, String)>>,
    sampled: Mutex<Vec<(String, u32)>>,
}

impl ServerRequests for Host {
    fn elicit<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        let message = match &request {
            ElicitRequestParams::FormElicitationParams { message, .. }
            | ElicitRequestParams::UrlElicitationParams { message, .. } => message.clone(),
            other => format!("{other:?}"),
        };
        self.elicited
            .lock()
            .unwrap()
            .push((server.to_string(), message));
        Box::pin(async {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}))
        })
    }

    fn create_message<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, SamplingRefusal>> {
        self.sampled
            .lock()
            .unwrap()
            .push((server.to_string(), request.max_tokens));
        let message = match self.use_tool {
            Some(tool) => SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::tool_use("c1", tool, Map::new()),
            ),
            None => SamplingMessage::assistant_text(format!("hi {}", request.max_tokens)),
        };
        let mut answer = CreateMessageResult::new(message, "model-A".to_owned());
        if self.use_tool.is_some() {
            answer = answer.with_stop_reason(CreateMessageResult::STOP_REASON_TOOL_USE);
        }
        Box::pin(async move { Ok(answer) })
    }
}

fn roots() -> Arc<[Root]> {
    Arc::from(vec![
        Root::new("file:///work/project").with_name("project"),
        Root::new("file:///tmp/scratch"),
    ])
}

/// Settings that offer elicitation, sampling and [`roots`].
fn answering() -> ClientSettings {
    ClientSettings::new()
        .with_elicitation(true)
        .with_sampling(true)
        .with_roots(roots())
}

async fn call(client: &Client, tool: &str) -> Value {
    client
        .call_tool(tool, None, CallSettings::new(CALL))
        .await
        .unwrap()
        .structured_content
        .unwrap_or(Value::Null)
}

/// The `tools/call` requests of `log` as (tool, inputResponses, requestState).
fn calls(log: &[RecordedRequest]) -> Vec<(String, Value, Value)> {
    log.iter()
        .filter(|r| r.method == "tools/call")
        .map(|r| {
            (
                r.params["name"].as_str().unwrap_or_default().to_owned(),
                r.params["inputResponses"].clone(),
                r.params["requestState"].clone(),
            )
        })
        .collect()
}

/// The host answers the elicitation and the sampling, and the roots come back, in order;
/// over the wire each era's way (requests of the server's own in 2025, a retry carrying
/// the answer and the state unmodified in 2026).
async fn exercise(
    client: &Client,
    host: &Host,
    era: Option<&str>,
    log: impl Fn() -> Vec<RecordedRequest>,
) {
    assert_eq!(
        call(client, "ask").await,
        json!({"action": "accept", "content": {"name": "Ada"}}),
        "{era:?}"
    );
    assert_eq!(
        *host.elicited.lock().unwrap(),
        [("asker".to_owned(), "Who are you?".to_owned())]
    );
    let roots = json!({"roots": [
        {"uri": "file:///work/project", "name": "project"},
        {"uri": "file:///tmp/scratch"},
    ]});
    assert_eq!(call(client, "roots").await, roots, "{era:?}");
    let answer = call(client, "sample").await;
    // maxTokens reaches the host as the server asked, however large.
    assert_eq!(
        answer["result"]["content"]["text"],
        json!("hi 4000000000"),
        "{era:?}"
    );
    assert_eq!(answer["result"]["model"], json!("model-A"));
    assert_eq!(
        *host.sampled.lock().unwrap(),
        [("asker".to_owned(), 4_000_000_000)]
    );

    let log = log();
    let sent = calls(&log);
    match era {
        None => {
            let names: Vec<&str> = sent.iter().map(|(n, _, _)| n.as_str()).collect();
            assert_eq!(names, ["ask", "roots", "sample"]);
            let init = log.iter().find(|r| r.method == "initialize").unwrap();
            let capabilities = &init.params["capabilities"];
            assert_eq!(capabilities["roots"], json!({}), "{init:?}");
            assert_eq!(capabilities["sampling"], json!({"tools": {}}), "{init:?}");
            assert!(capabilities["elicitation"].is_object(), "{init:?}");
        }
        Some(_) => {
            let elicited = json!({"action": "accept", "content": {"name": "Ada"}});
            assert_eq!(
                sent[..4],
                [
                    ("ask".to_owned(), Value::Null, Value::Null),
                    (
                        "ask".to_owned(),
                        json!({"input": elicited}),
                        json!("ask/round-1")
                    ),
                    ("roots".to_owned(), Value::Null, Value::Null),
                    (
                        "roots".to_owned(),
                        json!({"input": roots}),
                        json!("roots/round-1")
                    ),
                ],
                "{era:?}"
            );
            assert_eq!(sent.len(), 6, "an input_required round for the sample too");
            assert_eq!(sent[5].1["input"]["model"], json!("model-A"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_servers_of_both_eras_get_elicitations_roots_and_samples_answered() {
    for era in [None, MODERN] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, in_era(scenario(), era));
        let host = Arc::new(Host::default());
        let client = connect(
            "asker",
            server.target.clone(),
            answering(),
            Arc::clone(&host) as Arc<dyn ServerRequests>,
        )
        .await;
        exercise(&client, &host, era, || {
            RecordedRequest::read_log(&server.log)
        })
        .await;
        client.shutdown().await;
        server.assert_gone().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_servers_of_both_eras_get_elicitations_roots_and_samples_answered() {
    for era in [None, MODERN] {
        let web = HttpFakeServer::start(in_era(scenario(), era))
            .await
            .unwrap();
        let host = Arc::new(Host::default());
        let client = connect(
            "asker",
            Target::Http(HttpTarget::new(web.url())),
            answering(),
            Arc::clone(&host) as Arc<dyn ServerRequests>,
        )
        .await;
        exercise(&client, &host, era, || web.requests()).await;
        client.shutdown().await;
        web.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_roots_or_handlers_nothing_is_announced_and_answers_are_empty_or_declined() {
    for era in [None, MODERN] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, in_era(scenario(), era));
        let client = connect(
            "asker",
            server.target.clone(),
            ClientSettings::new(),
            Arc::new(DeclineRequests),
        )
        .await;
        assert_eq!(
            call(&client, "roots").await,
            json!({"roots": []}),
            "{era:?}"
        );
        assert_eq!(
            call(&client, "ask").await,
            json!({"action": "decline"}),
            "{era:?}"
        );
        match era {
            None => {
                let answer = call(&client, "sample").await;
                assert_eq!(
                    answer["error"],
                    json!({"code": -1, "message": "this client does not offer sampling"})
                );
                let log = server.requests("initialize");
                let capabilities = &log[0].params["capabilities"];
                assert_eq!(capabilities.get("roots"), None, "{capabilities}");
                assert_eq!(capabilities.get("sampling"), None, "{capabilities}");
            }
            Some(_) => {
                let err = client
                    .call_tool("sample", None, CallSettings::new(CALL))
                    .await
                    .unwrap_err();
                assert!(
                    matches!(&err, mcp_client::RequestError::Declined { detail }
                        if detail.contains("this client does not offer sampling")),
                    "{err:?}"
                );
            }
        }
        client.shutdown().await;
        server.assert_gone().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_tool_use_is_checked_against_the_tools_the_server_offered() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let host = Arc::new(Host {
        use_tool: Some("weather"),
        ..Host::default()
    });
    let client = connect(
        "asker",
        server.target.clone(),
        answering(),
        Arc::clone(&host) as Arc<dyn ServerRequests>,
    )
    .await;
    let answer = call(&client, "sample_tools").await;
    assert_eq!(answer["result"]["stopReason"], json!("toolUse"));
    assert_eq!(answer["result"]["content"]["name"], json!("weather"));
    // The same answer to a request without tools is not passed to the server.
    let answer = call(&client, "sample").await;
    assert_eq!(answer["error"]["code"], json!(-1));
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("did not offer"), "{message}");
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_are_refused_as_invalid_before_the_host_sees_them() {
    let raw_sample =
        |name: &str, params: Value| ToolSpec::new(name, Behavior::SampleRaw { params });
    let raw_elicit =
        |name: &str, params: Value| ToolSpec::new(name, Behavior::ElicitRaw { params });
    let scenario = scenario()
        .with_tool(raw_sample(
            "video",
            json!({"messages": [{"role": "user", "content": {"type": "video", "url": "x"}}],
                   "maxTokens": 10}),
        ))
        .with_tool(raw_sample("no_tokens", json!({"messages": []})))
        .with_tool(raw_sample(
            "unpaired",
            json!({"messages": [{"role": "user", "content":
                {"type": "tool_result", "toolUseId": "nope", "content": []}}],
                   "maxTokens": 10}),
        ))
        // A form request without `requestedSchema`.
        .with_tool(raw_elicit(
            "malformed",
            json!({"mode": "form", "message": "Your name?"}),
        ));
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario);
    let host = Arc::new(Host::default());
    let client = connect(
        "asker",
        server.target.clone(),
        answering(),
        Arc::clone(&host) as Arc<dyn ServerRequests>,
    )
    .await;
    for tool in ["video", "no_tokens", "unpaired"] {
        let answer = call(&client, tool).await;
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("malformed sampling/createMessage request"),
            "{tool}: {answer}"
        );
    }
    let answer = call(&client, "malformed").await;
    let error = &answer["error"];
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("malformed elicitation/create request: "),
        "{error}"
    );
    assert!(
        host.sampled.lock().unwrap().is_empty(),
        "the model saw a malformed request"
    );
    assert!(
        host.elicited.lock().unwrap().is_empty(),
        "the user saw a malformed request"
    );
    client.shutdown().await;
    server.assert_gone().await;
}

/// With the input handed back, a 2026-era server's `input_required` ends the call with its
/// requests and state (the host is not asked); another connection, as another process
/// would, resumes it with the answer and the state, and the server sees one retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handed_back_call_is_resumed_on_another_connection() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, in_era(scenario(), MODERN));
    let host = Arc::new(Host::default());
    let first = connect(
        "asker",
        server.target.clone(),
        answering(),
        Arc::clone(&host) as Arc<dyn ServerRequests>,
    )
    .await;
    let handed = CallSettings::new(CALL).with_input_handed_back(true);
    let err = first
        .call_tool("ask", None, handed.clone())
        .await
        .unwrap_err();
    let asked = err
        .input_required()
        .unwrap_or_else(|| panic!("{err:?}"))
        .clone();
    assert_eq!(asked["requestState"], json!("ask/round-1"));
    assert_eq!(
        asked["inputRequests"]["input"]["method"],
        json!("elicitation/create")
    );
    assert!(host.elicited.lock().unwrap().is_empty());
    first.shutdown().await;

    let second = connect(
        "asker",
        server.target.clone(),
        answering(),
        Arc::clone(&host) as Arc<dyn ServerRequests>,
    )
    .await;
    let answer = json!({"action": "accept", "content": {"name": "Grace"}});
    let responses = [("input".to_owned(), answer.clone())].into_iter().collect();
    let resumed = second
        .call_tool(
            "ask",
            None,
            handed.with_resume(Some(responses), Some("ask/round-1".to_owned())),
        )
        .await
        .unwrap();
    assert_eq!(resumed.structured_content, Some(answer.clone()));
    assert_eq!(
        calls(&RecordedRequest::read_log(&server.log)),
        [
            ("ask".to_owned(), Value::Null, Value::Null),
            (
                "ask".to_owned(),
                json!({"input": answer}),
                json!("ask/round-1")
            ),
        ]
    );
    assert!(host.elicited.lock().unwrap().is_empty());
    second.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_logs_reach_the_host_in_both_eras() {
    for era in [None, MODERN] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, in_era(scenario(), era));
        let client = connect(
            "asker",
            server.target.clone(),
            ClientSettings::new(),
            Arc::new(DeclineRequests),
        )
        .await;
        let mut logs = client.server_logs();
        assert_eq!(call(&client, "log").await, json!({"sent": 1}));
        let log = tokio::time::timeout(PATIENCE, logs.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (
                log.server.to_string(),
                log.level,
                log.logger.as_deref(),
                &log.data,
                log.dropped
            ),
            (
                "asker".to_owned(),
                LoggingLevel::Info,
                Some("db"),
                &json!("connected\n\u{1b}[31mred"),
                0
            ),
            "{era:?}"
        );
        // Control characters are escaped in the text form.
        assert!(!log.text().contains('\u{1b}'), "{:?}", log.text());
        client.shutdown().await;
        server.assert_gone().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_flood_is_bounded_and_what_was_dropped_is_counted() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = connect(
        "asker",
        server.target.clone(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await;
    // A reader that keeps up: the rate limit, not the channel, decides what is dropped.
    let mut logs = client.server_logs();
    let reader = tokio::spawn(async move {
        let marker = json!("connected\n\u{1b}[31mred");
        let (mut delivered, mut dropped) = (0_u64, 0_u64);
        loop {
            match logs.recv().await {
                Ok(log) => {
                    delivered += 1;
                    dropped += log.dropped;
                    if log.data == marker {
                        return (delivered, dropped);
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    panic!("the reader fell {n} behind")
                }
                Err(e) => panic!("{e}"),
            }
        }
    });
    // A bound, not a measurement: the flood takes a while on a busy machine.
    let started = std::time::Instant::now();
    let flood = client
        .call_tool("flood", None, CallSettings::new(Duration::from_secs(300)))
        .await
        .unwrap();
    assert_eq!(flood.structured_content, Some(json!({"sent": FLOOD})));
    let flood = u64::from(FLOOD);
    // The flood is over. One more message carries the count of what was held back; the
    // rate limit's bucket may still be empty when it comes, so it is sent until one is
    // let through (each one sent is delivered or counted, up to the one delivered).
    let mut reader = reader;
    let mut markers = 0_u64;
    let (delivered, dropped) = loop {
        assert!(markers < 100, "no marker let through");
        call(&client, "log").await;
        markers += 1;
        if let Ok(counted) = tokio::time::timeout(Duration::from_secs(1), &mut reader).await {
            break counted.unwrap();
        }
    };
    let elapsed = started.elapsed().as_secs() + 1;
    // A marker sent while the reader was taking the one before it is not counted.
    assert!(
        (flood + 1..=flood + markers).contains(&(delivered + dropped)),
        "every message delivered or counted: {delivered} + {dropped}, {markers} markers"
    );
    // No more than the burst and the rate over the time it took.
    let allowed = u64::from(mcp_client::LOG_BURST) + u64::from(mcp_client::LOG_RATE) * elapsed;
    assert!(
        delivered <= allowed && dropped > 0,
        "the rate limit held the flood back: {delivered} delivered in {elapsed} s, {dropped} dropped"
    );
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_and_resource_list_changes_are_announced_in_both_eras() {
    for era in [None, MODERN] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, in_era(scenario(), era));
        let client = connect(
            "asker",
            server.target.clone(),
            ClientSettings::new(),
            Arc::new(DeclineRequests),
        )
        .await;
        let mut prompts = client.prompt_list_changes();
        let mut resources = client.resource_list_changes();
        let (prompts_before, resources_before) =
            (*prompts.borrow_and_update(), *resources.borrow_and_update());

        call(&client, "new_prompt").await;
        tokio::time::timeout(PATIENCE, prompts.changed())
            .await
            .unwrap()
            .unwrap();
        assert!(*prompts.borrow() > prompts_before, "{era:?}");
        let names: Vec<String> = client
            .list_prompts(usize::MAX)
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(names, ["greet", "later"], "{era:?}");

        call(&client, "new_resource").await;
        tokio::time::timeout(PATIENCE, resources.changed())
            .await
            .unwrap()
            .unwrap();
        assert!(*resources.borrow() > resources_before, "{era:?}");
        let uris: Vec<String> = client
            .list_resources(usize::MAX)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.uri.clone())
            .collect();
        assert_eq!(uris, ["file:///later.md"], "{era:?}");
        client.shutdown().await;
        server.assert_gone().await;
    }
}

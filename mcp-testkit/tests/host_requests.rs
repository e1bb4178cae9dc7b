//! What a fake server asks of a host, driven by a plain rmcp client: sampling (a request of
//! the server's own in the 2025-11-25 era, an MRTR round in the 2026-07-28 era), log
//! messages filtered by `logging/setLevel`, completions, and prompt and resource list
//! changes. In process, the stdio binary for sampling, and streamable HTTP for log
//! messages of the 2026-07-28 era.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the fake server binary)"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_testkit::{
    Behavior, CapabilityFlags, Faults, InProcessServer, PromptSpec, ResourceSpec,
    ResourceTemplateSpec, Scenario, ToolSpec,
};
use pretty_assertions::assert_eq;
use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, ClientCapabilities, ClientConfig, CompleteRequestParams,
    CompletionContext, Implementation, ProtocolVersion, Reference, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService, ServiceError};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData as McpError};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

const MODERN: &str = "2026-07-28";
/// How long a test waits for a notification that must come.
const PATIENCE: Duration = Duration::from_secs(10);

/// What the host answers the model's turn with.
fn model_answer() -> Value {
    json!({
        "role": "assistant",
        "content": {"type": "text", "text": "A summary."},
        "model": "fake-model",
        "stopReason": "endTurn",
    })
}

/// A host: answers sampling (when `sampling`), and reports what it was sent.
#[derive(Clone)]
struct Host {
    sampling: bool,
    sampled: Arc<Mutex<Vec<Value>>>,
    logs: mpsc::UnboundedSender<Value>,
    prompts_changed: mpsc::UnboundedSender<()>,
    resources_changed: mpsc::UnboundedSender<()>,
}

/// The receiving ends of a [`Host`].
struct Seen {
    sampled: Arc<Mutex<Vec<Value>>>,
    logs: mpsc::UnboundedReceiver<Value>,
    prompts_changed: mpsc::UnboundedReceiver<()>,
    resources_changed: mpsc::UnboundedReceiver<()>,
}

fn host(sampling: bool) -> (Host, Seen) {
    let sampled = Arc::new(Mutex::new(Vec::new()));
    let (logs, logs_rx) = mpsc::unbounded_channel();
    let (prompts_changed, prompts_rx) = mpsc::unbounded_channel();
    let (resources_changed, resources_rx) = mpsc::unbounded_channel();
    let host = Host {
        sampling,
        sampled: Arc::clone(&sampled),
        logs,
        prompts_changed,
        resources_changed,
    };
    let seen = Seen {
        sampled,
        logs: logs_rx,
        prompts_changed: prompts_rx,
        resources_changed: resources_rx,
    };
    (host, seen)
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.sampling {
            json!({"sampling": {"tools": {}}})
        } else {
            json!({})
        };
        let capabilities: ClientCapabilities = serde_json::from_value(capabilities).unwrap();
        ClientConfig::new(capabilities, Implementation::new("host-requests", "1.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    #[expect(
        deprecated,
        reason = "sampling is deprecated by SEP-2577 in rmcp; the fake server still sends it"
    )]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, McpError> {
        if !self.sampling {
            return Err(McpError::method_not_found::<
                rmcp::model::CreateMessageRequestMethod,
            >());
        }
        let mut seen = serde_json::to_value(&params).unwrap();
        // rmcp adds a progress token of its own to every request.
        if let Some(map) = seen.as_object_mut() {
            map.remove("_meta");
        }
        self.sampled.lock().unwrap().push(seen);
        Ok(serde_json::from_value(model_answer()).unwrap())
    }

    #[expect(
        deprecated,
        reason = "logging is deprecated by SEP-2577 in rmcp; the fake server still sends it"
    )]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.logs.send(serde_json::to_value(&params).unwrap());
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.prompts_changed.send(());
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.resources_changed.send(());
    }
}

type Client = RunningService<RoleClient, Host>;

/// Connects `host` to `scenario` in process, in the 2026-07-28 era when `modern`.
async fn connect(scenario: Scenario, host: Host, modern: bool) -> (Client, InProcessServer) {
    if modern {
        let scenario = scenario.with_faults(Faults::new().with_protocol_version(MODERN));
        let (transport, server) = InProcessServer::start(scenario);
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        let client = host.serve_with_lifecycle(transport, lifecycle).await;
        (client.expect("discover"), server)
    } else {
        let (transport, server) = InProcessServer::start(scenario);
        (host.serve(transport).await.expect("initialize"), server)
    }
}

async fn call(client: &Client, tool: &str) -> Value {
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()))
        .await
        .expect("tools/call");
    result.structured_content.expect("structured content")
}

fn sampler() -> Scenario {
    Scenario::new("sampler").with_tool(ToolSpec::new(
        "think",
        Behavior::Sample {
            prompt: "Summarise the notes.".into(),
            max_tokens: 200,
            tools: vec!["search".into(), "read".into()],
        },
    ))
}

/// The `sampling/createMessage` params the `think` tool sends.
fn sampled_params() -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise the notes."}}],
        "maxTokens": 200,
        "tools": [
            {"name": "search", "inputSchema": {"type": "object"}},
            {"name": "read", "inputSchema": {"type": "object"}},
        ],
    })
}

#[tokio::test]
async fn a_sampling_request_is_answered_by_the_hosts_handler() {
    let (host, seen) = host(true);
    let (client, server) = connect(sampler(), host, false).await;
    assert_eq!(
        call(&client, "think").await,
        json!({"result": model_answer()})
    );
    assert_eq!(*seen.sampled.lock().unwrap(), [sampled_params()]);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_host_that_refuses_sampling_is_reported_as_its_error() {
    let (host, seen) = host(false);
    let (client, server) = connect(sampler(), host, false).await;
    let answer = call(&client, "think").await;
    assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
    assert!(seen.sampled.lock().unwrap().is_empty());
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn in_the_2026_era_sampling_is_an_input_request_of_the_call() {
    let (host, seen) = host(true);
    let (client, server) = connect(sampler(), host, true).await;
    // rmcp's client answers the round through the handler and calls again.
    assert_eq!(
        call(&client, "think").await,
        json!({"result": model_answer()})
    );
    assert_eq!(*seen.sampled.lock().unwrap(), [sampled_params()]);
    let calls: Vec<Value> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "tools/call")
        .map(|r| r.params)
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1]["requestState"], json!("think/round-1"));
    let mut answered = calls[1]["inputResponses"]["input"].clone();
    // A 2026-era result says it is complete.
    answered.as_object_mut().unwrap().remove("resultType");
    assert_eq!(answered, model_answer());
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn sampling_over_stdio() {
    let home = common::temp();
    let file = home.join("sampler.json");
    sampler().write_json(&file).unwrap();
    let mut server = common::spawn(&["--scenario", &common::path_arg(&file)], Stdio::null());
    let (host, seen) = host(true);
    let client = host.serve(server.transport()).await.expect("initialize");
    assert_eq!(
        call(&client, "think").await,
        json!({"result": model_answer()})
    );
    assert_eq!(*seen.sampled.lock().unwrap(), [sampled_params()]);
    client.cancel().await.unwrap();
    server.kill_and_check().await;
}

fn logger() -> Scenario {
    let log = |level: &str, count: u32| Behavior::Log {
        level: level.into(),
        logger: Some("db".into()),
        data: json!({"query": level}),
        count,
    };
    Scenario::new("logger")
        .with_capabilities(CapabilityFlags::default().with_logging(true))
        .with_tool(ToolSpec::new("info", log("info", 1)))
        .with_tool(ToolSpec::new("errors", log("error", 2)))
        .with_tool(ToolSpec::new("warning", log("warning", 1)))
}

async fn next_log(seen: &mut Seen) -> Value {
    tokio::time::timeout(PATIENCE, seen.logs.recv())
        .await
        .expect("a log message in time")
        .expect("the host is alive")
}

/// Sets the level `warning`, then calls `info` (below it), `errors` and `warning`: only the
/// last three messages arrive, in order.
async fn logs_at_the_level_set(modern: bool) {
    let (host, mut seen) = host(false);
    let (client, server) = connect(logger(), host, modern).await;
    assert_eq!(server.server().log_level(), None);
    #[expect(
        deprecated,
        reason = "logging/setLevel is deprecated by SEP-2577 in rmcp"
    )]
    let set = client.set_level(rmcp::model::SetLevelRequestParams::new(
        rmcp::model::LoggingLevel::Warning,
    ));
    set.await.unwrap();
    assert_eq!(server.server().log_level().as_deref(), Some("warning"));
    let recorded = server.server().wait_for_request("logging/setLevel").await;
    assert_eq!(recorded.params["level"], json!("warning"));

    assert_eq!(call(&client, "info").await, json!({"sent": 0}));
    assert_eq!(call(&client, "errors").await, json!({"sent": 2}));
    assert_eq!(call(&client, "warning").await, json!({"sent": 1}));
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(next_log(&mut seen).await);
    }
    // The single-threaded runtime handles notifications in arrival order: an `info`
    // message, had it been sent, would have come first.
    assert_eq!(
        got,
        [
            json!({"level": "error", "logger": "db", "data": {"n": 1, "data": {"query": "error"}}}),
            json!({"level": "error", "logger": "db", "data": {"n": 2, "data": {"query": "error"}}}),
            json!({"level": "warning", "logger": "db", "data": {"query": "warning"}}),
        ]
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn log_messages_below_the_level_set_are_not_sent() {
    logs_at_the_level_set(false).await;
}

#[tokio::test]
async fn in_the_2026_era_log_messages_travel_with_the_call() {
    logs_at_the_level_set(true).await;
}

#[tokio::test]
async fn without_a_level_every_message_is_sent() {
    let (host, mut seen) = host(false);
    let (client, server) = connect(logger(), host, false).await;
    assert_eq!(call(&client, "info").await, json!({"sent": 1}));
    assert_eq!(
        next_log(&mut seen).await,
        json!({"level": "info", "logger": "db", "data": {"query": "info"}})
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

fn completer() -> Scenario {
    Scenario::new("completer")
        .with_capabilities(CapabilityFlags::default().with_completions(true))
        .with_prompt(
            PromptSpec::new("greet", "Hello {who} from {team}.")
                .with_argument("who")
                .with_argument("team")
                .with_completions("who", ["Ada", "Alan", "Grace", "Alonzo"])
                .with_completions("team", (0..150).map(|i| format!("team-{i:03}"))),
        )
        .with_resource_template(
            ResourceTemplateSpec::new("file:///{path}", "file")
                .with_completions("path", ["notes.md", "todo.md", "notes-old.md"]),
        )
}

fn complete(reference: Reference, argument: &str, value: &str) -> CompleteRequestParams {
    CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value))
}

#[tokio::test]
async fn completions_answer_the_values_with_the_typed_prefix() {
    let (host, _seen) = host(false);
    let (client, server) = connect(completer(), host, false).await;
    let info = client.peer().peer_info().unwrap();
    assert_eq!(
        serde_json::to_value(&info.capabilities.completions).unwrap(),
        json!({})
    );

    let context =
        CompletionContext::with_arguments([("team".to_owned(), "core".to_owned())].into());
    let request = complete(Reference::for_prompt("greet"), "who", "Al").with_context(context);
    let answer = client.complete(request).await.unwrap();
    assert_eq!(
        serde_json::to_value(&answer.completion).unwrap(),
        json!({"values": ["Alan", "Alonzo"], "total": 2, "hasMore": false})
    );
    let recorded = server
        .server()
        .wait_for_request("completion/complete")
        .await;
    assert_eq!(
        recorded.params["context"],
        json!({"arguments": {"team": "core"}})
    );
    assert_eq!(
        recorded.params["ref"],
        json!({"type": "ref/prompt", "name": "greet"})
    );

    let many = client
        .complete(complete(Reference::for_prompt("greet"), "team", "team-"))
        .await
        .unwrap()
        .completion;
    assert_eq!(many.values.len(), 100);
    assert_eq!(many.values[99], "team-099");
    assert_eq!((many.total, many.has_more), (Some(150), Some(true)));

    let files = client
        .complete(complete(
            Reference::for_resource("file:///{path}"),
            "path",
            "notes",
        ))
        .await
        .unwrap()
        .completion;
    assert_eq!(files.values, ["notes.md", "notes-old.md"]);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn completing_an_unknown_prompt_or_argument_is_an_error_naming_it() {
    let (host, _seen) = host(false);
    let (client, server) = connect(completer(), host, false).await;
    let error = |result: Result<_, ServiceError>| match result {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.into_owned()),
        other => panic!("expected an error answer, got {other:?}"),
    };
    let unknown = client
        .complete(complete(Reference::for_prompt("farewell"), "who", ""))
        .await;
    assert_eq!(
        error(unknown),
        (-32602, "fake server has no prompt \"farewell\"".to_owned())
    );
    let argument = client
        .complete(complete(Reference::for_prompt("greet"), "mood", ""))
        .await;
    assert_eq!(
        error(argument),
        (
            -32602,
            "prompt \"greet\" has no completions for argument \"mood\"".to_owned()
        )
    );
    let template = client
        .complete(complete(
            Reference::for_resource("file:///{other}"),
            "x",
            "",
        ))
        .await;
    assert_eq!(error(template).0, -32602);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

fn changer() -> Scenario {
    Scenario::new("changer")
        .with_capabilities(
            CapabilityFlags::default()
                .with_prompts_list_changed(true)
                .with_resources_list_changed(true),
        )
        .with_prompt(PromptSpec::new("greet", "Hello."))
        .with_resource(ResourceSpec::new("file:///notes.md", "notes", "# Notes"))
        .with_tool(ToolSpec::new(
            "reprompt",
            Behavior::ChangePrompts {
                add: vec![PromptSpec::new("bye", "Bye {who}.").with_argument("who")],
                remove: vec!["greet".into()],
            },
        ))
        .with_tool(ToolSpec::new(
            "refile",
            Behavior::ChangeResources {
                add: vec![ResourceSpec::new("file:///new.md", "new", "fresh")],
                remove: vec!["file:///notes.md".into()],
            },
        ))
}

async fn prompt_names(client: &Client) -> Vec<String> {
    let prompts = client.list_all_prompts().await.unwrap();
    prompts.into_iter().map(|p| p.name).collect()
}

#[tokio::test]
async fn a_prompt_list_change_reaches_the_client() {
    let (host, mut seen) = host(false);
    let (client, server) = connect(changer(), host, false).await;
    assert_eq!(prompt_names(&client).await, ["greet"]);
    assert_eq!(call(&client, "reprompt").await, json!({"prompts": ["bye"]}));
    tokio::time::timeout(PATIENCE, seen.prompts_changed.recv())
        .await
        .expect("prompts/list_changed in time")
        .unwrap();
    assert_eq!(prompt_names(&client).await, ["bye"]);
    let prompt = client
        .get_prompt(
            rmcp::model::GetPromptRequestParams::new("bye")
                .with_arguments(common::args(json!({"who": "Ada"}))),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&prompt.messages).unwrap(),
        json!([{"role": "user", "content": {"type": "text", "text": "Bye Ada."}}])
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_resource_list_change_reaches_the_client() {
    let (host, mut seen) = host(false);
    let (client, server) = connect(changer(), host, false).await;
    assert_eq!(
        call(&client, "refile").await,
        json!({"resources": ["file:///new.md"]})
    );
    tokio::time::timeout(PATIENCE, seen.resources_changed.recv())
        .await
        .expect("resources/list_changed in time")
        .unwrap();
    let uris: Vec<String> = client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(uris, ["file:///new.md"]);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn in_the_2026_era_a_prompt_list_change_reaches_the_listening_client() {
    let (host, _seen) = host(false);
    let (client, server) = connect(changer(), host, true).await;
    let filter: SubscriptionFilter =
        serde_json::from_value(json!({"promptsListChanged": true, "toolsListChanged": true}))
            .unwrap();
    let mut subscription = client.peer().listen(filter).await.unwrap();
    // Tool list changes are not announced by this scenario, so they are not accepted.
    assert_eq!(
        serde_json::to_value(subscription.acknowledged()).unwrap(),
        json!({"promptsListChanged": true})
    );
    assert_eq!(call(&client, "reprompt").await, json!({"prompts": ["bye"]}));
    let notification = tokio::time::timeout(PATIENCE, subscription.next())
        .await
        .expect("a notification in time")
        .unwrap()
        .expect("the subscription is open");
    let notification = serde_json::to_value(&notification).unwrap();
    assert_eq!(
        notification["method"],
        json!("notifications/prompts/list_changed")
    );
    assert_eq!(prompt_names(&client).await, ["bye"]);
    drop(subscription);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn in_the_2026_era_over_http_log_messages_ride_the_calls_response() {
    let scenario = logger().with_faults(Faults::new().with_protocol_version(MODERN));
    let server = mcp_testkit::HttpFakeServer::start(scenario).await.unwrap();
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            server.url(),
        );
    let transport =
        rmcp::transport::StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let (host, mut seen) = host(false);
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = host
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("discover");
    assert_eq!(call(&client, "errors").await, json!({"sent": 2}));
    for n in 1..=2 {
        assert_eq!(
            next_log(&mut seen).await,
            json!({"level": "error", "logger": "db", "data": {"n": n, "data": {"query": "error"}}})
        );
    }
    client.cancel().await.unwrap();
    server.shutdown().await;
}

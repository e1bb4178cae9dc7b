//! The request spans against the OpenTelemetry semantic conventions for MCP: a capture
//! layer records every span of the client's `tracing` target with its fields, and each
//! test compares the spans of its own server (a name no other test uses) with what the
//! conventions say: span name, kind, method, tool or prompt, transport, protocol version,
//! request id, and the error type of a tool error, a server's error, a protocol fault and
//! a timeout; the 2026 era's `server/discover` handshake.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_catalog::StdioConfig;
use mcp_client::{CallSettings, Client, ClientSettings, DeclineRequests, HttpTarget, Target};
use mcp_testkit::{
    Behavior, HttpFakeServer, PromptSpec, ResourceSpec, Scenario, TestHome, ToolSpec,
};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One captured span: its fields as text, by name, and its parent's `otel.name`.
#[derive(Debug, Clone, Default)]
struct Captured {
    fields: BTreeMap<String, String>,
    parent: Option<String>,
}

impl Captured {
    fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field).map(String::as_str)
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// Every span of the client's target, in creation order.
#[derive(Default)]
struct Capture {
    spans: Mutex<Vec<(u64, Captured)>>,
}

impl<S> tracing_subscriber::Layer<S> for &'static Capture
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().target() != mcp_client::SPAN_TARGET {
            return;
        }
        let mut captured = Captured::default();
        attrs.record(&mut Fields(&mut captured.fields));
        let parent = ctx
            .span(id)
            .and_then(|s| s.parent())
            .map(|p| p.id().into_u64());
        let mut spans = self.spans.lock().unwrap();
        captured.parent = parent.and_then(|p| {
            spans
                .iter()
                .find(|(id, _)| *id == p)
                .and_then(|(_, c)| c.get("otel.name").map(str::to_owned))
        });
        spans.push((id.into_u64(), captured));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.spans.lock().unwrap();
        if let Some((_, captured)) = spans.iter_mut().rev().find(|(i, _)| *i == id.into_u64()) {
            values.record(&mut Fields(&mut captured.fields));
        }
    }
}

/// The capture of this test process (installed once, for every thread).
fn capture() -> &'static Capture {
    static CAPTURE: OnceLock<&'static Capture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture: &'static Capture = Box::leak(Box::default());
        let subscriber = tracing_subscriber::registry().with(capture);
        tracing::subscriber::set_global_default(subscriber).expect("one global subscriber");
        capture
    })
}

/// The spans of server `server` so far.
fn spans_of(server: &str) -> Vec<Captured> {
    capture()
        .spans
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, c)| c.get("mcp.server.name") == Some(server))
        .map(|(_, c)| c.clone())
        .collect()
}

/// The one span named `name` of `server`.
fn span(server: &str, name: &str) -> Captured {
    let found: Vec<Captured> = spans_of(server)
        .into_iter()
        .filter(|c| c.get("otel.name") == Some(name))
        .collect();
    assert_eq!(found.len(), 1, "{name}: {found:#?}");
    found.into_iter().next().unwrap()
}

fn scenario() -> Scenario {
    Scenario::new("otel")
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "broken",
            Behavior::Error {
                message: "it broke".to_owned(),
            },
        ))
        .with_tool(ToolSpec::new("slow", Behavior::Sleep { ms: 60_000 }))
        .with_resource(ResourceSpec::new("file:///notes.txt", "notes", "hello"))
        .with_prompt(PromptSpec::new("greet", "Hello!"))
}

async fn connect(server: &str, target: Target) -> Client {
    capture();
    Client::connect(
        server.parse().unwrap(),
        target,
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await
    .unwrap()
}

fn stdio(home: &TestHome, scenario: Scenario) -> Target {
    let path = home.join("scenario.json");
    scenario.write_json(&path).unwrap();
    let bin = mcp_testkit::fake_server_bin();
    Target::stdio(
        StdioConfig::new(bin.to_string_lossy())
            .with_args(["--scenario".to_owned(), path.to_string_lossy().into_owned()]),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_reads_and_prompts_are_client_spans_named_and_attributed_as_the_conventions_say() {
    let home = TestHome::new().unwrap();
    let client = connect("otel-stdio", stdio(&home, scenario())).await;
    let handshake = span("otel-stdio", "initialize");
    assert_eq!(handshake.get("mcp.method.name"), Some("initialize"));

    let outer = tracing::info_span!("execute_tool echo");
    let call = client.call_tool(
        "echo",
        json!({"secret": "s3cr3t"}).as_object().cloned(),
        CallSettings::new(Duration::from_secs(20)),
    );
    tracing::Instrument::instrument(call, outer).await.unwrap();
    let call = span("otel-stdio", "tools/call echo");
    for (field, value) in [
        ("otel.kind", "client"),
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "echo"),
        ("gen_ai.operation.name", "execute_tool"),
        ("network.transport", "pipe"),
        ("mcp.protocol.version", "2025-11-25"),
    ] {
        assert_eq!(call.get(field), Some(value), "{field}: {call:#?}");
    }
    assert!(call.get("jsonrpc.request.id").is_some(), "{call:#?}");
    assert_eq!(call.get("error.type"), None);
    assert_eq!(call.get("otel.status_code"), None);
    assert!(
        !format!("{call:?}").contains("s3cr3t"),
        "arguments are never recorded"
    );

    let result = client
        .call_tool("broken", None, CallSettings::new(Duration::from_secs(20)))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let broken = span("otel-stdio", "tools/call broken");
    assert_eq!(broken.get("error.type"), Some("tool_error"));
    assert_eq!(broken.get("otel.status_code"), Some("error"));

    let unknown = client
        .call_tool("nope", None, CallSettings::new(Duration::from_secs(20)))
        .await
        .unwrap_err();
    let nope = span("otel-stdio", "tools/call nope");
    let mcp_client::RequestError::Server { code, .. } = unknown else {
        panic!("an unknown tool is the server's error: {unknown}");
    };
    assert_eq!(nope.get("error.type"), Some(code.to_string().as_str()));
    assert_eq!(
        nope.get("rpc.response.status_code"),
        Some(code.to_string().as_str())
    );

    let timeout = client
        .call_tool("slow", None, CallSettings::new(Duration::from_millis(200)))
        .await
        .unwrap_err();
    assert!(timeout.is_timeout());
    assert_eq!(
        span("otel-stdio", "tools/call slow").get("error.type"),
        Some("timeout")
    );

    client.read_resource("file:///notes.txt").await.unwrap();
    let read = span("otel-stdio", "resources/read");
    assert_eq!(read.get("mcp.method.name"), Some("resources/read"));
    assert_eq!(read.get("mcp.resource.uri"), None, "opt-in only");

    client.get_prompt("greet", None).await.unwrap();
    let prompt = span("otel-stdio", "prompts/get greet");
    assert_eq!(prompt.get("gen_ai.prompt.name"), Some("greet"));
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_server_over_http_is_discovered_and_called_over_tcp() {
    let mut faults = mcp_testkit::Faults::default();
    faults.protocol_version = Some("2026-07-28".to_owned());
    let server = HttpFakeServer::start(scenario().with_faults(faults))
        .await
        .unwrap();
    let client = connect("otel-http", Target::Http(HttpTarget::new(server.url()))).await;
    assert!(!spans_of("otel-http").is_empty());
    let discover = span("otel-http", "server/discover");
    assert_eq!(discover.get("network.transport"), Some("tcp"));
    client
        .call_tool("echo", None, CallSettings::new(Duration::from_secs(20)))
        .await
        .unwrap();
    let call = span("otel-http", "tools/call echo");
    assert_eq!(call.get("mcp.protocol.version"), Some("2026-07-28"));
    assert_eq!(call.get("network.transport"), Some("tcp"));
    assert_eq!(call.get("server.address"), Some("127.0.0.1"));
    assert_eq!(
        call.get("server.port"),
        Some(server.addr().port().to_string().as_str())
    );
    assert_eq!(
        call.get("mcp.session.id"),
        None,
        "no session in the 2026 era"
    );
    client.shutdown().await;
    server.shutdown().await;
}

/// A call the server makes a task of: each `tasks/get` is a span of its own under the
/// call's span (the conventions predate tasks; the names follow their style).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_polls_are_spans_under_the_calls_span() {
    let home = TestHome::new().unwrap();
    let scenario = Scenario::new("otel-task")
        .with_capabilities(mcp_testkit::CapabilityFlags::default().with_tasks(true))
        .with_tool(ToolSpec::new(
            "build",
            Behavior::Task {
                work_ms: 100,
                steps: 1,
                end: mcp_testkit::TaskEnd::Complete,
                ask: None,
                poll_interval_ms: Some(20),
                ttl_ms: None,
                garbage_get: false,
            },
        ));
    let client = connect("otel-task", stdio(&home, scenario)).await;
    client
        .call_tool("build", None, CallSettings::new(Duration::from_secs(20)))
        .await
        .unwrap();
    let call = span("otel-task", "tools/call build");
    assert_eq!(call.get("error.type"), None, "{call:#?}");
    let polls: Vec<Captured> = spans_of("otel-task")
        .into_iter()
        .filter(|c| c.get("otel.name") == Some("tasks/get"))
        .collect();
    assert!(!polls.is_empty());
    for poll in &polls {
        assert_eq!(
            poll.parent.as_deref(),
            Some("tools/call build"),
            "{poll:#?}"
        );
        assert_eq!(poll.get("mcp.method.name"), Some("tasks/get"));
    }
    client.shutdown().await;
}

/// A host that opts in gets the call's arguments and result on its span, as the
/// conventions' opt-in attributes, redacted: a member named like a secret is `***`, a URL's
/// query and userinfo are `***`; a call without the option records neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_and_results_are_recorded_redacted_only_when_the_host_opts_in() {
    let home = TestHome::new().unwrap();
    let client = connect("otel-payloads", stdio(&home, scenario())).await;
    let arguments = json!({
        "city": "Paris",
        "api_key": "s3cr3t-key",
        "callback": "https://user:pw@hooks.example/cb?sig=abc",
    });
    let settings = CallSettings::new(Duration::from_secs(20)).with_recorded_payloads(true);
    client
        .call_tool("echo", arguments.as_object().cloned(), settings)
        .await
        .unwrap();
    let call = span("otel-payloads", "tools/call echo");
    let recorded: serde_json::Value =
        serde_json::from_str(call.get("gen_ai.tool.call.arguments").unwrap()).unwrap();
    assert_eq!(
        recorded,
        json!({"city": "Paris", "api_key": "***", "callback": "https://***@hooks.example/cb?***"})
    );
    let result: serde_json::Value =
        serde_json::from_str(call.get("gen_ai.tool.call.result").unwrap()).unwrap();
    assert_eq!(result["structuredContent"]["city"], "Paris", "{result}");
    assert_eq!(result["structuredContent"]["api_key"], "***", "{result}");
    let text = format!("{call:?}");
    for secret in ["s3cr3t-key", "pw@", "sig=abc"] {
        assert!(!text.contains(secret), "{secret} recorded: {text}");
    }

    client
        .call_tool(
            "broken",
            arguments.as_object().cloned(),
            CallSettings::new(Duration::from_secs(20)),
        )
        .await
        .unwrap();
    let plain = span("otel-payloads", "tools/call broken");
    assert_eq!(plain.get("gen_ai.tool.call.arguments"), None, "{plain:#?}");
    assert_eq!(plain.get("gen_ai.tool.call.result"), None, "{plain:#?}");
    client.shutdown().await;
}

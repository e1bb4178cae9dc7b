//! OpenTelemetry export of the real `mcpctl` binary to the testkit's OTLP/HTTP receiver:
//! `mcpctl call` exports its CLIENT span (named and attributed per the conventions for
//! MCP) and the client's metrics, and the `traceparent` the upstream server received is
//! that span's; the standard variables are honoured (service name, headers, the SDK
//! switched off), and a collector that is down fails nothing. Through `mcpctl serve --http`,
//! a client's trace context stops at the gateway (a trace of the gateway's own, linking the
//! client's span; never the client's `tracestate` or `baggage` upstream), and with
//! `--client-trace continue` a Python SDK client calling from inside a trace of its own
//! (both eras) gets the gateway's SERVER span, the upstream CLIENT span and the upstream
//! server's `traceparent` in its trace.
//!
//! Every wait is a bounded poll; mcpctl exports what is left before it exits, so what a
//! finished run exported has arrived.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and a client as a person would"
)]

mod support;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_testkit::{MetricKind, OtlpReceiver, ReceivedSpan};
use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};
use support::Workdir;

/// The bounds of the conventions' duration histograms.
const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// How long a wait for an export may take.
const EXPORT_WAIT: Duration = Duration::from_secs(30);

const TOKEN: &str = "telemetry-token-0123456789abcdef";

/// A configuration with one server `notes` (mcpctl's fake server, MCP 2025-11-25) with a
/// tool that echoes and one that ends as a tool error, logging every request (its
/// `_meta` included) to the returned file.
fn write_config(wd: &Workdir) -> (PathBuf, PathBuf) {
    let log = wd.path().join("notes-requests.jsonl");
    let scenario = json!({
        "tools": [
            {"name": "echo", "behavior": {"kind": "echo"}},
            {"name": "fail", "behavior": {"kind": "error", "message": "disk full"}},
        ],
        "record": {"request_log": log},
    });
    let scenario = support::toml_str(&scenario.to_string());
    let config = wd.write(
        "mcp.toml",
        &format!(
            "[mcp_servers.notes]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {scenario}]\nprotocol = \"2025-11-25\"\ndefault_tools_approval_mode = \"approve\"\n"
        ),
    );
    (config, log)
}

/// The `params._meta` of the upstream server's recorded `tools/call` requests of `tool`.
fn upstream_metas(log: &Path, tool: &str) -> Vec<Value> {
    mcp_testkit::RecordedRequest::read_log(log)
        .into_iter()
        .filter(|r| r.method == "tools/call" && r.params["name"] == tool)
        .map(|r| r.params["_meta"].clone())
        .collect()
}

/// The span named `name`, waited for (bounded).
fn span(runtime: &tokio::runtime::Runtime, receiver: &OtlpReceiver, name: &str) -> ReceivedSpan {
    runtime
        .block_on(receiver.wait_for_span(|s| s.name == name, EXPORT_WAIT))
        .unwrap_or_else(|| {
            panic!(
                "no span {name:?} arrived; these did: {:#?}",
                receiver.spans()
            )
        })
}

/// `attributes` without `jsonrpc.request.id` (whose value is the client's to choose),
/// which must be there.
fn without_request_id(mut attributes: Map<String, Value>) -> Map<String, Value> {
    let id = attributes.remove("jsonrpc.request.id");
    assert!(
        id.is_some(),
        "jsonrpc.request.id is missing: {attributes:?}"
    );
    attributes
}

fn object(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// The `traceparent` of `span`, as W3C trace context writes it (sampled).
fn traceparent(span: &ReceivedSpan) -> String {
    format!("00-{}-{}-01", span.trace_id, span.span_id)
}

#[test]
fn a_call_exports_its_client_span_and_metrics_and_sends_its_trace_upstream() {
    let mut wd = Workdir::new();
    let (config, log) = write_config(&wd);
    let runtime = support::runtime();
    let receiver = runtime.block_on(OtlpReceiver::start()).unwrap();
    wd.set_env("OTEL_EXPORTER_OTLP_ENDPOINT", Some(&receiver.endpoint()));
    let config = config.to_str().unwrap();
    let run = wd.run(&[
        "--config",
        config,
        "call",
        "mcp__notes__echo",
        r#"{"x": 1}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let call = span(&runtime, &receiver, "tools/call echo");
    assert_eq!(
        (call.kind.as_str(), call.status_code.as_str()),
        ("client", "unset")
    );
    assert_eq!(call.service_name.as_deref(), Some("mcpctl"));
    assert_eq!(
        without_request_id(call.attributes.clone()),
        object(json!({
            "mcp.method.name": "tools/call",
            "mcp.protocol.version": "2025-11-25",
            "mcp.server.name": "notes",
            "network.transport": "pipe",
            "gen_ai.tool.name": "echo",
            "gen_ai.operation.name": "execute_tool",
        }))
    );

    let duration = runtime
        .block_on(
            receiver.wait_for_metric(|m| m.name == "mcp.client.operation.duration", EXPORT_WAIT),
        )
        .unwrap_or_else(|| panic!("no operation duration: {:#?}", receiver.metrics()));
    assert_eq!(
        (duration.kind, duration.unit.as_str()),
        (MetricKind::Histogram, "s")
    );
    assert_eq!(duration.explicit_bounds, BUCKETS);
    let calls: u64 = duration
        .data_points
        .iter()
        .filter(|p| p.attributes.get("mcp.method.name") == Some(&json!("tools/call")))
        .filter_map(|p| p.count)
        .sum();
    assert_eq!(calls, 1, "one tools/call measured: {duration:#?}");
    let session = receiver
        .last_metric("mcp.client.session.duration")
        .unwrap_or_else(|| panic!("no session duration: {:#?}", receiver.metrics()));
    assert_eq!(
        (session.kind, session.unit.as_str()),
        (MetricKind::Histogram, "s")
    );
    assert_eq!(session.explicit_bounds, BUCKETS);

    // One command, one trace: the command's root span is the parent of its call, and
    // the server's handshake (started in the background) is in the same trace.
    let root = span(&runtime, &receiver, "mcpctl call");
    assert_eq!(root.parent_span_id, None);
    assert_eq!(call.trace_id, root.trace_id);
    assert_eq!(call.parent_span_id.as_deref(), Some(root.span_id.as_str()));
    let handshake = receiver
        .spans()
        .into_iter()
        .find(|s| s.attributes.get("mcp.method.name") == Some(&json!("initialize")))
        .unwrap_or_else(|| panic!("no handshake span: {:#?}", receiver.spans()));
    assert_eq!(handshake.trace_id, root.trace_id);

    // The upstream server got the call's own context: its trace, the span as parent.
    let metas = upstream_metas(&log, "echo");
    assert_eq!(metas.len(), 1, "{metas:?}");
    assert_eq!(metas[0]["traceparent"], json!(traceparent(&call)));

    // A tool error is the conventions' `tool_error`.
    let run = wd.run(&["--config", config, "call", "mcp__notes__fail"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    let failed = span(&runtime, &receiver, "tools/call fail");
    assert_eq!(
        (
            failed.attributes.get("error.type"),
            failed.status_code.as_str()
        ),
        (Some(&json!("tool_error")), "error")
    );
    assert_ne!(
        failed.trace_id, call.trace_id,
        "another command, another trace"
    );
    runtime.block_on(receiver.shutdown());
    wd.assert_no_server_left();
}

#[test]
fn the_standard_variables_name_the_service_add_headers_and_switch_export_off() {
    let mut wd = Workdir::new();
    let (config, _log) = write_config(&wd);
    let runtime = support::runtime();
    let receiver = runtime.block_on(OtlpReceiver::start()).unwrap();
    let config = config.to_str().unwrap();
    let call = [
        "--config",
        config,
        "call",
        "mcp__notes__echo",
        r#"{"x": 1}"#,
    ];

    // Per signal: traces only, to the whole URL; a service name and a header of ours.
    wd.set_env(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        Some(&receiver.traces_url()),
    );
    wd.set_env("OTEL_SERVICE_NAME", Some("assistant-gateway"));
    wd.set_env("OTEL_EXPORTER_OTLP_HEADERS", Some("x-tenant=blue"));
    let run = wd.run(&call);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let exported = span(&runtime, &receiver, "tools/call echo");
    assert_eq!(exported.service_name.as_deref(), Some("assistant-gateway"));
    assert!(
        receiver
            .header_values("x-tenant")
            .contains(&"blue".to_owned())
    );
    assert_eq!(
        receiver.counters().metrics,
        0,
        "no metrics endpoint, no metrics"
    );

    // The SDK switched off: nothing at all (the run has exited: its exports were answered).
    let before = receiver.counters();
    wd.set_env("OTEL_EXPORTER_OTLP_ENDPOINT", Some(&receiver.endpoint()));
    wd.set_env("OTEL_SDK_DISABLED", Some("true"));
    let run = wd.run(&call);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(receiver.counters(), before);
    runtime.block_on(receiver.shutdown());
    wd.assert_no_server_left();
}

#[test]
fn a_collector_that_is_down_changes_nothing_the_command_prints() {
    let mut wd = Workdir::new();
    let (config, _log) = write_config(&wd);
    let config = config.to_str().unwrap();
    let call = [
        "--config",
        config,
        "call",
        "mcp__notes__echo",
        r#"{"x": 1}"#,
    ];
    let plain = wd.run(&call);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    // A port nobody listens on.
    let port = mcp_testkit::free_loopback_port().unwrap();
    wd.set_env(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        Some(&format!("http://127.0.0.1:{port}")),
    );
    let exported = wd.run(&call);
    assert_eq!(exported.snapshot(), plain.snapshot());
    wd.assert_no_server_left();
}

/// `mcpctl serve --http 127.0.0.1:0` run with the workdir's environment (OpenTelemetry's
/// variables included), its stderr drained; killed on drop.
struct Gateway {
    child: std::process::Child,
    url: String,
}

impl Gateway {
    fn start(wd: &Workdir, config: &str, extra: &[&str]) -> Self {
        let mut args = vec!["--config", config, "serve", "--http", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut child = wd.spawn(&args);
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        let mut line = String::new();
        let mut url = None;
        while url.is_none() && stderr.read_line(&mut line).unwrap_or(0) > 0 {
            seen.push_str(&line);
            url = line
                .trim()
                .strip_prefix("mcpctl serve: listening on ")
                .map(str::to_owned);
            line.clear();
        }
        let url = url.unwrap_or_else(|| panic!("mcpctl serve printed no address:\n{seen}"));
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = stderr.read_to_string(&mut rest);
        });
        Self { child, url }
    }

    /// SIGTERM, then the exit (bounded): what it held is exported by then.
    fn stop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "mcpctl serve did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the Python trace client of `era` against `url` inside the trace `trace_id` (its
/// current span `parent`); its JSON report.
fn run_python(clients: &Path, era: &str, url: &str, trace_id: &str, parent: &str) -> Value {
    let output = Command::new(clients.join("venv/bin/python"))
        .arg(clients.join("py_trace_client.py"))
        .args([era, url, TOKEN, trace_id, parent])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    support::client_report("the Python client", &output)
}

/// A client of `era` calls through a gateway that continues its clients' traces
/// (`--client-trace continue`) from inside its own trace: the gateway's SERVER span is a
/// child of the client's span, the upstream CLIENT span a child of the gateway's, and the
/// upstream server got that span as its parent, in the client's trace, without the
/// client's baggage.
fn the_client_trace_goes_through_the_gateway(era: &str, trace_id: &str, parent: &str) {
    let Some(clients) = support::gateway_clients(&[(
        "py_trace_client.py",
        include_str!("gateway/py_trace_client.py"),
    )]) else {
        return;
    };
    let mut wd = Workdir::new();
    let (config, log) = write_config(&wd);
    let runtime = support::runtime();
    let receiver = runtime.block_on(OtlpReceiver::start()).unwrap();
    wd.set_env("OTEL_EXPORTER_OTLP_ENDPOINT", Some(&receiver.endpoint()));
    wd.set_env("MCPCTL_SERVE_TOKEN", Some(TOKEN));
    let mut gateway = Gateway::start(
        &wd,
        config.to_str().unwrap(),
        &["--client-trace", "continue"],
    );
    let report = run_python(&clients, era, &gateway.url, trace_id, parent);
    assert_eq!(
        report["echo"]["structuredContent"],
        json!({"text": "traced"})
    );
    assert_eq!(report["fail"]["isError"], json!(true), "{report}");
    gateway.stop();

    let served = span(&runtime, &receiver, "tools/call mcp__notes__echo");
    assert_eq!(
        (
            served.kind.as_str(),
            served.trace_id.as_str(),
            served.parent_span_id.as_deref()
        ),
        ("server", trace_id, Some(parent))
    );
    let mut attributes = without_request_id(served.attributes.clone());
    let session = attributes.remove("mcp.session.id");
    assert_eq!(
        session.is_some(),
        era == "2025",
        "a session id for 2025-era sessions only: {session:?}"
    );
    assert_eq!(
        attributes,
        object(json!({
            "mcp.method.name": "tools/call",
            "mcp.protocol.version": report["protocol_version"],
            "network.transport": "tcp",
            "network.protocol.name": "http",
            "gen_ai.tool.name": "mcp__notes__echo",
            "gen_ai.operation.name": "execute_tool",
        }))
    );

    let upstream = span(&runtime, &receiver, "tools/call echo");
    assert_eq!(
        (
            upstream.kind.as_str(),
            upstream.trace_id.as_str(),
            upstream.parent_span_id.as_deref()
        ),
        ("client", trace_id, Some(served.span_id.as_str()))
    );
    let metas = upstream_metas(&log, "echo");
    assert_eq!(metas.len(), 1, "{metas:?}");
    assert_eq!(metas[0]["traceparent"], json!(traceparent(&upstream)));
    assert_eq!(metas[0].get("baggage"), None, "{metas:?}");

    let failed = span(&runtime, &receiver, "tools/call mcp__notes__fail");
    assert_eq!(
        (
            failed.trace_id.as_str(),
            failed.attributes.get("error.type"),
            failed.status_code.as_str()
        ),
        (trace_id, Some(&json!("tool_error")), "error")
    );
    runtime.block_on(receiver.shutdown());
    wd.assert_no_server_left();
}

/// The context a client calls with: its trace (sampled), a vendor's `tracestate` and
/// `baggage` that must stay between the client and the gateway.
const CLIENT_TRACE: &str = "5bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "10f067aa0ba902b7";
const CLIENT_TRACESTATE: &str = "vendor=internal-state";
const CLIENT_BAGGAGE: &str = "user.id=admin,x-internal-role=superuser";

/// Calls `mcp__notes__echo` through the gateway at `url` with the client's trace context
/// ([`CLIENT_TRACE`], …) in `_meta`, as a traced client's SDK writes it.
async fn call_with_client_context(url: &str) {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(TOKEN),
    );
    let info = rmcp::model::ClientConfig::new(
        rmcp::model::ClientCapabilities::default(),
        rmcp::model::Implementation::new("trace-test", "1"),
    )
    .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_11_25);
    let client = tokio::time::timeout(EXPORT_WAIT, rmcp::ServiceExt::serve(info, transport))
        .await
        .unwrap()
        .unwrap();
    let params: rmcp::model::CallToolRequestParams = serde_json::from_value(json!({
        "name": "mcp__notes__echo",
        "arguments": {"text": "traced"},
        "_meta": {
            "traceparent": format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"),
            "tracestate": CLIENT_TRACESTATE,
            "baggage": CLIENT_BAGGAGE,
        },
    }))
    .unwrap();
    let result = tokio::time::timeout(EXPORT_WAIT, client.call_tool(params))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    client.cancel().await.unwrap();
}

/// A client's trace context stops at the gateway: by default its request starts a trace
/// of the gateway's own (its SERVER span links the client's span), so the upstream server
/// sees the gateway's trace and none of the client's trace id, `tracestate` or `baggage`;
/// with `--client-trace continue` the gateway's span continues the client's `traceparent`
/// (the upstream server is in the client's trace) and still nothing else crosses.
#[test]
fn the_clients_trace_context_stops_at_the_gateway_unless_asked_to_continue() {
    for continued in [false, true] {
        let mut wd = Workdir::new();
        let (config, log) = write_config(&wd);
        let runtime = support::runtime();
        let receiver = runtime.block_on(OtlpReceiver::start()).unwrap();
        wd.set_env("OTEL_EXPORTER_OTLP_ENDPOINT", Some(&receiver.endpoint()));
        wd.set_env("MCPCTL_SERVE_TOKEN", Some(TOKEN));
        let extra: &[&str] = if continued {
            &["--client-trace", "continue"]
        } else {
            &[]
        };
        let mut gateway = Gateway::start(&wd, config.to_str().unwrap(), extra);
        runtime.block_on(call_with_client_context(&gateway.url));
        gateway.stop();

        let served = span(&runtime, &receiver, "tools/call mcp__notes__echo");
        let upstream = span(&runtime, &receiver, "tools/call echo");
        let client = (CLIENT_TRACE.to_owned(), CLIENT_SPAN.to_owned());
        if continued {
            assert_eq!(
                (served.trace_id.as_str(), served.parent_span_id.as_deref()),
                (CLIENT_TRACE, Some(CLIENT_SPAN)),
                "{served:#?}"
            );
            assert_eq!(served.links, [], "{served:#?}");
        } else {
            assert_ne!(
                served.trace_id, CLIENT_TRACE,
                "a trace of its own: {served:#?}"
            );
            assert_eq!(served.parent_span_id, None, "{served:#?}");
            assert_eq!(served.links, [client], "{served:#?}");
        }
        assert_eq!(
            (
                upstream.trace_id.as_str(),
                upstream.parent_span_id.as_deref()
            ),
            (served.trace_id.as_str(), Some(served.span_id.as_str()))
        );
        let metas = upstream_metas(&log, "echo");
        assert_eq!(metas.len(), 1, "{metas:?}");
        assert_eq!(
            metas[0].as_object().unwrap().get("traceparent"),
            Some(&json!(traceparent(&upstream))),
            "{metas:?}"
        );
        let sent = metas[0].to_string();
        for client_value in [CLIENT_TRACE, CLIENT_TRACESTATE, CLIENT_BAGGAGE] {
            assert!(
                continued && client_value == CLIENT_TRACE || !sent.contains(client_value),
                "the client's {client_value:?} reached the upstream server: {sent}"
            );
        }
        assert_eq!(metas[0].get("baggage"), None, "{sent}");
        runtime.block_on(receiver.shutdown());
        wd.assert_no_server_left();
    }
}

#[test]
fn a_2025_client_trace_goes_through_the_gateway_and_upstream() {
    the_client_trace_goes_through_the_gateway(
        "2025",
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "00f067aa0ba902b7",
    );
}

#[test]
fn a_2026_client_trace_goes_through_the_gateway_and_upstream() {
    the_client_trace_goes_through_the_gateway(
        "2026",
        "0af7651916cd43dd8448eb211c80319c",
        "b7ad6b7169203331",
    );
}

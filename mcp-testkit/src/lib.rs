//! Fake MCP servers for tests: in process, as the `mcp-fake-server` stdio binary, over
//! streamable HTTP and over the legacy HTTP+SSE transport, all driven by one serializable
//! [`Scenario`].
//!
//! Real MCP over real transports: the fake is an rmcp server ([`FakeServer`]), so a
//! client under test talks to it exactly as it would to a production server, and
//! faults (slow or hung `initialize`, garbage on stdout, crashes, stubborn processes,
//! HTTP errors) happen where they happen in real life.
//!
//! ```
//! use mcp_testkit::{Behavior, InProcessServer, Scenario, ToolSpec};
//! use rmcp::ServiceExt;
//! use rmcp::model::CallToolRequestParams;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let scenario = Scenario::new("demo")
//!     .with_tool(ToolSpec::echo("echo"))
//!     .with_tool(ToolSpec::new("fail", Behavior::Error { message: "no".into() }));
//! let (transport, server) = InProcessServer::start(scenario);
//! let client = ().serve(transport).await.unwrap();
//! let args = serde_json::json!({"x": 1}).as_object().cloned().unwrap();
//! let result = client
//!     .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
//!     .await
//!     .unwrap();
//! assert_eq!(result.structured_content, Some(serde_json::json!({"x": 1})));
//! assert_eq!(server.requests()[0].method, "initialize");
//! client.cancel().await.unwrap();
//! server.shutdown().await;
//! # }
//! ```
//!
//! # A test against the stdio binary, with two tools and a fault
//!
//! ```no_run
//! use std::process::Stdio;
//! use std::time::Duration;
//!
//! use mcp_testkit::{Behavior, Faults, Recording, Scenario, TestHome, ToolSpec};
//! use rmcp::ServiceExt;
//! use rmcp::model::CallToolRequestParams;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let home = TestHome::new().unwrap();
//! let scenario = Scenario::new("two-tools")
//!     .with_tool(ToolSpec::echo("echo"))
//!     .with_tool(ToolSpec::new("slow", Behavior::Sleep { ms: 5_000 }))
//!     .with_faults(Faults::new().with_init_delay_ms(200))
//!     .with_record(
//!         Recording::new()
//!             .with_pid_file(home.join("server.pid"))
//!             .with_request_log(home.join("requests.jsonl")),
//!     );
//! let file = home.join("scenario.json");
//! scenario.write_json(&file).unwrap();
//!
//! let mut command = tokio::process::Command::new(mcp_testkit::fake_server_bin());
//! command.arg("--scenario").arg(&file);
//! let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(command)
//!     .stderr(Stdio::null())
//!     .spawn()
//!     .unwrap();
//! let client = ().serve(transport).await.unwrap(); // takes >= 200 ms
//!
//! let slow = client.call_tool(CallToolRequestParams::new("slow"));
//! assert!(tokio::time::timeout(Duration::from_millis(100), slow).await.is_err());
//!
//! let pid = mcp_testkit::read_pid_file(home.join("server.pid")).unwrap();
//! client.cancel().await.unwrap();
//! assert!(mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await);
//! let log = mcp_testkit::RecordedRequest::read_log(home.join("requests.jsonl"));
//! assert_eq!(log[0].method, "initialize");
//! # }
//! ```
//!
//! # Scenarios
//!
//! A [`Scenario`] holds the server info, instructions, capability flags
//! ([`CapabilityFlags`]), tools ([`ToolSpec`]: name, title, description, input and
//! output schema, annotations, `_meta`, behaviour), resources ([`ResourceSpec`]),
//! resource templates ([`ResourceTemplateSpec`]), prompts ([`PromptSpec`]), faults
//! ([`Faults`]) and recording files ([`Recording`]). It is `serde`: the same value is
//! built in code, written with [`Scenario::write_json`], or read from TOML/JSON with
//! [`Scenario::from_path`]. [The scenario format](#the-scenario-format), at the end of
//! this page, documents every section as JSON and as builder code, with every tool
//! behaviour and every fault (and which runners honour it). In TOML:
//!
//! ```toml
//! instructions = "Use echo."
//! [server_info]
//! name = "files"
//! [capabilities]
//! tools_list_changed = true
//! [faults]
//! page_size = 2
//! [[tools]]
//! name = "echo"
//! annotations = { readOnlyHint = true }
//! [[tools]]
//! name = "nap"
//! behavior = { kind = "sleep", ms = 100 }
//! ```
//!
//! # Runners
//!
//! - [`InProcessServer::start`]: a `tokio::io::duplex` pipe; returns the client half
//!   (an rmcp transport) and a handle ([`InProcessServer::shutdown`],
//!   [`InProcessServer::requests`]).
//! - The `mcp-fake-server` binary (`src/bin/mcp-fake-server.rs`): `--scenario FILE`
//!   (`.toml`/`.json`) and/or flags: `--tool NAME` (adds an echo tool), `--pid-file F`,
//!   `--request-log F` (one JSON line `{"method", "params"}` per request),
//!   `--instructions TEXT` and the fault flags listed under [Faults](#faults). With `--http 127.0.0.1:0
//!   [--addr-file F] [--bearer-token T]` it serves streamable HTTP instead and prints its
//!   URL as the first stdout line (with `--sse` too: the legacy HTTP+SSE transport, URL
//!   `…/sse`); SIGTERM stops it.
//! - [`HttpFakeServer::start`] / [`HttpFakeServer::start_with`]: streamable HTTP on
//!   `127.0.0.1:0`, endpoint [`HttpFakeServer::url`] (`…/mcp`). [`HttpOptions`] adds
//!   bearer enforcement (401 with `WWW-Authenticate` otherwise) and how an unknown
//!   session is answered ([`UnknownSession`]: 404, or 400 with a JSON-RPC error without
//!   an `id` as `server-everything` does); restart a server on the same address with
//!   [`HttpOptions::with_bind`] to make a client lose its session.
//!   [`HttpFakeServer::fail_next`] answers the next N HTTP requests with an
//!   [`InjectedFailure`] (status, body, headers: 503 + `Retry-After`, 401/403, 404
//!   session expiry); [`HttpFakeServer::counters`] counts requests.
//! - [`SseFakeServer::start`] / [`SseFakeServer::start_with`]: the legacy HTTP+SSE
//!   transport of MCP 2024-11-05 on `127.0.0.1:0`: a `GET` of [`SseFakeServer::url`]
//!   (`…/sse`) opens a session whose first event names its message endpoint
//!   ([`MESSAGES_PATH`]`?session_id=…`); posted messages are answered `202` and their
//!   replies arrive as `message` events; an unknown session is `404`. [`SseOptions`] adds
//!   bearer enforcement, sessions kept across dropped streams (resumed by `Last-Event-ID`)
//!   and a chosen endpoint; [`SseFakeServer::drop_streams`] and
//!   [`SseFakeServer::refuse_streams`] drop the event streams and refuse reconnects.
//!   The binary serves it with `--http ADDR --sse`.
//!
//! # Fake OAuth servers
//!
//! For clients that authenticate (OAuth 2.1 for MCP, enterprise-managed
//! authorization), three loopback servers share one token table:
//!
//! - [`FakeAuthServer::start`] ([`AuthServerOptions`]): RFC 8414 metadata (and OpenID
//!   discovery), dynamic registration (`/register`, RFC 7591), pre-registered
//!   [`OAuthClient`]s (`none`, secret Basic/post, `private_key_jwt` with an RSA or
//!   P-256 public key: signatures are verified), an auto-approving `/authorize` (302
//!   with `code`, `state`, `iss`; S256 PKCE and loopback redirect URIs required;
//!   [`FakeAuthServer::set_deny_authorization`] answers `access_denied`), and `/token`
//!   for `authorization_code`, `refresh_token` (rotation on by default: a reused
//!   refresh token gets `invalid_grant`), `client_credentials` and the JWT-bearer
//!   grant ([`JWT_BEARER_GRANT`]) for ID-JAGs of a trusted [`FakeIdp`]. Controls:
//!   [`FakeAuthServer::revoke_all`], [`FakeAuthServer::expire_access_tokens`],
//!   [`FakeAuthServer::fail_next_refreshes`], [`FakeAuthServer::set_token_lifetime`];
//!   assertions: [`FakeAuthServer::counters`], [`FakeAuthServer::is_valid_token`],
//!   [`FakeAuthServer::token_info`], [`FakeAuthServer::last_resource`],
//!   [`FakeAuthServer::last_scope`]. Expiry is measured on tokio time, so
//!   `tokio::time::advance` expires tokens in a paused-time test.
//! - [`FakeProtectedMcpServer::start`] ([`ProtectedOptions`]): the fake MCP server over
//!   streamable HTTP behind live-checked bearer tokens of a [`FakeAuthServer`]: 401
//!   with `WWW-Authenticate: Bearer resource_metadata="…"`, RFC 9728 metadata at
//!   [`RESOURCE_METADATA_PATH`], 403 `insufficient_scope` for tools that need a scope,
//!   tokens bound (RFC 8707) to another resource refused.
//! - [`FakeIdp::start`] ([`IdpOptions`]): OpenID metadata, JWKS ([`test_jwks`]), an
//!   auto-approving login issuing RS256 ID tokens signed with the public test key
//!   [`TEST_RSA_PRIVATE_KEY_PEM`], and token exchange (RFC 8693) issuing ID-JAGs
//!   (`typ` [`ID_JAG_TYP`]), with rejection modes ([`IdpRejection`]).
//!
//! Fault knobs of [`AuthServerOptions`]: no registration endpoint, no OpenID
//! discovery, a wrong `issuer`, a wrong or missing `iss` on redirects, a forged
//! `state`, any `error` from `/authorize`, other advertised PKCE methods, no refresh
//! tokens, no rotation, a [`MetadataFault`] (a redirect, an oversized document) instead
//! of the metadata, and a planted secret in tokens and error descriptions (redaction
//! tests). Once it runs, [`FakeAuthServer::set_issuer_override`],
//! [`FakeAuthServer::set_token_endpoint_override`] and
//! [`FakeAuthServer::set_iss_parameter_value`] change what it advertises (an issuer
//! under a path, another host name for the same port). [`ProtectedOptions`]: another
//! `resource` in the metadata, no metadata at all, a `scope` in the challenge, per-tool
//! scopes, a [`MetadataFault`], and the authorization server served on the MCP server's
//! own origin as in MCP 2025-03-26 ([`ProtectedOptions::with_same_origin_auth_server`]).
//! [`FakeIdp`]: ES256 or unsigned ID tokens ([`IdpOptions::with_id_token_alg`]), spoilt
//! ones ([`FakeIdp::set_id_token_fault`]: a bad signature, an unpublished `kid`, another
//! `iss`) and key rotation ([`FakeIdp::rotate_key_id`]). The test keys
//! ([`TEST_RSA_PRIVATE_KEY_PEM`], [`TEST_EC_PRIVATE_KEY_PEM`] and their public halves)
//! also serve `private_key_jwt` clients ([`OAuthClient::private_key_jwt`]).
//!
//! ```
//! use mcp_testkit::{
//!     AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, OAuthClient,
//!     ProtectedOptions, Scenario, ToolSpec,
//! };
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let auth = FakeAuthServer::start(
//!     AuthServerOptions::new().with_client(OAuthClient::confidential("robot", "s3cret")),
//! )
//! .await
//! .unwrap();
//! let scenario = Scenario::new("files").with_tool(ToolSpec::echo("echo"));
//! let mcp = FakeProtectedMcpServer::start(scenario, &auth, ProtectedOptions::new())
//!     .await
//!     .unwrap();
//!
//! let http = reqwest::Client::new();
//! let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{
//!     "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"doc","version":"1"}}}"#;
//! let post = |token: Option<String>| {
//!     let mut request = http
//!         .post(mcp.url())
//!         .header("content-type", "application/json")
//!         .header("accept", "application/json, text/event-stream")
//!         .body(init);
//!     if let Some(token) = token {
//!         request = request.bearer_auth(token);
//!     }
//!     request.send()
//! };
//! let denied = post(None).await.unwrap();
//! assert_eq!(denied.status(), 401);
//! let challenge = denied.headers()["www-authenticate"].to_str().unwrap();
//! assert!(challenge.contains(&mcp.resource_metadata_url()));
//!
//! // A client-credentials token for this resource opens the door.
//! let form = [("grant_type", "client_credentials"), ("resource", &mcp.url())];
//! let token: serde_json::Value = http
//!     .post(auth.token_endpoint())
//!     .basic_auth("robot", Some("s3cret"))
//!     .form(&form)
//!     .send()
//!     .await
//!     .unwrap()
//!     .json()
//!     .await
//!     .unwrap();
//! let access = token["access_token"].as_str().unwrap().to_owned();
//! assert!(auth.is_valid_token(&access));
//! assert_eq!(post(Some(access.clone())).await.unwrap().status(), 200);
//! assert_eq!(auth.counters().client_credentials, 1);
//!
//! auth.revoke_all(); // checked live: the next request is refused
//! assert_eq!(post(Some(access)).await.unwrap().status(), 401);
//! mcp.shutdown().await;
//! auth.shutdown().await;
//! # }
//! ```
//!
//! # Tasks
//!
//! The fake server speaks the tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`)
//! as rmcp 3.11 implements it, in both eras (the extension is negotiated through the
//! capabilities' `extensions`). These are the first client-side task scenarios: the
//! official conformance suite has no client scenario for tasks yet. Turn the extension on
//! with [`CapabilityFlags::tasks`] and give a tool [`Behavior::Task`]; a call from a
//! client that declared the extension answers at once with a task (`resultType: "task"`,
//! ids `task-1`, `task-2`, …) whose work runs in the background, owned by the server (it
//! stops when the server stops). Tasks belong to the server, not to a session: a client
//! that reconnects (a new HTTP session) still reaches the tasks it started. What each
//! option exercises:
//!
//! - `work_ms`, `steps`: polling with `tasks/get` while the task is `working`; its
//!   `statusMessage` is `"step i of n"` (already `"step 1 of n"` in the answer to the
//!   call), and `lastUpdatedAt` moves.
//! - `end`: the last state ([`TaskEnd`]): `completed` with the echoed arguments,
//!   `completed` with a tool error (`isError: true`), `failed` with a JSON-RPC error
//!   object, or `working` for ever (for `tasks/cancel` and TTL expiry).
//! - `ask` ([`TaskAsk`]): halfway through the work the task is `input_required`, its
//!   `inputRequests` holding one form-mode `elicitation/create` under the key `input`,
//!   until the client answers it with `tasks/update` (`inputResponses: {"input":
//!   <ElicitResult>}`; another key, another task or a task not waiting is "invalid
//!   params"). The answer's `action` and `content` end up in the result as `"answer"`.
//! - `poll_interval_ms`, `ttl_ms`: put on the task as given (`0`, `86400000`, …); past its
//!   TTL (tokio time, from creation) the task is forgotten: `tasks/get`, `tasks/update`
//!   and `tasks/cancel` answer "invalid params" naming the id.
//! - `garbage_get`: `tasks/get` of the task answers `"status": "exploded"`, which no
//!   client can read as a task (stdio binary only; elsewhere it answers as usual).
//! - `tasks/cancel`: a task not over yet becomes `cancelled` and its work stops; a task
//!   over stays as it is.
//!
//! Without the extension on both sides a task tool answers like any tool, with the final
//! result (a `fail` end: that JSON-RPC error); its question takes the way of
//! [`Behavior::ElicitForm`] (the server's own `elicitation/create` halfway through, or in
//! the 2026-07-28 era an MRTR round before the work).
//!
//! `tasks/get`, `tasks/update` and `tasks/cancel` are recorded like every request
//! ([`FakeServer::requests`], [`Recording::request_log`]), except those rmcp refuses
//! before the fake sees them (from a client that did not declare the extension:
//! -32021; to a server without it: -32601). In process, [`FakeServer::task_statuses`]
//! shows every task's status and [`FakeServer::task_work_running`] how much work still
//! runs.
//!
//! ```
//! use mcp_testkit::{Behavior, CapabilityFlags, InProcessServer, Scenario, TaskEnd, ToolSpec};
//! use rmcp::model::{
//!     CallToolRequestParams, CallToolResponse, ClientConfig, GetTaskParams, Implementation,
//! };
//! use rmcp::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let build = Behavior::Task {
//!     work_ms: 20,
//!     steps: 2,
//!     end: TaskEnd::Complete,
//!     ask: None,
//!     poll_interval_ms: Some(10),
//!     ttl_ms: None,
//!     garbage_get: false,
//! };
//! let scenario = Scenario::new("builder")
//!     .with_capabilities(CapabilityFlags::default().with_tasks(true))
//!     .with_tool(ToolSpec::new("build", build));
//! let (transport, server) = InProcessServer::start(scenario);
//! // A client declaring the extension.
//! let capabilities = serde_json::from_value(
//!     serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
//! )
//! .unwrap();
//! let config = ClientConfig::new(capabilities, Implementation::new("doc", "1.0"));
//! let client = config.serve(transport).await.unwrap();
//! let CallToolResponse::Task(created) =
//!     client.call_tool_once(CallToolRequestParams::new("build")).await.unwrap()
//! else {
//!     panic!("not a task");
//! };
//! assert_eq!(created.task.status_message.as_deref(), Some("step 1 of 2"));
//! loop {
//!     let got = client.get_task(GetTaskParams::new(&created.task.task_id)).await.unwrap();
//!     if got.task.status().is_terminal() {
//!         break;
//!     }
//!     tokio::time::sleep(std::time::Duration::from_millis(10)).await;
//! }
//! assert_eq!(server.server().task_statuses()["task-1"], "completed");
//! client.cancel().await.unwrap();
//! server.shutdown().await;
//! # }
//! ```
//!
//! # Helpers
//!
//! - [`fake_server_bin`]: the path of the built binary, for tests of other crates. It
//!   looks in the running test's `target/<profile>/`, else builds it once from the
//!   testkit's own manifest (`cargo build --manifest-path <testkit>/Cargo.toml --bin
//!   mcp-fake-server`); `$MCP_FAKE_SERVER_BIN` overrides. A downstream crate only needs
//!   `mcp-testkit` in `[dev-dependencies]`.
//! - [`TestHome`]: a temporary directory with `home/`, `cache/`, `config/`.
//! - [`assert_no_process`], [`assert_no_process_group`], [`wait_gone`],
//!   [`wait_group_gone`], [`process_group_members`]: read `/proc` (Linux), zombies count
//!   as gone; [`kill_process`], [`kill_process_group`] and [`terminate_process`] clean up.
//! - [`RecordedRequest::read_log`]: parse a request log.
//! - [`free_loopback_port`]: a free 127.0.0.1 port outside the kernel's ephemeral range,
//!   for a server another process binds.
//!
#![doc = include_str!("../SCENARIOS.md")]
#![allow(
    clippy::disallowed_methods,
    reason = "test support: builds the fake server, starts helper processes (sleep, kill) for fault scenarios"
)]

mod behavior;
mod bin_path;
mod completion;
mod error;
mod events;
#[cfg(feature = "http")]
mod http;
mod in_process;
mod installed;
mod killable;
mod listen_faults;
mod log_messages;
mod logs;
#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "otlp")]
mod otlp;
mod paging;
mod ports;
pub mod postgres;
mod process;
mod record;
#[cfg(feature = "http")]
mod registry;
mod scenario;
#[cfg(feature = "http")]
mod serve;
mod server;
mod shared;
mod skills;
#[cfg(feature = "http")]
mod sse;
mod sshd;
mod stdio;
mod tasks;
mod temp;
mod wire;

pub use bin_path::{
    FAKE_SERVER_BIN_ENV, FAKE_SERVER_BIN_NAME, fake_server_bin, try_fake_server_bin,
};
pub use error::Error;
pub use events::{
    DEFAULT_HEARTBEAT_MS, DEFAULT_MIN_TTL_MS, DEFAULT_NEXT_POLL_MS, EVENTS_EXTENSION_ID,
    EventTypeSpec, EventsSpec, WEBHOOK_DELIVERY_ATTEMPTS, WebhookFault, WebhookSpec,
};
#[cfg(feature = "http")]
pub use http::{
    DEFAULT_WWW_AUTHENTICATE, HttpCounters, HttpFakeServer, HttpOptions, InjectedFailure,
    MAX_RECORDED_HEADERS, MCP_PATH, SHUTDOWN_GRACE, UNKNOWN_SESSION_BAD_REQUEST_BODY,
    UnknownSession, serve_http_process,
};
pub use in_process::{DUPLEX_BUFFER, InProcessServer};
pub use installed::{INSTALLED_CLIENTS_DIR, REQUIRE_GATEWAY_CLIENTS_ENV, installed_test_client};
pub use logs::{CapturedLogs, capture_logs, capture_logs_globally};
#[cfg(feature = "oauth")]
pub use oauth::{
    ACCESS_TOKEN_TYP, AccessTokenClaims, DEFAULT_TOKEN_SUBJECT, GROUPS_CLAIM, JwksFault,
};
#[cfg(feature = "oauth")]
pub use oauth::{ACCESS_TOKEN_TYPE, ExchangeFault, JWT_TOKEN_TYPE, TokenExchangeRecord};
#[cfg(feature = "oauth")]
pub use oauth::{
    AuthCounters, AuthServerOptions, CODE_LIFETIME, ClientAuthMethod, DEFAULT_ID_JAG_LIFETIME,
    DEFAULT_ID_TOKEN_LIFETIME, DEFAULT_IDP_CLIENT_ID, DEFAULT_IDP_CLIENT_SECRET, DEFAULT_SCOPES,
    DEFAULT_SUBJECT, DEFAULT_TOKEN_LIFETIME, ExchangeRecord, FakeAuthServer, FakeIdp,
    FakeProtectedMcpServer, ID_JAG_TOKEN_TYPE, ID_JAG_TYP, ID_TOKEN_TYPE, IdTokenAlg, IdTokenFault,
    IdpCounters, IdpOptions, IdpRejection, JWT_BEARER_GRANT, MetadataFault, OAuthClient,
    ProtectedCounters, ProtectedOptions, REFRESH_TOKEN_TYPE, RESOURCE_METADATA_PATH,
    TEST_EC_KEY_ID, TEST_EC_PRIVATE_KEY_PEM, TEST_EC_PUBLIC_KEY_PEM, TEST_KEY_ID,
    TEST_RSA_PRIVATE_KEY_PEM, TEST_RSA_PUBLIC_KEY_PEM, TOKEN_EXCHANGE_GRANT, TokenInfo,
    WORKLOAD_SUBJECT, WRONG_AUDIENCE, mint_workload_token, test_jwks,
};
#[cfg(feature = "otlp")]
pub use otlp::{
    DataPoint, MAX_EXPORT_BODY, MAX_RECORDED_EXPORTS, METRICS_PATH, MetricKind, OtlpCounters,
    OtlpReceiver, ReceivedMetric, ReceivedSpan, TRACES_PATH,
};
pub use paging::REPEATING_CURSOR;
pub use ports::free_loopback_port;
pub use process::{
    POLL_INTERVAL, assert_no_process, assert_no_process_group, kill_process, kill_process_group,
    process_alive, process_group_members, read_pid_file, terminate_process, wait_gone,
    wait_group_gone,
};
pub use record::RecordedRequest;
#[cfg(feature = "http")]
pub use registry::{
    BROKEN_JSON_SERVER, DEFAULT_REGISTRY_PAGE_SIZE, FakeRegistry, MAX_REGISTRY_LIMIT,
    REGISTRY_API_PREFIX, REGISTRY_OFFICIAL_META, RegistryContents, RegistryEntry, RegistryStatus,
};
pub use scenario::{
    Behavior, CacheHints, CapabilityFlags, DEFAULT_KEPT_REQUESTS, DEFAULT_VERSION, Faults,
    PromptSpec, Recording, ReplyFault, ResourceSpec, ResourceTemplateSpec, Scenario,
    ServerInfoSpec, ToolSpec, ToolsChange,
};
pub use server::FakeServer;
pub use skills::{SKILL_MD, SkillFault, SkillFileSpec, SkillOptions, SkillSpec};
#[cfg(feature = "http")]
pub use sse::{MESSAGES_PATH, SSE_PATH, SseCounters, SseFakeServer, SseOptions, serve_sse_process};
pub use sshd::{
    REQUIRE_SSHD_ENV, SSHD_MAX_SESSIONS, SSHD_PATHS, SSHD_STARTUP_TIMEOUT, SshdFixture,
};
pub use stdio::{GARBAGE_LINE, serve_stdio};
pub use tasks::{TaskAsk, TaskEnd};
pub use temp::TestHome;

// The README's example, compiled and run as a doc test (not part of the rendered docs).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

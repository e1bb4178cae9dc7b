//! One MCP server, one connection.
//!
//! [`Client::connect`] opens a connection to a stdio server (a process started through
//! `mcp-pool`'s launcher, the one place that spawns servers), a streamable-HTTP server or a
//! legacy HTTP+SSE server, shakes hands in the server's protocol era (MCP 2025-11-25's
//! `initialize` or 2026-07-28's `server/discover`, probing when the era is not known), and
//! lists the server's tools. The [`Client`] then calls tools (timeouts, cancellation,
//! progress, the 2026 era's `input_required` rounds), reads resources and prompts, lists
//! with page and byte budgets, subscribes to resources in either era, and keeps its tool
//! listing fresh on `tools/list_changed`. What the server asks of the host goes to the
//! [`ServerRequests`] the caller gives. The protocol's extensions it speaks: Skills (list,
//! get, files read only on request and verified) and Events (list, poll, a supervised
//! push stream, webhook subscriptions and the verification of a delivery).
//!
//! It never names a set of servers, a catalog of many, approvals or a host's connection
//! events: that is `mcp-connections`, which shares `Client`s between its sessions through
//! a pool.
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use mcp_client::{CallSettings, Client, ClientSettings, DeclineRequests, Target};
//! use mcp_catalog::StdioConfig;
//! use std::time::Duration;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let server = "files".parse()?;
//! let target = Target::stdio(StdioConfig::new("npx").with_args([
//!     "-y",
//!     "@modelcontextprotocol/server-filesystem",
//!     ".",
//! ]));
//! let client = Client::connect(server, target, ClientSettings::new(), Arc::new(DeclineRequests)).await?;
//! for tool in client.tools().iter() {
//!     println!("{}", tool.name);
//! }
//! let mut arguments = serde_json::Map::new();
//! arguments.insert("path".into(), ".".into());
//! let result = client
//!     .call_tool("list_directory", Some(arguments), CallSettings::new(Duration::from_secs(30)))
//!     .await?;
//! println!("{:?}", result.content);
//! client.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! - `http`: the streamable-HTTP and legacy HTTP+SSE transports, plain `http://` only.
//! - `rustls` (default, implies `http`): HTTPS.
//! - `otel`: trace context in every request's `_meta` and the OpenTelemetry metrics of
//!   the MCP semantic conventions (see [Telemetry](#telemetry)).
//!
//! Without `http` the crate compiles no HTTP client: an HTTP target fails with reason
//! `config`.
//!
#![doc = include_str!("../TELEMETRY.md")]

mod client;
mod error;
mod events;
mod failure;
mod handshake;
mod host;
mod listen;
mod listing;
mod requests;
mod rmcp_errors;
mod settings;
mod skills;
mod state;
mod tasks;
mod telemetry;
mod transport;

use std::future::Future;
use std::pin::Pin;

pub use client::Client;
pub use error::RequestError;
pub use events::error::EventError;
pub use events::{
    DEFAULT_MAX_REFRESH_BACKOFF, DEFAULT_MIN_POLL_INTERVAL, DEFAULT_REFRESH_BACKOFF,
    DEFAULT_STREAM_STALL, DeliveryMode, EVENTS_EXTENSION_ID, EVENTS_REQUEST_TIMEOUT, EventBatch,
    EventOccurrence, EventPoller, EventStream, EventSubscription, EventType, StreamItem,
    StreamSettings, WEBHOOK_IDS_KEPT, WEBHOOK_TOLERANCE, WebhookBody, WebhookHeaders, WebhookLease,
    WebhookLeaseSettings, WebhookLeaseStatus, WebhookRejection, WebhookSecret, WebhookSecretError,
    WebhookSubscription, WebhookTarget, WebhookVerifier,
};
pub use failure::{FailureReason, StartupFailure};
pub use handshake::era::{Era, Handshake};
pub use host::roots::Root;
pub use host::sampling::{SAMPLING_REFUSED_CODE, SamplingRefusal, check_answer};
pub use host::server_log::{
    LOG_BUFFER, LOG_BURST, LOG_RATE, LOG_TEXT_LIMIT, SERVER_LOG_TARGET, ServerLog,
};
pub use host::server_requests::{DeclineRequests, LogRoute, ServerRequests};
pub use listen::health::{ListenHealth, ListenHealthFeed, ListenTopic};
pub use listing::Stamp;
pub use listing::paginate::{MAX_CURSOR_BYTES, MAX_ITEMS, MAX_PAGES};
pub use requests::{CallSettings, MAX_INPUT_ROUNDS};
pub use rmcp::model::SKILLS_EXTENSION_ID;
pub use rmcp_errors::ServiceFailure;
pub use settings::auth::{
    AuthHeaderProvider, BearerEnvVar, CredentialsError, SharedEnvLookup, StaticBearer,
    challenge_scope, process_env,
};
pub use settings::environment::{
    ENVIRONMENT_CWD_VAR, ENVIRONMENT_ID_VAR, Environment, EnvironmentError, WrapperEnvironment,
};
pub use settings::{
    ClientSettings, DEFAULT_LIST_BYTE_BUDGET, DEFAULT_LIST_CHANGED_DEBOUNCE, DEFAULT_LISTEN_STALL,
    DEFAULT_PROBE_TIMEOUT, DEFAULT_PROCESS_GRACE, DEFAULT_STARTUP_TIMEOUT, HttpTarget, Target,
    default_protocol_version,
};
pub use skills::error::SkillError;
pub use skills::{
    DEFAULT_SKILL_MAX_BYTES, LoadedSkill, SkillEntry, SkillFile, SkillListing, SkillReadSettings,
};
pub use state::{Progress, ProgressCallback};
pub use tasks::{
    MAX_POLL_INTERVAL, MIN_POLL_INTERVAL, Started, TaskHandle, TaskPhase, TaskState,
    TaskStateCallback, UNSUGGESTED_POLL,
};
/// What [`request_span!`] expands to needs; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use tracing;
}

pub use telemetry::SPAN_TARGET;
pub use telemetry::payloads::MAX_RECORDED_PAYLOAD;
pub use telemetry::semconv;
#[cfg(feature = "otel")]
pub use telemetry::{DURATION_BUCKETS, OPERATION_DURATION, SESSION_DURATION};

/// A boxed future, as returned by the host traits of this crate.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

// The README's example, compiled as a doc test (not part of the rendered docs).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

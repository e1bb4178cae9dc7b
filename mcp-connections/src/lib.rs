//! The MCP connection set: the crate an AI-agent host uses to talk to many MCP servers.
//!
//! Give it a resolved catalog (from `mcp-catalog`); it starts every enabled server
//! concurrently (stdio processes through `mcp-pool`'s launcher, streamable-HTTP servers
//! through rmcp's client, legacy HTTP+SSE servers through this crate's rmcp transport),
//! reports progress as events, merges their tools into one catalog
//! with model-safe names (from `mcp-key`), routes calls with timeouts and cancellation, lists
//! and reads resources, forwards elicitation requests to the host, and shuts everything
//! down without leaving a process behind.
//!
//! ```no_run
//! use mcp_catalog::{CatalogBuilder, Config};
//! use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let loaded = Config::from_toml_str(
//!     r#"
//!     [mcp_servers.files]
//!     command = "npx"
//!     args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
//!     "#,
//!     "mcp.toml",
//! )?;
//! let catalog = CatalogBuilder::new().with_user_config(loaded).build();
//! let set = ConnectionSet::start(&catalog, ConnectionSetOptions::new());
//! // Every server settles (ready, failed or cancelled), each within its startup timeout;
//! // `wait_required()` waits only for servers marked `required = true`.
//! set.wait_startup().await;
//! for tool in set.tools().await {
//!     println!("{} ({})", tool.qualified_name, tool.server);
//! }
//! let result = set
//!     .call_qualified("mcp__files__list_directory", Some(serde_json::json!({"path": "."})), CallOptions::new())
//!     .await?;
//! println!("{:?}", result.content);
//! set.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! Every map of servers is keyed by [`McpServerKey`](mcp_key::McpServerKey), so the same
//! server name in two environments is two servers.
//!
//! # Features
//!
//! - `http`: the streamable-HTTP transport (rmcp's client over reqwest), plain `http://`
//!   only (enough for loopback servers).
//! - `rustls` (default, implies `http`): HTTPS for remote streamable-HTTP servers.
//! - `oauth` (default, implies `http`): OAuth 2.1 for HTTP servers through `mcp-auth`'s
//!   OAuth client: stored credentials refreshed when needed, logins through
//!   `ConnectionSetOptions::with_login_agent`, `OAuthProvider`.
//! - `keyring` (default): OAuth credentials in the OS keyring (forwards
//!   `mcp-auth/keyring`); without it `credentials_store = "auto"` uses the credential file.
//! - `otel`: trace context carried to servers in every request's `_meta`, and the
//!   OpenTelemetry MCP metrics (forwards `mcp-client/otel`; see `mcp_client`'s telemetry
//!   docs).
//!
//! With `default-features = false` the crate compiles no HTTP client, TLS stack or OAuth
//! client: stdio servers only. A streamable-HTTP or legacy HTTP+SSE (MCP 2024-11-05)
//! server in the catalog then fails alone, with reason `config` and a message naming the
//! feature; bearer tokens and headers from the catalog work with `http` alone.
//!
//! # What comes from where
//!
//! Every name a host needs to use the set is exported here once, at the crate root; the
//! crates underneath stay usable alone, and a host that needs more of one depends on it.
//!
//! - This crate: the set ([`ConnectionSet`], [`ConnectionSetOptions`], [`CallOptions`]),
//!   its events and statuses, the tool catalog ([`ToolInfo`], [`ToolHit`], the tool cache
//!   and search mode), the servers' skills ([`SkillInfo`], [`SkillDrift`],
//!   [`SkillLoadError`]), servers' events as feeds ([`EventFeed`], [`EventFeedOptions`],
//!   [`EventFeedError`]), the host's policy (authority, approvals, pins, hooks,
//!   elicitation, sampling, host metadata, [`SkillLoading`]), the shared connection pool
//!   ([`ServerPool`]) and [`Error`].
//! - From `mcp-client` (one server, one connection): the names the set's API carries:
//!   the settings a call and a connection are made with ([`CallSettings`] in
//!   [`CallOptions::with_call`], [`ClientSettings`] in
//!   [`ConnectionSetOptions::with_client`]), [`Root`], auth header providers ([`AuthHeaderProvider`], [`StaticBearer`],
//!   [`BearerEnvVar`]), environments ([`Environment`], [`WrapperEnvironment`]), startup
//!   failures ([`StartupFailure`], [`FailureReason`]), progress, tasks ([`TaskHandle`],
//!   [`TaskState`]), listen topics, server log constants, the protocol defaults, and a
//!   loaded skill ([`SkillReadSettings`], [`LoadedSkill`], [`SkillFile`], [`SkillError`]),
//!   events ([`EventType`], [`DeliveryMode`], [`EventOccurrence`], [`StreamItem`],
//!   [`EventError`]). For a
//!   host that talks to one server alone, `mcp-client` itself.
//! - From `mcp-search`: [`SearchError`] (inside [`Error::Search`]); for an index of a
//!   host's own, `mcp-search` itself.
//! - From rmcp: the model types in [`model`].
//! - Not re-exported: `mcp-key` (server names and keys), `mcp-catalog` (configuration) and
//!   `mcp-auth` (credentials), which a host depends on directly, as the example above does.
//!
//! # Host authority and host metadata
//!
//! What servers may ask of the user is the host's [`HostAuthority`]: approval policy,
//! elicitation policy, per-environment [`PermissionProfile`]s and an optional
//! [`ElicitationReviewer`], replaced as one value at any time with
//! [`ConnectionSet::set_authority`] (no restart; each decision reads one snapshot). What
//! the host tells servers about their environment goes into `tools/call` `_meta` under its
//! reserved prefix, from a [`HostMetadataProvider`], for servers that advertise the prefix
//! as an `experimental` capability; callers cannot set those keys.
//!
//! ```
//! use mcp_connections::{
//!     ApprovalPolicy, ConnectionSetOptions, HostAuthority, PermissionProfile,
//!     host_metadata_fn,
//! };
//! use serde_json::{Map, json};
//!
//! let headless = HostAuthority::new()
//!     .with_approval_policy(ApprovalPolicy::Never)
//!     .with_default_profile(PermissionProfile::Unrestricted);
//! let sandbox = host_metadata_fn(|call| {
//!     let mut keys = Map::new();
//!     let network = call.profile == PermissionProfile::Unrestricted;
//!     keys.insert("host.example/network".to_owned(), json!(network));
//!     keys
//! });
//! let options = ConnectionSetOptions::new()
//!     .with_authority(headless)
//!     .with_reserved_meta_prefix("host.example/")
//!     .with_host_metadata(sandbox);
//! # drop(options);
//! ```

mod auth;
mod catalog;
mod environments;
mod error;
mod event_sink;
mod events;
mod policy;
mod results;
mod set;
mod skill_error;
mod status;
#[cfg(all(test, not(feature = "http")))]
#[allow(clippy::unwrap_used, clippy::panic, reason = "tests")]
mod without_http_tests;

#[cfg(feature = "oauth")]
pub use auth::oauth::OAuthProvider;
pub use catalog::apps::{APP_MIME_TYPE, APPS_EXTENSION, ToolUi, VISIBILITY_APP, VISIBILITY_MODEL};
pub use catalog::search::{CatalogHit, CatalogSearch, SkillHit, ToolHit, ToolSearch};
pub use catalog::search_mode::{
    CALL_TOOL, DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS, SEARCH_TOOL, SearchModeCall,
    SearchModeConfig, catalog_search_answer, no_match_answer, search_answer, search_answer_from,
    search_mode_tools, search_mode_tools_for,
};
pub use catalog::skills::SkillInfo;
pub use catalog::tool_cache::{
    CacheEntry, CachedTools, DEFAULT_TOOL_CACHE_CAPACITY, DEFAULT_TOOL_CACHE_TTL, TOOL_CACHE_FILE,
    TOOL_CACHE_KEY_FILE, ToolCache,
};
pub use catalog::tool_info::{PluginOrigin, ToolInfo};
pub use environments::ssh_environment::{SSH_AUTH_SOCK_VAR, SshEnvironment};
pub use environments::ssh_master::SSH_CONNECT_TIMEOUT;
pub use error::{Error, NotApprovedReason, Result};
pub use events::{ConnectionEvent, CrashLoop};
pub use mcp_client::Root;
pub use mcp_client::{
    AuthHeaderProvider, BearerEnvVar, CredentialsError, SharedEnvLookup, StaticBearer, process_env,
};
pub use mcp_client::{CallSettings, ClientSettings};
pub use mcp_client::{
    DEFAULT_LIST_BYTE_BUDGET, DEFAULT_LIST_CHANGED_DEBOUNCE, DEFAULT_LISTEN_STALL,
    DEFAULT_PROBE_TIMEOUT, DEFAULT_PROCESS_GRACE, MAX_CURSOR_BYTES, MAX_ITEMS, MAX_PAGES,
    default_protocol_version,
};
pub use mcp_client::{DeliveryMode, EventError, EventOccurrence, EventType, StreamItem};
pub use mcp_client::{
    ENVIRONMENT_CWD_VAR, ENVIRONMENT_ID_VAR, Environment, EnvironmentError, FailureReason,
    Progress, ProgressCallback, StartupFailure, WrapperEnvironment,
};
pub use mcp_client::{LOG_BURST, LOG_RATE, ListenTopic, SERVER_LOG_TARGET, SamplingRefusal};
pub use mcp_client::{LoadedSkill, SkillError, SkillFile, SkillReadSettings};
pub use mcp_client::{TaskHandle, TaskPhase, TaskState, TaskStateCallback};
pub use mcp_search::SearchError;
pub use policy::approvals::{Approval, must_ask};
pub use policy::approver::{
    ApprovalAnswer, ApprovalRequest, Approver, DeclineApprovals, approver_fn,
};
pub use policy::authority::{
    ApprovalPolicy, ElicitationReviewer, HostAuthority, PassToHandler, PermissionProfile,
    reviewer_fn,
};
pub use policy::drift::skills::{SkillChange, SkillDrift, classify_skills, skill_fingerprint};
pub use policy::drift::{RiskSign, ToolChange, ToolDrift, classify_listing, tool_fingerprint};
pub use policy::elicitation::{
    AcceptDefaults, BoxFuture, DeclineAll, ElicitationHandler, ElicitationRequest, elicitation_fn,
    fill_form_defaults, missing_required_defaults,
};
pub use policy::hooks::{CallHook, HookDenial, ToolCall, call_hook_fn};
pub use policy::host_meta::{HostMetadataProvider, MetadataContext, host_metadata_fn};
pub use policy::pins::{PinCheck, SkillPinCheck, TOOL_PINS_FILE, ToolPins};
pub use policy::sampling::{
    RefuseSampling, SamplingAnswer, SamplingHandler, SamplingRequest, SamplingReviewer,
    sampling_fn, sampling_reviewer_fn,
};
pub use policy::skill_loading::{
    SkillApprovalRequest, SkillApprover, SkillLoading, skill_approver_fn,
};
pub use results::{CallToolResultExt, ReadResourceResultExt};
pub use set::ConnectionSet;
pub use set::call::{CallOptions, SetTask, StartedCall};
pub use set::events_impl::{
    CursorStore, DEFAULT_EVENT_FEED_CAPACITY, EventFeed, EventFeedError, EventFeedInfo,
    EventFeedOptions, FileCursorStore,
};
pub use set::options::{
    ConnectionSetOptions, DEFAULT_LOGIN_POLL, DEFAULT_SHUTDOWN_TIMEOUT, DEFAULT_TOOLS_GRACE,
    default_client_info,
};
pub use set::pool::{
    ConnectionKey, ConnectionStatus, DEFAULT_RESTART_BACKOFF, DEFAULT_RESTART_BACKOFF_MAX,
    PoolStats, ServerPool,
};
pub use set::resources::{ListPage, Listing, ServerItem};
pub use set::server_info::ServerInfo;
pub use skill_error::{SkillLoadError, SkillRefusal};
pub use status::{ServerState, ServerStatus, StartupSummary};

/// The rmcp model types that appear in this crate's API (tools, results, resources,
/// elicitation), re-exported so hosts need not depend on rmcp directly.
///
/// To read results without matching these enums by hand, see [`CallToolResultExt`] and
/// [`ReadResourceResultExt`].
///
/// rmcp marks the sampling and logging types deprecated (SEP-2577), yet MCP 2025-11-25 and
/// 2026-07-28 define them and this crate uses them: they are re-exported here as type
/// aliases, so host code naming and constructing them (`CreateMessageResult::new`,
/// `SamplingMessage::assistant_text`) compiles without deprecation warnings. Reading one of
/// their fields directly still warns (rustc follows a field to its struct); their
/// constructors and methods do not.
pub mod model {
    pub use rmcp::model::{
        Annotations, ArgumentInfo, AudioContent, CallToolResult, CompletionContext, CompletionInfo,
        ContentBlock, ElicitRequestParams, ElicitResult, ElicitationAction, EmbeddedResource,
        GetPromptResult, ImageContent, Implementation, JsonObject, MetaObject, Prompt,
        PromptArgument, PromptMessage, ProtocolVersion, ReadResourceResult, Reference, Resource,
        ResourceContents, ResourceTemplate, Role, ServerCapabilities, TextContent, Tool,
        ToolAnnotations,
    };

    /// A sampling request's parameters (`sampling/createMessage`).
    #[expect(
        deprecated,
        reason = "rmcp marks sampling deprecated (SEP-2577); MCP defines it"
    )]
    pub type CreateMessageRequestParams = rmcp::model::CreateMessageRequestParams;
    /// A sampling answer (the model's message).
    #[expect(
        deprecated,
        reason = "rmcp marks sampling deprecated (SEP-2577); MCP defines it"
    )]
    pub type CreateMessageResult = rmcp::model::CreateMessageResult;
    /// One message of a sampling conversation.
    #[expect(
        deprecated,
        reason = "rmcp marks sampling deprecated (SEP-2577); MCP defines it"
    )]
    pub type SamplingMessage = rmcp::model::SamplingMessage;
    /// One content block of a sampling message.
    #[expect(
        deprecated,
        reason = "rmcp marks sampling deprecated (SEP-2577); MCP defines it"
    )]
    pub type SamplingMessageContentBlock = rmcp::model::SamplingMessageContentBlock;
    /// A server log level (`logging/setLevel`, `notifications/message`).
    #[expect(
        deprecated,
        reason = "rmcp marks logging deprecated (SEP-2577); MCP defines it"
    )]
    pub type LoggingLevel = rmcp::model::LoggingLevel;
}

// The README's example, compiled and run as a doc test (not part of the rendered docs).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

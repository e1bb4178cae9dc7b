//! Every variant's message, pinned word for word: the messages are part of what a host
//! shows a person, so a change to one must show up here.

use std::time::Duration;

use mcp_client::{FailureReason, StartupFailure};
use mcp_key::{EnvironmentId, McpServerKey, ServerName};
use pretty_assertions::assert_eq;

use super::{Error, NotApprovedReason};
use crate::events::CrashLoop;
use crate::status::ServerState;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(ServerName::new(name).unwrap())
}

fn key_in(env: &str, name: &str) -> McpServerKey {
    McpServerKey::in_environment(
        EnvironmentId::new(env).unwrap(),
        ServerName::new(name).unwrap(),
    )
}

fn not_ready(state: ServerState, crash_loop: Option<CrashLoop>) -> Error {
    Error::NotReady {
        server: key("s"),
        state: Box::new(state),
        crash_loop,
    }
}

fn spawn_failed() -> StartupFailure {
    StartupFailure::new(FailureReason::SpawnFailed, "cannot start `x`")
}

fn not_approved(reason: NotApprovedReason) -> Error {
    Error::NotApproved {
        server: key("s"),
        tool: "t".to_owned(),
        reason,
    }
}

/// The variant's name, by an exhaustive match: a new variant does not compile until it
/// has a case below.
fn variant(e: &Error) -> &'static str {
    match e {
        Error::UnknownServer { .. } => "UnknownServer",
        Error::UnknownTool { .. } => "UnknownTool",
        Error::StaleToolName { .. } => "StaleToolName",
        Error::ToolFiltered { .. } => "ToolFiltered",
        Error::NotReady { .. } => "NotReady",
        Error::InvalidArguments { .. } => "InvalidArguments",
        Error::Timeout { .. } => "Timeout",
        Error::Server { .. } => "Server",
        Error::Disconnected { .. } => "Disconnected",
        Error::Protocol { .. } => "Protocol",
        Error::RequiredServersFailed { .. } => "RequiredServersFailed",
        Error::AmbiguousServer { .. } => "AmbiguousServer",
        Error::CallDenied { .. } => "CallDenied",
        Error::HookRedirected { .. } => "HookRedirected",
        Error::ShutDown => "ShutDown",
        Error::ToolChanged { .. } => "ToolChanged",
        Error::NotApproved { .. } => "NotApproved",
        Error::Search(_) => "Search",
        Error::Unsupported { .. } => "Unsupported",
        Error::TaskLost { .. } => "TaskLost",
        Error::Declined { .. } => "Declined",
        Error::InputRequired { .. } => "InputRequired",
    }
}

/// One case or more per variant (and per optional part or list of a message), with its
/// message.
fn cases() -> Vec<(Error, &'static str)> {
    vec![
        (
            Error::UnknownServer {
                server: "nope".to_owned(),
                hint: " (known: a, b)".to_owned(),
            },
            "unknown MCP server `nope` (known: a, b)",
        ),
        (
            Error::UnknownServer {
                server: "nope".to_owned(),
                hint: String::new(),
            },
            "unknown MCP server `nope`",
        ),
        (
            Error::UnknownTool {
                name: "mcp__s__t".to_owned(),
            },
            "unknown tool `mcp__s__t`: it is not in the current tool list (list tools to see the names)",
        ),
        (
            Error::StaleToolName {
                name: "mcp__s__t".to_owned(),
                revision: 3,
                current_revision: 5,
            },
            "tool `mcp__s__t` from catalog revision 3 does not name the same tool in the current revision 5; list the tools again",
        ),
        (
            Error::ToolFiltered {
                server: key("s"),
                tool: "t".to_owned(),
            },
            "tool `t` of MCP server `s` is disabled by the server's tool filter (enabled_tools / disabled_tools)",
        ),
        (
            not_ready(ServerState::Starting, None),
            "MCP server `s` is not ready: still starting",
        ),
        (
            not_ready(ServerState::Ready { tools: 2 }, None),
            "MCP server `s` is not ready: ready",
        ),
        (
            not_ready(ServerState::Cancelled, None),
            "MCP server `s` is not ready: startup was cancelled",
        ),
        (
            not_ready(
                ServerState::Deferred {
                    tools: 1,
                    cached_at: std::time::SystemTime::UNIX_EPOCH,
                },
                None,
            ),
            "MCP server `s` is not ready: not started yet (its tools come from the cache)",
        ),
        (
            not_ready(ServerState::Failed(spawn_failed()), None),
            "MCP server `s` is not ready: it failed (spawn_failed)",
        ),
        (
            not_ready(
                ServerState::Failed(spawn_failed()),
                Some(CrashLoop {
                    crashes: 1,
                    retry_in: Duration::from_millis(500),
                }),
            ),
            "MCP server `s` is not ready: it failed (spawn_failed) (crash loop: 1 failure in a row; next restart in 0.5s)",
        ),
        (
            not_ready(
                ServerState::Failed(spawn_failed()),
                Some(CrashLoop {
                    crashes: 3,
                    retry_in: Duration::from_millis(12_340),
                }),
            ),
            "MCP server `s` is not ready: it failed (spawn_failed) (crash loop: 3 failures in a row; next restart in 12.3s)",
        ),
        (
            Error::InvalidArguments {
                server: key("s"),
                tool: "t".to_owned(),
                got: "array",
            },
            "arguments for tool `t` of MCP server `s` must be a JSON object, got array",
        ),
        (
            Error::Timeout {
                server: key("s"),
                tool: "t".to_owned(),
                after: Duration::from_millis(1500),
            },
            "tool `t` of MCP server `s` timed out after 1.5s (raise tool_timeout_sec or the call's timeout)",
        ),
        (
            Error::Server {
                server: key("s"),
                operation: "tools/call t".to_owned(),
                code: -32602,
                source: "bad params".into(),
            },
            "MCP server `s` returned an error for `tools/call t`",
        ),
        (
            Error::Disconnected {
                server: key("s"),
                operation: "tools/call t".to_owned(),
                source: "gone".into(),
            },
            "MCP server `s` disconnected during `tools/call t`",
        ),
        (
            Error::Protocol {
                server: key("s"),
                operation: "tools/list".to_owned(),
                source: "bad page".into(),
            },
            "MCP server `s` broke the protocol during `tools/list`",
        ),
        (
            Error::RequiredServersFailed {
                failures: vec![
                    (key("a"), spawn_failed()),
                    (
                        key_in("devbox", "b"),
                        StartupFailure::new(
                            FailureReason::Exited {
                                status: Some(3),
                                signal: None,
                            },
                            "the server exited",
                        )
                        .with_stderr_tail("boom\nbang".to_owned()),
                    ),
                ],
            },
            "required MCP servers failed to initialize: a: cannot start `x` (spawn_failed); b@devbox: the server exited; stderr: boom | bang (exited with status 3)",
        ),
        (
            Error::RequiredServersFailed { failures: vec![] },
            "required MCP servers failed to initialize: ",
        ),
        (
            Error::AmbiguousServer {
                name: "s".to_owned(),
                candidates: vec![key_in("a", "s"), key_in("b", "s")],
            },
            "MCP server name `s` exists in several environments (s@a, s@b); name the environment, e.g. `s@a`",
        ),
        (
            Error::AmbiguousServer {
                name: "s".to_owned(),
                candidates: vec![],
            },
            "MCP server name `s` exists in several environments (); name the environment, e.g. ``",
        ),
        (
            Error::CallDenied {
                server: key("s"),
                tool: "t".to_owned(),
                reason: "not today".to_owned(),
            },
            "the call of tool `t` on MCP server `s` was denied by a hook: not today",
        ),
        (
            Error::HookRedirected {
                server: key("s"),
                tool: "t".to_owned(),
                attempted: "other/t".to_owned(),
            },
            "a pre-call hook tried to move the call of tool `t` on MCP server `s` to `other/t`; hooks may rewrite arguments or deny a call, never change where it runs",
        ),
        (Error::ShutDown, "the MCP connection set is shut down"),
        (
            Error::ToolChanged {
                server: key("s"),
                tool: "t".to_owned(),
                changes: "description changed".to_owned(),
            },
            "tool `t` of MCP server `s` changed since it was approved (description changed); it is not called until the host accepts the change (ConnectionSet::accept_tool_changes)",
        ),
        (
            not_approved(NotApprovedReason::Declined),
            "tool `t` of MCP server `s` was not called: the approval was declined (call it again to be asked again, or set the tool's approval_mode to \"approve\" in the configuration to run it without asking)",
        ),
        (
            not_approved(NotApprovedReason::NoApprover),
            "tool `t` of MCP server `s` was not called: its approval mode asks the user and this host has no approver (set one with ConnectionSetOptions::with_approver, or set the tool's approval_mode to \"approve\" in the configuration)",
        ),
        (
            not_approved(NotApprovedReason::KeptChanging { answers: 3 }),
            "tool `t` of MCP server `s` was not called: the server changed the tool's definition after each of 3 answers, so what it lists now was never approved (call it again to be asked about the definition it lists then)",
        ),
        (
            Error::Search(mcp_search::SearchError::ZeroLimit),
            "the search limit is 0: ask for at least 1 result",
        ),
        (
            Error::Unsupported {
                server: key("s"),
                operation: "resources/subscribe file:///a".to_owned(),
                source: "no resources.subscribe".into(),
            },
            "MCP server `s` does not support `resources/subscribe file:///a`",
        ),
        (
            Error::TaskLost {
                server: key("s"),
                operation: "research".to_owned(),
                task: "t1".to_owned(),
                source: "cancelled".into(),
            },
            "MCP server `s` ran `research` as a task that gave no result",
        ),
        (
            Error::Declined {
                server: key("s"),
                operation: "tools/call t".to_owned(),
                source: "sampling declined".into(),
            },
            "MCP server `s`: `tools/call t` could not go on",
        ),
        (
            Error::InputRequired {
                server: key("s"),
                operation: "tools/call t".to_owned(),
                result: Box::new(serde_json::json!({"inputRequests": {}})),
            },
            "MCP server `s` asked for input during `tools/call t`; the call waits to be resumed with the answers",
        ),
    ]
}

#[test]
fn every_variant_keeps_its_message() {
    let cases = cases();
    let got: Vec<(&str, String)> = cases
        .iter()
        .map(|(e, _)| (variant(e), e.to_string()))
        .collect();
    let want: Vec<(&str, String)> = cases
        .iter()
        .map(|(e, m)| (variant(e), (*m).to_owned()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn every_variant_has_a_case() {
    let covered: std::collections::BTreeSet<&str> =
        cases().iter().map(|(e, _)| variant(e)).collect();
    assert_eq!(covered.len(), 22, "a case for each variant: {covered:?}");
}

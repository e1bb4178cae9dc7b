//! The gateway's approval question: a tool whose approval mode asks is asked through the
//! calling client's elicitation (a request in the 2025 era, an `input_required` round in the
//! 2026 era), and refused unless the answer approves.

use mcp_auth::CredentialVault;
use mcp_catalog::ToolDriftPolicy;
use mcp_connections::model::{
    CallToolResult, ElicitRequestParams, ElicitResult, ElicitationAction,
};
use mcp_connections::{CallOptions, ConnectionSet, ToolDrift};
use mcp_key::{Fingerprint, McpServerKey};

use super::caller::Caller;
use super::identity::vault::HubVault;
use super::outcome::error_result;
pub(crate) use super::target::Target;
use serde_json::{Value, json};

/// The longest rendering of a call's arguments in the question, in characters.
const MAX_SHOWN_ARGUMENTS: usize = 600;

/// What the approval rule says about a call.
pub(crate) enum Verdict {
    /// Make the call, to exactly this target.
    Call(Target),
    /// The user did not approve: this result instead of the call.
    Refused(CallToolResult),
}

impl Target {
    /// Makes the call on `set` with `options`; a call to a resolved tool is timed on
    /// `board` (the status page's calls per server).
    pub(crate) async fn call(
        self,
        set: &ConnectionSet,
        board: &super::status::Board,
        arguments: Option<Value>,
        options: CallOptions,
    ) -> mcp_connections::Result<CallToolResult> {
        match self {
            Self::Resolved(server, tool) => {
                let call = set.call_tool(&server, &tool, arguments, options);
                board.timed(&server, call).await
            }
            Self::Unresolved(name) => {
                // Nothing is sent: the arguments and options go unused.
                let _ = (arguments, options);
                let why = async {
                    match set.resolve_qualified_now(&name).await {
                        Err(e) => Err(e),
                        // Its server came up after the rule looked: the rule never saw
                        // this tool, so it is not called now.
                        Ok((server, _)) => Ok(error_result(format!(
                            "MCP server `{server}` came up while mcpctl serve was deciding about `{name}`; call it again"
                        ))),
                    }
                };
                board.timed_unresolved(why).await
            }
        }
    }
}

/// The approval rule for calling `name` with `arguments` on `set`, in both eras: the name
/// is resolved once, with its server brought up first (so a tool whose approval mode asks
/// is never called unasked because its server was starting or restarting), and the call
/// goes to what it resolved to; when the mode asks, `ask` puts the question to the client
/// (`None`: it cannot be asked, which refuses).
///
/// With `remember`, an approval holds for the rest of the set's life (a 2025-era session),
/// and the question says so. When the gateway has its credential store open (`vault`), a
/// remembered approval is kept there instead, for the caller: every session of theirs, on
/// every instance sharing the store, for the tool's definition as approved (a changed
/// definition is asked about again; another caller is still asked), and any call of that
/// caller (either era) finds it.
///
/// A changed tool (drift) is asked about only when `caller` may accept it for everyone
/// ([`Caller::may_accept_drift`]); anyone else's call of it is refused as changed. With the
/// store open, an accepted change is recorded there, and a change already accepted there
/// (on any instance) for the definition listed now is accepted here without asking.
pub(crate) async fn check<F, Fut>(
    set: &ConnectionSet,
    vault: &HubVault,
    caller: &Caller,
    name: &str,
    arguments: Option<&Value>,
    remember: bool,
    ask: F,
) -> Verdict
where
    F: FnOnce(ElicitRequestParams) -> Fut,
    Fut: std::future::Future<Output = Option<ElicitResult>>,
{
    let Some((server, tool)) = set.resolve_tool_settled(name).await else {
        return Verdict::Call(Target::Unresolved(name.to_owned()));
    };
    let shared = match vault {
        HubVault::Open(vault) => Some(vault.as_ref()),
        _ => None,
    };
    if let Some(drift) = set.tool_drift(&server).into_iter().find(|d| d.tool == tool) {
        return check_drift(set, shared, caller, (server, tool), &drift, arguments, ask).await;
    }
    if !set.approval(&server, &tool).is_ok_and(|a| a.must_ask()) {
        return Verdict::Call(Target::Resolved(server, tool));
    }
    // The definition an approval is for: the one listed now.
    let definition = set
        .listed_tool(&server, &tool)
        .as_ref()
        .map(mcp_connections::tool_fingerprint);
    if let (Some(vault), Some(definition)) = (shared, definition.as_ref())
        && remembered_for(vault, caller, &server, &tool, definition).await
    {
        return Verdict::Call(Target::Resolved(server, tool));
    }
    let kept = match (remember, shared.is_some() && definition.is_some()) {
        (false, _) => Kept::ThisCall,
        (true, false) => Kept::Session,
        (true, true) => Kept::Caller,
    };
    let approved = match approval_question(&server, &tool, arguments, kept) {
        Some(question) => ask(question).await.is_some_and(|answer| approves(&answer)),
        None => false,
    };
    if !approved {
        return Verdict::Refused(not_approved(&server, &tool));
    }
    match (kept, shared) {
        (Kept::Caller, Some(vault)) => {
            let remembered = vault
                .remember_approval(caller.id(), &server, &tool, definition.as_ref())
                .await;
            if let Err(e) = remembered {
                // Not kept for the caller: kept for the session, as without a store.
                tracing::warn!(server = %server, tool, "approval not remembered in the credential store: {}", mcp_key::error_chain(&e));
                let _ = set.remember_approval(&server, &tool);
            }
        }
        (Kept::Session | Kept::Caller, _) => {
            let _ = set.remember_approval(&server, &tool);
        }
        (Kept::ThisCall, _) => {}
    }
    Verdict::Call(Target::Resolved(server, tool))
}

/// Whether `caller` approved `tool` of `server` as defined now (`definition`) and the
/// store remembers it. A store that cannot be read remembers nothing (the user is asked).
async fn remembered_for(
    vault: &CredentialVault,
    caller: &Caller,
    server: &McpServerKey,
    tool: &str,
    definition: &Fingerprint,
) -> bool {
    match vault.remembered_approval(caller.id(), server, tool).await {
        Ok(found) => found.is_some_and(|a| a.covers(Some(definition))),
        Err(e) => {
            tracing::warn!(server = %server, tool, "remembered approvals unreadable, asking: {}", mcp_key::error_chain(&e));
            false
        }
    }
}

/// The approval rule for a call of a held-back (changed) tool: see [`check`].
async fn check_drift<F, Fut>(
    set: &ConnectionSet,
    shared: Option<&CredentialVault>,
    caller: &Caller,
    (server, tool): (McpServerKey, String),
    drift: &ToolDrift,
    arguments: Option<&Value>,
    ask: F,
) -> Verdict
where
    F: FnOnce(ElicitRequestParams) -> Fut,
    Fut: std::future::Future<Output = Option<ElicitResult>>,
{
    // Held back since it changed. Under `reapprove` the client is asked whether to
    // accept the new definition; a yes accepts it (for later calls too) and approves
    // this call. Otherwise (`block`, no answer, a no) the call is refused as changed.
    if set.tool_drift_policy(&server) != ToolDriftPolicy::Reapprove {
        return Verdict::Call(Target::Resolved(server, tool));
    }
    // The definition the question shows is the one a yes accepts, nothing listed later.
    let shown = set.listed_tool(&server, &drift.tool);
    let seen = shown.as_ref().map(mcp_connections::tool_fingerprint);
    // Accepted already on an instance sharing the store: accepted here too, unasked.
    if let Some(vault) = shared
        && accepted_in(vault, &server, &tool, seen.as_ref()).await
        && set
            .accept_tool_change_seen(&server, &tool, seen.as_ref())
            .is_ok_and(|accepted| accepted)
    {
        return Verdict::Call(Target::Resolved(server, tool));
    }
    // Accepting pins the new definition for every caller: a grant's to decide.
    if !caller.may_accept_drift(&server) {
        return Verdict::Refused(not_yours_to_accept(&server, &tool, drift));
    }
    let question = drift_question(set, &server, drift, shown.as_ref(), arguments);
    let accepted = match question {
        Some(question) => ask(question).await.is_some_and(|answer| approves(&answer)),
        None => false,
    };
    if !accepted {
        return Verdict::Refused(not_reapproved(&server, &tool, drift));
    }
    match set.accept_tool_change_seen(&server, &tool, seen.as_ref()) {
        Ok(true) => {
            if let Some(vault) = shared {
                let recorded = vault
                    .accept_drift(&server, &tool, seen.as_ref(), caller.id())
                    .await;
                if let Err(e) = recorded {
                    tracing::warn!(server = %server, tool, "accepted tool change not recorded in the credential store (other instances ask again): {}", mcp_key::error_chain(&e));
                }
            }
            Verdict::Call(Target::Resolved(server, tool))
        }
        _ => Verdict::Refused(changed_while_asked(&server, &tool)),
    }
}

/// Whether the store holds an acceptance of `tool` of `server` changed to `seen`. A store
/// that cannot be read holds none (the change is asked about).
async fn accepted_in(
    vault: &CredentialVault,
    server: &McpServerKey,
    tool: &str,
    seen: Option<&Fingerprint>,
) -> bool {
    match vault.accepted_drift(server, tool).await {
        Ok(found) => found.is_some_and(|a| a.covers(seen)),
        Err(e) => {
            tracing::warn!(server = %server, tool, "accepted tool changes unreadable, asking: {}", mcp_key::error_chain(&e));
            false
        }
    }
}

/// How long a yes to the approval question holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kept {
    /// This call only.
    ThisCall,
    /// The rest of the client's session (the set's life).
    Session,
    /// Every call of the caller, on every instance sharing the credential store, until
    /// the tool changes.
    Caller,
}

/// `text` as a quoted string whose quotes, backslashes and control characters are
/// escaped: a tool name is the server's text and must not be able to end the quote and
/// write the rest of the question.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
}

/// The first [`MAX_SHOWN_ARGUMENTS`] characters of `text`, and whether that cut it.
fn head(text: &str) -> (String, bool) {
    let head: String = text.chars().take(MAX_SHOWN_ARGUMENTS).collect();
    let cut = head.len() < text.len();
    (head, cut)
}

/// The arguments as compact JSON, cut to [`MAX_SHOWN_ARGUMENTS`] characters.
fn shown_arguments(arguments: Option<&Value>) -> String {
    let Some(arguments) = arguments else {
        return "no arguments".to_owned();
    };
    let text = arguments.to_string();
    match head(&text) {
        (head, false) => format!("arguments {head}"),
        (head, true) => format!(
            "arguments {head}… ({} characters in all)",
            text.chars().count()
        ),
    }
}

/// The form that asks the user whether `tool` of `server` may run with `arguments`.
fn approval_question(
    server: &McpServerKey,
    tool: &str,
    arguments: Option<&Value>,
    kept: Kept,
) -> Option<ElicitRequestParams> {
    let schema = json!({
        "type": "object",
        "properties": {"approve": {"type": "boolean", "title": "Run it?"}},
        "required": ["approve"],
    });
    let kept = match kept {
        Kept::Session => {
            "A yes is remembered for this tool of this server until this client disconnects or the server changes the tool; later calls, with any arguments, are not asked again."
        }
        Kept::Caller => {
            "A yes is remembered for you, for this tool of this server, in every session and on every instance of this gateway, until the server changes the tool; later calls, with any arguments, are not asked again."
        }
        Kept::ThisCall => "The answer holds for this call only.",
    };
    serde_json::from_value::<ElicitRequestParams>(json!({
        "mode": "form",
        "message": format!(
            "Allow the tool {} of MCP server {} to run with {}? {kept}",
            quoted(tool),
            quoted(&server.to_string()),
            shown_arguments(arguments)
        ),
        "requestedSchema": schema,
    }))
    .ok()
}

/// The form that asks the user whether to accept the changed definition of a held-back
/// tool and run it: what changed, and the description before and after (escaped, cut).
fn drift_question(
    set: &ConnectionSet,
    server: &McpServerKey,
    drift: &ToolDrift,
    shown: Option<&mcp_connections::model::Tool>,
    arguments: Option<&Value>,
) -> Option<ElicitRequestParams> {
    let description = |tool: Option<mcp_connections::model::Tool>| {
        let text = tool
            .and_then(|t| t.description.map(|d| d.to_string()))
            .unwrap_or_default();
        let (head, cut) = head(&text);
        format!("{}{}", quoted(&head), if cut { "…" } else { "" })
    };
    let before = description(set.pinned_tool(server, &drift.tool));
    let after = description(shown.cloned());
    let schema = json!({
        "type": "object",
        "properties": {"approve": {"type": "boolean", "title": "Accept the change and run it?"}},
        "required": ["approve"],
    });
    serde_json::from_value::<ElicitRequestParams>(json!({
        "mode": "form",
        "message": format!(
            "The tool {} of MCP server {} changed since it was approved: {}. Description before: {before}. Description now: {after}. Accept the new definition and run it with {}? A yes accepts it for later calls too.",
            quoted(&drift.tool),
            quoted(&server.to_string()),
            drift.describe(),
            shown_arguments(arguments)
        ),
        "requestedSchema": schema,
    }))
    .ok()
}

/// The result of a call of a held-back tool by a caller who may not accept its change for
/// everyone (no grant of its server with `accept_drift`).
fn not_yours_to_accept(server: &McpServerKey, tool: &str, drift: &ToolDrift) -> CallToolResult {
    error_result(format!(
        "tool `{tool}` of MCP server `{server}` changed since it was approved ({}); it is not called until someone whose grant of `{server}` has `accept_drift = true` accepts the change (or `mcpctl accept {server} {tool}` on the gateway's machine)",
        drift.describe()
    ))
}

/// The result of a call of a held-back tool whose change was not accepted.
fn not_reapproved(server: &McpServerKey, tool: &str, drift: &ToolDrift) -> CallToolResult {
    error_result(format!(
        "tool `{tool}` of MCP server `{server}` changed since it was approved ({}); the change was not accepted, so it was not called (accept it with `mcpctl accept {server} {tool}`)",
        drift.describe()
    ))
}

/// The result of a call of a held-back tool whose server changed it again while the user
/// was asked: what they accepted is not what it lists now, so nothing was accepted.
fn changed_while_asked(server: &McpServerKey, tool: &str) -> CallToolResult {
    error_result(format!(
        "tool `{tool}` of MCP server `{server}` changed again while the user was deciding; the definition they saw is not the one it lists now, so nothing was accepted and it was not called (call it again to be asked about the definition it has now)"
    ))
}

/// Whether the answer to [`approval_question`] approves.
fn approves(answer: &ElicitResult) -> bool {
    answer.action == ElicitationAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
}

/// The unapproved call's result.
fn not_approved(server: &McpServerKey, tool: &str) -> CallToolResult {
    error_result(format!(
        "the user did not approve running `{tool}` of MCP server `{server}`"
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn message(question: &ElicitRequestParams) -> String {
        serde_json::to_value(question).unwrap()["message"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn the_question_quotes_the_tool_shows_the_arguments_and_says_what_is_remembered() {
        let server = McpServerKey::unscoped("notes".parse().unwrap());
        let sneaky = "rm` of MCP server `trusted` to run? yes\nAllow `x";
        let args = json!({"path": "/etc/passwd"});
        let q = approval_question(&server, sneaky, Some(&args), Kept::Session).unwrap();
        let text = message(&q);
        assert!(
            text.starts_with(r#"Allow the tool "rm` of MCP server `trusted` to run? yes\nAllow `x" of MCP server "notes""#),
            "{text}"
        );
        assert!(
            text.contains(r#"with arguments {"path":"/etc/passwd"}?"#),
            "{text}"
        );
        assert!(
            text.contains("remembered for this tool of this server until this client disconnects"),
            "{text}"
        );
        let once = message(&approval_question(&server, "t", None, Kept::ThisCall).unwrap());
        assert!(once.contains("with no arguments?"), "{once}");
        assert!(once.contains("for this call only"), "{once}");
        let shared = message(&approval_question(&server, "t", None, Kept::Caller).unwrap());
        assert!(
            shared.contains("remembered for you, for this tool of this server, in every session and on every instance"),
            "{shared}"
        );
    }

    #[test]
    fn long_arguments_are_cut_with_their_size() {
        let long = json!({"text": "x".repeat(5000)});
        let shown = shown_arguments(Some(&long));
        assert!(shown.chars().count() < MAX_SHOWN_ARGUMENTS + 60, "{shown}");
        assert!(shown.ends_with("(5011 characters in all)"), "{shown}");
    }
}

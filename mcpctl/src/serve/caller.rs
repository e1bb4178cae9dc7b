//! Who calls the gateway ([`Caller`]) and what they may use.
//!
//! With the static bearer token (the default) and over stdio there is one caller with
//! everything. With `[gateway.oauth]` each valid access token is a caller: its `sub`, its
//! groups (the configured claim) and its scopes, and what the configuration's
//! `[[gateway.grants]]` give them: the servers a grant that applies to the caller names,
//! and on each of them the tools it names (every tool when it names none). With no grant
//! written, every caller with a valid token has everything.
//!
//! What a caller may not use is neither listed (tools, search results, resources,
//! templates, prompts) nor reachable: a call of such a tool is refused with the same
//! error as a tool that does not exist ([`not_available`]), and a resource or prompt of a
//! server it may not use is "not found".
//!
//! The HTTP guard puts the caller of each request into the request's extensions; the
//! gateway reads it back from the request context rmcp hands it ([`caller_for`]).

use std::sync::Arc;

use mcp_catalog::GatewayGrant;
use mcp_key::McpServerKey;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

/// The id of the one caller with the static token (or over stdio).
pub(crate) const STATIC_CALLER: &str = "static-token";

/// What a caller may use.
#[derive(Debug, Clone)]
enum Access {
    /// Every server and tool.
    Everything,
    /// What these grants give (none: nothing).
    Grants(Vec<GatewayGrant>),
}

/// One caller: the static token's, or a token's subject with what its groups and scopes
/// (and its subject) were granted.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    id: String,
    subject: String,
    access: Access,
    /// The access token this request presented (`[gateway.oauth]`): what an
    /// `upstream_identity = "exchange"` server's token is exchanged from; never sent
    /// upstream (see `identity`).
    token: Option<mcp_key::Secret>,
}

impl Caller {
    /// The one caller of the static token (or of stdio), with everything.
    pub(crate) fn static_token() -> Self {
        Self {
            id: STATIC_CALLER.to_owned(),
            subject: STATIC_CALLER.to_owned(),
            access: Access::Everything,
            token: None,
        }
    }

    /// A token's caller: what the `grants` that apply to it give (every grant written;
    /// none written gives everything).
    pub(crate) fn from_token(
        subject: String,
        groups: Vec<String>,
        scopes: Vec<String>,
        grants: &[GatewayGrant],
    ) -> Self {
        let access = if grants.is_empty() {
            Access::Everything
        } else {
            Access::Grants(
                grants
                    .iter()
                    .filter(|g| g.applies_to(&subject, &groups, &scopes))
                    .cloned()
                    .collect(),
            )
        };
        Self {
            id: format!("sub:{subject}"),
            subject,
            access,
            token: None,
        }
    }

    /// The caller with the access token its request presented.
    #[must_use]
    pub(crate) fn with_token(mut self, token: mcp_key::Secret) -> Self {
        self.token = Some(token);
        self
    }

    /// The access token the request presented (none for the static token's caller).
    pub(crate) fn token(&self) -> Option<&mcp_key::Secret> {
        self.token.as_ref()
    }

    /// A caller that may use nothing (a request that reached the gateway without the
    /// guard's word on who sent it).
    pub(crate) fn nobody() -> Self {
        Self {
            id: "nobody".to_owned(),
            subject: String::new(),
            access: Access::Grants(Vec::new()),
            token: None,
        }
    }

    /// What sessions, parked calls and tasks are bound to.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The token's subject (`sub`).
    pub(crate) fn subject(&self) -> &str {
        &self.subject
    }

    /// Whether the caller may use every server and tool.
    pub(crate) fn has_everything(&self) -> bool {
        matches!(self.access, Access::Everything)
    }

    /// Whether the caller may use `server` (its resources, templates, prompts, and the
    /// tools of it a grant names).
    pub(crate) fn may_use_server(&self, server: &McpServerKey) -> bool {
        match &self.access {
            Access::Everything => true,
            Access::Grants(grants) => {
                let name = server.to_string();
                grants.iter().any(|g| g.covers_server(&name))
            }
        }
    }

    /// Whether the caller may accept a changed tool of `server` for everyone (the
    /// gateway's re-approval of drifted tools): with no grants (one person's gateway)
    /// yes; in a team gateway only through a grant of that server with `accept_drift`.
    pub(crate) fn may_accept_drift(&self, server: &McpServerKey) -> bool {
        match &self.access {
            Access::Everything => true,
            Access::Grants(grants) => {
                let name = server.to_string();
                grants
                    .iter()
                    .any(|g| g.accepts_drift() && g.covers_server(&name))
            }
        }
    }

    /// Whether the caller may list and call `tool` (its own name) of `server`.
    pub(crate) fn may_use_tool(&self, server: &McpServerKey, tool: &str) -> bool {
        match &self.access {
            Access::Everything => true,
            Access::Grants(grants) => {
                let name = server.to_string();
                grants.iter().any(|g| g.covers_tool(&name, tool))
            }
        }
    }
}

/// The caller of the request of `context`: the one the HTTP guard found; over stdio the
/// static one; over HTTP without the guard's word, nobody.
pub(crate) fn caller_for(context: &RequestContext<RoleServer>) -> Arc<Caller> {
    match context.extensions.get::<http::request::Parts>() {
        None => Arc::new(Caller::static_token()),
        Some(parts) => parts
            .extensions
            .get::<Arc<Caller>>()
            .cloned()
            .unwrap_or_else(|| Arc::new(Caller::nobody())),
    }
}

/// Whether `caller` may make the call the approval rule resolved: a tool of theirs, or,
/// for a caller with everything, a name that resolved to nothing (its call fails with
/// why).
pub(crate) fn may_call(caller: &Caller, target: &super::target::Target) -> bool {
    match target {
        super::target::Target::Resolved(server, tool) => caller.may_use_tool(server, tool),
        super::target::Target::Unresolved(_) => caller.has_everything(),
    }
}

/// The error for a tool `name` the caller cannot call: the same whether it does not
/// exist or is not theirs, so it tells nothing of tools they may not use.
pub(crate) fn not_available(name: &str) -> McpError {
    McpError::invalid_params(
        format!(
            "no tool {name:?} is available to you through this gateway; list the tools to see yours"
        ),
        None,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn key(name: &str) -> McpServerKey {
        McpServerKey::unscoped(name.parse().unwrap())
    }

    #[test]
    fn grants_give_servers_and_tools_to_whom_they_apply() {
        let grants = vec![
            GatewayGrant::new(["notes"]).with_groups(["writers"]),
            GatewayGrant::new(["files"])
                .with_subjects(["alice"])
                .with_tools(["read_*"]),
        ];
        let alice = Caller::from_token("alice".into(), vec![], vec![], &grants);
        assert!(alice.may_use_server(&key("files")));
        assert!(alice.may_use_tool(&key("files"), "read_file"));
        assert!(!alice.may_use_tool(&key("files"), "delete_file"));
        assert!(!alice.may_use_server(&key("notes")));
        let bob = Caller::from_token("bob".into(), vec!["writers".into()], vec![], &grants);
        assert!(bob.may_use_tool(&key("notes"), "anything"));
        assert!(!bob.may_use_server(&key("files")));
        let eve = Caller::from_token("eve".into(), vec![], vec![], &grants);
        assert!(!eve.may_use_server(&key("notes")) && !eve.has_everything());
        let anyone = Caller::from_token("eve".into(), vec![], vec![], &[]);
        assert!(anyone.has_everything(), "no grant written: everything");
        assert_ne!(alice.id(), bob.id());
        assert!(!Caller::nobody().may_use_server(&key("notes")));
        assert!(Caller::static_token().has_everything());
    }
}

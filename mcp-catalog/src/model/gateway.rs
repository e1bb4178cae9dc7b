//! The `[gateway]` table: how a gateway in front of the catalog (`mcpctl serve --http`)
//! authenticates its callers and what each caller may use.
//!
//! ```toml
//! [gateway]
//! public_url = "https://mcp.example.com"  # where upstream servers POST webhook events
//!
//! [gateway.oauth]                      # opt-in: OAuth 2.1 resource server
//! issuer = "https://idp.example.com/realms/team"
//! resource = "https://mcp.example.com/mcp"    # default: the URL the gateway is bound to
//! scopes = ["mcp"]                     # every token needs all of them
//! groups_claim = "groups"              # the default
//! validation = "jwt"                   # or "introspection" (with client_id, client_secret_env)
//!
//! [gateway.limits]
//! clients_per_principal = 4
//! calls_per_principal = 8
//!
//! [[gateway.grants]]
//! groups = ["platform"]                # who: subjects, groups and/or scopes (any matches)
//! servers = ["*"]                      # what: server names, `*` matches any run of characters
//!
//! [[gateway.grants]]
//! subjects = ["alice"]
//! servers = ["notes"]
//! tools = ["echo", "read_*"]           # the tools' own names on those servers; default ["*"]
//! ```
//!
//! This module holds the shape and the matching rules ([`GatewayGrant`], [`glob_match`]);
//! validating tokens is the gateway's.

/// The `[gateway]` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayConfig {
    pub(crate) public_url: Option<String>,
    pub(crate) oauth: Option<GatewayOAuth>,
    pub(crate) limits: GatewayLimits,
    pub(crate) grants: Vec<GatewayGrant>,
}

impl GatewayConfig {
    /// An empty table: no OAuth (the gateway's static token), default limits, no grants.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `public_url`.
    #[must_use]
    pub fn with_public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = Some(url.into());
        self
    }

    /// `public_url`, when written: the URL (scheme, host, port, maybe a path prefix) at
    /// which upstream servers reach the gateway's `--http` listener, for instance through
    /// a TLS proxy. With it, the gateway receives the webhook deliveries of the Events
    /// extension for servers that deliver events only by webhook: the callback URLs it
    /// gives them start with it (an `http://` URL or a trailing `/` is accepted as
    /// written). Without it, such event types are not relayed.
    pub fn public_url(&self) -> Option<&str> {
        self.public_url.as_deref()
    }

    /// Sets `[gateway.oauth]`.
    #[must_use]
    pub fn with_oauth(mut self, oauth: GatewayOAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Sets `[gateway.limits]`.
    #[must_use]
    pub fn with_limits(mut self, limits: GatewayLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Adds a `[[gateway.grants]]` entry.
    #[must_use]
    pub fn with_grant(mut self, grant: GatewayGrant) -> Self {
        self.grants.push(grant);
        self
    }

    /// `[gateway.oauth]`, when written: the gateway is an OAuth resource server.
    pub fn oauth(&self) -> Option<&GatewayOAuth> {
        self.oauth.as_ref()
    }

    /// `[gateway.limits]`.
    pub fn limits(&self) -> &GatewayLimits {
        &self.limits
    }

    /// The `[[gateway.grants]]` entries, in file order. None written: every caller with a
    /// valid token may use everything.
    pub fn grants(&self) -> &[GatewayGrant] {
        &self.grants
    }
}

/// How access tokens are checked (`validation`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenValidation {
    /// JWT access tokens (RFC 9068) checked against the issuer's JSON Web Key Set, found
    /// through its metadata's `jwks_uri` (the default).
    Jwt,
    /// RFC 7662 token introspection, the gateway authenticating as a client of the
    /// authorization server.
    Introspection(Introspection),
}

/// The settings of [`TokenValidation::Introspection`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Introspection {
    pub(crate) endpoint: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_secret_env: String,
}

impl Introspection {
    /// The gateway's client id and the environment variable holding its secret.
    pub fn new(client_id: impl Into<String>, client_secret_env: impl Into<String>) -> Self {
        Self {
            endpoint: None,
            client_id: client_id.into(),
            client_secret_env: client_secret_env.into(),
        }
    }

    /// Sets the endpoint (default: the issuer metadata's `introspection_endpoint`).
    #[must_use]
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// `introspection_endpoint`, when written.
    pub fn endpoint(&self) -> Option<&str> {
        self.endpoint.as_deref()
    }

    /// `client_id`.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// `client_secret_env`: the environment variable the gateway reads its client secret
    /// from (a secret never sits in the file).
    pub fn client_secret_env(&self) -> &str {
        &self.client_secret_env
    }
}

/// `[gateway.oauth]`: the gateway as an OAuth 2.1 resource server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayOAuth {
    pub(crate) issuer: String,
    pub(crate) resource: Option<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) groups_claim: Option<String>,
    pub(crate) algorithms: Vec<String>,
    pub(crate) validation: TokenValidation,
}

/// The claim a principal's groups are read from unless `groups_claim` says otherwise.
pub const DEFAULT_GROUPS_CLAIM: &str = "groups";

impl GatewayOAuth {
    /// Tokens of `issuer`, checked as JWTs, no scope required.
    pub fn new(issuer: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            resource: None,
            scopes: Vec::new(),
            groups_claim: None,
            algorithms: Vec::new(),
            validation: TokenValidation::Jwt,
        }
    }

    /// Sets the gateway's own resource URL (what `aud` must name).
    #[must_use]
    pub fn with_resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// Sets the scopes every token needs.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the claim groups are read from.
    #[must_use]
    pub fn with_groups_claim(mut self, claim: impl Into<String>) -> Self {
        self.groups_claim = Some(claim.into());
        self
    }

    /// Sets the JWT signature algorithms accepted (names as in JWS, e.g. `RS256`).
    #[must_use]
    pub fn with_algorithms<I, S>(mut self, algorithms: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.algorithms = algorithms.into_iter().map(Into::into).collect();
        self
    }

    /// Sets how tokens are checked.
    #[must_use]
    pub fn with_validation(mut self, validation: TokenValidation) -> Self {
        self.validation = validation;
        self
    }

    /// `issuer`: the authorization server's issuer identifier (its metadata's `issuer`,
    /// and every token's `iss`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// `resource`, when written: the gateway's canonical URL as clients see it.
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// `scopes`: every token must carry all of them.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// `groups_claim`, else [`DEFAULT_GROUPS_CLAIM`].
    pub fn groups_claim(&self) -> &str {
        self.groups_claim.as_deref().unwrap_or(DEFAULT_GROUPS_CLAIM)
    }

    /// `algorithms`, as written (empty: the gateway's default allow-list).
    pub fn algorithms(&self) -> &[String] {
        &self.algorithms
    }

    /// `validation`.
    pub fn validation(&self) -> &TokenValidation {
        &self.validation
    }
}

/// `[gateway.limits]`: bounds per principal (`None`: the gateway's default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayLimits {
    pub(crate) clients_per_principal: Option<usize>,
    pub(crate) calls_per_principal: Option<usize>,
}

impl GatewayLimits {
    /// Every limit at the gateway's default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `clients_per_principal`.
    #[must_use]
    pub fn with_clients_per_principal(mut self, n: usize) -> Self {
        self.clients_per_principal = Some(n);
        self
    }

    /// Sets `calls_per_principal`.
    #[must_use]
    pub fn with_calls_per_principal(mut self, n: usize) -> Self {
        self.calls_per_principal = Some(n);
        self
    }

    /// `clients_per_principal`: sessions, listens and event streams one principal may hold at once.
    pub fn clients_per_principal(&self) -> Option<usize> {
        self.clients_per_principal
    }

    /// `calls_per_principal`: calls one principal may have in flight at once.
    pub fn calls_per_principal(&self) -> Option<usize> {
        self.calls_per_principal
    }
}

/// One `[[gateway.grants]]` entry: who (any of `subjects`, `groups`, `scopes`) may use
/// which servers and, on them, which tools, and (`accept_drift = true`) whether they may
/// accept a changed tool of those servers for everyone. Names are patterns ([`glob_match`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatewayGrant {
    pub(crate) subjects: Vec<String>,
    pub(crate) groups: Vec<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) servers: Vec<String>,
    pub(crate) tools: Option<Vec<String>>,
    pub(crate) accept_drift: bool,
}

impl GatewayGrant {
    /// A grant of `servers` (patterns) to nobody yet: add subjects, groups or scopes.
    pub fn new<I, S>(servers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            servers: servers.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Grants it to these subjects (`sub`).
    #[must_use]
    pub fn with_subjects<I, S>(mut self, subjects: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.subjects = subjects.into_iter().map(Into::into).collect();
        self
    }

    /// Grants it to members of these groups.
    #[must_use]
    pub fn with_groups<I, S>(mut self, groups: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.groups = groups.into_iter().map(Into::into).collect();
        self
    }

    /// Grants it to tokens carrying one of these scopes.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Only these tools of the servers (their own names, patterns).
    #[must_use]
    pub fn with_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Lets the grant's callers accept a changed tool of its servers (tool pins, the
    /// gateway's re-approval) for every caller: `accept_drift = true`. Off by default: a
    /// caller without it is refused a changed tool instead of being asked.
    #[must_use]
    pub fn with_accept_drift(mut self, accept: bool) -> Self {
        self.accept_drift = accept;
        self
    }

    /// `accept_drift`: whether the grant's callers may accept a changed tool of its servers
    /// for everyone.
    pub fn accepts_drift(&self) -> bool {
        self.accept_drift
    }

    /// `subjects`.
    pub fn subjects(&self) -> &[String] {
        &self.subjects
    }

    /// `groups`.
    pub fn groups(&self) -> &[String] {
        &self.groups
    }

    /// `scopes`.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// `servers`.
    pub fn servers(&self) -> &[String] {
        &self.servers
    }

    /// `tools`, when written (absent: every tool of the servers).
    pub fn tools(&self) -> Option<&[String]> {
        self.tools.as_deref()
    }

    /// Whether the grant is for a caller with this subject, groups and scopes.
    pub fn applies_to(&self, subject: &str, groups: &[String], scopes: &[String]) -> bool {
        let any = |patterns: &[String], values: &[String]| {
            patterns
                .iter()
                .any(|p| values.iter().any(|v| glob_match(p, v)))
        };
        self.subjects.iter().any(|p| glob_match(p, subject))
            || any(&self.groups, groups)
            || any(&self.scopes, scopes)
    }

    /// Whether it covers server `server` (its name, or `name@environment`).
    pub fn covers_server(&self, server: &str) -> bool {
        self.servers.iter().any(|p| glob_match(p, server))
    }

    /// Whether it covers tool `tool` (its own name) of server `server`.
    pub fn covers_tool(&self, server: &str, tool: &str) -> bool {
        self.covers_server(server)
            && self
                .tools
                .as_ref()
                .is_none_or(|tools| tools.iter().any(|p| glob_match(p, tool)))
    }
}

/// Whether `text` matches `pattern`, in which `*` stands for any run of characters
/// (none included) and every other character for itself.
///
/// ```
/// use mcp_catalog::glob_match;
/// assert!(glob_match("read_*", "read_file"));
/// assert!(glob_match("*", ""));
/// assert!(!glob_match("read_*", "write_file"));
/// assert!(glob_match("a*c*e", "abcde"));
/// ```
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    // The part before the first `*` is anchored at the start.
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: an exact match.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_names() {
        assert!(glob_match("notes", "notes"));
        assert!(!glob_match("notes", "notes2"));
        assert!(!glob_match("notes", "my-notes"));
        assert!(glob_match("git*", "github"));
        assert!(glob_match("*hub", "github"));
        assert!(!glob_match("*hub", "hubs"));
        assert!(glob_match("a*b*a", "aba"));
        assert!(!glob_match("ab*ba", "aba"), "the two ends may not overlap");
        assert!(glob_match("**", "x"));
    }

    #[test]
    fn a_grant_applies_by_subject_group_or_scope() {
        let grant = GatewayGrant::new(["notes"])
            .with_subjects(["alice"])
            .with_groups(["platform"])
            .with_scopes(["mcp:admin"]);
        let none: Vec<String> = Vec::new();
        assert!(grant.applies_to("alice", &none, &none));
        assert!(grant.applies_to("bob", &["platform".to_owned()], &none));
        assert!(grant.applies_to("bob", &none, &["mcp:admin".to_owned()]));
        assert!(!grant.applies_to("bob", &["other".to_owned()], &none));
    }

    #[test]
    fn tools_default_to_every_tool_of_the_servers() {
        let all = GatewayGrant::new(["notes"]);
        assert!(all.covers_tool("notes", "anything"));
        assert!(!all.covers_tool("files", "anything"));
        let some = GatewayGrant::new(["*"]).with_tools(["read_*"]);
        assert!(some.covers_tool("files", "read_file"));
        assert!(!some.covers_tool("files", "write_file"));
    }
}

//! Consent: a caller signs in to a `upstream_identity = "caller"` server through the
//! gateway's own pages, and the credentials land in the hub's vault under (caller, server).
//!
//! 1. A call without credentials asks [`Consent::begin`] for a start page URL (under
//!    `[gateway] public_url`, else the address the gateway listens on) and hands it to the
//!    client as a URL elicitation ([`elicitation`]). The URL's `state` is a single-use
//!    nonce bound to the caller and the server, valid for [`STATE_LIFETIME`].
//! 2. `GET /connect/start?state=` ([`routes()`]) discovers the server's authorization server
//!    (Protected Resource Metadata, then the authorization server's metadata), registers
//!    a client (dynamic registration, once per authorization server), keeps a PKCE (S256)
//!    verifier on this side, ties the browser to the state with a cookie and answers
//!    `302` to the authorization endpoint, `resource` = the server's URL.
//! 3. `GET /connect/callback?code=&state=` takes the state (once: a replay is refused),
//!    checks the cookie, exchanges the code with the verifier and stores the credentials
//!    under the caller and server the state was made for, whoever opens the page.
//!    Every failure (bad, expired or replayed state, denied consent, the authorization
//!    server down or refusing the code) is a page saying what happened, and stores nothing.
//!
//! A caller signs out of one server with `DELETE /connect/servers/{server}` (the guard's
//! caller; `mcpctl gateway sign-out`), and an administrator removes every credential of
//! one caller with `DELETE /connect/callers/{caller}` behind the admin token.
//! A caller sees its own sign-ins with `GET /connect/servers`: per `caller` server,
//! whether it is signed in, when its access token expires and the last refresh failure
//! (never a token).
//!
//! Pending states live in this instance's memory: the start and callback pages of one
//! sign-in must reach the instance that began it.

pub(crate) mod elicitation;
mod routes;
mod upstream;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use mcp_auth::CredentialVault;
use mcp_key::McpServerKey;

pub(crate) use elicitation::url_required_error;
#[cfg(test)]
use elicitation::{cannot_elicit_text, url_elicitation, url_input_request};
pub(crate) use routes::{routes, signed_in_routes};

/// How long a start page URL stays valid.
pub(crate) const STATE_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// Most sign-ins pending at once (the oldest expired ones go first; beyond, new ones are
/// refused until some finish or expire).
pub(crate) const MAX_PENDING: usize = 4096;

/// The environment variable holding the admin token that may revoke every credential of
/// a caller (`DELETE /connect/callers/{caller}`). Unset: no admin revocation over HTTP.
pub(crate) const ADMIN_TOKEN_VAR: &str = "MCPCTL_GATEWAY_ADMIN_TOKEN";

/// The shortest admin token accepted.
pub(crate) const MIN_ADMIN_TOKEN_LEN: usize = 16;

/// Why a start page URL cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConsentError {
    /// The server is no `upstream_identity = "caller"` HTTP server of this gateway.
    NotACallerServer(McpServerKey),
    /// Neither `[gateway] public_url` nor a listen address is known yet.
    NoAddress,
    /// [`MAX_PENDING`] sign-ins are pending.
    TooManyPending,
    /// No random nonce could be made.
    Random(String),
}

impl std::fmt::Display for ConsentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotACallerServer(server) => write!(
                f,
                "server `{server}` has no per-caller sign-in: set upstream_identity = \"caller\" on its HTTP entry"
            ),
            Self::NoAddress => f.write_str(
                "the gateway's address is not known yet: set [gateway] public_url to the URL callers' browsers reach it at",
            ),
            Self::TooManyPending => write!(
                f,
                "{MAX_PENDING} sign-ins are pending: finish or wait for some ({} minutes each), then retry",
                STATE_LIFETIME.as_secs() / 60
            ),
            Self::Random(e) => write!(f, "cannot make a sign-in nonce: {e}"),
        }
    }
}

impl std::error::Error for ConsentError {}

/// One sign-in between [`Consent::begin`] and its callback.
#[derive(Debug)]
struct Pending {
    caller: String,
    server: McpServerKey,
    expires: Instant,
    /// Set by the start page: what the callback needs.
    started: Option<upstream::Started>,
}

/// The sign-in pages of `upstream_identity = "caller"` servers and their pending states.
pub(crate) struct Consent {
    /// `[gateway] public_url`, without a trailing `/`.
    public_url: Option<String>,
    /// `http://ADDR`, once the gateway listens.
    listen_url: OnceLock<String>,
    /// The `caller` servers and their URLs (the `resource` of their tokens).
    servers: BTreeMap<McpServerKey, String>,
    vault: Arc<CredentialVault>,
    pending: Mutex<HashMap<String, Pending>>,
    upstream: upstream::Upstream,
    admin_token: Option<String>,
}

impl std::fmt::Debug for Consent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consent")
            .field("public_url", &self.public_url)
            .field("servers", &self.servers.keys().collect::<Vec<_>>())
            .field("admin_token", &self.admin_token.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

impl Consent {
    /// Sign-ins to `servers` (each with its URL), storing into `vault`, with start pages
    /// under `public_url` (else the address given to [`Consent::listening_on`]).
    pub(crate) fn new(
        public_url: Option<&str>,
        servers: impl IntoIterator<Item = (McpServerKey, String)>,
        vault: Arc<CredentialVault>,
    ) -> Result<Self, String> {
        Ok(Self {
            public_url: public_url.map(|u| u.trim_end_matches('/').to_owned()),
            listen_url: OnceLock::new(),
            servers: servers.into_iter().collect(),
            vault,
            pending: Mutex::new(HashMap::new()),
            upstream: upstream::Upstream::new()?,
            admin_token: None,
        })
    }

    /// Sign-ins to the catalog's `upstream_identity = "caller"` HTTP servers, under the
    /// catalog's `[gateway] public_url`, with the admin token of [`ADMIN_TOKEN_VAR`].
    pub(crate) fn for_catalog(
        catalog: &mcp_catalog::ResolvedCatalog,
        vault: Arc<CredentialVault>,
    ) -> Result<Self, String> {
        let servers = catalog.servers().filter_map(|(key, config)| {
            let http = match config.transport() {
                mcp_catalog::Transport::StreamableHttp(http) => http,
                mcp_catalog::Transport::Sse(http) => http,
                _ => return None,
            };
            matches!(
                http.upstream_identity(),
                mcp_catalog::UpstreamIdentity::Caller
            )
            .then(|| (key.clone(), http.url().to_owned()))
        });
        let public_url = catalog.gateway().and_then(|g| g.public_url());
        let consent = Self::new(public_url, servers, vault)?;
        match std::env::var(ADMIN_TOKEN_VAR) {
            Ok(token) => consent.with_admin_token(token),
            Err(_) => Ok(consent),
        }
    }

    /// Allows `DELETE /connect/callers/{caller}` with `Authorization: Bearer <token>`.
    pub(crate) fn with_admin_token(mut self, token: String) -> Result<Self, String> {
        if token.len() < MIN_ADMIN_TOKEN_LEN {
            return Err(format!(
                "the admin token (${ADMIN_TOKEN_VAR}) is shorter than {MIN_ADMIN_TOKEN_LEN} characters: set a long random one, e.g. `openssl rand -hex 32`"
            ));
        }
        self.admin_token = Some(token);
        Ok(self)
    }

    /// The address the gateway listens on, for start pages when no `public_url` is set.
    pub(crate) fn listening_on(&self, addr: SocketAddr) {
        let _ = self.listen_url.set(format!("http://{addr}"));
    }

    /// The URL start pages and the callback are under: `public_url`, else the listen
    /// address.
    fn base(&self) -> Option<&str> {
        self.public_url
            .as_deref()
            .or_else(|| self.listen_url.get().map(String::as_str))
    }

    /// The vault the sign-ins store into.
    #[cfg(test)]
    pub(crate) fn vault(&self) -> &Arc<CredentialVault> {
        &self.vault
    }

    /// Whether `server` signs in per caller here.
    pub(crate) fn is_caller_server(&self, server: &McpServerKey) -> bool {
        self.servers.contains_key(server)
    }

    /// The `caller` servers, in name order.
    pub(crate) fn caller_servers(&self) -> impl Iterator<Item = &McpServerKey> {
        self.servers.keys()
    }

    /// The absolute URL of a start page that signs `caller_id` in to `server`: its state
    /// is a fresh single-use nonce bound to both, valid for [`STATE_LIFETIME`].
    pub(crate) fn begin(
        &self,
        caller_id: &str,
        server: &McpServerKey,
    ) -> Result<String, ConsentError> {
        if !self.servers.contains_key(server) {
            return Err(ConsentError::NotACallerServer(server.clone()));
        }
        let base = self.base().ok_or(ConsentError::NoAddress)?;
        let state =
            crate::serve::random_hex(32).map_err(|e| ConsentError::Random(e.to_string()))?;
        let now = Instant::now();
        let mut pending = lock(&self.pending);
        if pending.len() >= MAX_PENDING {
            pending.retain(|_, p| p.expires > now);
        }
        if pending.len() >= MAX_PENDING {
            return Err(ConsentError::TooManyPending);
        }
        pending.insert(
            state.clone(),
            Pending {
                caller: caller_id.to_owned(),
                server: server.clone(),
                expires: now + STATE_LIFETIME,
                started: None,
            },
        );
        Ok(format!("{base}{}?state={state}", routes::START_PATH))
    }

    /// The server and URL of an unexpired pending `state` (not taking it).
    fn pending_server(&self, state: &str) -> Result<(McpServerKey, String), StateProblem> {
        let pending = lock(&self.pending);
        let entry = pending.get(state).ok_or(StateProblem::Unknown)?;
        if entry.expires <= Instant::now() {
            return Err(StateProblem::Expired);
        }
        let url = self
            .servers
            .get(&entry.server)
            .cloned()
            .ok_or(StateProblem::Unknown)?;
        Ok((entry.server.clone(), url))
    }

    /// Records what the start page set up for `state`.
    fn record_start(&self, state: &str, started: upstream::Started) -> Result<(), StateProblem> {
        let mut pending = lock(&self.pending);
        let entry = pending.get_mut(state).ok_or(StateProblem::Unknown)?;
        if entry.expires <= Instant::now() {
            return Err(StateProblem::Expired);
        }
        // The first browser to open the link owns the sign-in: a leaked link opened later
        // cannot take it over (its callback would store the other browser's account).
        if entry.started.is_some() {
            return Err(StateProblem::AlreadyStarted);
        }
        entry.started = Some(started);
        Ok(())
    }

    /// Takes `state` for its callback: gone afterwards, whatever the outcome.
    fn take(&self, state: &str) -> Result<(Pending, upstream::Started), StateProblem> {
        let mut pending = lock(&self.pending);
        let now = Instant::now();
        pending.retain(|_, p| p.expires > now || p.started.is_some());
        let mut entry = pending.remove(state).ok_or(StateProblem::Unknown)?;
        if entry.expires <= now {
            return Err(StateProblem::Expired);
        }
        let started = entry.started.take().ok_or(StateProblem::NotStarted)?;
        Ok((entry, started))
    }

    /// Ages every pending sign-in past its lifetime.
    #[cfg(test)]
    fn expire_all(&self) {
        let past = Instant::now();
        for entry in lock(&self.pending).values_mut() {
            entry.expires = past;
        }
    }

    /// Sign-ins pending (begun, neither finished nor expired).
    #[cfg(test)]
    fn pending_count(&self) -> usize {
        let now = Instant::now();
        lock(&self.pending)
            .values()
            .filter(|p| p.expires > now)
            .count()
    }
}

/// What is wrong with a presented state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StateProblem {
    /// Never made here, already used, or forgotten.
    Unknown,
    /// Older than [`STATE_LIFETIME`].
    Expired,
    /// The callback came before the start page was opened.
    NotStarted,
    /// The start page was opened before (in this browser or another).
    AlreadyStarted,
}

impl StateProblem {
    fn text(self) -> String {
        match self {
            Self::Unknown => "this sign-in link is unknown or was already used; retry the call to get a new one".to_owned(),
            Self::Expired => format!(
                "this sign-in link expired (links last {} minutes); retry the call to get a new one",
                STATE_LIFETIME.as_secs() / 60
            ),
            Self::NotStarted => "this sign-in did not go through the gateway's start page; retry the call to get a new link".to_owned(),
            Self::AlreadyStarted => "this sign-in link was already opened, in this browser or another; retry the call to get a new one".to_owned(),
        }
    }
}

/// The lock, even if a holder panicked (the map stays consistent between statements).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

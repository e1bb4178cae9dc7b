//! Consent: a caller signs in to a `upstream_identity = "caller"` server through the
//! gateway's own pages, and the credentials land in the hub's vault under (caller, server).
//!
//! 1. A call without credentials asks [`Consent::begin`] for a start page URL (under
//!    `[gateway] public_url`, else the address the gateway listens on) and hands it to the
//!    client as a URL elicitation ([`elicitation`]). The URL's `state` is sealed with the
//!    vault's keys ([`CredentialVault::seal_sign_in_state`]): the caller, the server, a
//!    fresh nonce and when it expires ([`STATE_LIFETIME`]). Nothing is written.
//! 2. `GET /connect/start?state=` ([`routes()`]) opens the state, discovers the server's
//!    authorization server (Protected Resource Metadata, then the authorization server's
//!    metadata), registers a client (dynamic registration, once per authorization server
//!    and instance), makes a PKCE (S256) verifier, ties the browser to the sign-in with a
//!    cookie and keeps what the callback needs (verifier, client, a hash of the cookie)
//!    in the vault under the nonce, sealed like credentials
//!    ([`CredentialVault::start_sign_in`]; the first browser to open a link owns it), then
//!    answers `302` to the authorization endpoint, `resource` = the server's URL.
//! 3. `GET /connect/callback?code=&state=` opens the state, takes the sign-in from the
//!    vault (once, across instances: [`CredentialVault::finish_sign_in`]; a replay is
//!    refused), checks the cookie, exchanges the code with the verifier and stores the
//!    credentials under the caller and server the state was made for, whoever opens the
//!    page. Every failure (bad, expired or replayed state, another browser, denied
//!    consent, an `iss` that is not the authorization server's, the authorization server
//!    down or refusing the code) is a page saying what happened, and stores nothing.
//!
//! A caller signs out of one server with `DELETE /connect/servers/{server}` (the guard's
//! caller; `mcpctl gateway sign-out`), and an administrator removes every credential of
//! one caller with `DELETE /connect/callers/{caller}` behind the admin token (the
//! gateway then also drops the exchanged tokens it cached for that caller's latest token,
//! so none obtained before the revocation goes upstream again).
//! A caller sees its own sign-ins with `GET /connect/servers`: per `caller` server,
//! whether it is signed in, when its access token expires and the last refresh failure
//! (never a token).
//!
//! No sign-in lives in one instance's memory: instances that share the vault (PostgreSQL,
//! `$MCPCTL_CREDENTIAL_STORE`, and the same `$MCPCTL_VAULT_KEY`) finish each other's
//! sign-ins, so the link, the start page and the callback may each reach any of them.

pub(crate) mod elicitation;
mod routes;
mod upstream;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_auth::CredentialVault;
use mcp_key::McpServerKey;

pub(crate) use elicitation::url_required_error;
#[cfg(test)]
use elicitation::{cannot_elicit_text, url_elicitation, url_input_request};
pub(crate) use routes::{routes, signed_in_routes};

/// How long a start page URL stays valid.
pub(crate) const STATE_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// Most sign-ins started and not finished at once, across the instances sharing the vault
/// (expired ones do not count; beyond, start pages are refused until some finish or
/// expire).
pub(crate) const MAX_PENDING: u64 = 4096;

/// The environment variable holding the admin token that may revoke every credential of
/// a caller (`DELETE /connect/callers/{caller}`). Unset: no admin revocation over HTTP.
/// Its one home is `mcpctl gateway`, which sends it (importing it from `serve` would close
/// an import circle through `cli.rs`).
pub(crate) use crate::commands::gateway::ADMIN_TOKEN_VAR;

/// The shortest admin token accepted.
pub(crate) const MIN_ADMIN_TOKEN_LEN: usize = 16;

/// Why a start page URL cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConsentError {
    /// The server is no `upstream_identity = "caller"` HTTP server of this gateway.
    NotACallerServer(McpServerKey),
    /// Neither `[gateway] public_url` nor a listen address is known yet.
    NoAddress,
    /// No random nonce could be made.
    Random(String),
    /// The state could not be sealed.
    Seal(String),
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
            Self::Random(e) => write!(f, "cannot make a sign-in nonce: {e}"),
            Self::Seal(e) => write!(f, "cannot seal a sign-in link: {e}"),
        }
    }
}

impl std::error::Error for ConsentError {}

/// What a sign-in's `state` carries, sealed with the vault's keys: any instance sharing
/// the vault opens it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct SignIn {
    /// The caller the credentials are for.
    caller: String,
    /// The server, as its key's text.
    server: String,
    /// Random, one per sign-in: the vault's row of the started sign-in.
    nonce: String,
    /// Unix seconds after which the state is refused.
    expires: u64,
}

/// What [`Consent`] tells of an administrator's revocation: the caller's id.
pub(crate) type RevokeHook = Box<dyn Fn(&str) + Send + Sync>;

/// The sign-in pages of `upstream_identity = "caller"` servers and their pending states.
pub(crate) struct Consent {
    /// `[gateway] public_url`, without a trailing `/`.
    public_url: Option<String>,
    /// `http://ADDR`, once the gateway listens.
    listen_url: OnceLock<String>,
    /// The `caller` servers and their URLs (the `resource` of their tokens).
    servers: BTreeMap<McpServerKey, String>,
    vault: Arc<CredentialVault>,
    upstream: upstream::Upstream,
    admin_token: Option<String>,
    /// Told the id of each caller an administrator revoked, after the vault forgot it
    /// (the hub drops what else it keeps for that caller: cached exchanged tokens).
    on_revoke: Option<RevokeHook>,
    /// Seconds added to the clock (tests age sign-ins with it).
    #[cfg(test)]
    skew: std::sync::atomic::AtomicU64,
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
            upstream: upstream::Upstream::new()?,
            admin_token: None,
            on_revoke: None,
            #[cfg(test)]
            skew: std::sync::atomic::AtomicU64::new(0),
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
        // Trimmed as `mcpctl gateway revoke` trims the one it sends; blank is unset.
        match std::env::var(ADMIN_TOKEN_VAR) {
            Ok(token) if !token.trim().is_empty() => {
                consent.with_admin_token(token.trim().to_owned())
            }
            _ => Ok(consent),
        }
    }

    /// Calls `hook` with the caller's id after each administrator's revocation of a
    /// caller, once the vault forgot its credentials.
    #[must_use]
    pub(crate) fn with_revoke_hook(mut self, hook: RevokeHook) -> Self {
        self.on_revoke = Some(hook);
        self
    }

    /// Tells the revocation hook (if any) that `caller` was revoked.
    pub(crate) fn revoked(&self, caller: &str) {
        if let Some(hook) = &self.on_revoke {
            hook(caller);
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
    /// is sealed with the vault's keys and carries a fresh nonce bound to both, valid for
    /// [`STATE_LIFETIME`] on any instance sharing the vault. Nothing is written.
    pub(crate) fn begin(
        &self,
        caller_id: &str,
        server: &McpServerKey,
    ) -> Result<String, ConsentError> {
        if !self.servers.contains_key(server) {
            return Err(ConsentError::NotACallerServer(server.clone()));
        }
        let base = self.base().ok_or(ConsentError::NoAddress)?;
        let nonce =
            crate::serve::random_hex(16).map_err(|e| ConsentError::Random(e.to_string()))?;
        let sign_in = SignIn {
            caller: caller_id.to_owned(),
            server: server.to_string(),
            nonce,
            expires: self.now().saturating_add(STATE_LIFETIME.as_secs()),
        };
        let body = serde_json::to_vec(&sign_in).map_err(|e| ConsentError::Seal(e.to_string()))?;
        let state = self
            .vault
            .seal_sign_in_state(&body)
            .map_err(|e| ConsentError::Seal(mcp_key::error_chain(&e)))?;
        Ok(format!("{base}{}?state={state}", routes::START_PATH))
    }

    /// The unexpired sign-in `state` carries, with its server and the server's URL.
    fn open(&self, state: &str) -> Result<(SignIn, McpServerKey, String), StateProblem> {
        let body = self
            .vault
            .open_sign_in_state(state)
            .map_err(|_| StateProblem::Unknown)?;
        let sign_in: SignIn = serde_json::from_slice(&body).map_err(|_| StateProblem::Unknown)?;
        if sign_in.expires <= self.now() {
            return Err(StateProblem::Expired);
        }
        let server: McpServerKey = sign_in.server.parse().map_err(|_| StateProblem::Unknown)?;
        let url = self
            .servers
            .get(&server)
            .cloned()
            .ok_or(StateProblem::Unknown)?;
        Ok((sign_in, server, url))
    }

    /// Records what the start page set up for `sign_in`, in the vault: refused when it
    /// was started before (on any instance) or too many are open.
    async fn record_start(
        &self,
        sign_in: &SignIn,
        started: &upstream::Started,
    ) -> Result<(), StartProblem> {
        let open = self
            .vault
            .open_sign_ins()
            .await
            .map_err(StartProblem::Store)?;
        if open >= MAX_PENDING {
            return Err(StartProblem::State(StateProblem::TooManyPending));
        }
        let payload = started.to_payload();
        // The first browser to open the link owns the sign-in: a leaked link opened later,
        // here or on another instance, cannot take it over (its callback would store the
        // other browser's account).
        match self
            .vault
            .start_sign_in(&sign_in.nonce, sign_in.expires, &payload)
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(StartProblem::State(StateProblem::AlreadyStarted)),
            Err(e) => Err(StartProblem::Store(e)),
        }
    }

    /// Takes the started sign-in for its callback from the vault: gone afterwards, on
    /// every instance, whatever the outcome.
    async fn take(&self, sign_in: &SignIn) -> Result<upstream::Started, StartProblem> {
        let payload = self
            .vault
            .finish_sign_in(&sign_in.nonce)
            .await
            .map_err(StartProblem::Store)?
            .ok_or(StartProblem::State(StateProblem::Unknown))?;
        upstream::Started::from_payload(&payload).ok_or(StartProblem::State(StateProblem::Unknown))
    }

    /// The clock states are made and checked with: unix seconds.
    fn now(&self) -> u64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        #[cfg(test)]
        let now = now + self.skew.load(std::sync::atomic::Ordering::Relaxed);
        now
    }

    /// Ages every sign-in made so far past its lifetime.
    #[cfg(test)]
    fn expire_all(&self) {
        self.skew.fetch_add(
            STATE_LIFETIME.as_secs() + 1,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// Sign-ins started and not finished (nor expired), across the instances sharing the
    /// vault.
    #[cfg(test)]
    async fn pending_count(&self) -> u64 {
        self.vault.open_sign_ins().await.unwrap_or(u64::MAX)
    }
}

/// Why a start page or a callback cannot go on.
#[derive(Debug)]
enum StartProblem {
    /// The state is refused.
    State(StateProblem),
    /// The vault cannot be used.
    Store(mcp_auth::VaultError),
}

impl StartProblem {
    fn text(&self) -> String {
        match self {
            Self::State(problem) => problem.text(),
            Self::Store(e) => format!(
                "the gateway's credential store cannot be used: {}. Nothing was stored; ask the gateway's operator",
                mcp_key::error_chain(e)
            ),
        }
    }
}

/// What is wrong with a presented state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StateProblem {
    /// Not sealed by the vault's keys, already used, never started, or forgotten.
    Unknown,
    /// Older than [`STATE_LIFETIME`].
    Expired,
    /// The start page was opened before (in this browser or another, on any instance).
    AlreadyStarted,
    /// [`MAX_PENDING`] sign-ins are open.
    TooManyPending,
}

impl StateProblem {
    fn text(self) -> String {
        match self {
            Self::Unknown => "this sign-in link is unknown or was already used (or did not go through the gateway's start page); retry the call to get a new one".to_owned(),
            Self::Expired => format!(
                "this sign-in link expired (links last {} minutes); retry the call to get a new one",
                STATE_LIFETIME.as_secs() / 60
            ),
            Self::TooManyPending => format!(
                "{MAX_PENDING} sign-ins are in progress: finish or wait for some ({} minutes each), then retry",
                STATE_LIFETIME.as_secs() / 60
            ),
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

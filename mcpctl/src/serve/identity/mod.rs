//! The gateway acting as each caller upstream (`upstream_identity` of
//! `[mcp_servers.X]`).
//!
//! - `gateway` (the default): the gateway's own credentials, unchanged.
//! - `exchange`: the caller's own bearer token (the one it presented to the gateway, the
//!   latest one it sent) is exchanged (RFC 8693) at the server's token endpoint for one
//!   whose audience is the server ([`exchange`]); one [`mcp_auth::TokenExchanger`] per
//!   server is shared by every caller, with its cache. The caller's token never goes
//!   upstream. After a 401 the token is exchanged once more.
//! - `caller`: the caller's own credentials for the server, from the hub's vault
//!   ([`vault`]), refreshed when they expire ([`caller_auth`]); with none, the server fails
//!   for that caller, and the caller's call of it needs a sign-in ([`NeedsSignIn`]): a
//!   client that takes URL elicitations is sent to the consent page ([`consent`]) during
//!   the call (a 2025-11-25 `elicitation/create` with `mode: "url"`, or a 2026-era
//!   `input_required` round) and the call goes on once the credentials are in the vault;
//!   any other client gets the URL elicitation error (-32042) naming the page.
//!
//! Each set connects to such a server as its caller
//! ([`mcp_connections::ConnectionSetOptions::with_identity_auth`]), so on the hub's shared
//! pool one caller's connection never carries another caller's calls. When what a server
//! needs is missing (no vault, the token endpoint down) that server fails with a clear
//! error naming it; `gateway` servers go on.

pub(crate) mod caller_auth;
pub(crate) mod consent;
pub(crate) mod exchange;
pub(crate) mod vault;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use mcp_auth::TokenExchanger;
use mcp_catalog::{ResolvedCatalog, UpstreamIdentity};
use mcp_connections::{ConnectionSetOptions, CredentialsError};
use mcp_key::{McpServerKey, Secret};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};

use super::caller::Caller;
use super::gateway::Hub;

/// How long a set's upstream connection waits for its session's first request to say who
/// the caller is, before that server fails.
pub(crate) const CALLER_WAIT: Duration = Duration::from_secs(30);

/// What the failure of a `caller` server without the caller's credentials starts with.
pub(crate) const SIGN_IN_NEEDED: &str = "sign-in needed";

/// Most callers whose latest token is kept (the oldest entry goes first beyond).
pub(crate) const MAX_CALLER_TOKENS: usize = 10_000;

/// What the hub keeps for per-caller upstream identities: the exchangers of `exchange`
/// servers, each caller's latest token, and the consent pages of `caller` servers.
pub(crate) struct Identities {
    /// Per `exchange` server: its exchanger, or why it cannot be made (a message naming
    /// the server).
    exchangers: BTreeMap<McpServerKey, Result<TokenExchanger, String>>,
    /// The `caller` servers, with their URLs.
    callers: Vec<(McpServerKey, String)>,
    /// Each caller's latest bearer token, by caller id.
    tokens: Arc<Tokens>,
    /// One refresh at a time per (caller, server) across every set.
    refresh_locks: Arc<caller_auth::RefreshLocks>,
    /// Numbers the sessions whose sets connect as their session alone.
    sessions: std::sync::atomic::AtomicU64,
    /// The sign-in pages of `caller` servers (with the vault), or why there are none.
    pub(crate) consent: Result<Arc<consent::Consent>, String>,
}

impl std::fmt::Debug for Identities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identities")
            .field("exchange", &self.exchangers.keys().collect::<Vec<_>>())
            .field("caller", &self.callers)
            .finish_non_exhaustive()
    }
}

/// Each caller's latest bearer token, and a wake-up for connections waiting to learn
/// their caller.
#[derive(Default)]
pub(crate) struct Tokens {
    latest: Mutex<HashMap<String, (u64, Secret)>>,
    counter: std::sync::atomic::AtomicU64,
    seen: tokio::sync::Notify,
}

impl Tokens {
    /// Records the token `caller` presented with its latest request (none for the static
    /// token's caller), and wakes the connections waiting for a caller.
    pub(crate) fn saw(&self, caller: &Caller) {
        if let Some(token) = caller.token() {
            let n = self
                .counter
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
            if latest.len() >= MAX_CALLER_TOKENS && !latest.contains_key(caller.id()) {
                let oldest = latest
                    .iter()
                    .min_by_key(|(_, (n, _))| *n)
                    .map(|(id, _)| id.clone());
                if let Some(oldest) = oldest {
                    latest.remove(&oldest);
                }
            }
            latest.insert(caller.id().to_owned(), (n, token.clone()));
        }
        self.seen.notify_waiters();
    }

    /// The latest token of the caller `id`.
    pub(crate) fn latest(&self, id: &str) -> Option<Secret> {
        self.latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .map(|(_, token)| token.clone())
    }
}

/// Who a set acts for: known when it starts (a 2026-era caller's set), or the caller its
/// session's first request names (a 2025-era session's set starts before that request
/// is handled).
#[derive(Clone)]
pub(crate) enum CallerSource {
    /// This caller.
    Known(Arc<Caller>),
    /// The caller the gateway keeps once its first request came.
    Session(Arc<OnceLock<Arc<Caller>>>),
}

impl CallerSource {
    /// The caller, waiting (at most [`CALLER_WAIT`]) for a session's first request.
    pub(crate) async fn caller(
        &self,
        tokens: &Tokens,
        server: &McpServerKey,
    ) -> Result<Arc<Caller>, CredentialsError> {
        let cell = match self {
            Self::Known(caller) => return Ok(Arc::clone(caller)),
            Self::Session(cell) => cell,
        };
        let wait = async {
            loop {
                let seen = tokens.seen.notified();
                tokio::pin!(seen);
                seen.as_mut().enable();
                if let Some(caller) = cell.get() {
                    return Arc::clone(caller);
                }
                seen.await;
            }
        };
        tokio::time::timeout(CALLER_WAIT, wait).await.map_err(|_| {
            unavailable(
                server,
                "no caller named itself on this session in time; reconnect",
            )
        })
    }
}

/// `Unavailable` credentials of `server` for `detail` (a sentence saying what to do).
pub(crate) fn unavailable(server: &McpServerKey, detail: impl Into<String>) -> CredentialsError {
    CredentialsError::Unavailable {
        server: server.clone(),
        detail: detail.into(),
        source: None,
    }
}

impl Identities {
    /// Whether `server` is reached with each caller's own credentials
    /// (`upstream_identity = "caller"`).
    fn is_caller_server(&self, server: &McpServerKey) -> bool {
        self.callers.iter().any(|(key, _)| key == server)
    }

    /// The identities of `catalog`'s HTTP servers, with the hub's `vault`; `env` gives the
    /// exchange client secrets.
    pub(crate) fn new(
        catalog: &ResolvedCatalog,
        vault: &vault::HubVault,
        env: &dyn mcp_catalog::EnvLookup,
    ) -> Self {
        let mut exchangers = BTreeMap::new();
        let mut callers = Vec::new();
        for (key, config) in catalog.servers() {
            let Some(http) = config.transport().as_http() else {
                continue;
            };
            match http.upstream_identity() {
                UpstreamIdentity::Exchange(exchange) => {
                    let made = TokenExchanger::from_config(key.clone(), exchange, env)
                        .map_err(|e| mcp_key::error_chain(&e));
                    exchangers.insert(key.clone(), made);
                }
                UpstreamIdentity::Caller => callers.push((key.clone(), http.url().to_owned())),
                _ => {}
            }
        }
        let tokens: Arc<Tokens> = Arc::default();
        let forget = {
            let exchangers: Vec<TokenExchanger> =
                exchangers.values().filter_map(|e| e.clone().ok()).collect();
            let tokens = Arc::clone(&tokens);
            move |caller: &str| exchange::forget_caller(&exchangers, &tokens, caller)
        };
        let consent = match vault.require() {
            Ok(vault) => consent::Consent::for_catalog(catalog, Arc::clone(vault))
                .map(|c| Arc::new(c.with_revoke_hook(Box::new(forget)))),
            Err(why) => Err(why),
        };
        Self {
            exchangers,
            callers,
            tokens,
            refresh_locks: Arc::default(),
            sessions: std::sync::atomic::AtomicU64::new(0),
            consent,
        }
    }

    /// Records the latest token of a request's caller (see [`Tokens::saw`]).
    pub(crate) fn saw(&self, caller: &Caller) {
        self.tokens.saw(caller);
    }
}

/// `base` with every per-caller server of the hub connected as `caller`: `exchange`
/// servers through the hub's exchanger of that server, `caller` servers with the caller's
/// credentials from the vault. `gateway` servers are left as `base` has them.
///
/// The identity in the pool key is the caller's id when known; a 2025-era session's set,
/// whose caller comes with its first request, connects as that session alone.
pub(crate) fn options_for(
    hub: &Hub,
    caller: CallerSource,
    base: ConnectionSetOptions,
) -> ConnectionSetOptions {
    let identities = &hub.identities;
    if identities.exchangers.is_empty() && identities.callers.is_empty() {
        return base;
    }
    let identity = match &caller {
        CallerSource::Known(caller) => caller.id().to_owned(),
        CallerSource::Session(_) => format!(
            "session:{}",
            identities
                .sessions
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ),
    };
    let mut options = base;
    for (key, exchanger) in &identities.exchangers {
        let provider = exchange::ExchangeAuth::new(
            exchanger.clone(),
            caller.clone(),
            Arc::clone(&identities.tokens),
        );
        options = options.with_identity_auth(key.clone(), identity.clone(), Arc::new(provider));
    }
    for (key, url) in &identities.callers {
        let provider = caller_auth::VaultAuth::new(
            url.clone(),
            hub.vault.clone(),
            identities.consent.clone(),
            caller.clone(),
            Arc::clone(&identities.tokens),
            Arc::clone(&identities.refresh_locks),
        );
        options = options.with_identity_auth(key.clone(), identity.clone(), Arc::new(provider));
    }
    options
}

/// `base` for a set that acts for no caller (the event relay's): every `caller` and
/// `exchange` server refuses to connect, naming why, so such a server is never reached
/// with the gateway's own credentials on behalf of whoever subscribed.
pub(crate) fn for_no_caller(hub: &Hub, base: ConnectionSetOptions) -> ConnectionSetOptions {
    let identities = &hub.identities;
    let per_caller = identities
        .exchangers
        .keys()
        .chain(identities.callers.iter().map(|(key, _)| key));
    per_caller.fold(base, |options, key| {
        options.with_identity_auth(key.clone(), "no caller", Arc::new(NoCaller))
    })
}

/// The `Authorization` of a per-caller server in a set acting for nobody: refused.
struct NoCaller;

impl mcp_connections::AuthHeaderProvider for NoCaller {
    fn authorization<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> mcp_connections::BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            Err(unavailable(
                server,
                "it is reached as each caller (upstream_identity), and the gateway's event relay acts for no caller: its events are not relayed",
            ))
        })
    }
}

/// The options of a 2025-era session's set: the hub's, on the hub's pool, with
/// [`options_for`] the caller its first request names (`caller`, set then).
pub(crate) fn session_options(
    hub: &Hub,
    caller: &Arc<OnceLock<Arc<Caller>>>,
) -> ConnectionSetOptions {
    options_for(
        hub,
        CallerSource::Session(Arc::clone(caller)),
        hub.options.clone(),
    )
    .with_shared_pool(hub.pool.clone())
}

/// Before a call of `caller` on its session's `set`: every `caller` server of the set
/// that failed for want of the caller's credentials, and for which the vault now holds
/// them (the caller signed in since), starts again, so the retry the sign-in error asked
/// for goes through (a call alone does not restart a server that never listed a tool).
pub(crate) async fn restart_signed_in(
    hub: &Hub,
    set: &mcp_connections::ConnectionSet,
    caller: &Caller,
) {
    if hub.identities.callers.is_empty() {
        return;
    }
    let waiting: Vec<McpServerKey> = set
        .status()
        .into_iter()
        .filter(|s| waits_for_sign_in(&s.state) && hub.identities.is_caller_server(&s.key))
        .map(|s| s.key)
        .collect();
    let Ok(vault) = hub.vault.require() else {
        return;
    };
    for server in waiting {
        if matches!(vault.get(caller.id(), &server).await, Ok(Some(_))) {
            tracing::info!(%server, "the caller signed in: starting the server again");
            // At once: the failures before the sign-in say nothing about this start.
            let _ = set.start_now(&server).await;
        }
    }
}

/// How often the vault is looked at while waiting: the vault is what instances share, so
/// a sign-in that finished on another instance is seen too.
const CONSENT_POLL: Duration = Duration::from_millis(250);

/// A call that failed because its caller has no credentials for a `caller` server yet:
/// the server and a start page made for this caller and server.
pub(crate) struct NeedsSignIn {
    /// The `caller` server.
    pub(crate) server: McpServerKey,
    /// The start page's absolute URL (its state single-use, bound to caller and server).
    pub(crate) url: String,
}

impl NeedsSignIn {
    /// The 2025-11-25 URL elicitation error naming the server and the page (its message
    /// says to open the page, then retry): for a client that takes no URL elicitation.
    pub(crate) fn error(&self) -> rmcp::ErrorData {
        consent::url_required_error(&self.server, &self.url)
    }

    /// The 2025-11-25 `elicitation/create` params (URL mode) sending the user to the page.
    pub(crate) fn elicitation(&self) -> ElicitRequestParams {
        consent::elicitation::url_elicitation(&self.server, &self.url)
    }

    /// The same request as a 2026-era `input_required` entry.
    pub(crate) fn input_request(&self) -> rmcp::model::InputRequest {
        consent::elicitation::url_input_request(&self.server, &self.url)
    }

    /// What the client's `answer` to the URL elicitation leads to: once accepted, the
    /// wait (at most the hub's answer deadline, `--answer-deadline`: the sign-in is the
    /// user's answer) for `caller`'s credentials in the vault; `Ok`
    /// when they are there (the call goes on), otherwise the tool error's text naming
    /// the server and the page (declined, cancelled, no answer, no sign-in in time).
    ///
    /// # Cancel safety
    /// Cancel-safe: it only reads the vault.
    pub(crate) async fn given(
        &self,
        hub: &Hub,
        caller: &Caller,
        answer: Option<ElicitResult>,
    ) -> Result<(), String> {
        match answer.map(|answer| answer.action) {
            Some(ElicitationAction::Accept) => {}
            Some(_) => {
                return Err(consent::elicitation::declined_text(&self.server, &self.url));
            }
            None => {
                return Err(consent::elicitation::unanswered_text(
                    &self.server,
                    &self.url,
                ));
            }
        }
        let wait = hub.answer_deadline;
        if signed_in_within(hub, caller, &self.server, wait).await {
            tracing::info!(server = %self.server, "the caller signed in through a URL elicitation");
            Ok(())
        } else {
            Err(consent::elicitation::not_signed_in_text(
                &self.server,
                &self.url,
                wait,
            ))
        }
    }
}

/// Whether the vault holds `caller`'s credentials for `server` within `wait` (looked at
/// every [`CONSENT_POLL`]).
async fn signed_in_within(
    hub: &Hub,
    caller: &Caller,
    server: &McpServerKey,
    wait: Duration,
) -> bool {
    let Ok(vault) = hub.vault.require() else {
        return false;
    };
    let poll = async {
        loop {
            if matches!(vault.get(caller.id(), server).await, Ok(Some(_))) {
                return;
            }
            tokio::time::sleep(CONSENT_POLL).await;
        }
    };
    tokio::time::timeout(wait, poll).await.is_ok()
}

/// The sign-in `caller` needs before a call of `name` can even be checked against its
/// grants: `name` lies in the namespace of a `caller` server that is down for want of the
/// caller's sign-in (so its tools were never listed and the name resolves to nothing), and
/// the caller's grants cover that server. The grants of the tool itself are checked once
/// the server is up. `None` otherwise: the name is answered as one that does not exist.
pub(crate) fn sign_in_for_name(
    hub: &Hub,
    set: &mcp_connections::ConnectionSet,
    caller: &Caller,
    name: &str,
) -> Option<NeedsSignIn> {
    if hub.identities.callers.is_empty() {
        return None;
    }
    let server = set.not_ready_owner(name)?;
    let waits = set
        .status()
        .iter()
        .any(|s| s.key == server && waits_for_sign_in(&s.state));
    if !hub.identities.is_caller_server(&server) || !caller.may_use_server(&server) || !waits {
        return None;
    }
    sign_in_page(hub, caller, server)
}

/// [`NeedsSignIn`] for `caller` and the `caller` server `server`: a fresh start page.
/// `None` (said in the log) when no page can be made.
fn sign_in_page(hub: &Hub, caller: &Caller, server: McpServerKey) -> Option<NeedsSignIn> {
    let consent = hub.identities.consent.as_ref().ok()?;
    match consent.begin(caller.id(), &server) {
        Ok(url) => Some(NeedsSignIn { server, url }),
        Err(e) => {
            tracing::warn!(%server, "no sign-in page: {e}");
            None
        }
    }
}

/// Whether a server in `state` failed for want of the caller's sign-in.
fn waits_for_sign_in(state: &mcp_connections::ServerState) -> bool {
    matches!(state, mcp_connections::ServerState::Failed(f) if f.chain().contains(SIGN_IN_NEEDED))
}

/// The sign-in `caller`'s call needs when it failed with `error` because the caller has
/// no (more) credentials for a `caller` server: none yet, or the ones of its open
/// connection were rejected (signed out, revoked, a refresh refused). That server and a
/// start page made for this caller and server. `None` for any other failure.
pub(crate) fn sign_in_required(
    hub: &Hub,
    caller: &Caller,
    error: &mcp_connections::Error,
) -> Option<NeedsSignIn> {
    let mcp_connections::Error::NotReady { server, .. } = error else {
        return None;
    };
    if !hub.identities.is_caller_server(server)
        || !(error.is_auth_required() || mcp_key::error_chain(error).contains(SIGN_IN_NEEDED))
    {
        return None;
    }
    sign_in_page(hub, caller, server.clone())
}

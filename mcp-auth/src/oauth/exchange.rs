//! [`TokenExchanger`]: a gateway's RFC 8693 token exchange for one upstream server: a
//! caller's token traded at a configured token endpoint for one whose audience is the
//! upstream, cached per (caller token, audience) until shortly before it expires, traded
//! again once after the upstream answers 401.
//!
//! The caller's token goes to the token endpoint and nowhere else; neither it nor the
//! exchanged token is ever logged, shown in `Debug` or put into an error.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_catalog::{EnvLookup, TokenExchangeConfig};
use mcp_key::{McpServerKey, Secret};
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use super::grant::{ClientAuth, GrantOutcome, request_token};
use super::http::{check_endpoint, client};
use crate::error::AuthError;

/// How long before its expiry an exchanged token stops being reused (a fresh one is
/// exchanged instead), so it does not expire on its way to the upstream.
pub const DEFAULT_EXCHANGE_MARGIN: Duration = Duration::from_secs(30);
/// How long an exchanged token is reused when the token endpoint says nothing of its
/// lifetime (no `expires_in`); a 401 from the upstream ends it sooner
/// ([`TokenExchanger::after_unauthorized`]).
pub const DEFAULT_UNKNOWN_LIFETIME: Duration = Duration::from_secs(300);
/// When this many (caller token, audience) entries are kept, the idle ones without a
/// usable token are dropped before a new one is added (entries with a usable token stay,
/// so more live callers than this still each keep theirs).
pub const MAX_CACHED_EXCHANGES: usize = 10_000;

/// `grant_type` of RFC 8693.
const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an access token (RFC 8693 section 3): what the caller presents and
/// what the exchange asks for.
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// Exchanges callers' tokens for tokens of one upstream server (RFC 8693), for a gateway
/// whose server says `upstream_identity = "exchange"`.
///
/// Cheap to clone: clones share the cache. Concurrent calls for the same caller token
/// share one exchange (single flight); calls for different callers do not wait for each
/// other.
///
/// ```
/// # #[cfg(feature = "oauth")] {
/// use mcp_auth::TokenExchanger;
/// use mcp_catalog::TokenExchangeConfig;
///
/// let config = TokenExchangeConfig::new("https://idp.example.com/oauth2/token")
///     .with_audience("https://tickets.example.com")
///     .with_client("mcp-gateway", Some("EXCHANGE_SECRET".to_owned()));
/// let env = |name: &str| (name == "EXCHANGE_SECRET").then(|| "s3cret".to_owned());
/// let exchanger = TokenExchanger::from_config("tickets".parse()?, &config, &env)?;
/// // Nothing secret is ever printed.
/// assert!(!format!("{exchanger:?}").contains("s3cret"));
///
/// // The secret's variable must be set.
/// let unset = |_: &str| None;
/// let err = TokenExchanger::from_config("tickets".parse()?, &config, &unset).unwrap_err();
/// assert!(err.to_string().contains("EXCHANGE_SECRET"));
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct TokenExchanger {
    server: McpServerKey,
    request: Arc<ExchangeRequest>,
    margin: Duration,
    http: reqwest::Client,
    cache: Arc<Mutex<HashMap<CacheKey, Slot>>>,
}

/// What every exchange sends besides the caller's token.
struct ExchangeRequest {
    endpoint: String,
    audience: Option<String>,
    resource: Option<String>,
    scope: Option<String>,
    client_id: Option<String>,
    client_secret: Option<Secret>,
}

/// A caller token (by its SHA-256, never the token) and the audience it is exchanged for.
#[derive(Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    subject: [u8; 32],
    target: String,
}

/// One key's exchanged token; the async lock is the single flight of its exchanges.
type Slot = Arc<tokio::sync::Mutex<Option<Exchanged>>>;

/// An exchanged token and when it expires (tokio time).
struct Exchanged {
    token: Secret,
    expires_at: Instant,
}

impl Exchanged {
    fn usable(&self, margin: Duration) -> bool {
        Instant::now() + margin < self.expires_at
    }
}

impl TokenExchanger {
    /// An exchanger for `server` as `config` says, authenticating with `client_secret`
    /// (HTTP Basic, with `config`'s `client_id`) when given.
    ///
    /// # Errors
    /// [`AuthError::Config`] when the endpoint is not `https` (or `http` to loopback), no
    /// audience or resource is set, or a secret is given without a client id.
    pub fn new(
        server: McpServerKey,
        config: &TokenExchangeConfig,
        client_secret: Option<Secret>,
    ) -> Result<Self, AuthError> {
        let endpoint = config.token_endpoint();
        check_endpoint(&server, "token exchange endpoint", endpoint)?;
        let problem = if config.audience().is_none() && config.resource().is_none() {
            Some("the token exchange names neither an audience nor a resource; set one")
        } else if client_secret.is_some() && config.client_id().is_none() {
            Some("the token exchange has a client secret but no client_id; set `client_id`")
        } else {
            None
        };
        if let Some(detail) = problem {
            return Err(AuthError::Config {
                server,
                detail: detail.to_owned(),
            });
        }
        let http = client(&server)?;
        Ok(Self {
            request: Arc::new(ExchangeRequest {
                endpoint: endpoint.to_owned(),
                audience: config.audience().map(str::to_owned),
                resource: config.resource().map(str::to_owned),
                scope: config.scope().map(str::to_owned),
                client_id: config.client_id().map(str::to_owned),
                client_secret,
            }),
            server,
            margin: DEFAULT_EXCHANGE_MARGIN,
            http,
            cache: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// As [`TokenExchanger::new`], with the client secret read from the variable
    /// `config`'s `client_secret_env` names, through `env`.
    ///
    /// # Errors
    /// As [`TokenExchanger::new`], and [`AuthError::Config`] naming the variable when it
    /// is unset or empty.
    pub fn from_config(
        server: McpServerKey,
        config: &TokenExchangeConfig,
        env: &dyn EnvLookup,
    ) -> Result<Self, AuthError> {
        let secret = match config.client_secret_env() {
            None => None,
            Some(var) => match env.get(var).filter(|v| !v.is_empty()) {
                Some(secret) => Some(Secret::new(secret)),
                None => {
                    return Err(AuthError::Config {
                        server,
                        detail: format!(
                            "the token exchange client secret variable `{var}` is not set; \
                             set it in the gateway's environment"
                        ),
                    });
                }
            },
        };
        Self::new(server, config, secret)
    }

    /// Reuse an exchanged token only while it has more than `margin` left (default
    /// [`DEFAULT_EXCHANGE_MARGIN`]).
    #[must_use]
    pub fn with_refresh_margin(mut self, margin: Duration) -> Self {
        self.margin = margin;
        self
    }

    /// A token for the upstream on behalf of the caller whose token is `subject_token`:
    /// the cached one while it has more than the margin left, else a new exchange.
    ///
    /// # Errors
    /// [`AuthError::ExchangeRefused`] when the endpoint refuses
    /// ([`AuthError::is_caller_token_rejected`] when it refused the caller's token),
    /// [`AuthError::Http`] when it cannot be reached or fails (retryable),
    /// [`AuthError::TokenEndpoint`] for an unusable answer.
    ///
    /// # Cancel safety
    /// Cancel-safe: a cancelled exchange stores nothing, and the next call exchanges anew.
    pub async fn exchange(&self, subject_token: &Secret) -> Result<Secret, AuthError> {
        let slot = self.slot(subject_token);
        let mut cached = slot.lock().await;
        if let Some(exchanged) = cached.as_ref().filter(|e| e.usable(self.margin)) {
            return Ok(exchanged.token.clone());
        }
        *cached = None;
        let exchanged = self.request(subject_token).await?;
        let token = exchanged.token.clone();
        *cached = Some(exchanged);
        Ok(token)
    }

    /// The upstream answered 401 to `rejected`, the token [`TokenExchanger::exchange`]
    /// gave for `subject_token`: drops it and exchanges once more. When another call has
    /// already replaced it, returns that one without a new exchange. A gateway calls this
    /// once per failed request; a second 401 is the caller's to resolve.
    ///
    /// # Errors
    /// As [`TokenExchanger::exchange`].
    ///
    /// # Cancel safety
    /// Cancel-safe, as [`TokenExchanger::exchange`].
    pub async fn after_unauthorized(
        &self,
        subject_token: &Secret,
        rejected: &Secret,
    ) -> Result<Secret, AuthError> {
        let slot = self.slot(subject_token);
        let mut cached = slot.lock().await;
        if let Some(exchanged) = cached
            .as_ref()
            .filter(|e| e.token != *rejected && e.usable(self.margin))
        {
            return Ok(exchanged.token.clone());
        }
        *cached = None;
        tracing::debug!(server = %self.server, "the upstream refused an exchanged token; exchanging again");
        let exchanged = self.request(subject_token).await?;
        let token = exchanged.token.clone();
        *cached = Some(exchanged);
        Ok(token)
    }

    /// Forgets the token exchanged for `subject_token` (a caller signed out, or its token
    /// was revoked): the next [`TokenExchanger::exchange`] exchanges anew.
    pub fn invalidate(&self, subject_token: &Secret) {
        let key = self.key(subject_token);
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
    }

    /// The cache key of `subject_token`.
    fn key(&self, subject_token: &Secret) -> CacheKey {
        let target = self
            .request
            .resource
            .as_deref()
            .or(self.request.audience.as_deref())
            .unwrap_or_default();
        CacheKey {
            subject: Sha256::digest(subject_token.expose().as_bytes()).into(),
            target: target.to_owned(),
        }
    }

    /// The slot of `subject_token`, added when new (dropping stale ones when full).
    fn slot(&self, subject_token: &Secret) -> Slot {
        let key = self.key(subject_token);
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if !cache.contains_key(&key) && cache.len() >= MAX_CACHED_EXCHANGES {
            let margin = self.margin;
            // A slot in use (its lock taken) stays; an idle one stays while it holds a
            // usable token.
            cache.retain(|_, slot| {
                slot.try_lock()
                    .map_or(true, |e| e.as_ref().is_some_and(|e| e.usable(margin)))
            });
        }
        Arc::clone(cache.entry(key).or_default())
    }

    /// One exchange at the token endpoint.
    async fn request(&self, subject_token: &Secret) -> Result<Exchanged, AuthError> {
        let request = &self.request;
        let mut form: Vec<(&str, &str)> = vec![
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("subject_token", subject_token.expose()),
            ("subject_token_type", ACCESS_TOKEN_TYPE),
            ("requested_token_type", ACCESS_TOKEN_TYPE),
        ];
        let optional = [
            ("audience", &request.audience),
            ("resource", &request.resource),
            ("scope", &request.scope),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                form.push((name, value));
            }
        }
        let client = match (&request.client_id, &request.client_secret) {
            (Some(id), Some(secret)) => ClientAuth::Basic(id, secret),
            (id, _) => ClientAuth::None(id.as_deref()),
        };
        let outcome = request_token(
            &self.server,
            &self.http,
            &request.endpoint,
            form,
            client,
            None,
        )
        .await?;
        let issued = match outcome {
            GrantOutcome::Issued(issued) => issued,
            GrantOutcome::Refused(code) => {
                return Err(AuthError::ExchangeRefused {
                    server: self.server.clone(),
                    code,
                });
            }
        };
        // A DPoP-bound token is of no use without the key we never sent a proof of.
        if issued.is_dpop() {
            return Err(AuthError::TokenEndpoint {
                server: self.server.clone(),
                code: "unsupported_token_type".to_owned(),
            });
        }
        let lifetime = issued
            .expires_in
            .map_or(DEFAULT_UNKNOWN_LIFETIME, Duration::from_secs);
        let now = Instant::now();
        tracing::debug!(server = %self.server, lifetime_secs = lifetime.as_secs(), "exchanged a caller's token");
        Ok(Exchanged {
            token: Secret::new(issued.access_token),
            expires_at: now.checked_add(lifetime).unwrap_or(now),
        })
    }
}

impl fmt::Debug for TokenExchanger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("TokenExchanger")
            .field("server", &self.server)
            .field("token_endpoint", &self.request.endpoint)
            .field("audience", &self.request.audience)
            .field("resource", &self.request.resource)
            .field("scope", &self.request.scope)
            .field("client_id", &self.request.client_id)
            .field("margin", &self.margin)
            .field("cached", &cached)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn exchanger() -> TokenExchanger {
        let config =
            TokenExchangeConfig::new("https://idp.example.com/token").with_audience("tickets");
        TokenExchanger::new("tickets".parse().unwrap(), &config, None).unwrap()
    }

    fn len(exchanger: &TokenExchanger) -> usize {
        exchanger.cache.lock().unwrap().len()
    }

    #[tokio::test]
    async fn a_full_cache_drops_idle_entries_without_a_usable_token() {
        let exchanger = exchanger();
        let callers: Vec<Secret> = (0..MAX_CACHED_EXCHANGES)
            .map(|i| Secret::new(format!("caller-{i}")))
            .collect();
        for caller in &callers {
            drop(exchanger.slot(caller));
        }
        // One idle entry with a usable token and one in use survive; the empty ones go.
        let usable = exchanger.slot(&callers[0]);
        *usable.lock().await = Some(Exchanged {
            token: Secret::new("t"),
            expires_at: Instant::now() + Duration::from_secs(3600),
        });
        let busy = exchanger.slot(&callers[1]);
        let _held = busy.lock().await;
        assert_eq!(len(&exchanger), MAX_CACHED_EXCHANGES);
        drop(exchanger.slot(&Secret::new("newcomer")));
        assert_eq!(len(&exchanger), 3);
    }

    #[test]
    fn the_key_is_a_hash_of_the_caller_token_and_the_audience() {
        let exchanger = exchanger();
        let key = exchanger.key(&Secret::new("caller-token"));
        assert_eq!(key.target, "tickets");
        assert!(key == exchanger.key(&Secret::new("caller-token")));
        assert!(key != exchanger.key(&Secret::new("another-token")));
        assert_ne!(key.subject, [0; 32]);
    }
}

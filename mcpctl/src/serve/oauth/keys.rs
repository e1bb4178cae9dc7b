//! The issuer's signing keys (its JSON Web Key Set at the metadata's `jwks_uri`), kept
//! for [`KEYS_TTL`] and read again after it.
//!
//! A token naming a key (`kid`) the kept set lacks makes the set be read again at once
//! (the issuer rotated its keys), at most once per [`UNKNOWN_KEY_REFETCH`]: a flood of
//! made-up key ids costs one read. A set read again replaces the kept one whole, so a key
//! the issuer rotated out stops verifying anything. One read at a time: the others wait
//! for it, never longer than [`WAIT_BOUND`], and a token whose key is kept never waits
//! (a key set endpoint that hangs holds up only the tokens that need it, each for a
//! bounded time). When the set cannot be read, the kept keys go on verifying, and the set
//! is not asked for again before [`super::discovery::RETRY_AFTER_FAILURE`].

use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};

use super::discovery::{Discovery, RETRY_AFTER_FAILURE};
use super::fetch::{FETCH_TIMEOUT, Fetcher};

/// How long a key set read is used before it is read again.
pub(crate) const KEYS_TTL: Duration = Duration::from_secs(300);

/// The shortest time between two reads caused by tokens naming unknown keys.
pub(crate) const UNKNOWN_KEY_REFETCH: Duration = Duration::from_secs(30);

/// The longest a token waits for another token's read of the key set (the metadata's
/// read and the key set's, each bounded by [`FETCH_TIMEOUT`]).
pub(crate) const WAIT_BOUND: Duration = Duration::from_secs(2 * FETCH_TIMEOUT.as_secs() + 1);

/// Why no key was found for a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyProblem {
    /// The issuer publishes no such key (or no key fits a token without `kid`).
    Unknown,
    /// The key set could not be read: what went wrong.
    Unavailable(String),
}

#[derive(Debug, Default)]
struct State {
    keys: Vec<Jwk>,
    /// When the kept set was read; reads so far.
    read_at: Option<Instant>,
    reads: u64,
    /// The last read caused by an unknown key id.
    unknown_refetch: Option<Instant>,
    /// The last failed read and why.
    failure: Option<(Instant, String)>,
}

/// The issuer's key set, kept.
#[derive(Debug)]
pub(crate) struct Keys {
    discovery: std::sync::Arc<Discovery>,
    fetcher: Fetcher,
    state: Mutex<State>,
    gate: tokio::sync::Mutex<()>,
}

/// What to do for a token's key.
enum Plan {
    Use(Box<Jwk>),
    Fail(KeyProblem),
    /// Read the set (`unknown`: because the key is not in it), after `reads` reads.
    Read {
        unknown: bool,
        reads: u64,
    },
}

impl Keys {
    pub(crate) fn new(discovery: std::sync::Arc<Discovery>, fetcher: Fetcher) -> Self {
        Self {
            discovery,
            fetcher,
            state: Mutex::default(),
            gate: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The published key a token with `kid` is signed with.
    ///
    /// # Cancel safety
    /// Cancel-safe: a read given up leaves the kept set as it was.
    pub(crate) async fn key(&self, kid: Option<&str>) -> Result<Jwk, KeyProblem> {
        let (unknown, seen) = match self.plan(kid) {
            Plan::Use(jwk) => return Ok(*jwk),
            Plan::Fail(problem) => return Err(problem),
            Plan::Read { unknown, reads } => (unknown, reads),
        };
        let waited = tokio::time::timeout(WAIT_BOUND, self.gate.lock()).await;
        let Ok(_one_at_a_time) = waited else {
            return Err(KeyProblem::Unavailable(format!(
                "the key set was being read for more than {}s",
                WAIT_BOUND.as_secs()
            )));
        };
        if self.lock().reads != seen {
            // Someone read it meanwhile: use what they got.
            return match self.plan(kid) {
                Plan::Use(jwk) => Ok(*jwk),
                Plan::Fail(problem) => Err(problem),
                Plan::Read { .. } => Err(KeyProblem::Unknown),
            };
        }
        let outcome = self.read().await;
        let mut state = self.lock();
        let now = Instant::now();
        if unknown {
            state.unknown_refetch = Some(now);
        }
        match outcome {
            Ok(keys) => {
                state.keys = keys;
                state.read_at = Some(now);
                state.reads += 1;
                state.failure = None;
                find(&state.keys, kid).ok_or(KeyProblem::Unknown)
            }
            Err(e) => {
                tracing::warn!("the authorization server's key set: {e}");
                state.failure = Some((now, e.clone()));
                // The kept keys go on verifying meanwhile.
                find(&state.keys, kid).ok_or(KeyProblem::Unavailable(e))
            }
        }
    }

    /// What the kept set says about `kid`.
    fn plan(&self, kid: Option<&str>) -> Plan {
        let state = self.lock();
        let found = find(&state.keys, kid);
        let fresh = state.read_at.is_some_and(|t| t.elapsed() < KEYS_TTL);
        let failed_recently = state
            .failure
            .as_ref()
            .filter(|(t, _)| t.elapsed() < RETRY_AFTER_FAILURE);
        match (found, fresh) {
            (Some(jwk), true) => Plan::Use(Box::new(jwk)),
            (Some(jwk), false) if failed_recently.is_some() => Plan::Use(Box::new(jwk)),
            (Some(_), false) => Plan::Read {
                unknown: false,
                reads: state.reads,
            },
            (None, _) => {
                if let Some((_, e)) = failed_recently {
                    return Plan::Fail(KeyProblem::Unavailable(e.clone()));
                }
                let never_read = state.read_at.is_none();
                let refetched_recently = state
                    .unknown_refetch
                    .is_some_and(|t| t.elapsed() < UNKNOWN_KEY_REFETCH);
                if !never_read && fresh && refetched_recently {
                    return Plan::Fail(KeyProblem::Unknown);
                }
                Plan::Read {
                    unknown: !never_read,
                    reads: state.reads,
                }
            }
        }
    }

    /// Reads the set: its signing keys, asymmetric ones only.
    async fn read(&self) -> Result<Vec<Jwk>, String> {
        let uri = self.discovery.endpoint("jwks_uri").await?;
        let document = self
            .fetcher
            .get_json(&uri)
            .await
            .map_err(|e| format!("{uri}: {e}"))?;
        let set: JwkSet = serde_json::from_value(document)
            .map_err(|_| format!("{uri}: the document is no JSON Web Key Set"))?;
        Ok(set
            .keys
            .into_iter()
            .filter(|k| !matches!(k.algorithm, AlgorithmParameters::OctetKey(_)))
            .filter(|k| {
                k.common
                    .public_key_use
                    .as_ref()
                    .is_none_or(|u| *u == jsonwebtoken::jwk::PublicKeyUse::Signature)
            })
            .collect())
    }
}

/// The key `kid` names; without a `kid`, the set's only key.
fn find(keys: &[Jwk], kid: Option<&str>) -> Option<Jwk> {
    match kid {
        Some(kid) => keys
            .iter()
            .find(|k| k.common.key_id.as_deref() == Some(kid))
            .cloned(),
        None => match keys {
            [one] => Some(one.clone()),
            _ => None,
        },
    }
}

//! The issuer's signing keys (its JSON Web Key Set at the metadata's `jwks_uri`), kept
//! for [`KEYS_TTL`] and read again after it.
//!
//! A set older than [`KEYS_TTL`] goes on verifying the tokens whose key it holds while one
//! read runs in the background (single flight), so no request waits for the refresh, and
//! an issuer that hangs holds up none of them. A token naming a key (`kid`) the kept set
//! lacks makes the set be read again at once (the issuer rotated its keys), at most once
//! per [`UNKNOWN_KEY_REFETCH`]: a flood of made-up key ids costs one read. A set read again
//! replaces the kept one whole, so a key the issuer rotated out stops verifying anything.
//! One read at a time: a token that needs it waits for it, never longer than
//! [`WAIT_BOUND`], and a token whose key is kept never waits (a key set endpoint that hangs
//! holds up only the tokens that need it, each for a bounded time). When the set cannot be
//! read, the kept keys go on verifying, and the set is not asked for again before
//! [`super::discovery::RETRY_AFTER_FAILURE`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use tokio_util::task::AbortOnDropHandle;

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
    shared: Arc<Shared>,
    /// The background read of a stale set, if one was started (aborted when the keys go).
    refresh: Mutex<Option<AbortOnDropHandle<()>>>,
}

/// What [`Keys`] and its background read share.
#[derive(Debug)]
struct Shared {
    discovery: Arc<Discovery>,
    fetcher: Fetcher,
    state: Mutex<State>,
    gate: tokio::sync::Mutex<()>,
}

/// What to do for a token's key.
enum Plan {
    Use(Box<Jwk>),
    /// Use the key, and read the stale set again in the background, after `reads` reads.
    UseAndRefresh {
        jwk: Box<Jwk>,
        reads: u64,
    },
    Fail(KeyProblem),
    /// Read the set (`unknown`: because the key is not in it), after `reads` reads.
    Read {
        unknown: bool,
        reads: u64,
    },
}

impl Keys {
    pub(crate) fn new(discovery: Arc<Discovery>, fetcher: Fetcher) -> Self {
        Self {
            shared: Arc::new(Shared {
                discovery,
                fetcher,
                state: Mutex::default(),
                gate: tokio::sync::Mutex::new(()),
            }),
            refresh: Mutex::new(None),
        }
    }

    #[cfg(test)]
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.lock()
    }

    /// The published key a token with `kid` is signed with.
    ///
    /// # Cancel safety
    /// Cancel-safe: a read given up leaves the kept set as it was (a background read goes
    /// on by itself).
    pub(crate) async fn key(&self, kid: Option<&str>) -> Result<Jwk, KeyProblem> {
        let (unknown, seen) = match self.shared.plan(kid) {
            Plan::Use(jwk) => return Ok(*jwk),
            Plan::UseAndRefresh { jwk, reads } => {
                self.refresh_in_background(reads);
                return Ok(*jwk);
            }
            Plan::Fail(problem) => return Err(problem),
            Plan::Read { unknown, reads } => (unknown, reads),
        };
        let waited = tokio::time::timeout(WAIT_BOUND, self.shared.gate.lock()).await;
        let Ok(_one_at_a_time) = waited else {
            return Err(KeyProblem::Unavailable(format!(
                "the key set was being read for more than {}s",
                WAIT_BOUND.as_secs()
            )));
        };
        if self.shared.lock().reads != seen {
            // Someone read it meanwhile: use what they got.
            return match self.shared.plan(kid) {
                Plan::Use(jwk) | Plan::UseAndRefresh { jwk, .. } => Ok(*jwk),
                Plan::Fail(problem) => Err(problem),
                Plan::Read { .. } => Err(KeyProblem::Unknown),
            };
        }
        let outcome = self.shared.read().await;
        let mut state = self.shared.lock();
        if unknown {
            state.unknown_refetch = Some(Instant::now());
        }
        match store(&mut state, outcome) {
            Ok(()) => find(&state.keys, kid).ok_or(KeyProblem::Unknown),
            Err(e) => find(&state.keys, kid).ok_or(KeyProblem::Unavailable(e)),
        }
    }

    /// Starts one read of the set, after `seen` reads, unless one is running.
    fn refresh_in_background(&self, seen: u64) {
        let mut refresh = self
            .refresh
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if refresh.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        let shared = Arc::clone(&self.shared);
        *refresh = Some(AbortOnDropHandle::new(tokio::spawn(async move {
            let _one_at_a_time = shared.gate.lock().await;
            if shared.lock().reads != seen {
                return; // read meanwhile
            }
            let outcome = shared.read().await;
            // A failure is logged and remembered; the kept keys go on verifying.
            let _ = store(&mut shared.lock(), outcome);
        })));
    }
}

/// Keeps a read's outcome: a set read replaces the kept one; a failure is logged and
/// remembered (the kept keys go on verifying meanwhile).
fn store(state: &mut State, outcome: Result<Vec<Jwk>, String>) -> Result<(), String> {
    let now = Instant::now();
    match outcome {
        Ok(keys) => {
            state.keys = keys;
            state.read_at = Some(now);
            state.reads += 1;
            state.failure = None;
            Ok(())
        }
        Err(e) => {
            tracing::warn!("the authorization server's key set: {e}");
            state.failure = Some((now, e.clone()));
            Err(e)
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
            (Some(jwk), false) => Plan::UseAndRefresh {
                jwk: Box::new(jwk),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::sync::Arc;

    use mcp_testkit::{AuthServerOptions, FakeAuthServer, JwksFault};

    use super::*;

    /// Keys of the fake authorization server, read once.
    async fn read_once(auth: &FakeAuthServer) -> Keys {
        let fetcher = Fetcher::new().unwrap();
        let discovery = Arc::new(Discovery::new(&auth.issuer(), fetcher.clone()));
        let keys = Keys::new(discovery, fetcher);
        let kid = auth.signing_key_id();
        assert!(keys.key(Some(&kid)).await.is_ok());
        assert_eq!(auth.counters().jwks, 1);
        keys
    }

    /// Makes the kept set older than [`KEYS_TTL`].
    fn age(keys: &Keys) {
        let old = Instant::now().checked_sub(KEYS_TTL + Duration::from_secs(1));
        keys.lock().read_at = Some(old.unwrap());
    }

    #[tokio::test]
    async fn a_stale_set_serves_its_keys_while_one_read_runs_in_the_background() {
        let auth = FakeAuthServer::start(AuthServerOptions::new().with_jwt_access_tokens())
            .await
            .unwrap();
        let keys = read_once(&auth).await;
        let kid = auth.signing_key_id();
        age(&keys);
        auth.set_jwks_fault(Some(JwksFault::Hang));
        // Many tokens of a known key, while the key set endpoint hangs: none waits for it.
        for _ in 0..20 {
            let answered = tokio::time::timeout(Duration::from_millis(500), keys.key(Some(&kid)));
            assert!(answered.await.unwrap().is_ok(), "served from the kept set");
        }
        // One read of the set, in the background (single flight).
        let deadline = Instant::now() + Duration::from_secs(10);
        while auth.counters().jwks < 2 {
            assert!(Instant::now() < deadline, "the set is read again");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(auth.counters().jwks, 2, "one read at a time");
        drop(keys);
        auth.shutdown().await;
    }

    #[tokio::test]
    async fn the_background_read_replaces_the_set() {
        let auth = FakeAuthServer::start(AuthServerOptions::new().with_jwt_access_tokens())
            .await
            .unwrap();
        let keys = read_once(&auth).await;
        let old_kid = auth.signing_key_id();
        let new_kid = auth.rotate_signing_key();
        age(&keys);
        assert!(keys.key(Some(&old_kid)).await.is_ok(), "still kept");
        let deadline = Instant::now() + Duration::from_secs(10);
        while keys.lock().reads < 2 {
            assert!(Instant::now() < deadline, "the set is read again");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            keys.key(Some(&old_kid)).await.err(),
            Some(KeyProblem::Unknown)
        );
        assert!(keys.key(Some(&new_kid)).await.is_ok());
        drop(keys);
        auth.shutdown().await;
    }
}

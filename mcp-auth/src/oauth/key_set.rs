//! A JSON Web Key Set kept for verifying signatures: the one cache of an issuer's signing
//! keys, used by the enterprise IdP's ID token check here and by hosts that verify access
//! tokens (a gateway's resource server).
//!
//! A set older than [`KeySetTiming::ttl`] goes on verifying the tokens whose key it holds
//! while one read runs in the background (single flight), so no token waits for the
//! refresh and an issuer that hangs holds up none of them. A token naming a key (`kid`)
//! the kept set lacks makes the set be read again at once (the issuer rotated its keys),
//! at most once per [`KeySetTiming::unknown_key_refetch`]: a flood of made-up key ids costs
//! one read. A set read again replaces the kept one whole, so a key the issuer rotated out
//! stops verifying anything. One read at a time: a token that needs it waits for it, never
//! longer than [`KeySetTiming::wait_bound`], and a token whose key is kept never waits.
//! When the set cannot be read, the kept keys go on verifying, and the set is not asked
//! for again before [`KeySetTiming::retry_after_failure`].

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, PublicKeyUse};

/// Where a key set is read from: an issuer's `jwks_uri`, found however the host finds it.
pub trait KeySetSource: Send + Sync + 'static {
    /// Reads the whole set; the error says what went wrong, for logs and rejections.
    fn read(&self) -> impl Future<Output = Result<JwkSet, String>> + Send;
}

/// How long a [`KeySetCache`] keeps and waits; [`KeySetTiming::default`] is the one to use
/// unless a test needs shorter times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeySetTiming {
    /// How long a set read is used before it is read again (in the background): 300 s.
    pub ttl: Duration,
    /// The shortest time between two reads caused by tokens naming unknown keys: 30 s.
    pub unknown_key_refetch: Duration,
    /// How long a failed read is not repeated: 5 s.
    pub retry_after_failure: Duration,
    /// The longest a token waits for another token's read of the set: 11 s.
    pub wait_bound: Duration,
}

impl Default for KeySetTiming {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(300),
            unknown_key_refetch: Duration::from_secs(30),
            retry_after_failure: Duration::from_secs(5),
            wait_bound: Duration::from_secs(11),
        }
    }
}

impl KeySetTiming {
    /// Sets [`KeySetTiming::ttl`].
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets [`KeySetTiming::retry_after_failure`].
    #[must_use]
    pub fn with_retry_after_failure(mut self, after: Duration) -> Self {
        self.retry_after_failure = after;
        self
    }

    /// Sets [`KeySetTiming::wait_bound`].
    #[must_use]
    pub fn with_wait_bound(mut self, bound: Duration) -> Self {
        self.wait_bound = bound;
        self
    }
}

/// Why no key was found for a token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyProblem {
    /// The issuer publishes no such key (or no key fits a token without `kid`).
    Unknown,
    /// The key set could not be read: what went wrong.
    Unavailable(String),
}

impl std::fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unknown => f.write_str("the signing key is not in the issuer's key set"),
            Self::Unavailable(e) => write!(f, "the issuer's key set cannot be read: {e}"),
        }
    }
}

impl std::error::Error for KeyProblem {}

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

/// An issuer's signing keys, kept (see the module's rules). Dropping it stops its
/// background read.
#[derive(Debug)]
pub struct KeySetCache<S> {
    shared: Arc<Shared<S>>,
    /// The background read of a stale set, if one was started.
    refresh: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

#[derive(Debug)]
struct Shared<S> {
    source: S,
    timing: KeySetTiming,
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

impl<S: KeySetSource> KeySetCache<S> {
    /// A cache that reads from `source`, nothing read yet.
    pub fn new(source: S, timing: KeySetTiming) -> Self {
        Self {
            shared: Arc::new(Shared {
                source,
                timing,
                state: Mutex::default(),
                gate: tokio::sync::Mutex::new(()),
            }),
            refresh: Mutex::new(None),
        }
    }

    /// How many times the set was read successfully so far.
    pub fn reads(&self) -> u64 {
        self.shared.lock().reads
    }

    /// The published signing key a token with `kid` is signed with (without `kid`, the
    /// set's only key).
    ///
    /// # Cancel safety
    /// Cancel-safe: a read given up leaves the kept set as it was (a background read goes
    /// on by itself).
    pub async fn key(&self, kid: Option<&str>) -> Result<Jwk, KeyProblem> {
        let (unknown, seen) = match self.shared.plan(kid) {
            Plan::Use(jwk) => return Ok(*jwk),
            Plan::UseAndRefresh { jwk, reads } => {
                self.refresh_in_background(reads);
                return Ok(*jwk);
            }
            Plan::Fail(problem) => return Err(problem),
            Plan::Read { unknown, reads } => (unknown, reads),
        };
        let bound = self.shared.timing.wait_bound;
        let Ok(_one_at_a_time) = tokio::time::timeout(bound, self.shared.gate.lock()).await else {
            return Err(KeyProblem::Unavailable(format!(
                "the key set was being read for more than {}s",
                bound.as_secs()
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
        let mut refresh = self.refresh.lock().unwrap_or_else(PoisonError::into_inner);
        if refresh.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        let shared = Arc::clone(&self.shared);
        *refresh = Some(tokio::spawn(async move {
            let _one_at_a_time = shared.gate.lock().await;
            if shared.lock().reads != seen {
                return; // read meanwhile
            }
            let outcome = shared.read().await;
            // A failure is logged and remembered; the kept keys go on verifying.
            let _ = store(&mut shared.lock(), outcome);
        }));
    }
}

impl<S> Drop for KeySetCache<S> {
    fn drop(&mut self) {
        if let Some(task) = self
            .refresh
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            task.abort();
        }
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
            tracing::warn!("an issuer's key set: {e}");
            state.failure = Some((now, e.clone()));
            Err(e)
        }
    }
}

impl<S: KeySetSource> Shared<S> {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the kept set says about `kid`.
    fn plan(&self, kid: Option<&str>) -> Plan {
        let timing = &self.timing;
        let state = self.lock();
        let found = find(&state.keys, kid);
        let fresh = state.read_at.is_some_and(|t| t.elapsed() < timing.ttl);
        let failed_recently = state
            .failure
            .as_ref()
            .filter(|(t, _)| t.elapsed() < timing.retry_after_failure);
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
                    .is_some_and(|t| t.elapsed() < timing.unknown_key_refetch);
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
        let set = self.source.read().await?;
        Ok(set
            .keys
            .into_iter()
            .filter(|k| !matches!(k.algorithm, AlgorithmParameters::OctetKey(_)))
            .filter(|k| {
                k.common
                    .public_key_use
                    .as_ref()
                    .is_none_or(|u| *u == PublicKeyUse::Signature)
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

    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    /// A source whose set the test changes; counts its reads; fails while `failing`.
    #[derive(Default)]
    struct Source {
        kids: Mutex<Vec<&'static str>>,
        failing: std::sync::atomic::AtomicBool,
        reads: AtomicU64,
    }

    impl KeySetSource for Arc<Source> {
        async fn read(&self) -> Result<JwkSet, String> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            if self.failing.load(Ordering::SeqCst) {
                return Err("the issuer is down".to_owned());
            }
            let keys: Vec<serde_json::Value> = self
                .kids
                .lock()
                .unwrap()
                .iter()
                .map(|kid| {
                    serde_json::json!({"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig",
                        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
                        "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"})
                })
                .chain([serde_json::json!({"kty": "oct", "kid": "shared", "k": "c2VjcmV0"})])
                .collect();
            serde_json::from_value(serde_json::json!({ "keys": keys })).map_err(|e| e.to_string())
        }
    }

    fn cache(
        kids: &[&'static str],
        timing: KeySetTiming,
    ) -> (Arc<Source>, KeySetCache<Arc<Source>>) {
        let source = Arc::new(Source::default());
        source.kids.lock().unwrap().extend_from_slice(kids);
        (Arc::clone(&source), KeySetCache::new(source, timing))
    }

    #[tokio::test]
    async fn unknown_key_ids_cost_one_read_per_interval_and_symmetric_keys_never_verify() {
        let (source, keys) = cache(&["a"], KeySetTiming::default());
        assert!(keys.key(Some("a")).await.is_ok());
        assert!(keys.key(Some("a")).await.is_ok());
        assert_eq!(source.reads.load(Ordering::SeqCst), 1, "kept");
        // The issuer rotates: the unknown id reads the set once more.
        *source.kids.lock().unwrap() = vec!["b"];
        assert!(keys.key(Some("b")).await.is_ok());
        assert_eq!(source.reads.load(Ordering::SeqCst), 2);
        // The rotated-out key no longer verifies; made-up ids cost no read now.
        assert_eq!(keys.key(Some("a")).await.err(), Some(KeyProblem::Unknown));
        for _ in 0..50 {
            assert_eq!(
                keys.key(Some("made-up")).await.err(),
                Some(KeyProblem::Unknown)
            );
        }
        assert_eq!(source.reads.load(Ordering::SeqCst), 2);
        // A symmetric key in the set is never offered.
        assert_eq!(
            keys.key(Some("shared")).await.err(),
            Some(KeyProblem::Unknown)
        );
    }

    #[tokio::test]
    async fn a_failed_read_keeps_the_keys_and_is_not_repeated_at_once() {
        let timing = KeySetTiming::default().with_ttl(Duration::ZERO);
        let (source, keys) = cache(&["a"], timing);
        assert!(keys.key(Some("a")).await.is_ok());
        source.failing.store(true, Ordering::SeqCst);
        // Stale: the kept key answers while the background read fails.
        assert!(keys.key(Some("a")).await.is_ok());
        // One thread: the background read runs, and stores its failure, within one poll.
        while source.reads.load(Ordering::SeqCst) < 2 {
            tokio::task::yield_now().await;
        }
        // An unknown key now: the recent failure answers, without another read.
        let err = keys.key(Some("new")).await.unwrap_err();
        assert_eq!(
            err,
            KeyProblem::Unavailable("the issuer is down".to_owned())
        );
        assert!(err.to_string().contains("cannot be read"), "{err}");
        assert!(
            keys.key(Some("a")).await.is_ok(),
            "the kept key goes on verifying"
        );
        assert_eq!(source.reads.load(Ordering::SeqCst), 2);
    }
}

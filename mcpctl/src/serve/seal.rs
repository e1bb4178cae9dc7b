//! Sealed `requestState`: what a 2026-era call needs to be resumed, carried by its client
//! instead of kept by one gateway instance, so the client's retry may reach any instance
//! behind a load balancer.
//!
//! A sealed state is `mcpctl-sealed/1.` followed by base64url (no padding) of a random
//! 96-bit nonce and the AES-256-GCM ciphertext with its tag. The plaintext is JSON: the
//! unix second the state expires at and the body the gateway put in it. The instances
//! share the key ([`SealKey::from_text`]: 32 bytes as hex or base64, from
//! `--seal-key-file` or `$MCPCTL_SEAL_KEY`); without one each process makes its own
//! ([`SealKey::generate`]), and only that process can open what it sealed.
//!
//! Opening refuses, with a [`SealError`] and never a panic: text that is not a sealed
//! state, one too large ([`MAX_SEALED_LEN`]), one altered or sealed with another key (the
//! two cannot be told apart), and one past its expiry. A single-use state
//! ([`SealKey::open_once`]) is also refused when presented to the same instance again: the
//! instance remembers it ([`Spent`], by its nonce) until it expires.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Prefix of every sealed state, which also names the format's version.
pub(crate) const SEALED_PREFIX: &str = "mcpctl-sealed/1.";

/// The environment variable holding the sealing key when no `--seal-key-file` is given.
pub(crate) const SEAL_KEY_ENV: &str = "MCPCTL_SEAL_KEY";

/// Longest sealed state, in characters: what would be longer is not sealed (the call is
/// kept in memory instead), and a longer one presented is refused before any decoding.
pub(crate) const MAX_SEALED_LEN: usize = 64 * 1024;

/// Bytes in a sealing key.
const KEY_LEN: usize = 32;

/// Why a state could not be sealed or opened.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SealError {
    /// The state would exceed [`MAX_SEALED_LEN`], or the one presented does.
    TooLarge,
    /// Not a sealed state of this format.
    Malformed,
    /// Altered, or sealed with another key.
    Forged,
    /// Past its expiry.
    Expired,
    /// Presented before: a single-use state ([`SealKey::open_once`]) resumes once.
    Spent,
    /// Too many single-use states are spent and unexpired to remember one more.
    TooManySpent,
    /// The system's cipher or random source failed.
    Crypto,
}

impl std::fmt::Display for SealError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::TooLarge => "the requestState is larger than this gateway seals",
            Self::Malformed => "the requestState is not one this gateway handed out",
            Self::Forged => {
                "the requestState was altered, or sealed by a gateway with another key (the instances behind one address must share --seal-key-file or $MCPCTL_SEAL_KEY)"
            }
            Self::Expired => "the requestState expired: the client took longer than the answer deadline",
            Self::Spent => {
                "the requestState was used already: each one resumes its call once; call the tool again"
            }
            Self::TooManySpent => {
                "this gateway remembers too many used requestStates to take another now; try again shortly"
            }
            Self::Crypto => "the gateway's cipher failed",
        })
    }
}

impl std::error::Error for SealError {}

/// What the plaintext of a sealed state holds.
#[derive(Serialize, serde::Deserialize)]
struct Envelope<T> {
    /// Unix seconds after which the state is refused.
    exp: u64,
    body: T,
}

/// The key the instances seal with.
pub(crate) struct SealKey {
    key: RandomizedNonceKey,
    /// Whether the key was given (shared by instances) rather than made by this process.
    shared: bool,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SealKey")
            .field("key", &"<redacted>")
            .field("shared", &self.shared)
            .finish()
    }
}

impl SealKey {
    /// A key of this process alone: states it seals open on no other instance.
    pub(crate) fn generate() -> Result<Self, SealError> {
        let mut bytes = [0u8; KEY_LEN];
        aws_lc_rs::rand::fill(&mut bytes).map_err(|_| SealError::Crypto)?;
        Self::from_bytes(&bytes, false)
    }

    /// The key written as text (surrounding whitespace ignored): 64 hex digits or the
    /// standard base64 of 32 bytes. The error says what is wrong, never the key.
    pub(crate) fn from_text(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let bytes = if text.len() == 2 * KEY_LEN && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            (0..KEY_LEN)
                .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|_| "the sealing key is not hex".to_owned())?
        } else {
            STANDARD.decode(text).map_err(|_| {
                "the sealing key is neither 64 hex digits nor base64 of 32 bytes".to_owned()
            })?
        };
        if bytes.len() != KEY_LEN {
            return Err(format!(
                "the sealing key holds {} bytes; it must hold 32 random bytes (e.g. `openssl rand -hex 32`)",
                bytes.len()
            ));
        }
        Self::from_bytes(&bytes, true).map_err(|e| e.to_string())
    }

    fn from_bytes(bytes: &[u8], shared: bool) -> Result<Self, SealError> {
        let key = RandomizedNonceKey::new(&AES_256_GCM, bytes).map_err(|_| SealError::Crypto)?;
        Ok(Self { key, shared })
    }

    /// Seals `body` to be opened until `ttl` from now.
    pub(crate) fn seal<T: Serialize>(&self, body: &T, ttl: Duration) -> Result<String, SealError> {
        self.seal_at(body, unix_now().saturating_add(ttl.as_secs()))
    }

    fn seal_at<T: Serialize>(&self, body: &T, exp: u64) -> Result<String, SealError> {
        let mut in_out =
            serde_json::to_vec(&Envelope { exp, body }).map_err(|_| SealError::Malformed)?;
        // Base64 makes 4 characters of 3 bytes; the nonce and the tag come on top.
        if (in_out.len() + NONCE_LEN + 16) * 4 / 3 + SEALED_PREFIX.len() >= MAX_SEALED_LEN {
            return Err(SealError::TooLarge);
        }
        let nonce = self
            .key
            .seal_in_place_append_tag(Aad::from(SEALED_PREFIX), &mut in_out)
            .map_err(|_| SealError::Crypto)?;
        let mut sealed = nonce.as_ref().to_vec();
        sealed.extend_from_slice(&in_out);
        Ok(format!("{SEALED_PREFIX}{}", URL_SAFE_NO_PAD.encode(sealed)))
    }

    /// Opens a state [`Self::seal`] made with this key, unexpired.
    #[cfg(test)]
    pub(crate) fn open<T: DeserializeOwned>(&self, state: &str) -> Result<T, SealError> {
        self.open_at(state, unix_now()).map(|(body, _)| body)
    }

    /// Opens a state [`Self::seal`] made with this key, unexpired, that may be presented
    /// once: the state (by its nonce) is remembered in `spent` until it expires, and refused ([`SealError::Spent`]) when
    /// presented again to this instance. `accept` decides first whether the body is one to
    /// spend (a state refused for another reason stays unspent).
    pub(crate) fn open_once<T: DeserializeOwned>(
        &self,
        state: &str,
        spent: &Spent,
        accept: impl FnOnce(&T) -> bool,
    ) -> Result<(T, bool), SealError> {
        let now = unix_now();
        let (body, seal) = self.open_at(state, now)?;
        if !accept(&body) {
            return Ok((body, false));
        }
        spent.spend(seal, now)?;
        Ok((body, true))
    }

    fn open_at<T: DeserializeOwned>(
        &self,
        state: &str,
        now: u64,
    ) -> Result<(T, SealId), SealError> {
        if state.len() > MAX_SEALED_LEN {
            return Err(SealError::TooLarge);
        }
        let encoded = state
            .strip_prefix(SEALED_PREFIX)
            .ok_or(SealError::Malformed)?;
        let mut sealed = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| SealError::Malformed)?;
        if sealed.len() < NONCE_LEN {
            return Err(SealError::Malformed);
        }
        let mut in_out = sealed.split_off(NONCE_LEN);
        let mut id = [0u8; NONCE_LEN];
        id.copy_from_slice(&sealed);
        let nonce = Nonce::try_assume_unique_for_key(&sealed).map_err(|_| SealError::Malformed)?;
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(SEALED_PREFIX), &mut in_out)
            .map_err(|_| SealError::Forged)?;
        // Sealed by a key of ours: the text is ours, yet read it without trusting it.
        let envelope: Envelope<T> =
            serde_json::from_slice(plain).map_err(|_| SealError::Malformed)?;
        if now > envelope.exp {
            return Err(SealError::Expired);
        }
        Ok((
            envelope.body,
            SealId {
                nonce: id,
                exp: envelope.exp,
            },
        ))
    }
}

/// One sealed state, as [`Spent`] remembers it: its nonce (random, one per seal) and the
/// second it expires at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SealId {
    nonce: [u8; NONCE_LEN],
    exp: u64,
}

/// Most single-use states one instance remembers as spent while they are unexpired.
pub(crate) const MAX_SPENT: usize = 65_536;

/// The single-use states this instance opened ([`SealKey::open_once`]), until each
/// expires: bounded by [`MAX_SPENT`] (when it is full of unexpired states, more are
/// refused rather than one forgotten, which would let it be replayed).
#[derive(Debug)]
pub(crate) struct Spent {
    seen: std::sync::Mutex<SpentSet>,
    max: usize,
}

#[derive(Debug, Default)]
struct SpentSet {
    nonces: std::collections::HashSet<[u8; NONCE_LEN]>,
    /// The same states by expiry, to forget them once expired.
    by_exp: std::collections::BTreeSet<(u64, [u8; NONCE_LEN])>,
}

impl Default for Spent {
    fn default() -> Self {
        Self::with_max(MAX_SPENT)
    }
}

impl Spent {
    /// Remembers at most `max` unexpired states.
    pub(crate) fn with_max(max: usize) -> Self {
        Self {
            seen: std::sync::Mutex::default(),
            max,
        }
    }

    /// Records `seal` as spent at `now`, or says why it cannot be.
    fn spend(&self, seal: SealId, now: u64) -> Result<(), SealError> {
        let mut set = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Forget the expired: they are refused as such.
        while let Some(&(exp, nonce)) = set.by_exp.first()
            && exp < now
        {
            set.by_exp.pop_first();
            set.nonces.remove(&nonce);
        }
        if set.nonces.contains(&seal.nonce) {
            return Err(SealError::Spent);
        }
        if set.nonces.len() >= self.max {
            return Err(SealError::TooManySpent);
        }
        set.nonces.insert(seal.nonce);
        set.by_exp.insert((seal.exp, seal.nonce));
        Ok(())
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;

    const HEX_KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn key() -> SealKey {
        SealKey::from_text(HEX_KEY).unwrap()
    }

    #[test]
    fn a_sealed_state_opens_with_the_same_key_on_another_instance() {
        let body = json!({"tool": "ask", "arguments": {"q": 1}, "upstream": "s-1"});
        let state = key().seal(&body, Duration::from_secs(60)).unwrap();
        assert!(state.starts_with(SEALED_PREFIX));
        assert!(!state.contains("ask"), "the body is encrypted: {state}");
        let other_instance = key();
        assert_eq!(other_instance.open::<Value>(&state).unwrap(), body);
        // The same key given as base64 is the same key.
        let b64 = STANDARD.encode((0u8..32).collect::<Vec<_>>());
        assert_eq!(
            SealKey::from_text(&b64)
                .unwrap()
                .open::<Value>(&state)
                .unwrap(),
            body
        );
    }

    #[test]
    fn each_seal_has_its_own_nonce() {
        let key = key();
        let a = key.seal(&json!(1), Duration::from_secs(60)).unwrap();
        let b = key.seal(&json!(1), Duration::from_secs(60)).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn an_altered_state_is_refused() {
        let key = key();
        let state = key.seal(&json!({"a": 1}), Duration::from_secs(60)).unwrap();
        let encoded = state.strip_prefix(SEALED_PREFIX).unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(encoded).unwrap();
        for at in [0, NONCE_LEN, bytes.len() - 1] {
            bytes[at] ^= 1;
            let altered = format!("{SEALED_PREFIX}{}", URL_SAFE_NO_PAD.encode(&bytes));
            assert_eq!(
                key.open::<Value>(&altered),
                Err(SealError::Forged),
                "byte {at}"
            );
            bytes[at] ^= 1;
        }
        bytes.truncate(bytes.len() - 3);
        let cut = format!("{SEALED_PREFIX}{}", URL_SAFE_NO_PAD.encode(&bytes));
        assert_eq!(key.open::<Value>(&cut), Err(SealError::Forged));
    }

    #[test]
    fn another_key_cannot_open_it() {
        let state = key().seal(&json!(1), Duration::from_secs(60)).unwrap();
        let other = SealKey::generate().unwrap();
        assert!(format!("{other:?}").contains("shared: false"));
        assert_eq!(other.open::<Value>(&state), Err(SealError::Forged));
        assert!(
            other
                .open::<Value>(&state)
                .unwrap_err()
                .to_string()
                .contains("another key")
        );
    }

    #[test]
    fn an_expired_state_is_refused() {
        let key = key();
        let state = key.seal_at(&json!(1), 1_000).unwrap();
        assert_eq!(key.open_at::<Value>(&state, 1_000).unwrap().0, json!(1));
        assert_eq!(
            key.open_at::<Value>(&state, 1_001).map(|(body, _)| body),
            Err(SealError::Expired)
        );
    }

    #[test]
    fn a_single_use_state_opens_once_and_is_forgotten_when_it_expires() {
        let key = key();
        let spent = Spent::with_max(2);
        let state = key.seal(&json!("a"), Duration::from_secs(60)).unwrap();
        // Refused by `accept` (another caller's): not spent.
        assert_eq!(
            key.open_once::<Value>(&state, &spent, |_| false).unwrap(),
            (json!("a"), false)
        );
        assert_eq!(
            key.open_once::<Value>(&state, &spent, |_| true).unwrap(),
            (json!("a"), true)
        );
        assert_eq!(
            key.open_once::<Value>(&state, &spent, |_| true),
            Err(SealError::Spent)
        );
        // Bounded: full of unexpired states, it refuses rather than forgets.
        let b = key.seal(&json!("b"), Duration::from_secs(60)).unwrap();
        let c = key.seal(&json!("c"), Duration::from_secs(60)).unwrap();
        assert!(key.open_once::<Value>(&b, &spent, |_| true).is_ok());
        assert_eq!(
            key.open_once::<Value>(&c, &spent, |_| true),
            Err(SealError::TooManySpent)
        );
        // An expired entry is forgotten (its state is refused as expired anyway).
        let old = key.seal_at(&json!("old"), 1_000).unwrap();
        let fresh = Spent::with_max(1);
        let (_, id) = key.open_at::<Value>(&old, 1_000).unwrap();
        fresh.spend(id, 1_000).unwrap();
        assert_eq!(fresh.spend(id, 1_000), Err(SealError::Spent));
        let (_, next) = key.open_at::<Value>(&c, 1_000).unwrap();
        assert_eq!(fresh.spend(next, 1_001), Ok(()));
    }

    #[test]
    fn garbage_and_oversized_states_are_refused() {
        let key = key();
        for garbage in [
            "",
            "mcpctl-serve/abc",
            SEALED_PREFIX,
            "mcpctl-sealed/1.!!!",
            "mcpctl-sealed/1.AAAA",
        ] {
            assert_eq!(
                key.open::<Value>(garbage),
                Err(SealError::Malformed),
                "{garbage:?}"
            );
        }
        let huge = format!("{SEALED_PREFIX}{}", "A".repeat(MAX_SEALED_LEN));
        assert_eq!(key.open::<Value>(&huge), Err(SealError::TooLarge));
        let big = json!("x".repeat(MAX_SEALED_LEN));
        assert_eq!(
            key.seal(&big, Duration::from_secs(1)),
            Err(SealError::TooLarge)
        );
    }

    #[test]
    fn bad_keys_are_named_without_their_text() {
        for bad in ["", "00", &"g".repeat(64), &STANDARD.encode([1u8; 16])] {
            let Err(message) = SealKey::from_text(bad) else {
                panic!("{bad:?} was taken as a key");
            };
            assert!(message.contains("sealing key"), "{message}");
        }
        assert!(SealKey::from_text(&format!("  {HEX_KEY}\n")).is_ok());
        assert_eq!(
            format!("{:?}", key()),
            "SealKey { key: \"<redacted>\", shared: true }"
        );
    }
}

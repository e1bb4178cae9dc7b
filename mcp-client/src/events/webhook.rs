//! Webhook delivery, the receiving side: the secret the client gives the server
//! ([`WebhookSecret`], Standard Webhooks `whsec_` form), and the verification of each
//! delivery ([`WebhookVerifier`]): the `webhook-signature` (HMAC-SHA256 over
//! `webhook-id.webhook-timestamp.body`, base64, `v1,` prefixed, any of several
//! space-separated signatures during a rotation), the `webhook-timestamp` within a window
//! of now, and the `webhook-id` not seen before (a replayed delivery is refused). Pure:
//! the caller's HTTP server hands the headers, the raw body and the time. A verified body
//! is an event or a control envelope ([`WebhookBody`]); a `verification` envelope is
//! answered with [`WebhookBody::challenge_answer`].

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

/// How far a delivery's `webhook-timestamp` may be from now, either way: the extension's
/// five minutes.
pub const WEBHOOK_TOLERANCE: Duration = Duration::from_secs(5 * 60);

/// Delivery ids remembered to refuse a replay (the oldest are forgotten first; an id
/// older than the window is refused by its timestamp anyway).
pub const WEBHOOK_IDS_KEPT: usize = 4096;

/// The prefix of a Standard Webhooks symmetric secret.
const SECRET_PREFIX: &str = "whsec_";

/// The bytes of a secret the extension accepts.
const SECRET_BYTES: std::ops::RangeInclusive<usize> = 24..=64;

/// A webhook signing secret (Standard Webhooks `whsec_` + base64 of 24 to 64 bytes). Its
/// `Debug` shows no byte of it.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret {
    key: Vec<u8>,
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WebhookSecret({} bytes, redacted)", self.key.len())
    }
}

/// Why a text is not a webhook secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookSecretError {
    /// It does not start with `whsec_`.
    #[error("a webhook secret starts with `whsec_`")]
    Prefix,
    /// What follows is not base64.
    #[error("a webhook secret is `whsec_` followed by base64")]
    Base64,
    /// It decodes to too few or too many bytes.
    #[error("a webhook secret holds 24 to 64 bytes, not {0}")]
    Length(usize),
    /// The system's random source failed.
    #[error("the system's random source failed: {0}")]
    Random(String),
}

impl WebhookSecret {
    /// A new random 32-byte secret (what a client should give a server).
    ///
    /// # Errors
    /// [`WebhookSecretError::Random`] when the system's random source fails.
    pub fn generate() -> Result<Self, WebhookSecretError> {
        let mut key = vec![0u8; 32];
        getrandom::fill(&mut key).map_err(|e| WebhookSecretError::Random(e.to_string()))?;
        Ok(Self { key })
    }

    /// Reads a `whsec_…` secret.
    ///
    /// # Errors
    /// When `text` is not `whsec_` followed by base64 of 24 to 64 bytes.
    pub fn parse(text: &str) -> Result<Self, WebhookSecretError> {
        let encoded = text
            .strip_prefix(SECRET_PREFIX)
            .ok_or(WebhookSecretError::Prefix)?;
        let key = STANDARD
            .decode(encoded)
            .map_err(|_| WebhookSecretError::Base64)?;
        if !SECRET_BYTES.contains(&key.len()) {
            return Err(WebhookSecretError::Length(key.len()));
        }
        Ok(Self { key })
    }

    /// The `whsec_…` form sent in `events/subscribe`'s `delivery.secret`.
    pub fn to_whsec(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.key))
    }

    /// The `v1,…` signature of a delivery.
    pub fn sign(&self, id: &str, timestamp: u64, body: &[u8]) -> String {
        format!("v1,{}", STANDARD.encode(self.mac(id, timestamp, body)))
    }

    fn mac(&self, id: &str, timestamp: u64, body: &[u8]) -> [u8; 32] {
        let mut message = Vec::with_capacity(id.len() + body.len() + 24);
        message.extend_from_slice(id.as_bytes());
        message.push(b'.');
        message.extend_from_slice(timestamp.to_string().as_bytes());
        message.push(b'.');
        message.extend_from_slice(body);
        hmac_sha256(&self.key, &message)
    }
}

/// HMAC-SHA256 (RFC 2104).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner_pad: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let outer_pad: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let inner = Sha256::new()
        .chain_update(&inner_pad)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(&outer_pad)
        .chain_update(inner)
        .finalize()
        .into()
}

/// Compares in time independent of where the bytes differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The Standard Webhooks headers of one delivery, as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebhookHeaders<'a> {
    /// `webhook-id`: the event's id (or `msg_<type>_<random>` for a control envelope).
    pub id: Option<&'a str>,
    /// `webhook-timestamp`: Unix seconds.
    pub timestamp: Option<&'a str>,
    /// `webhook-signature`: one or more space-separated `v1,<base64>`.
    pub signature: Option<&'a str>,
}

impl<'a> WebhookHeaders<'a> {
    /// The headers, from a lookup by (lower-case) name.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<&'a str>) -> Self {
        Self {
            id: lookup("webhook-id"),
            timestamp: lookup("webhook-timestamp"),
            signature: lookup("webhook-signature"),
        }
    }
}

/// Why a delivery was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookRejection {
    /// A Standard Webhooks header is missing.
    #[error("the delivery has no `{0}` header")]
    MissingHeader(&'static str),
    /// `webhook-timestamp` is not Unix seconds.
    #[error("the delivery's `webhook-timestamp` is not Unix seconds")]
    BadTimestamp,
    /// `webhook-timestamp` is further from now than the tolerance (a stale or replayed
    /// delivery, or a clock far off).
    #[error(
        "the delivery's `webhook-timestamp` is {}s from now, beyond the {}s allowed",
        off.as_secs(),
        tolerance.as_secs()
    )]
    OutsideWindow {
        /// How far from now.
        off: Duration,
        /// The tolerance.
        tolerance: Duration,
    },
    /// No signature matches any secret: forged, or signed with another secret.
    #[error("the delivery's signature does not match the subscription's secret")]
    BadSignature,
    /// This `webhook-id` was accepted before: a replay (or a retry of a delivery already
    /// accepted, which needs no second handling).
    #[error("the delivery `{0}` was accepted before")]
    Replayed(String),
}

/// Verifies the deliveries of one subscription (or one receiver sharing secrets):
/// signature, timestamp window, and ids remembered so that a delivery is accepted once.
#[derive(Debug)]
pub struct WebhookVerifier {
    secrets: Vec<WebhookSecret>,
    tolerance: Duration,
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    order: VecDeque<String>,
    ids: BTreeMap<String, ()>,
}

impl WebhookVerifier {
    /// A verifier for deliveries signed with `secret`, within [`WEBHOOK_TOLERANCE`].
    pub fn new(secret: WebhookSecret) -> Self {
        Self {
            secrets: vec![secret],
            tolerance: WEBHOOK_TOLERANCE,
            seen: Mutex::default(),
        }
    }

    /// Also accept `secret` (during a rotation, old and new are both valid).
    #[must_use]
    pub fn with_secret(mut self, secret: WebhookSecret) -> Self {
        self.secrets.push(secret);
        self
    }

    /// Set how far from now a timestamp may be.
    #[must_use]
    pub fn with_tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Checks one delivery received at `now`: the signature over the raw `body`, then
    /// the timestamp, then the id (remembered once everything else passed, so that a
    /// forged delivery cannot make a later genuine one look replayed).
    ///
    /// # Errors
    /// The first check that fails.
    pub fn verify(
        &self,
        headers: &WebhookHeaders<'_>,
        body: &[u8],
        now: SystemTime,
    ) -> Result<(), WebhookRejection> {
        let id = headers
            .id
            .ok_or(WebhookRejection::MissingHeader("webhook-id"))?;
        let timestamp = headers
            .timestamp
            .ok_or(WebhookRejection::MissingHeader("webhook-timestamp"))?;
        let signatures = headers
            .signature
            .ok_or(WebhookRejection::MissingHeader("webhook-signature"))?;
        let seconds: u64 = timestamp
            .trim()
            .parse()
            .map_err(|_| WebhookRejection::BadTimestamp)?;
        let expected: Vec<[u8; 32]> = self
            .secrets
            .iter()
            .map(|s| s.mac(id, seconds, body))
            .collect();
        let signed = signatures
            .split_whitespace()
            .filter_map(|s| s.strip_prefix("v1,"))
            .filter_map(|s| STANDARD.decode(s).ok())
            .any(|given| expected.iter().any(|e| same(e, &given)));
        if !signed {
            return Err(WebhookRejection::BadSignature);
        }
        let now_secs = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let off = Duration::from_secs(now_secs.abs_diff(seconds));
        if off > self.tolerance {
            return Err(WebhookRejection::OutsideWindow {
                off,
                tolerance: self.tolerance,
            });
        }
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.ids.contains_key(id) {
            return Err(WebhookRejection::Replayed(id.to_owned()));
        }
        if seen.order.len() == WEBHOOK_IDS_KEPT
            && let Some(oldest) = seen.order.pop_front()
        {
            seen.ids.remove(&oldest);
        }
        seen.order.push_back(id.to_owned());
        seen.ids.insert(id.to_owned(), ());
        Ok(())
    }
}

/// What a (verified) delivery's body holds: an event, or a control envelope (a body with
/// a top-level `type`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WebhookBody {
    /// An event occurrence, with its `cursor` (a watermark, safe to persist).
    Event(super::EventOccurrence),
    /// The callback verification: the endpoint answers `2xx` with
    /// [`WebhookBody::challenge_answer`] to receive the subscription's deliveries.
    Verification {
        /// The nonce to echo.
        challenge: String,
    },
    /// Events were skipped: persist `cursor` and treat the subscription as truncated.
    Gap {
        /// The fresh cursor.
        cursor: Option<String>,
    },
    /// The server ended the subscription (e.g. access revoked).
    Terminated {
        /// The JSON-RPC error object, as the server sent it.
        error: serde_json::Value,
    },
    /// A control envelope of a type this client does not know.
    Other {
        /// Its `type`.
        kind: String,
    },
}

impl WebhookBody {
    /// Reads a delivery's raw body (after [`WebhookVerifier::verify`]).
    ///
    /// # Errors
    /// When the body is not JSON, or not an event occurrence nor an envelope.
    pub fn parse(body: &[u8]) -> Result<Self, serde_json::Error> {
        let value: serde_json::Value = serde_json::from_slice(body)?;
        let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        match value.get("type").and_then(|t| t.as_str()) {
            None => serde_json::from_value(value).map(Self::Event),
            Some("verification") => Ok(Self::Verification {
                challenge: text("challenge").unwrap_or_default(),
            }),
            Some("gap") => Ok(Self::Gap {
                cursor: text("cursor"),
            }),
            Some("terminated") => Ok(Self::Terminated {
                error: value.get("error").cloned().unwrap_or_default(),
            }),
            Some(other) => Ok(Self::Other {
                kind: other.to_owned(),
            }),
        }
    }

    /// The `2xx` answer's body that proves intent to a `verification` envelope:
    /// `{"challenge": "<nonce>"}`; `None` for any other body.
    pub fn challenge_answer(&self) -> Option<Vec<u8>> {
        match self {
            Self::Verification { challenge } => Some(
                serde_json::json!({ "challenge": challenge })
                    .to_string()
                    .into_bytes(),
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        // Test case 2 of RFC 4231.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        let mac = hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            hex(&mac),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn signatures_match_the_standard_webhooks_example() {
        // The example of the Standard Webhooks reference libraries.
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            secret.sign(
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn a_delivery_is_accepted_once_signed_and_fresh_and_refused_otherwise() {
        let secret = WebhookSecret::generate().unwrap();
        let verifier = WebhookVerifier::new(secret.clone());
        let body =
            br#"{"eventId":"evt-1","name":"mail","timestamp":"2026-12-06T10:00:00Z","data":{}}"#;
        let now = 1_790_000_000;
        let signature = secret.sign("evt-1", now, body);
        let stamp = now.to_string();
        let headers = WebhookHeaders {
            id: Some("evt-1"),
            timestamp: Some(&stamp),
            signature: Some(&signature),
        };
        // A forged body fails before the genuine one is seen: it does not poison the id.
        let forged = br#"{"eventId":"evt-1","name":"mail","data":{"evil":true}}"#;
        assert_eq!(
            verifier.verify(&headers, forged, at(now)),
            Err(WebhookRejection::BadSignature)
        );
        assert_eq!(verifier.verify(&headers, body, at(now + 10)), Ok(()));
        assert_eq!(
            verifier.verify(&headers, body, at(now + 11)),
            Err(WebhookRejection::Replayed("evt-1".to_owned()))
        );
        // Stale: beyond five minutes.
        let old = now - 301;
        let old_stamp = old.to_string();
        let old_signature = secret.sign("evt-2", old, body);
        let stale = WebhookHeaders {
            id: Some("evt-2"),
            timestamp: Some(&old_stamp),
            signature: Some(&old_signature),
        };
        assert!(matches!(
            verifier.verify(&stale, body, at(now)),
            Err(WebhookRejection::OutsideWindow { .. })
        ));
        // Another secret's signature, then a rotation that accepts both.
        let other = WebhookSecret::generate().unwrap();
        let by_other = other.sign("evt-3", now, body);
        let both = format!("v1,bm90IGl0 {by_other}");
        let rotated = WebhookHeaders {
            id: Some("evt-3"),
            timestamp: Some(&stamp),
            signature: Some(&both),
        };
        assert_eq!(
            verifier.verify(&rotated, body, at(now)),
            Err(WebhookRejection::BadSignature)
        );
        let verifier = WebhookVerifier::new(secret).with_secret(other);
        assert_eq!(verifier.verify(&rotated, body, at(now)), Ok(()));
        let missing = WebhookHeaders::from_lookup(|name| (name == "webhook-id").then_some("x"));
        assert_eq!(
            verifier.verify(&missing, body, at(now)),
            Err(WebhookRejection::MissingHeader("webhook-timestamp"))
        );
    }

    #[test]
    fn bodies_are_events_or_control_envelopes() {
        let event = WebhookBody::parse(
            br#"{"eventId":"evt-1","name":"mail","timestamp":"2026-12-06T10:00:00Z","data":{"n":1},"cursor":"pos-1"}"#,
        )
        .unwrap();
        let WebhookBody::Event(occurrence) = &event else {
            panic!("{event:?}");
        };
        assert_eq!(occurrence.cursor.as_deref(), Some("pos-1"));
        assert_eq!(event.challenge_answer(), None);
        let check = WebhookBody::parse(br#"{"type":"verification","challenge":"n0nce"}"#).unwrap();
        assert_eq!(
            check.challenge_answer().unwrap(),
            br#"{"challenge":"n0nce"}"#.to_vec()
        );
        assert_eq!(
            WebhookBody::parse(br#"{"type":"gap","cursor":"pos-9"}"#).unwrap(),
            WebhookBody::Gap {
                cursor: Some("pos-9".into())
            }
        );
        assert!(matches!(
            WebhookBody::parse(br#"{"type":"terminated","error":{"code":-32012}}"#).unwrap(),
            WebhookBody::Terminated { .. }
        ));
        assert!(WebhookBody::parse(b"not json").is_err());
        assert!(WebhookBody::parse(br#"{"name":"mail"}"#).is_err());
    }

    #[test]
    fn secrets_are_whsec_base64_of_24_to_64_bytes_and_never_shown() {
        let secret = WebhookSecret::generate().unwrap();
        let text = secret.to_whsec();
        assert!(text.starts_with("whsec_"));
        assert_eq!(WebhookSecret::parse(&text), Ok(secret.clone()));
        assert_eq!(format!("{secret:?}"), "WebhookSecret(32 bytes, redacted)");
        assert_eq!(
            WebhookSecret::parse("sk_abc"),
            Err(WebhookSecretError::Prefix)
        );
        assert_eq!(
            WebhookSecret::parse("whsec_!!"),
            Err(WebhookSecretError::Base64)
        );
        let short = format!("whsec_{}", STANDARD.encode([1u8; 16]));
        assert_eq!(
            WebhookSecret::parse(&short),
            Err(WebhookSecretError::Length(16))
        );
    }
}

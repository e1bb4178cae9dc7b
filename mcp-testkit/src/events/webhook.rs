//! Webhook delivery by the fake server: the subscriptions of `events/subscribe` (kept,
//! refreshed, lapsed), the callback verification handshake, and one delivery task per
//! subscription that POSTs signed events (Standard Webhooks) to a loopback `http` callback,
//! with the faults of [`crate::WebhookSpec::faults`]. The HTTP client is a minimal
//! HTTP/1.1 one over a tokio socket (`Connection: close`): enough for loopback receivers.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::WebhookFault;
use crate::record::lock;

/// How long one POST may take (connect, send, answer).
const POST_TIMEOUT: Duration = Duration::from_secs(5);

/// The first pause before a delivery is retried (doubled each time).
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// How old the timestamp of a [`WebhookFault::StaleTimestamp`] delivery is.
const STALE_BY: u64 = 600;

/// How long a refresh's replaced secret still signs deliveries (beside the new one).
const ROTATION_GRACE: Duration = Duration::from_secs(5);

/// The largest answer read from a callback.
const MAX_ANSWER: usize = 64 * 1024;

/// A loopback `http` callback: where to connect and what to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Callback {
    /// `host:port`, for the socket and the `Host` header.
    authority: String,
    /// The path and query.
    path: String,
}

/// What a callback URL allows.
pub(crate) enum CallbackKind {
    /// `https`: accepted, never POSTed to (the fake has no TLS).
    Https,
    /// Plain `http` to a loopback host: POSTed to.
    Loopback(Callback),
}

/// Reads a callback URL: `https`, or `http` to a loopback host; an error text otherwise.
pub(crate) fn callback(url: &str) -> Result<CallbackKind, String> {
    if url.starts_with("https://") {
        return Ok(CallbackKind::Https);
    }
    let refused = || {
        format!(
            "delivery.url {url:?} is not https (plain http is accepted only to a loopback host: 127.0.0.1, localhost, [::1])"
        )
    };
    let rest = url.strip_prefix("http://").ok_or_else(refused)?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let host = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => &authority[..i],
        _ => authority,
    };
    if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        return Err(refused());
    }
    let authority = if authority.len() == host.len() {
        format!("{host}:80")
    } else {
        authority.to_owned()
    };
    Ok(CallbackKind::Loopback(Callback {
        authority,
        path: path.to_owned(),
    }))
}

/// One webhook subscription the server holds.
pub(crate) struct WebhookSub {
    pub(crate) name: String,
    pub(crate) arguments: Map<String, Value>,
    /// The HMAC key (the secret's decoded bytes).
    pub(crate) key: Vec<u8>,
    /// The key a refresh replaced, signed with too until the instant given (a rotation's
    /// grace: deliveries in flight verify under either).
    pub(crate) previous_key: Option<(Vec<u8>, Instant)>,
    /// When it lapses (`None`: never).
    pub(crate) lapses_at: Option<Instant>,
    /// The position delivered (acknowledged or abandoned) up to: the watermark cursor.
    pub(crate) position: u64,
    /// Events acknowledged (`2xx`).
    pub(crate) delivered: u64,
    /// Events POSTed (the count the faults' `delivery` refers to).
    pub(crate) posted: u64,
    /// When the last event was acknowledged (RFC 3339).
    pub(crate) last_delivery_at: Option<String>,
    /// The category of the last failure (`lastError`).
    pub(crate) last_error: Option<&'static str>,
    /// Cancelled on unsubscribe: the delivery task ends.
    pub(crate) cancel: CancellationToken,
}

/// The webhook subscriptions of one server, and the callback URLs verified.
#[derive(Default)]
pub(crate) struct Webhooks {
    pub(crate) subs: Mutex<BTreeMap<String, WebhookSub>>,
    verified: Mutex<BTreeSet<String>>,
    /// Numbers the control envelopes' ids and challenges.
    counter: AtomicU64,
}

/// Why a callback failed: a `lastError` / `data.reason` category.
pub(crate) type Failure = &'static str;

impl Webhooks {
    /// A fresh nonce (unpredictable enough for a fake: a per-process random hash key).
    pub(crate) fn nonce(&self) -> String {
        use std::hash::{BuildHasher, Hasher};
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(n);
        hasher.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos(),
        );
        format!("{n}{:016x}", hasher.finish())
    }

    /// Verifies `callback` once: POSTs the `verification` envelope and checks the echo.
    pub(crate) async fn verify(
        &self,
        url: &str,
        callback: &Callback,
        key: &[u8],
        subscription_id: &str,
    ) -> Result<(), Failure> {
        if lock(&self.verified).contains(url) {
            return Ok(());
        }
        let challenge = self.nonce();
        let body = json!({"type": "verification", "challenge": challenge}).to_string();
        let id = format!("msg_verification_{}", self.nonce());
        let request = Delivery::signed(&id, now_secs(), body.into_bytes(), key, subscription_id);
        let answer = post(callback, &request).await?;
        let echoed = serde_json::from_slice::<Value>(&answer).ok().and_then(|v| {
            v.get("challenge")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        if echoed.is_none_or(|e| !same(e.as_bytes(), challenge.as_bytes())) {
            return Err("challenge_failed");
        }
        lock(&self.verified).insert(url.to_owned());
        Ok(())
    }
}

/// Until when a secret replaced now still signs.
pub(crate) fn rotation_ends() -> Instant {
    Instant::now() + ROTATION_GRACE
}

/// Unix seconds now.
fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// Compares in time independent of where the bytes differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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

/// The Standard Webhooks signature `v1,<base64>` of a delivery.
pub(crate) fn sign(key: &[u8], id: &str, timestamp: u64, body: &[u8]) -> String {
    let mut message = Vec::with_capacity(id.len() + body.len() + 24);
    message.extend_from_slice(id.as_bytes());
    message.push(b'.');
    message.extend_from_slice(timestamp.to_string().as_bytes());
    message.push(b'.');
    message.extend_from_slice(body);
    format!("v1,{}", STANDARD.encode(hmac_sha256(key, &message)))
}

/// One POST: the headers and the body.
pub(crate) struct Delivery {
    id: String,
    timestamp: u64,
    signature: String,
    subscription_id: String,
    body: Vec<u8>,
}

impl Delivery {
    /// Signed with each of `keys` (space-separated `v1,` signatures).
    fn signed_by(
        id: &str,
        timestamp: u64,
        body: Vec<u8>,
        keys: &[Vec<u8>],
        subscription_id: &str,
    ) -> Self {
        let signature = keys
            .iter()
            .map(|key| sign(key, id, timestamp, &body))
            .collect::<Vec<_>>()
            .join(" ");
        Self {
            id: id.to_owned(),
            timestamp,
            signature,
            subscription_id: subscription_id.to_owned(),
            body,
        }
    }

    fn signed(id: &str, timestamp: u64, body: Vec<u8>, key: &[u8], subscription_id: &str) -> Self {
        Self {
            id: id.to_owned(),
            timestamp,
            signature: sign(key, id, timestamp, &body),
            subscription_id: subscription_id.to_owned(),
            body,
        }
    }
}

/// POSTs `delivery` to `callback`; the answer's body on `2xx`.
async fn post(callback: &Callback, delivery: &Delivery) -> Result<Vec<u8>, Failure> {
    match tokio::time::timeout(POST_TIMEOUT, post_once(callback, delivery)).await {
        Ok(answer) => answer,
        Err(_) => Err("timeout"),
    }
}

async fn post_once(callback: &Callback, delivery: &Delivery) -> Result<Vec<u8>, Failure> {
    let mut socket = tokio::net::TcpStream::connect(&callback.authority)
        .await
        .map_err(|_| "connection_refused")?;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nwebhook-id: {}\r\nwebhook-timestamp: {}\r\nwebhook-signature: {}\r\nX-MCP-Subscription-Id: {}\r\nConnection: close\r\n\r\n",
        callback.path,
        callback.authority,
        delivery.body.len(),
        delivery.id,
        delivery.timestamp,
        delivery.signature,
        delivery.subscription_id,
    );
    let mut request = head.into_bytes();
    request.extend_from_slice(&delivery.body);
    socket
        .write_all(&request)
        .await
        .map_err(|_| "connection_refused")?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let read = socket
            .read(&mut chunk)
            .await
            .map_err(|_| "connection_refused")?;
        if read == 0 || answer.len() > MAX_ANSWER {
            break;
        }
        answer.extend_from_slice(&chunk[..read]);
        if complete(&answer) {
            break;
        }
    }
    parse_answer(&answer)
}

/// Where the head of an HTTP answer ends (after the blank line).
fn head_end(answer: &[u8]) -> Option<usize> {
    answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
}

/// The value of header `name` in `head` (case-insensitive name).
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then_some(value.trim())
    })
}

/// Whether `answer` holds a whole answer with a `Content-Length` (otherwise the socket's
/// end says so).
fn complete(answer: &[u8]) -> bool {
    let Some(end) = head_end(answer) else {
        return false;
    };
    let head = String::from_utf8_lossy(&answer[..end]);
    header(&head, "content-length")
        .and_then(|n| n.parse::<usize>().ok())
        .is_some_and(|n| answer.len() >= end + n)
}

/// The body of a `2xx` answer (chunked or not); the failure category otherwise.
fn parse_answer(answer: &[u8]) -> Result<Vec<u8>, Failure> {
    let end = head_end(answer).ok_or("connection_refused")?;
    let head = String::from_utf8_lossy(&answer[..end]);
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("connection_refused")?;
    match status {
        200..=299 => {}
        400..=499 => return Err("http_4xx"),
        _ => return Err("http_5xx"),
    }
    let body = &answer[end..];
    if header(&head, "transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        return Ok(dechunk(body));
    }
    Ok(
        match header(&head, "content-length").and_then(|n| n.parse::<usize>().ok()) {
            Some(n) => body[..n.min(body.len())].to_vec(),
            None => body.to_vec(),
        },
    )
}

/// A chunked body's bytes.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(line_end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&body[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(size) = size.filter(|n| *n > 0) else {
            return out;
        };
        let start = line_end + 2;
        let Some(chunk) = body.get(start..start + size) else {
            return out;
        };
        out.extend_from_slice(chunk);
        body = body.get(start + size + 2..).unwrap_or_default();
    }
}

/// POSTs one event with the faults of its delivery number around the genuine POST.
pub(crate) async fn deliver_with_faults(
    callback: &Callback,
    event_id: &str,
    body: Vec<u8>,
    keys: &[Vec<u8>],
    subscription_id: &str,
    number: u64,
    faults: &[WebhookFault],
) -> Result<(), Failure> {
    let at =
        |fault: fn(&WebhookFault) -> Option<u64>| faults.iter().any(|f| fault(f) == Some(number));
    if at(|f| match f {
        WebhookFault::BadSignature { delivery } => Some(*delivery),
        _ => None,
    }) {
        let other: Vec<Vec<u8>> = keys
            .iter()
            .map(|key| key.iter().map(|b| b ^ 0xff).collect())
            .collect();
        let forged =
            Delivery::signed_by(event_id, now_secs(), body.clone(), &other, subscription_id);
        let _refused = post(callback, &forged).await;
    }
    if at(|f| match f {
        WebhookFault::StaleTimestamp { delivery } => Some(*delivery),
        _ => None,
    }) {
        let stale = Delivery::signed_by(
            event_id,
            now_secs().saturating_sub(STALE_BY),
            body.clone(),
            keys,
            subscription_id,
        );
        let _refused = post(callback, &stale).await;
    }
    let sent = deliver(callback, event_id, body, keys, subscription_id).await;
    if let Ok(delivery) = &sent
        && at(|f| match f {
            WebhookFault::Replayed { delivery } => Some(*delivery),
            _ => None,
        })
    {
        let _refused = post(callback, delivery).await;
    }
    sent.map(|_| ())
}

/// POSTs one body, retried with a fresh timestamp and signature on failure; the
/// request that was acknowledged.
pub(crate) async fn deliver(
    callback: &Callback,
    id: &str,
    body: Vec<u8>,
    keys: &[Vec<u8>],
    subscription_id: &str,
) -> Result<Delivery, Failure> {
    let mut pause = RETRY_PAUSE;
    let mut last = "connection_refused";
    for attempt in 0..super::WEBHOOK_DELIVERY_ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(pause).await;
            pause *= 2;
        }
        let delivery = Delivery::signed_by(id, now_secs(), body.clone(), keys, subscription_id);
        match post(callback, &delivery).await {
            Ok(_) => return Ok(delivery),
            Err(failure) => last = failure,
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_the_standard_webhooks_example() {
        let key = STANDARD.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            sign(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn only_https_and_loopback_http_callbacks_are_accepted() {
        assert!(matches!(
            callback("https://hooks.example/x"),
            Ok(CallbackKind::Https)
        ));
        let Ok(CallbackKind::Loopback(local)) = callback("http://127.0.0.1:4000/hook?a=1") else {
            panic!("loopback refused");
        };
        assert_eq!(
            local,
            Callback {
                authority: "127.0.0.1:4000".into(),
                path: "/hook?a=1".into()
            }
        );
        let Ok(CallbackKind::Loopback(bare)) = callback("http://localhost") else {
            panic!("localhost refused");
        };
        assert_eq!(bare.authority, "localhost:80");
        assert!(callback("http://[::1]:9/").is_ok());
        assert!(callback("http://hooks.example.invalid/inbox").is_err());
        assert!(callback("http://127.0.0.1.evil.example/").is_err());
        assert!(callback("ftp://127.0.0.1/").is_err());
    }

    #[test]
    fn answers_are_read_with_a_length_or_chunked() {
        let plain = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloextra";
        assert_eq!(parse_answer(plain).unwrap(), b"hello");
        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_answer(chunked).unwrap(), b"abcde");
        assert_eq!(
            parse_answer(b"HTTP/1.1 401 Unauthorized\r\n\r\n"),
            Err("http_4xx")
        );
        assert_eq!(parse_answer(b"HTTP/1.1 503 No\r\n\r\n"), Err("http_5xx"));
        assert!(complete(plain));
        assert!(!complete(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhe"));
    }
}

//! Token introspection (RFC 7662): the gateway asks the authorization server about each
//! token, authenticating as its own client (HTTP Basic with the secret from the
//! configured variable). A token is accepted when the answer is `active` and names the
//! configured issuer (when it names one), the gateway's resource in `aud` (RFC 8707), a
//! `sub`, and an `exp` not passed.
//!
//! Answers are kept, keyed by the token's SHA-256 (the token itself is never kept), for at
//! most [`MAX_KEPT`] tokens: an accepting one for [`KEEP_ANSWER`] (never past the token's
//! `exp`), so a session's requests do not each cost a round trip; a refusing one for
//! [`KEEP_REFUSAL`], so a token made up and sent again costs nothing. And each client
//! address may cause at most [`INTROSPECTION_BURST`] introspections at once, then one per
//! [`INTROSPECTION_INTERVAL`] (a token answered from memory costs none); beyond that its
//! requests are refused with `429` until it may ask again, so a flood of made-up tokens
//! costs the authorization server a bounded number of POSTs. Behind a reverse proxy every
//! client has the proxy's address and shares its allowance.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_key::Secret;
use serde_json::Value;

use super::discovery::Discovery;
use super::fetch::Fetcher;
use super::jwt::{LEEWAY, Rejection};

/// How long an active answer is used for the same token.
pub(crate) const KEEP_ANSWER: Duration = Duration::from_secs(30);

/// How long a refusal (not active, not for this gateway) is used for the same token.
pub(crate) const KEEP_REFUSAL: Duration = Duration::from_secs(30);

/// Tokens whose answers are kept at most.
pub(crate) const MAX_KEPT: usize = 1024;

/// Introspections one client address may cause at once.
pub(crate) const INTROSPECTION_BURST: u32 = 20;

/// After a burst, one more introspection per client address per this interval.
pub(crate) const INTROSPECTION_INTERVAL: Duration = Duration::from_secs(1);

/// Client addresses whose allowance is tracked at most.
const MAX_TRACKED: usize = 4096;

/// A token's SHA-256: what answers are kept under.
type TokenHash = [u8; 32];

/// A kept answer, until when.
#[derive(Debug, Clone)]
enum Kept {
    Active(Value, Instant),
    Refused(&'static str, Instant),
}

/// What introspects tokens.
#[derive(Debug)]
pub(crate) struct Introspection {
    pub(crate) discovery: Arc<Discovery>,
    pub(crate) fetcher: Fetcher,
    /// The configured endpoint, else the metadata's `introspection_endpoint`.
    pub(crate) endpoint: Option<String>,
    pub(crate) client_id: String,
    pub(crate) secret: Secret,
    pub(crate) issuer: String,
    pub(crate) resource: String,
    kept: Mutex<HashMap<TokenHash, Kept>>,
    /// Per client address, when its allowance is whole again (a "theoretical arrival
    /// time": each introspection moves it one interval on).
    allowance: Mutex<HashMap<Option<IpAddr>, Instant>>,
}

impl Introspection {
    pub(crate) fn new(
        discovery: Arc<Discovery>,
        fetcher: Fetcher,
        endpoint: Option<String>,
        (client_id, secret): (String, Secret),
        (issuer, resource): (String, String),
    ) -> Self {
        Self {
            discovery,
            fetcher,
            endpoint,
            client_id,
            secret,
            issuer,
            resource,
            kept: Mutex::default(),
            allowance: Mutex::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<TokenHash, Kept>> {
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The token's claims, when the authorization server says it is active and for us;
    /// `client` is the address the request came from.
    pub(crate) async fn claims(
        &self,
        token: &str,
        client: Option<IpAddr>,
    ) -> Result<Value, Rejection> {
        let hash = token_hash(token);
        let now = Instant::now();
        match self.kept().get(&hash) {
            Some(Kept::Active(claims, until)) if now < *until => return Ok(claims.clone()),
            Some(Kept::Refused(why, until)) if now < *until => return Err(Rejection::Invalid(why)),
            _ => {}
        }
        self.take_allowance(client, now)
            .map_err(Rejection::Limited)?;
        let endpoint = match &self.endpoint {
            Some(endpoint) => endpoint.clone(),
            None => self
                .discovery
                .endpoint("introspection_endpoint")
                .await
                .map_err(Rejection::Unavailable)?,
        };
        let answer = self
            .fetcher
            .post_form(
                &endpoint,
                &[("token", token), ("token_type_hint", "access_token")],
                (&self.client_id, self.secret.expose()),
            )
            .await
            .map_err(|e| {
                tracing::warn!("token introspection at {endpoint}: {e}");
                Rejection::Unavailable(format!("{endpoint}: {e}"))
            })?;
        let now = Instant::now();
        let (outcome, kept) = match self.check(&answer) {
            Ok(left) => (
                Ok(answer.clone()),
                Kept::Active(answer, now + left.min(KEEP_ANSWER)),
            ),
            Err(Rejection::Invalid(why)) => (
                Err(Rejection::Invalid(why)),
                Kept::Refused(why, now + KEEP_REFUSAL),
            ),
            Err(other) => return Err(other),
        };
        let mut kept_answers = self.kept();
        if kept_answers.len() >= MAX_KEPT {
            kept_answers.retain(|_, kept| match kept {
                Kept::Active(_, until) | Kept::Refused(_, until) => *until > now,
            });
            if kept_answers.len() >= MAX_KEPT {
                kept_answers.clear();
            }
        }
        kept_answers.insert(hash, kept);
        outcome
    }

    /// Takes one introspection from `client`'s allowance; how long until it may ask again
    /// when none is left.
    fn take_allowance(&self, client: Option<IpAddr>, now: Instant) -> Result<(), Duration> {
        let mut allowance = self
            .allowance
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if allowance.len() >= MAX_TRACKED && !allowance.contains_key(&client) {
            // Forget the addresses whose allowance is whole again.
            allowance.retain(|_, whole_at| *whole_at > now);
            if allowance.len() >= MAX_TRACKED {
                allowance.clear();
            }
        }
        let whole_at = allowance.entry(client).or_insert(now);
        let start = (*whole_at).max(now);
        // The burst is spent when the allowance is whole only a burst of intervals away.
        let tolerance = INTROSPECTION_INTERVAL * (INTROSPECTION_BURST - 1);
        let ahead = start - now;
        if ahead > tolerance {
            return Err(ahead - tolerance);
        }
        *whole_at = start + INTROSPECTION_INTERVAL;
        Ok(())
    }

    /// Checks an answer; how long the token has left.
    fn check(&self, answer: &Value) -> Result<Duration, Rejection> {
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(Rejection::Invalid("the token is not active"));
        }
        if let Some(iss) = answer.get("iss")
            && iss.as_str() != Some(self.issuer.as_str())
        {
            return Err(Rejection::Invalid("the token is from another issuer"));
        }
        let for_us = match answer.get("aud") {
            Some(Value::String(aud)) => *aud == self.resource,
            Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(&self.resource)),
            _ => false,
        };
        if !for_us {
            return Err(Rejection::Invalid("the token is for another resource"));
        }
        if answer.get("sub").and_then(Value::as_str).is_none() {
            return Err(Rejection::Invalid("the token lacks a required claim"));
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        match answer.get("exp").and_then(Value::as_u64) {
            Some(exp) if exp + LEEWAY.as_secs() <= now => {
                Err(Rejection::Invalid("the token has expired"))
            }
            Some(exp) => Ok(Duration::from_secs(exp.saturating_sub(now))),
            None => Ok(KEEP_ANSWER),
        }
    }
}

/// `token`'s SHA-256.
fn token_hash(token: &str) -> TokenHash {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes());
    let mut hash = [0; 32];
    hash.copy_from_slice(digest.as_ref());
    hash
}

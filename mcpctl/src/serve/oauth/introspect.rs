//! Token introspection (RFC 7662): the gateway asks the authorization server about each
//! token, authenticating as its own client (HTTP Basic with the secret from the
//! configured variable). A token is accepted when the answer is `active` and names the
//! configured issuer (when it names one), the gateway's resource in `aud` (RFC 8707), a
//! `sub`, and an `exp` not passed. An answer is kept for [`KEEP_ANSWER`] (never past the
//! token's `exp`), for at most [`MAX_KEPT`] tokens: a session's requests do not each cost
//! a round trip.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_key::Secret;
use serde_json::Value;

use super::discovery::Discovery;
use super::fetch::Fetcher;
use super::jwt::{LEEWAY, Rejection};

/// How long an active answer is used for the same token.
pub(crate) const KEEP_ANSWER: Duration = Duration::from_secs(30);

/// Tokens whose answers are kept at most.
pub(crate) const MAX_KEPT: usize = 1024;

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
    kept: Mutex<HashMap<String, (Value, Instant)>>,
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
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Value, Instant)>> {
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The token's claims, when the authorization server says it is active and for us.
    pub(crate) async fn claims(&self, token: &str) -> Result<Value, Rejection> {
        if let Some((claims, until)) = self.kept().get(token).cloned()
            && Instant::now() < until
        {
            return Ok(claims);
        }
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
        let left = self.check(&answer)?;
        let mut kept = self.kept();
        if kept.len() >= MAX_KEPT {
            let now = Instant::now();
            kept.retain(|_, (_, until)| *until > now);
            if kept.len() >= MAX_KEPT {
                kept.clear();
            }
        }
        kept.insert(
            token.to_owned(),
            (answer.clone(), Instant::now() + left.min(KEEP_ANSWER)),
        );
        Ok(answer)
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

//! The authorization server's metadata (RFC 8414, else OpenID Connect discovery), found
//! from the configured issuer and kept once read: where its keys (`jwks_uri`) and its
//! introspection endpoint are. The document must name the configured issuer (RFC 8414
//! section 3.3): metadata of another server is refused.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::fetch::Fetcher;

/// How long a failed read of the metadata is answered from memory before it is tried
/// again (so an authorization server that is down costs each request nothing).
pub(crate) const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(5);

/// What is known of the metadata.
#[derive(Debug, Default)]
struct Known {
    document: Option<Value>,
    failure: Option<(Instant, String)>,
}

/// The issuer's metadata, read on first need and kept.
#[derive(Debug)]
pub(crate) struct Discovery {
    issuer: String,
    fetcher: Fetcher,
    known: Mutex<Known>,
    /// One read at a time (the others wait for its outcome).
    gate: tokio::sync::Mutex<()>,
}

impl Discovery {
    pub(crate) fn new(issuer: &str, fetcher: Fetcher) -> Self {
        Self {
            issuer: issuer.to_owned(),
            fetcher,
            known: Mutex::default(),
            gate: tokio::sync::Mutex::new(()),
        }
    }

    /// The metadata's `field` (a URL), reading the metadata first if need be; what went
    /// wrong otherwise.
    pub(crate) async fn endpoint(&self, field: &str) -> Result<String, String> {
        let document = self.document().await?;
        document
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("the issuer's metadata has no `{field}`"))
    }

    async fn document(&self) -> Result<Value, String> {
        if let Some(known) = self.known_now() {
            return known;
        }
        let _one_at_a_time = self.gate.lock().await;
        if let Some(known) = self.known_now() {
            return known;
        }
        let outcome = self.read().await;
        let mut known = self.lock();
        match &outcome {
            Ok(document) => known.document = Some(document.clone()),
            Err(e) => known.failure = Some((Instant::now(), e.clone())),
        }
        outcome
    }

    /// The document, or a recent failure, when either is known.
    fn known_now(&self) -> Option<Result<Value, String>> {
        let known = self.lock();
        if let Some(document) = &known.document {
            return Some(Ok(document.clone()));
        }
        match &known.failure {
            Some((when, e)) if when.elapsed() < RETRY_AFTER_FAILURE => Some(Err(e.clone())),
            _ => None,
        }
    }

    async fn read(&self) -> Result<Value, String> {
        let mut last = String::new();
        for url in metadata_urls(&self.issuer) {
            match self.fetcher.get_json(&url).await {
                Ok(document) => {
                    let named = document.get("issuer").and_then(Value::as_str);
                    if named.map(trim) != Some(trim(&self.issuer)) {
                        return Err(format!(
                            "the metadata at {url} names the issuer {:?}, not {:?}",
                            named.unwrap_or_default(),
                            self.issuer
                        ));
                    }
                    return Ok(document);
                }
                Err(e) => last = format!("{url}: {e}"),
            }
        }
        Err(format!("the issuer's metadata could not be read ({last})"))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `issuer` without a trailing slash, for comparison.
fn trim(issuer: &str) -> &str {
    issuer.strip_suffix('/').unwrap_or(issuer)
}

/// Where the metadata of `issuer` may be, in order: RFC 8414 (the well-known segment
/// before the issuer's path), OpenID Connect discovery (after it), and the RFC 8414 form of
/// OpenID's document.
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(url) = reqwest::Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = url.origin().ascii_serialization();
    let path = trim(url.path());
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ]
    .into_iter()
    .fold(Vec::new(), |mut urls, url| {
        if !urls.contains(&url) {
            urls.push(url);
        }
        urls
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_the_rfcs_say() {
        assert_eq!(
            metadata_urls("https://idp.example.com/realms/team"),
            [
                "https://idp.example.com/.well-known/oauth-authorization-server/realms/team",
                "https://idp.example.com/realms/team/.well-known/openid-configuration",
                "https://idp.example.com/.well-known/openid-configuration/realms/team",
            ]
        );
        assert_eq!(
            metadata_urls("http://127.0.0.1:9000/"),
            [
                "http://127.0.0.1:9000/.well-known/oauth-authorization-server",
                "http://127.0.0.1:9000/.well-known/openid-configuration",
            ]
        );
    }
}

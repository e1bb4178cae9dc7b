//! The issuer's signing keys (its JSON Web Key Set at the metadata's `jwks_uri`), kept in
//! mcp-auth's [`KeySetCache`], the one home of the rules: read again after its TTL in the
//! background, a rotated key fetched at once, made-up key ids costing at most one read per
//! interval, a hanging issuer holding up only the tokens that need a read, each for
//! [`WAIT_BOUND`] at most, and a failed read not repeated before
//! [`super::discovery::RETRY_AFTER_FAILURE`].

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{JwkSet, KeySetCache, KeySetSource, KeySetTiming};

use super::discovery::{Discovery, RETRY_AFTER_FAILURE};
use super::fetch::{FETCH_TIMEOUT, Fetcher};

pub(crate) use mcp_auth::KeyProblem;

/// The longest a token waits for another token's read of the key set (the metadata's
/// read and the key set's, each bounded by [`FETCH_TIMEOUT`]).
pub(crate) const WAIT_BOUND: Duration = Duration::from_secs(2 * FETCH_TIMEOUT.as_secs() + 1);

/// The issuer's key set, kept.
pub(crate) type Keys = KeySetCache<IssuerKeys>;

/// Where the issuer's key set is read: the `jwks_uri` of its metadata.
#[derive(Debug)]
pub(crate) struct IssuerKeys {
    discovery: Arc<Discovery>,
    fetcher: Fetcher,
}

impl KeySetSource for IssuerKeys {
    async fn read(&self) -> Result<JwkSet, String> {
        let uri = self.discovery.endpoint("jwks_uri").await?;
        let document = self
            .fetcher
            .get_json(&uri)
            .await
            .map_err(|e| format!("{uri}: {e}"))?;
        serde_json::from_value(document)
            .map_err(|_| format!("{uri}: the document is no JSON Web Key Set"))
    }
}

/// The issuer's keys, nothing read yet, with the gateway's timing.
pub(crate) fn keys(discovery: Arc<Discovery>, fetcher: Fetcher) -> Keys {
    keys_with(discovery, fetcher, timing())
}

/// The gateway's timing: the cache's defaults, with this gateway's retry and wait bounds.
fn timing() -> KeySetTiming {
    KeySetTiming::default()
        .with_retry_after_failure(RETRY_AFTER_FAILURE)
        .with_wait_bound(WAIT_BOUND)
}

fn keys_with(discovery: Arc<Discovery>, fetcher: Fetcher, timing: KeySetTiming) -> Keys {
    KeySetCache::new(IssuerKeys { discovery, fetcher }, timing)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::sync::Arc;
    use std::time::Instant;

    use mcp_testkit::{AuthServerOptions, FakeAuthServer, JwksFault};

    use super::*;

    /// Keys of the fake authorization server, read once, kept for no time: every later
    /// token finds the set stale (no waiting for a TTL to pass).
    async fn read_once_then_stale(auth: &FakeAuthServer) -> Keys {
        let fetcher = Fetcher::new().unwrap();
        let discovery = Arc::new(Discovery::new(&auth.issuer(), fetcher.clone()));
        let keys = keys_with(discovery, fetcher, timing().with_ttl(Duration::ZERO));
        let kid = auth.signing_key_id();
        assert!(keys.key(Some(&kid)).await.is_ok());
        assert_eq!(auth.counters().jwks, 1);
        keys
    }

    #[tokio::test]
    async fn a_stale_set_serves_its_keys_while_one_read_runs_in_the_background() {
        let auth = FakeAuthServer::start(AuthServerOptions::new().with_jwt_access_tokens())
            .await
            .unwrap();
        let kid = auth.signing_key_id();
        let keys = read_once_then_stale(&auth).await;
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
        let old_kid = auth.signing_key_id();
        let keys = read_once_then_stale(&auth).await;
        let new_kid = auth.rotate_signing_key();
        assert!(keys.key(Some(&old_kid)).await.is_ok(), "still kept");
        let deadline = Instant::now() + Duration::from_secs(10);
        while keys.reads() < 2 {
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

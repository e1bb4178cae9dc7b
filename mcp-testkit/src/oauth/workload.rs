//! Workload identity tokens: what a platform (CI, Kubernetes, a cloud VM) hands a workload,
//! signed here with the test EC key, and their check by the fake authorization server's
//! JWT-bearer grant (RFC 7523).

use serde_json::{Value, json};

use super::common::unix_now;
use super::keys::{TEST_EC_PRIVATE_KEY_PEM, TEST_EC_PUBLIC_KEY_PEM};

/// The `sub` of tokens from [`mint_workload_token`].
pub const WORKLOAD_SUBJECT: &str = "workload-ci";

/// A workload identity token from `issuer` for `audience` (the authorization server's
/// issuer, see [`crate::FakeAuthServer::issuer`]), valid for `lifetime_secs` (negative:
/// already expired), signed ES256 with [`crate::TEST_EC_PRIVATE_KEY_PEM`]. Each call gives
/// a distinct token (`jti`).
pub fn mint_workload_token(issuer: &str, audience: &str, lifetime_secs: i64) -> String {
    let now = unix_now();
    let exp = now.saturating_add_signed(lifetime_secs);
    let claims = json!({
        "iss": issuer,
        "sub": WORKLOAD_SUBJECT,
        "aud": audience,
        "iat": now,
        "exp": exp,
        "jti": super::common::random_token("wif"),
    });
    let header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    jsonwebtoken::EncodingKey::from_ec_pem(TEST_EC_PRIVATE_KEY_PEM.as_bytes())
        .and_then(|key| jsonwebtoken::encode(&header, &claims, &key))
        .unwrap_or_default()
}

/// Checks a workload token: signature (test EC key), issuer among `issuers`, audience among
/// `audiences`, not expired. Returns its subject.
pub(crate) fn verify(
    token: &str,
    issuers: &[String],
    audiences: &[String],
) -> Result<String, String> {
    let key = jsonwebtoken::DecodingKey::from_ec_pem(TEST_EC_PUBLIC_KEY_PEM.as_bytes())
        .map_err(|_| "test key unreadable".to_owned())?;
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(audiences);
    validation.set_issuer(issuers);
    validation.leeway = 0;
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let claims = jsonwebtoken::decode::<Value>(token, &key, &validation)
        .map_err(|e| format!("workload token rejected: {e}"))?
        .claims;
    claims
        .get("sub")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| "workload token has no sub".to_owned())
}

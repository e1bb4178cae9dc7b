//! DPoP proof checks (RFC 9449 section 4.3) shared by the fake authorization server's
//! token endpoint and the protected MCP server.

use std::collections::HashSet;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::common::unix_now;

/// How far a proof's `iat` may be from now.
const IAT_WINDOW_SECS: u64 = 300;

/// What a valid proof says.
#[derive(Debug)]
pub(crate) struct ProofInfo {
    /// The RFC 7638 thumbprint of the proof's key.
    pub(crate) jkt: String,
    /// The proof's `nonce` claim.
    pub(crate) nonce: Option<String>,
}

/// `url` without query and fragment.
fn htu(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

/// RFC 7638 thumbprint of an EC or RSA public JWK.
fn thumbprint(jwk: &Value) -> Option<String> {
    let s = |k: &str| jwk.get(k).and_then(Value::as_str);
    let canonical = match s("kty")? {
        "EC" => format!(
            r#"{{"crv":"{}","kty":"EC","x":"{}","y":"{}"}}"#,
            s("crv")?,
            s("x")?,
            s("y")?
        ),
        "RSA" => format!(r#"{{"e":"{}","kty":"RSA","n":"{}"}}"#, s("e")?, s("n")?),
        _ => return None,
    };
    Some(B64.encode(Sha256::digest(canonical.as_bytes())))
}

/// Checks `proof` for a `method` request to `url`, presenting `access_token` (resource
/// requests: `ath` must match) and never seen before (`jti` is recorded in `seen`).
pub(crate) fn verify(
    proof: &str,
    method: &str,
    url: &str,
    access_token: Option<&str>,
    seen: &mut HashSet<String>,
) -> Result<ProofInfo, &'static str> {
    let header = jsonwebtoken::decode_header(proof).map_err(|_| "the proof is not a JWT")?;
    if header.typ.as_deref() != Some("dpop+jwt") {
        return Err("typ must be dpop+jwt");
    }
    let jwk = header.jwk.ok_or("the proof has no jwk header")?;
    let jwk_value = serde_json::to_value(&jwk).map_err(|_| "unreadable jwk")?;
    if jwk_value.get("d").is_some() {
        return Err("the jwk holds a private key");
    }
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).map_err(|_| "unusable jwk")?;
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.required_spec_claims = HashSet::new();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
        .map_err(|_| "the proof's signature does not verify")?
        .claims;
    let claim = |k: &str| claims.get(k).and_then(Value::as_str);
    if claim("htm") != Some(method) {
        return Err("htm does not match the request method");
    }
    let proof_htu = claim("htu").ok_or("no htu")?;
    if proof_htu.contains(['?', '#'])
        || proof_htu.trim_end_matches('/') != htu(url).trim_end_matches('/')
    {
        return Err("htu does not match the request URL");
    }
    let iat = claims.get("iat").and_then(Value::as_u64).ok_or("no iat")?;
    if iat.abs_diff(unix_now()) > IAT_WINDOW_SECS {
        return Err("iat is outside the acceptable window");
    }
    if let Some(token) = access_token {
        let expected = B64.encode(Sha256::digest(token.as_bytes()));
        if claim("ath") != Some(expected.as_str()) {
            return Err("ath does not match the access token");
        }
    }
    let jti = claim("jti").ok_or("no jti")?;
    if !seen.insert(jti.to_owned()) {
        return Err("the proof's jti was used before (replay)");
    }
    Ok(ProofInfo {
        jkt: thumbprint(&jwk_value).ok_or("unsupported key type")?,
        nonce: claim("nonce").map(str::to_owned),
    })
}

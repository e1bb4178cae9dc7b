//! DPoP (RFC 9449): a key pair this client holds, and the proof JWT that binds each
//! token request and each resource request to it.
//!
//! The key is ES256 (P-256), generated once per credential record and stored with it
//! (PKCS#8, base64url, inside a [`Secret`]), so a bound access token and its refresh token
//! keep working across processes. Neither the private key nor a proof is ever logged.

use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use mcp_key::Secret;

use serde_json::json;
use sha2::{Digest, Sha256};

use super::http::now_unix;

pub(crate) use crate::store::{DPOP_ALGORITHM, DpopKey};

/// A DPoP key could not be made or used (a corrupt stored key, a failing random source).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DpopKeyError;

impl DpopKey {
    /// A new random key pair.
    pub fn generate() -> Result<Self, crate::AuthError> {
        let rng = SystemRandom::new();
        let doc =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).map_err(|_| {
                crate::AuthError::Dpop {
                    detail: "could not generate a key",
                }
            })?;
        Ok(Self {
            pkcs8: Secret::new(B64.encode(doc.as_ref())),
        })
    }

    fn key_pair(&self) -> Result<EcdsaKeyPair, DpopKeyError> {
        let der = B64.decode(self.pkcs8.expose()).map_err(|_| DpopKeyError)?;
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der).map_err(|_| DpopKeyError)
    }

    /// The public key as a JWK (`kty`, `crv`, `x`, `y`: the members of its thumbprint).
    fn public_jwk(&self) -> Result<serde_json::Value, DpopKeyError> {
        let pair = self.key_pair()?;
        let point = pair.public_key().as_ref();
        // Uncompressed SEC1 point: 0x04 || X (32 bytes) || Y (32 bytes).
        if point.len() != 65 || point[0] != 4 {
            return Err(DpopKeyError);
        }
        Ok(json!({
            "crv": "P-256",
            "kty": "EC",
            "x": B64.encode(&point[1..33]),
            "y": B64.encode(&point[33..65]),
        }))
    }

    /// The JWK SHA-256 thumbprint (RFC 7638) of the public key, base64url: the `jkt` a
    /// bound token's `cnf` names.
    pub fn thumbprint(&self) -> Option<String> {
        let jwk = self.public_jwk().ok()?;
        // RFC 7638: the required members in lexicographic order, no whitespace.
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str()?,
            jwk["y"].as_str()?
        );
        Some(B64.encode(Sha256::digest(canonical.as_bytes())))
    }

    /// A proof for one request: `method` (`htm`) to `url` (`htu`, without query and
    /// fragment), with `ath` when `access_token` is given (resource requests) and the
    /// server's `nonce` when it asked for one. Every proof has a fresh `jti`.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&Secret>,
        nonce: Option<&str>,
    ) -> Result<Secret, crate::AuthError> {
        self.sign_proof(method, url, access_token, nonce)
            .map_err(|_| crate::AuthError::Dpop {
                detail: "the stored key is unusable; log in again",
            })
    }

    fn sign_proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&Secret>,
        nonce: Option<&str>,
    ) -> Result<Secret, DpopKeyError> {
        let pair = self.key_pair()?;
        let rng = SystemRandom::new();
        let mut jti = [0u8; 16];
        rng.fill(&mut jti).map_err(|_| DpopKeyError)?;
        let header = json!({
            "typ": "dpop+jwt",
            "alg": DPOP_ALGORITHM,
            "jwk": self.public_jwk()?,
        });
        let mut claims = json!({
            "jti": B64.encode(jti),
            "htm": method,
            "htu": htu(url),
            "iat": now_unix(),
        });
        if let Some(token) = access_token {
            claims["ath"] = json!(B64.encode(Sha256::digest(token.expose().as_bytes())));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        let signing_input = format!(
            "{}.{}",
            B64.encode(header.to_string()),
            B64.encode(claims.to_string())
        );
        let signature = pair
            .sign(&rng, signing_input.as_bytes())
            .map_err(|_| DpopKeyError)?;
        Ok(Secret::new(format!(
            "{signing_input}.{}",
            B64.encode(signature.as_ref())
        )))
    }
}

/// The `htu` of a request URL: without query and fragment (RFC 9449 section 4.2).
pub(crate) fn htu(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_owned(),
    }
}

/// Does the authorization server accept our DPoP proofs (`dpop_signing_alg_values_supported`
/// lists ES256)?
pub(crate) fn supported_by(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(|v| v.as_array())
        .is_some_and(|algs| algs.iter().any(|a| a.as_str() == Some(DPOP_ALGORITHM)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    fn decode(part: &str) -> serde_json::Value {
        serde_json::from_slice(&B64.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn a_proof_is_signed_by_the_key_it_names_and_carries_the_request() {
        let key = DpopKey::generate().unwrap();
        let token = Secret::new("at-123");
        let proof = key
            .proof(
                "POST",
                "https://rs.example/mcp?x=1#f",
                Some(&token),
                Some("n-1"),
            )
            .unwrap();
        let parts: Vec<&str> = proof.expose().split('.').collect();
        assert_eq!(parts.len(), 3);
        let header = decode(parts[0]);
        let claims = decode(parts[1]);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://rs.example/mcp");
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(
            claims["ath"],
            B64.encode(Sha256::digest(b"at-123")).as_str()
        );
        // The signature verifies with the public key in the header.
        let jwk = &header["jwk"];
        let mut point = vec![4u8];
        point.extend(B64.decode(jwk["x"].as_str().unwrap()).unwrap());
        point.extend(B64.decode(jwk["y"].as_str().unwrap()).unwrap());
        let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point);
        let input = format!("{}.{}", parts[0], parts[1]);
        public
            .verify(input.as_bytes(), &B64.decode(parts[2]).unwrap())
            .expect("the proof verifies");
    }

    #[test]
    fn every_proof_has_a_fresh_jti_and_no_ath_without_a_token() {
        let key = DpopKey::generate().unwrap();
        let a = key
            .proof("POST", "https://as.example/token", None, None)
            .unwrap();
        let b = key
            .proof("POST", "https://as.example/token", None, None)
            .unwrap();
        let ca = decode(a.expose().split('.').nth(1).unwrap());
        let cb = decode(b.expose().split('.').nth(1).unwrap());
        assert_ne!(ca["jti"], cb["jti"]);
        assert!(ca.get("ath").is_none() && ca.get("nonce").is_none());
    }

    #[test]
    fn the_key_survives_serde_and_never_shows_in_debug() {
        let key = DpopKey::generate().unwrap();
        let json = serde_json::to_string(&key).unwrap();
        let back: DpopKey = serde_json::from_str(&json).unwrap();
        assert_eq!(back.thumbprint(), key.thumbprint());
        let debug = format!("{key:?}");
        assert!(!debug.contains(key.pkcs8.expose()));
        assert!(debug.contains(&key.thumbprint().unwrap()));
    }
}

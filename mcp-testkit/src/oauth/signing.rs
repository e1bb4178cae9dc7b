//! The key a [`crate::FakeAuthServer`] signs JWT access tokens with, and what its `/jwks`
//! endpoint may do instead of publishing it: state the authorization server holds, a leaf
//! under the JWT access-token endpoints of `jwt_access.rs`.

use serde_json::{Value, json};

use super::common::OAuthError;
use super::keys::{
    TEST_EC_PRIVATE_KEY_PEM, TEST_EC_X, TEST_EC_Y, TEST_RSA_E, TEST_RSA_N, TEST_RSA_PRIVATE_KEY_PEM,
};

/// The JOSE `typ` of JWT access tokens (RFC 9068 section 2.1).
pub const ACCESS_TOKEN_TYP: &str = "at+jwt";

/// What the `/jwks` endpoint of a [`crate::FakeAuthServer`] does instead of serving the
/// key set ([`crate::FakeAuthServer::set_jwks_fault`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JwksFault {
    /// Accept the request and never answer.
    Hang,
    /// `200 OK` with a body that is no JSON.
    Garbage,
    /// A valid JSON document of this many bytes (for size limits).
    Oversized(usize),
}

/// The key a [`crate::FakeAuthServer`] signs JWT access tokens with: the testkit's RSA
/// key (RS256) or EC key (ES256), each rotation switching to the other under a new key id.
#[derive(Debug, Clone)]
pub(crate) struct AccessSigning {
    /// Rotations so far: even is the RSA key, odd the EC key.
    generation: u32,
    pub(crate) fault: Option<JwksFault>,
}

impl AccessSigning {
    pub(crate) fn new() -> Self {
        Self {
            generation: 0,
            fault: None,
        }
    }

    fn is_rsa(&self) -> bool {
        self.generation.is_multiple_of(2)
    }

    /// The current key id.
    pub(crate) fn key_id(&self) -> String {
        let kind = if self.is_rsa() { "rsa" } else { "ec" };
        format!("testkit-as-{kind}-{}", self.generation)
    }

    /// Switch to the other key under a new id; the old one is no longer published.
    pub(crate) fn rotate(&mut self) {
        self.generation += 1;
    }

    /// The published key set: the current key only.
    pub(crate) fn jwks(&self) -> Value {
        let key = if self.is_rsa() {
            json!({"kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.key_id(),
                   "n": TEST_RSA_N, "e": TEST_RSA_E})
        } else {
            json!({"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256",
                   "kid": self.key_id(), "x": TEST_EC_X, "y": TEST_EC_Y})
        };
        json!({ "keys": [key] })
    }

    /// `claims` signed with the current key, typed `at+jwt`.
    pub(crate) fn sign(&self, claims: &Value) -> Result<String, OAuthError> {
        let server_error = |what: &str| OAuthError::new("server_error", what);
        let (alg, key) = if self.is_rsa() {
            (
                jsonwebtoken::Algorithm::RS256,
                jsonwebtoken::EncodingKey::from_rsa_pem(TEST_RSA_PRIVATE_KEY_PEM.as_bytes()),
            )
        } else {
            (
                jsonwebtoken::Algorithm::ES256,
                jsonwebtoken::EncodingKey::from_ec_pem(TEST_EC_PRIVATE_KEY_PEM.as_bytes()),
            )
        };
        let key = key.map_err(|_| server_error("test key unreadable"))?;
        let mut header = jsonwebtoken::Header::new(alg);
        header.typ = Some(ACCESS_TOKEN_TYP.to_owned());
        header.kid = Some(self.key_id());
        jsonwebtoken::encode(&header, claims, &key).map_err(|_| server_error("signing failed"))
    }
}

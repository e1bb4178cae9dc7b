//! How [`crate::FakeIdp`] signs its ID tokens ([`IdTokenAlg`]), what can be wrong with
//! them ([`IdTokenFault`]), and the key set (JWKS) it publishes for them.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::common::OAuthError;
use super::keys::{
    TEST_EC_KEY_ID, TEST_EC_PRIVATE_KEY_PEM, TEST_EC_PUBLIC_KEY_PEM, TEST_EC_X, TEST_EC_Y,
    TEST_KEY_ID, TEST_RSA_E, TEST_RSA_N, TEST_RSA_PRIVATE_KEY_PEM, TEST_RSA_PUBLIC_KEY_PEM,
};

/// The signature algorithm of [`crate::FakeIdp`]'s ID tokens
/// ([`crate::IdpOptions::with_id_token_alg`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum IdTokenAlg {
    /// RS256 with [`crate::TEST_RSA_PRIVATE_KEY_PEM`], key id [`crate::TEST_KEY_ID`] (the
    /// default).
    #[default]
    Rs256,
    /// ES256 with [`crate::TEST_EC_PRIVATE_KEY_PEM`], key id [`crate::TEST_EC_KEY_ID`].
    Es256,
    /// Unsigned: `alg: none` and an empty signature, which a client must refuse. The
    /// JWKS is then empty.
    None,
}

impl IdTokenAlg {
    /// The JOSE name: `RS256`, `ES256`, `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Es256 => "ES256",
            Self::None => "none",
        }
    }

    /// The key id the IdP starts with.
    pub(crate) fn default_key_id(self) -> &'static str {
        match self {
            Self::Rs256 | Self::None => TEST_KEY_ID,
            Self::Es256 => TEST_EC_KEY_ID,
        }
    }
}

/// What is wrong with the ID tokens [`crate::FakeIdp`] issues from now on
/// ([`crate::FakeIdp::set_id_token_fault`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdTokenFault {
    /// The signature has one bit flipped, so it verifies with no key.
    BadSignature,
    /// Signed with the IdP's key, but its header names this `kid`, which the JWKS does
    /// not publish.
    UnpublishedKeyId(String),
    /// This `iss` claim instead of the IdP's issuer (the metadata keeps the real one).
    Issuer(String),
}

/// The IdP's ID token signing: algorithm, current key id and fault.
#[derive(Debug, Clone)]
pub(crate) struct IdTokenSigning {
    pub(crate) alg: IdTokenAlg,
    pub(crate) key_id: String,
    pub(crate) fault: Option<IdTokenFault>,
}

fn server_error(what: &str) -> OAuthError {
    OAuthError::new("server_error", what)
}

impl IdTokenSigning {
    pub(crate) fn new(alg: IdTokenAlg) -> Self {
        Self {
            alg,
            key_id: alg.default_key_id().to_owned(),
            fault: None,
        }
    }

    /// `claims` as an ID token: signed per the algorithm, with the fault applied.
    pub(crate) fn sign(&self, mut claims: Value) -> Result<String, OAuthError> {
        if let Some(IdTokenFault::Issuer(issuer)) = &self.fault {
            claims["iss"] = json!(issuer);
        }
        let kid = match &self.fault {
            Some(IdTokenFault::UnpublishedKeyId(kid)) => kid.clone(),
            _ => self.key_id.clone(),
        };
        let (alg, key) = match self.alg {
            IdTokenAlg::None => {
                let header = json!({"alg": "none", "typ": "JWT"});
                return Ok(format!(
                    "{}.{}.",
                    URL_SAFE_NO_PAD.encode(header.to_string()),
                    URL_SAFE_NO_PAD.encode(claims.to_string())
                ));
            }
            IdTokenAlg::Rs256 => (
                jsonwebtoken::Algorithm::RS256,
                jsonwebtoken::EncodingKey::from_rsa_pem(TEST_RSA_PRIVATE_KEY_PEM.as_bytes()),
            ),
            IdTokenAlg::Es256 => (
                jsonwebtoken::Algorithm::ES256,
                jsonwebtoken::EncodingKey::from_ec_pem(TEST_EC_PRIVATE_KEY_PEM.as_bytes()),
            ),
        };
        let key = key.map_err(|_| server_error("test key unreadable"))?;
        let mut header = jsonwebtoken::Header::new(alg);
        header.typ = Some("JWT".to_owned());
        header.kid = Some(kid);
        let token = jsonwebtoken::encode(&header, &claims, &key)
            .map_err(|_| server_error("signing failed"))?;
        if self.fault == Some(IdTokenFault::BadSignature) {
            return flip_signature(&token).ok_or_else(|| server_error("malformed signature"));
        }
        Ok(token)
    }

    /// The JWKS: the signing key under the current key id (empty for `none`).
    pub(crate) fn jwks(&self) -> Value {
        let key = match self.alg {
            IdTokenAlg::None => return json!({"keys": []}),
            IdTokenAlg::Rs256 => json!({
                "kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.key_id,
                "n": TEST_RSA_N, "e": TEST_RSA_E,
            }),
            IdTokenAlg::Es256 => json!({
                "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": self.key_id,
                "x": TEST_EC_X, "y": TEST_EC_Y,
            }),
        };
        json!({ "keys": [key] })
    }

    /// Check an ID token of this IdP (a token-exchange subject): signature and `iss`.
    pub(crate) fn verify(&self, token: &str, issuer: &str) -> Result<(), String> {
        let (alg, key) = match self.alg {
            IdTokenAlg::None => return Err("the IdP issues unsigned ID tokens".to_owned()),
            IdTokenAlg::Rs256 => (
                jsonwebtoken::Algorithm::RS256,
                jsonwebtoken::DecodingKey::from_rsa_pem(TEST_RSA_PUBLIC_KEY_PEM.as_bytes()),
            ),
            IdTokenAlg::Es256 => (
                jsonwebtoken::Algorithm::ES256,
                jsonwebtoken::DecodingKey::from_ec_pem(TEST_EC_PUBLIC_KEY_PEM.as_bytes()),
            ),
        };
        let key = key.map_err(|_| "test key unreadable".to_owned())?;
        let mut validation = jsonwebtoken::Validation::new(alg);
        validation.set_issuer(&[issuer]);
        validation.validate_aud = false;
        jsonwebtoken::decode::<Value>(token, &key, &validation)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// `jwt` with the first bit of its signature flipped.
fn flip_signature(jwt: &str) -> Option<String> {
    let (signed, signature) = jwt.rsplit_once('.')?;
    let mut bytes = URL_SAFE_NO_PAD.decode(signature).ok()?;
    *bytes.first_mut()? ^= 1;
    Some(format!("{signed}.{}", URL_SAFE_NO_PAD.encode(bytes)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn claims() -> Value {
        json!({"iss": "http://idp", "sub": "s", "aud": "c", "exp": 4_000_000_000_u64})
    }

    #[test]
    fn tokens_verify_with_their_published_key() {
        for alg in [IdTokenAlg::Rs256, IdTokenAlg::Es256] {
            let signing = IdTokenSigning::new(alg);
            let token = signing.sign(claims()).unwrap();
            let header = jsonwebtoken::decode_header(&token).unwrap();
            assert_eq!(header.kid.as_deref(), Some(alg.default_key_id()));
            let set: jsonwebtoken::jwk::JwkSet = serde_json::from_value(signing.jwks()).unwrap();
            let jwk = set.find(alg.default_key_id()).unwrap();
            let key = jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap();
            let mut validation = jsonwebtoken::Validation::new(header.alg);
            validation.set_audience(&["c"]);
            jsonwebtoken::decode::<Value>(&token, &key, &validation).unwrap();
            signing.verify(&token, "http://idp").unwrap();
            assert!(signing.verify(&token, "http://other").is_err());
        }
    }

    #[test]
    fn faults_spoil_what_they_say() {
        let mut signing = IdTokenSigning::new(IdTokenAlg::Es256);
        signing.fault = Some(IdTokenFault::BadSignature);
        let bad = signing.sign(claims()).unwrap();
        assert!(
            signing
                .verify(&bad, "http://idp")
                .unwrap_err()
                .contains("Signature")
        );

        signing.fault = Some(IdTokenFault::UnpublishedKeyId("k9".to_owned()));
        let unpublished = signing.sign(claims()).unwrap();
        let header = jsonwebtoken::decode_header(&unpublished).unwrap();
        assert_eq!(header.kid.as_deref(), Some("k9"));
        signing.verify(&unpublished, "http://idp").unwrap();

        signing.fault = Some(IdTokenFault::Issuer("http://idp/".to_owned()));
        let other = signing.sign(claims()).unwrap();
        signing.verify(&other, "http://idp/").unwrap();

        let unsigned = IdTokenSigning::new(IdTokenAlg::None)
            .sign(claims())
            .unwrap();
        assert!(unsigned.ends_with('.'));
        let header: Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(unsigned.split('.').next().unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["alg"], "none");
        assert_eq!(
            IdTokenSigning::new(IdTokenAlg::None).jwks(),
            json!({"keys": []})
        );
    }
}

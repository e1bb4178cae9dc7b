//! JWT access tokens (RFC 9068) checked against the issuer's keys: the header's `alg`
//! from the allow-list (asymmetric algorithms only: never `none`, never an HMAC secret
//! that would be a public key), a `typ` that says access token (or plain `JWT`, which
//! several identity providers still write), the signature with the published key the
//! header names, then `iss` (the configured issuer), `aud` (containing the gateway's
//! resource URL, RFC 8707), `exp` and `nbf` with [`LEEWAY`], and `sub`.

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::keys::{KeyProblem, Keys};

/// Clock difference tolerated for `exp` and `nbf`.
pub(crate) const LEEWAY: std::time::Duration = std::time::Duration::from_secs(30);

/// The algorithms accepted unless `algorithms` narrows them.
pub(crate) const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Why a token was refused (a short text for `error_description`; never the token), or
/// that it could not be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// The token is not valid here.
    Invalid(&'static str),
    /// The issuer's keys could not be read: what went wrong.
    Unavailable(String),
    /// The client asked about too many tokens (introspection): how long until it may
    /// ask again.
    Limited(std::time::Duration),
}

/// What checks a JWT access token.
#[derive(Debug)]
pub(crate) struct JwtCheck {
    pub(crate) keys: Keys,
    pub(crate) issuer: String,
    pub(crate) resource: String,
    pub(crate) algorithms: Vec<Algorithm>,
}

impl JwtCheck {
    /// The token's claims, once every check passed.
    pub(crate) async fn claims(&self, token: &str) -> Result<Value, Rejection> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| Rejection::Invalid("the token is no JWT this gateway accepts"))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(Rejection::Invalid(
                "the token's signature algorithm is not accepted",
            ));
        }
        if let Some(typ) = &header.typ
            && !["at+jwt", "application/at+jwt", "jwt"].contains(&typ.to_ascii_lowercase().as_str())
        {
            return Err(Rejection::Invalid("the token is no access token"));
        }
        let jwk = self
            .keys
            .key(header.kid.as_deref())
            .await
            .map_err(|problem| match problem {
                KeyProblem::Unavailable(e) => Rejection::Unavailable(e),
                _ => {
                    Rejection::Invalid("the token is signed with a key the issuer does not publish")
                }
            })?;
        if let Some(alg) = jwk.common.key_algorithm
            && alg != jsonwebtoken::jwk::KeyAlgorithm::from(header.alg)
        {
            return Err(Rejection::Invalid("the token's algorithm is not its key's"));
        }
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|_| Rejection::Invalid("the issuer's key for the token is unusable"))?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = LEEWAY.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        match jsonwebtoken::decode::<Value>(token, &key, &validation) {
            Ok(data) => Ok(data.claims),
            Err(e) => Err(Rejection::Invalid(reason(e.kind()))),
        }
    }
}

/// The short reason for a failed check.
fn reason(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind;
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidAudience => "the token is for another resource",
        ErrorKind::InvalidIssuer => "the token is from another issuer",
        ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::InvalidAlgorithm => "the token's algorithm is not its key's",
        _ => "the token is malformed",
    }
}

/// The algorithms named in the configuration, else [`DEFAULT_ALGORITHMS`].
pub(crate) fn algorithms(names: &[String]) -> Vec<Algorithm> {
    let named: Vec<Algorithm> = names
        .iter()
        .filter_map(|n| n.parse::<Algorithm>().ok())
        // A shared secret would be a public key here: never accepted.
        .filter(|a| a.family() != jsonwebtoken::AlgorithmFamily::Hmac)
        .collect();
    if named.is_empty() {
        DEFAULT_ALGORITHMS.to_vec()
    } else {
        named
    }
}

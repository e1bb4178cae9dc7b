//! [`DpopKey`]: the DPoP (RFC 9449) key pair kept with a credential record. The record
//! stores it whether or not this build has the OAuth client (feature `oauth`), which is
//! where the key is generated and used (`oauth/dpop.rs`).

use mcp_key::Secret;
use serde::{Deserialize, Serialize};

/// The JWS algorithm of our proofs.
pub const DPOP_ALGORITHM: &str = "ES256";

/// A DPoP key pair (ES256). `Debug` shows only the public key's thumbprint (with the
/// `oauth` feature; nothing of the key without it).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DpopKey {
    /// The PKCS#8 document of the private key, base64url.
    pub(crate) pkcs8: Secret,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("DpopKey");
        d.field("alg", &DPOP_ALGORITHM);
        #[cfg(feature = "oauth")]
        d.field("jkt", &self.thumbprint().unwrap_or_default());
        d.finish()
    }
}

/// Does this `WWW-Authenticate` value (or OAuth error code) ask for a DPoP nonce?
pub fn is_nonce_challenge(challenge: &str) -> bool {
    challenge.contains("use_dpop_nonce")
}

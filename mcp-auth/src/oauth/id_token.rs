//! Checks of the enterprise IdP's ID token's claims (see [`validate`]); its signature is
//! checked against the IdP's JWKS in `jwks.rs`.

use mcp_key::McpServerKey;
use serde_json::Value;

use crate::error::AuthError;

fn base64url_decode(input: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in input.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    Some(out)
}

fn part(jwt: &str, index: usize) -> Option<Value> {
    let segment = jwt.split('.').nth(index)?;
    serde_json::from_slice(&base64url_decode(segment)?).ok()
}

/// Validates the claims of an ID token from the enterprise login: a signed JWT (`alg` not
/// `none`), `iss` exactly `issuer`, `aud` naming `client_id`, `exp` in the future. Returns
/// `exp`. The signature is verified afterwards against the IdP's JWKS
/// (`super::jwks::verify`).
pub(crate) fn validate(
    server: &McpServerKey,
    jwt: &str,
    issuer: &str,
    client_id: &str,
    now: u64,
) -> Result<u64, AuthError> {
    let invalid = |reason: &'static str| AuthError::InvalidIdToken {
        server: server.clone(),
        reason,
    };
    if jwt.split('.').count() != 3 {
        return Err(invalid("it is not a JWT"));
    }
    let header = part(jwt, 0).ok_or_else(|| invalid("its header is not JSON"))?;
    let claims = part(jwt, 1).ok_or_else(|| invalid("its claims are not JSON"))?;
    match header.get("alg").and_then(Value::as_str) {
        Some(alg) if !alg.eq_ignore_ascii_case("none") => {}
        _ => return Err(invalid("it is unsigned (alg none)")),
    }
    if claims.get("iss").and_then(Value::as_str) != Some(issuer) {
        return Err(invalid("its issuer is not the configured IdP"));
    }
    let audience_ok = match claims.get("aud") {
        Some(Value::String(aud)) => aud == client_id,
        Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(client_id)),
        _ => false,
    };
    if !audience_ok {
        return Err(invalid("its audience is not this client"));
    }
    match claims.get("exp").and_then(Value::as_u64) {
        Some(exp) if exp > now => Ok(exp),
        _ => Err(invalid("it has expired")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(v: &Value) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let bytes = v.to_string().into_bytes();
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..=chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    }

    fn jwt(alg: &str, claims: Value) -> String {
        format!(
            "{}.{}.sig",
            b64(&serde_json::json!({"alg": alg})),
            b64(&claims)
        )
    }

    fn check(token: &str) -> Result<u64, String> {
        validate(
            &"idp".parse().unwrap(),
            token,
            "https://idp.example",
            "app",
            1000,
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn claims_are_checked() {
        let good =
            serde_json::json!({"iss": "https://idp.example", "aud": ["x", "app"], "exp": 2000});
        assert_eq!(check(&jwt("RS256", good.clone())), Ok(2000));
        assert!(check(&jwt("none", good)).unwrap_err().contains("unsigned"));
        let other_iss =
            serde_json::json!({"iss": "https://idp.example/", "aud": "app", "exp": 2000});
        assert!(
            check(&jwt("RS256", other_iss))
                .unwrap_err()
                .contains("issuer")
        );
        let other_aud =
            serde_json::json!({"iss": "https://idp.example", "aud": "other", "exp": 2000});
        assert!(
            check(&jwt("RS256", other_aud))
                .unwrap_err()
                .contains("audience")
        );
        let expired = serde_json::json!({"iss": "https://idp.example", "aud": "app", "exp": 999});
        assert!(
            check(&jwt("RS256", expired))
                .unwrap_err()
                .contains("expired")
        );
        assert!(check("not-a-jwt").unwrap_err().contains("not a JWT"));
    }
}

//! Fixed test keys: the fake IdP signs ID tokens and ID-JAGs with the RSA key, and
//! tests may use either key pair for `private_key_jwt` client authentication.
//!
//! These keys are public (they are in the source): never use them outside tests.

/// RSA 2048 private key (PKCS#8 PEM) the [`crate::FakeIdp`] signs with (RS256).
/// Tests may also use it as a client's `private_key_jwt` key (register
/// [`TEST_RSA_PUBLIC_KEY_PEM`] with [`crate::OAuthClient::with_public_key_pem`]).
pub const TEST_RSA_PRIVATE_KEY_PEM: &str = r"-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDmQpqs2B/h2lCx
BdAznk+KLBZVE8cE+jwd9rCyOUdLIsUwGjKYQcOc0r4DyMBSZlDCeQFcWzGNEAtg
WrIj4n+dTlhbmqynAwiTq+QCRW2UdLeZWz7CST7g2ydS2iZk7p8qeHWBTTZF4ugE
hm1xUusFrQkEdXAnrhxL1J5ZsSgd2mfvXoLoiOQjDfmeDtFlnoa9Y/tqO+Vi/Gv9
ZPjxMPi39CtrNg4U4hn+WoWNXcLKkXjKi20Un/tJjbAvNjorpuj/24NZtaJODKpE
52ndO7kV9SEYORWW6gfK1JYP9EVG6MyslWDf9OQGEawdwLSAQV12lrVIsfUdUPwG
NqmbzGY3AgMBAAECggEACY9Tk+PdAh07rdssbnWJrRZp1dbB+vJsf8OH10vG8Zcm
ziRK+K9uTRA/EpV7TjQM8VGaQOqJ6EpZL3Tg90uqB+7CYnrNrGBVJMW+XdvF9aPE
BabJ/4is3COe9EhEQUIwFsJfc3DpRuJNHExRmenT5ZgnJ4YRzO+Ar831jVHeH6+K
rQWR1kCsx0yS1mcENdO2Bndq1UmsqS40c16EXlnnHJSuF/fNIDqhAJbdYAaKfT8c
4T6dzelVzB4XJDq5E68Gyy6OtRwwLbeQs8P2ITM0907YHr9kK8wB8DY9LLDEJEfZ
mWSOndK3mW+6u8BVRAJaPiozQEDdnJjPsWar3uBOGQKBgQD8Dvizge68GFYsZMQt
Y7T/2hGeghL3ScbOfsIp/5dqrVQM3hT5RASMjsEwrcRW8bmImHDYhqZI9Vqf8cHL
cqMwy20uaOs2RBMDkonGjyOt5pKePblwO7mDUxKm3mGKABTiPtg6g7LFlv1Is+lh
dlS1FJ9vKoFGly4lDkQd81HHXwKBgQDp3F7p1vbz38rkrenGWPgZDEe9XdKossTM
2rDSAjjcIjKai+0slc2arm8gl+oZBnRlGWl/T0aIr2DdGdXi3RzOR4yp6OG3rTCQ
BGyAtAOHKrLLFiG5s+JnoDPgcHwpZhNDDK+bIDoPneMpIoS4rQPOGUJfQOGAQjLD
3BnA39eIKQKBgE3l2pqvhzZ+VvN1WOOmMuP3YwaXsIDYPibHKf6MzSDc3GL1p4m5
qaY+4BnJOiqcnfhHFGj2hCF8IjvYHUpg7WpBFEcJidfFhhLOkOHaju5JmfppnQvA
iX66h8MmawKZL9sUDQNYfEFwfmqfn3rNdTRZYUSb4EQOqOYu2IJhFl8FAoGBAJHy
WbmN0mi4TaMRdke21n6rT0o693EYwAEoqhkmEd4v6WzRzp54juvt2KR6qjob8R/3
EAPHsbkz2juiF/2RCJ0jwgF3uQYsK5Z1bFGWBm2glBxyH3IJdU4+iKGVEae0cGjz
zdP99L4yRsYxKKsoLqu8z9MqZpDov03EWr4n9BahAoGANVSD/QzR2wTRNmMTlP+M
tT4VUPjbv7R4pqr/rSceg/PLqKatCadzkLpJRwngog7tImBp7TnBHEfj1lR6iVg+
JYZ6kA8cNmZl5psD6k4M8VBI8fxZOF7T7FbPGQ1V16tVTj08Z8Pfizu7v/7OFriU
RJjVsItnrr4wShhKeDDJabA=
-----END PRIVATE KEY-----
";

/// The public half of [`TEST_RSA_PRIVATE_KEY_PEM`] (SPKI PEM).
pub const TEST_RSA_PUBLIC_KEY_PEM: &str = r"-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA5kKarNgf4dpQsQXQM55P
iiwWVRPHBPo8HfawsjlHSyLFMBoymEHDnNK+A8jAUmZQwnkBXFsxjRALYFqyI+J/
nU5YW5qspwMIk6vkAkVtlHS3mVs+wkk+4NsnUtomZO6fKnh1gU02ReLoBIZtcVLr
Ba0JBHVwJ64cS9SeWbEoHdpn716C6IjkIw35ng7RZZ6GvWP7ajvlYvxr/WT48TD4
t/QrazYOFOIZ/lqFjV3CypF4yottFJ/7SY2wLzY6K6bo/9uDWbWiTgyqROdp3Tu5
FfUhGDkVluoHytSWD/RFRujMrJVg3/TkBhGsHcC0gEFddpa1SLH1HVD8Bjapm8xm
NwIDAQAB
-----END PUBLIC KEY-----
";

/// P-256 private key (PKCS#8 PEM), for ES256 `private_key_jwt` client tests.
pub const TEST_EC_PRIVATE_KEY_PEM: &str = r"-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgiybARbznO62R5DBT
HirS1fT1JSFXG8ZV9qBU+ffZuQWhRANCAARTTnxr5Vwo6EHj2PXeYyBXPQU0+69k
NmRVzrK5vfnXEbpYcQ16sKxPqCfCDsheJ622Js7L9riMn6ZHUEPClUu1
-----END PRIVATE KEY-----
";

/// The public half of [`TEST_EC_PRIVATE_KEY_PEM`] (SPKI PEM).
pub const TEST_EC_PUBLIC_KEY_PEM: &str = r"-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEU058a+VcKOhB49j13mMgVz0FNPuv
ZDZkVc6yub351xG6WHENerCsT6gnwg7IXiettibOy/a4jJ+mR1BDwpVLtQ==
-----END PUBLIC KEY-----
";

/// The key id (`kid`) of the IdP's signing key, in JWT headers and the JWKS.
pub const TEST_KEY_ID: &str = "mcp-testkit-rsa-1";

/// The key id (`kid`) of [`TEST_EC_PRIVATE_KEY_PEM`] when the IdP signs ID tokens with
/// it ([`crate::IdTokenAlg::Es256`]).
pub const TEST_EC_KEY_ID: &str = "mcp-testkit-ec-1";

/// The x coordinate of [`TEST_EC_PUBLIC_KEY_PEM`], base64url (the JWK `x`).
pub(crate) const TEST_EC_X: &str = "U058a-VcKOhB49j13mMgVz0FNPuvZDZkVc6yub351xE";

/// The y coordinate of [`TEST_EC_PUBLIC_KEY_PEM`], base64url (the JWK `y`).
pub(crate) const TEST_EC_Y: &str = "ulhxDXqwrE-oJ8IOyF4nrbYmzsv2uIyfpkdQQ8KVS7U";

/// The modulus of [`TEST_RSA_PUBLIC_KEY_PEM`], base64url (the JWK `n`).
pub(crate) const TEST_RSA_N: &str = "5kKarNgf4dpQsQXQM55PiiwWVRPHBPo8HfawsjlHSyLFMBoymEHDnNK-A8jAUmZQwnkBXFsxjRALYFqyI-J_nU5YW5qspwMIk6vkAkVtlHS3mVs-wkk-4NsnUtomZO6fKnh1gU02ReLoBIZtcVLrBa0JBHVwJ64cS9SeWbEoHdpn716C6IjkIw35ng7RZZ6GvWP7ajvlYvxr_WT48TD4t_QrazYOFOIZ_lqFjV3CypF4yottFJ_7SY2wLzY6K6bo_9uDWbWiTgyqROdp3Tu5FfUhGDkVluoHytSWD_RFRujMrJVg3_TkBhGsHcC0gEFddpa1SLH1HVD8Bjapm8xmNw";

/// The public exponent (65537), base64url (the JWK `e`).
pub(crate) const TEST_RSA_E: &str = "AQAB";

/// The JWKS document (`{"keys": [...]}`) of the fake IdP's signing key.
pub fn test_jwks() -> serde_json::Value {
    serde_json::json!({
        "keys": [{
            "kty": "RSA",
            "use": "sig",
            "alg": "RS256",
            "kid": TEST_KEY_ID,
            "n": TEST_RSA_N,
            "e": TEST_RSA_E,
        }]
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

    use super::*;

    #[test]
    fn the_ec_coordinates_are_those_of_the_public_key() {
        let body: String = TEST_EC_PUBLIC_KEY_PEM
            .lines()
            .filter(|line| !line.starts_with("-----"))
            .collect();
        let der = STANDARD.decode(body).unwrap();
        // An uncompressed P-256 point ends the SubjectPublicKeyInfo: 0x04, x, y.
        let point = &der[der.len() - 65..];
        assert_eq!(point[0], 4);
        assert_eq!(URL_SAFE_NO_PAD.encode(&point[1..33]), TEST_EC_X);
        assert_eq!(URL_SAFE_NO_PAD.encode(&point[33..]), TEST_EC_Y);
    }
}

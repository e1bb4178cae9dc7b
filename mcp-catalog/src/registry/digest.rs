//! `fileSha256`: the SHA-256 a registry entry pins a downloaded file to.

use std::fmt;

use sha2::{Digest as _, Sha256};

/// A SHA-256 digest as `server.json`'s `fileSha256` writes it: 64 lowercase hex digits.
///
/// ```
/// use mcp_catalog::FileSha256;
///
/// let pinned = FileSha256::parse(
///     "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
/// ).expect("64 lowercase hex digits");
/// assert!(pinned.matches(b"hello"));
/// assert!(!pinned.matches(b"hello!"));
/// assert_eq!(FileSha256::of(b"hello"), pinned);
/// assert_eq!(FileSha256::parse("ABC"), None);
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileSha256 {
    hex: String,
}

impl FileSha256 {
    /// The digest written as 64 lowercase hex digits (the schema's `^[a-f0-9]{64}$`), or
    /// `None` for anything else.
    pub fn parse(hex: &str) -> Option<Self> {
        let valid = hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        valid.then(|| Self {
            hex: hex.to_owned(),
        })
    }

    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let digest = Sha256::digest(bytes);
        let mut hex = String::with_capacity(64);
        for byte in digest {
            hex.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
            hex.push(char::from(b"0123456789abcdef"[usize::from(byte & 0xf)]));
        }
        Self { hex }
    }

    /// Whether `bytes` hash to this digest.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        Self::of(bytes) == *self
    }

    /// The 64 lowercase hex digits.
    pub fn to_hex(&self) -> &str {
        &self.hex
    }
}

impl fmt::Display for FileSha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex)
    }
}

impl fmt::Debug for FileSha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

//! [`Fingerprint`]: a digest of typed fields, for "would this make the same connection?".

use std::fmt;

use sha2::{Digest, Sha256};

use crate::hex::{hex_digit, hex_encode as hex};

/// Number of hex digits shown by `Display` and `Debug`.
const SHORT_HEX: usize = 16;

/// Tag that starts every fingerprint's input, so that digests made here never equal a
/// digest of some other encoding of the same bytes.
const VERSION_TAG: &[u8] = b"mcp-key/fingerprint/v1";

/// A SHA-256 digest of typed, length-prefixed fields fed in a canonical order.
///
/// Higher crates use it to decide whether two configurations would produce the same
/// connection (pool sharing, reuse on refresh, cache keys). `Display` prints 16 hex
/// digits, `Debug` the same inside `Fingerprint(..)`, [`Fingerprint::to_hex`] all 64; none
/// of them reveals the inputs.
///
/// Every field is encoded with its type, its name and its length, so
/// `.str("a", "bc")` and `.str("ab", "c")` differ, as do `.str("x", "1")` and
/// `.u64("x", 1)`.
///
/// ```
/// use mcp_key::Fingerprint;
///
/// let a = Fingerprint::builder("stdio-launch")
///     .str("command", "npx")
///     .list("args", ["-y", "server"])
///     .map("env", [("B", "2"), ("A", "1")])
///     .finish();
/// let b = Fingerprint::builder("stdio-launch")
///     .str("command", "npx")
///     .list("args", ["-y", "server"])
///     .map("env", [("A", "1"), ("B", "2")]) // map order does not matter
///     .finish();
/// assert_eq!(a, b);
/// assert_eq!(a.to_string().len(), 16);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// Starts a fingerprint for one kind of thing; different `domain`s never produce the
    /// same fingerprint for the same fields.
    pub fn builder(domain: &str) -> FingerprintBuilder {
        let mut hasher = Sha256::new();
        hasher.update(VERSION_TAG);
        let mut builder = FingerprintBuilder { hasher };
        builder.bytes(domain.as_bytes());
        builder
    }

    /// All 64 hex digits, lowercase.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// Parses the 64 hex digits written by [`Fingerprint::to_hex`] (either case); `None`
    /// for any other text, including the 16-digit `Display` form.
    ///
    /// ```
    /// use mcp_key::Fingerprint;
    /// let fp = Fingerprint::builder("example").str("command", "npx").finish();
    /// assert_eq!(Fingerprint::from_hex(&fp.to_hex()), Some(fp));
    /// assert_eq!(Fingerprint::from_hex(&fp.to_string()), None);
    /// ```
    pub fn from_hex(text: &str) -> Option<Self> {
        let text = text.as_bytes();
        if text.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (byte, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
            *byte = (hex_digit(pair[0])? << 4) | hex_digit(pair[1])?;
        }
        Some(Self(out))
    }

    /// The raw 32 digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Fingerprint {
    /// The first 16 hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex(&self.0[..SHORT_HEX / 2]))
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

/// Feeds typed fields into a [`Fingerprint`]. Fields are hashed in the order they are
/// added, except map entries, which are sorted first.
#[derive(Clone)]
pub struct FingerprintBuilder {
    hasher: Sha256,
}

impl fmt::Debug for FingerprintBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FingerprintBuilder").finish_non_exhaustive()
    }
}

impl FingerprintBuilder {
    /// Adds a string field.
    #[must_use]
    pub fn str(mut self, field: &str, v: &str) -> Self {
        self.field(b's', field);
        self.bytes(v.as_bytes());
        self
    }

    /// Adds an optional string field; `None` and `Some("")` differ.
    #[must_use]
    pub fn opt_str(mut self, field: &str, v: Option<&str>) -> Self {
        self.field(b'o', field);
        match v {
            None => self.hasher.update([0]),
            Some(v) => {
                self.hasher.update([1]);
                self.bytes(v.as_bytes());
            }
        }
        self
    }

    /// Adds a boolean field.
    #[must_use]
    pub fn bool(mut self, field: &str, v: bool) -> Self {
        self.field(b'b', field);
        self.hasher.update([u8::from(v)]);
        self
    }

    /// Adds an integer field.
    #[must_use]
    pub fn u64(mut self, field: &str, v: u64) -> Self {
        self.field(b'u', field);
        self.hasher.update(v.to_le_bytes());
        self
    }

    /// Adds a list of strings; order is kept (`["a", "b"]` and `["b", "a"]` differ).
    #[must_use]
    pub fn list<I, S>(mut self, field: &str, items: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.field(b'l', field);
        // Each item is marked with 1 and the list ends with 0, so where it ends is part of
        // the input without counting the items first.
        for item in items {
            self.hasher.update([1]);
            self.bytes(item.as_ref().as_bytes());
        }
        self.hasher.update([0]);
        self
    }

    /// Adds a string map; entries are sorted by key (then value) first, so the caller's
    /// iteration order does not matter.
    #[must_use]
    pub fn map<I, K, V>(mut self, field: &str, entries: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        self.field(b'm', field);
        let mut entries: Vec<(K, V)> = entries.into_iter().collect();
        entries.sort_by(|(k1, v1), (k2, v2)| {
            (k1.as_ref(), v1.as_ref()).cmp(&(k2.as_ref(), v2.as_ref()))
        });
        self.hasher.update((entries.len() as u64).to_le_bytes());
        for (k, v) in &entries {
            self.bytes(k.as_ref().as_bytes());
            self.bytes(v.as_ref().as_bytes());
        }
        self
    }

    /// The digest of everything added.
    pub fn finish(self) -> Fingerprint {
        Fingerprint(self.hasher.finalize().into())
    }

    fn field(&mut self, tag: u8, name: &str) {
        self.hasher.update([tag]);
        self.bytes(name.as_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.hasher.update((b.len() as u64).to_le_bytes());
        self.hasher.update(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(f: impl FnOnce(FingerprintBuilder) -> FingerprintBuilder) -> Fingerprint {
        f(Fingerprint::builder("test")).finish()
    }

    #[test]
    fn deterministic_and_shown_short() {
        let a = fp(|b| b.str("x", "1").u64("n", 7).bool("on", true));
        let b = fp(|b| b.str("x", "1").u64("n", 7).bool("on", true));
        assert_eq!(a, b);
        assert_eq!(a.to_hex().len(), 64);
        assert_eq!(a.to_string(), a.to_hex()[..16]);
        assert_eq!(
            format!("{a:?}"),
            format!("Fingerprint({})", &a.to_hex()[..16])
        );
        assert_eq!(a.as_bytes().len(), 32);
    }

    #[test]
    fn fields_are_typed_and_length_prefixed() {
        let all = [
            fp(|b| b),
            fp(|b| b.str("a", "bc")),
            fp(|b| b.str("ab", "c")),
            fp(|b| b.str("x", "1")),
            fp(|b| b.u64("x", 1)),
            fp(|b| b.bool("x", true)),
            fp(|b| b.opt_str("x", None)),
            fp(|b| b.opt_str("x", Some(""))),
            fp(|b| b.str("x", "")),
            fp(|b| b.list("x", ["a", "b"])),
            fp(|b| b.list("x", ["b", "a"])),
            fp(|b| b.list("x", ["ab"])),
            fp(|b| b.list("x", ["a"]).list("y", ["b"])),
            fp(|b| b.list("x", ["a", "y"])),
            fp(|b| b.list("x", Vec::<String>::new())),
            fp(|b| b.map("x", [("a", "b")])),
            fp(|b| b.map("x", [("ab", "")])),
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_ne!(
            Fingerprint::builder("a").finish(),
            Fingerprint::builder("b").finish()
        );
    }

    #[test]
    fn maps_ignore_entry_order() {
        let a = fp(|b| b.map("env", [("B", "2"), ("A", "1"), ("A", "0")]));
        let b = fp(|b| b.map("env", vec![("A", "0"), ("A", "1"), ("B", "2")]));
        assert_eq!(a, b);
    }

    #[test]
    fn from_hex_round_trips_and_rejects_other_text() {
        let a = fp(|b| b.str("x", "1"));
        assert_eq!(Fingerprint::from_hex(&a.to_hex()), Some(a));
        assert_eq!(Fingerprint::from_hex(&a.to_hex().to_uppercase()), Some(a));
        assert_eq!(Fingerprint::from_hex(&a.to_string()), None);
        assert_eq!(Fingerprint::from_hex(""), None);
        let mut bad = a.to_hex();
        bad.replace_range(10..11, "g");
        assert_eq!(Fingerprint::from_hex(&bad), None);
        assert_eq!(Fingerprint::from_hex(&format!("{}0", a.to_hex())), None);
        // A multi-byte character must not panic on the pairing.
        let odd = format!("é{}", &a.to_hex()[2..]);
        assert_eq!(Fingerprint::from_hex(&odd), None);
    }

    #[test]
    fn hex_is_lowercase() {
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
    }
}

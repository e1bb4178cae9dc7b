//! Lowercase hex text of bytes and back: the one spelling fingerprints, sealed sign-in
//! states and key files share.

/// Lowercase hex of `bytes`, two digits per byte.
///
/// ```
/// assert_eq!(mcp_key::hex_encode(&[0x00, 0xab, 0x7f]), "00ab7f");
/// ```
pub fn hex_encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// The bytes of hex text (either case); `None` for an odd length or any other character.
///
/// ```
/// assert_eq!(mcp_key::hex_decode("00AB7f"), Some(vec![0x00, 0xab, 0x7f]));
/// assert_eq!(mcp_key::hex_decode("abc"), None);
/// assert_eq!(mcp_key::hex_decode("zz"), None);
/// ```
pub fn hex_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks_exact(2)
        .map(|pair| Some((hex_digit(pair[0])? << 4) | hex_digit(pair[1])?))
        .collect()
}

/// The value of one hex digit.
pub(crate) fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

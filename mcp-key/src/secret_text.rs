//! What a secret looks like, in one place: names that mark a secret ([`is_secret_name`])
//! and, in free text such as a server's stderr or an error message, the values of
//! `name=value`, `name: value` and `"name": "value"` pairs with such a name, `Bearer`
//! credentials and JWT-shaped tokens. [`crate::redact_secrets`] applies them, with the
//! URL redaction, to text that is shown or logged.

use std::borrow::Cow;

use crate::redact::REDACTED;

/// Words that mark a name as a secret wherever they appear in it, with case and
/// separators ignored (`apiKey`, `client_secret`, `PGPASSWORD`, `refresh_token`).
const SECRET_INSIDE: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "authorization",
    "cookie",
    "credential",
    "privatekey",
    "sessionid",
];

/// Words that mark a name as a secret when they are one of its words (`db_pass`,
/// `X-Api-Key`, `auth`, `jwt`), but not inside another word (`passage`, `monkey`,
/// `author`).
const SECRET_WORDS: &[&str] = &["pass", "pwd", "key", "auth", "bearer", "jwt"];

/// Words that make a name describe a secret rather than hold one (`max_tokens`,
/// `token_endpoint`, `key_type`, `tokens_used`).
const ABOUT_WORDS: &[&str] = &[
    "count", "used", "usage", "limit", "max", "min", "type", "endpoint", "url", "uri", "expires",
    "expiry", "ttl", "len", "length",
];

/// HTTP authentication schemes: in `Authorization: Bearer abc` the credential is the word
/// after the scheme.
const AUTH_SCHEMES: &[&str] = &["bearer", "basic", "token", "digest", "negotiate"];

/// Whether a field, header, variable or parameter named `name` holds a secret: one of its
/// words (split at separators and camel case, case ignored) is `pass`, `pwd`, `key`,
/// `auth`, `bearer` or `jwt`, or it contains `password`, `passwd`, `passphrase`, `secret`,
/// `token`, `apikey`, `accesskey`, `authorization`, `cookie`, `credential`, `privatekey` or
/// `sessionid`; unless a word says it is about a secret rather than one (`count`, `used`,
/// `usage`, `limit`, `max`, `min`, `type`, `endpoint`, `url`, `uri`, `expires`, `expiry`,
/// `ttl`, `len`, `length`: `max_tokens`, `token_endpoint`).
///
/// ```
/// use mcp_key::is_secret_name;
///
/// for name in ["password", "X-Api-Key", "apiKey", "PGPASSWORD", "db_pass", "Authorization", "jwt"] {
///     assert!(is_secret_name(name), "{name}");
/// }
/// for name in ["author", "passage", "monkey", "max_tokens", "token_endpoint", "query"] {
///     assert!(!is_secret_name(name), "{name}");
/// }
/// ```
pub fn is_secret_name(name: &str) -> bool {
    let words = words(name);
    if words.iter().any(|w| ABOUT_WORDS.contains(&w.as_str())) {
        return false;
    }
    let joined = words.concat();
    words.iter().any(|w| SECRET_WORDS.contains(&w.as_str()))
        || SECRET_INSIDE.iter().any(|word| joined.contains(word))
}

/// `name` split into lower-case words at non-alphanumerics and camel-case boundaries
/// (`xApiKey` and `X_API_KEY` are `x`, `api`, `key`; `APIKey` is `api`, `key`).
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_uppercase() && !word.is_empty() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if !prev.is_uppercase() || next_lower {
                words.push(std::mem::take(&mut word));
            }
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `text` with the value of every `name=value`, `name: value`, `"name": "value"` (or
/// `'name'='value'`) pair whose name [is a secret's](is_secret_name) replaced by
/// [`REDACTED`]; after an authentication scheme (`Authorization: Bearer abc`) only the
/// credential is. A value runs to whitespace or one of ``& ; , ) ] } > < " ' ` ``, or, when
/// quoted, to its closing quote; values that start with `{`, `[`, `(` or `<` are kept.
pub(crate) fn redact_pairs(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if matches!(bytes[i], b'=' | b':')
            && let Some((start, end)) = secret_value(text, i)
        {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The byte range of the value to hide when the separator at `sep` ends a secret's name.
fn secret_value(text: &str, sep: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let next = bytes.get(sep + 1).copied();
    let prev = sep.checked_sub(1).map(|p| bytes[p]);
    if matches!(prev, Some(b'=' | b'!' | b'<' | b'>' | b':')) {
        return None;
    }
    match bytes[sep] {
        b'=' if matches!(next, Some(b'=' | b'>')) => return None,
        // `name: value` needs the space or quote (not `a:b`, `::`, `scheme://`).
        b':' if !matches!(next, Some(b' ' | b'\t' | b'"' | b'\'')) => return None,
        _ => {}
    }
    let name = name_before(text, sep)?;
    if !is_secret_name(name) {
        return None;
    }
    value_after(text, sep + 1)
}

/// The name that ends at `sep` (spaces before it allowed): a quoted one, or a run of
/// `A-Z a-z 0-9 _ - .`.
fn name_before(text: &str, sep: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut end = sep;
    while end > 0 && matches!(bytes[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    let last = end.checked_sub(1).map(|p| bytes[p])?;
    if matches!(last, b'"' | b'\'') {
        let close = end - 1;
        let open = text[..close].rfind(char::from(last))?;
        let name = &text[open + 1..close];
        return (!name.is_empty() && name.len() <= 64 && !name.contains('\n')).then_some(name);
    }
    let mut start = end;
    while start > 0 && is_name_byte(bytes[start - 1]) {
        start -= 1;
    }
    (start < end).then(|| &text[start..end])
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// The value that starts after `from` (spaces skipped), as the range to hide; `None` when
/// there is none or it is already hidden.
fn value_after(text: &str, from: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut start = from;
    while start < bytes.len() && matches!(bytes[start], b' ' | b'\t') {
        start += 1;
    }
    let first = *bytes.get(start)?;
    let (start, end) = if matches!(first, b'"' | b'\'') {
        let inner = start + 1;
        (inner, closing_quote(bytes, inner, first))
    } else if matches!(first, b'{' | b'[' | b'(' | b'<') {
        return None;
    } else {
        let end = value_end(bytes, start);
        let word = &text[start..end];
        if AUTH_SCHEMES.iter().any(|s| word.eq_ignore_ascii_case(s))
            && bytes.get(end) == Some(&b' ')
        {
            // `Bearer abc`: the credential is the next word.
            let credential = end + 1;
            (credential, value_end(bytes, credential))
        } else {
            (start, end)
        }
    };
    let value = &text[start..end];
    (!value.is_empty() && value != REDACTED).then_some((start, end))
}

/// Where a quoted value that starts at `from` ends: its closing `quote` (a backslash
/// escapes), the end of the line, or the end of the text.
fn closing_quote(bytes: &[u8], from: usize, quote: u8) -> usize {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' | b'\r' => return i,
            b if b == quote => return i,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Where an unquoted value that starts at `from` ends.
fn value_end(bytes: &[u8], from: usize) -> usize {
    bytes[from.min(bytes.len())..]
        .iter()
        .position(|&b| {
            b.is_ascii_whitespace()
                || matches!(
                    b,
                    b'&' | b';' | b',' | b')' | b']' | b'}' | b'>' | b'<' | b'"' | b'\'' | b'`'
                )
        })
        .map_or(bytes.len(), |p| from + p)
}

/// `text` with the credential of every `Bearer <credential>` (scheme case ignored; a
/// credential of at least 8 characters of base64/token68, not an auth-param such as
/// `realm="x"`) replaced by [`REDACTED`].
pub(crate) fn redact_bearer(text: &str) -> Cow<'_, str> {
    const SCHEME: &str = "bearer";
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i + SCHEME.len() < bytes.len() {
        let at_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if !(at_word && bytes[i..i + SCHEME.len()].eq_ignore_ascii_case(SCHEME.as_bytes())) {
            i += 1;
            continue;
        }
        let mut start = i + SCHEME.len();
        if bytes.get(start) != Some(&b' ') {
            i += 1;
            continue;
        }
        while bytes.get(start) == Some(&b' ') {
            start += 1;
        }
        let mut end = start;
        while end < bytes.len()
            && (bytes[end].is_ascii_alphanumeric()
                || matches!(bytes[end], b'.' | b'_' | b'~' | b'+' | b'/' | b'-'))
        {
            end += 1;
        }
        let body = end - start;
        while bytes.get(end) == Some(&b'=') {
            end += 1;
        }
        let param = bytes
            .get(end)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'"');
        if body >= 8 && !param {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
        }
        i = end.max(i + 1);
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// `text` with every JWT-shaped token (`eyJ…` header, a payload and a signature, dot
/// separated) replaced by [`REDACTED`].
pub(crate) fn redact_jwts(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let is_jwt_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    let mut out = String::new();
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("eyJ") {
        let start = search + found;
        let end = bytes[start..]
            .iter()
            .position(|&b| !is_jwt_byte(b))
            .map_or(bytes.len(), |p| start + p);
        let at_word = start == 0 || !is_jwt_byte(bytes[start - 1]);
        let parts: Vec<&str> = text[start..end].split('.').collect();
        if at_word && parts.len() >= 3 && parts[0].len() >= 10 && parts[1].len() >= 2 {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
        }
        search = end.max(start + 1);
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_words() {
        assert_eq!(words("xApiKey"), ["x", "api", "key"]);
        assert_eq!(words("X_API_KEY"), ["x", "api", "key"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(words("oauth2Token"), ["oauth2", "token"]);
    }

    #[test]
    fn secret_names() {
        for name in [
            "password",
            "db_pass",
            "PWD",
            "key",
            "api_key",
            "apikey",
            "x-api-key",
            "auth",
            "auth_header",
            "Bearer",
            "jwt",
            "access_token",
            "client_secret",
            "PGPASSWORD",
            "Cookie",
            "sessionId",
            "AWS_SECRET_ACCESS_KEY",
            "--password",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "author",
            "passage",
            "bypassed",
            "monkey",
            "keyboard",
            "max_tokens",
            "tokens_used",
            "token_endpoint",
            "key_type",
            "name",
            "WWW-Authenticate",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn pair_values_are_redacted() {
        let cases = [
            (
                "failed: token=sk-live-abc123&user=bob",
                "failed: token=***&user=bob",
            ),
            ("PASSWORD=hunter2 next", "PASSWORD=*** next"),
            ("--api-key=k1, --verbose", "--api-key=***, --verbose"),
            ("api_key: abc def", "api_key: *** def"),
            (
                r#"{"access_token": "a b\"c", "n": 1}"#,
                r#"{"access_token": "***", "n": 1}"#,
            ),
            ("secret = 'x y'", "secret = '***'"),
            ("Authorization: Bearer abc.def", "Authorization: Bearer ***"),
            (
                r#"["Authorization","Bearer x"]"#,
                r#"["Authorization","Bearer x"]"#,
            ),
            ("password=\"unterminated\nnext", "password=\"***\nnext"),
        ];
        for (text, want) in cases {
            assert_eq!(redact_pairs(text), want, "{text}");
        }
    }

    #[test]
    fn other_pairs_and_prose_are_unchanged() {
        for text in [
            "name=files key_type=ed25519 max_tokens=5",
            "the key is wrong",
            "token == other, a<=b, std::token::X",
            "token: {\"a\": 1}",
            "password=",
            "password=*** again",
            "see https://h/x",
        ] {
            assert!(matches!(redact_pairs(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn bearer_credentials_and_jwts_are_redacted() {
        assert_eq!(
            redact_bearer("sent bearer abcdefgh123= to h"),
            "sent bearer *** to h"
        );
        for kept in [
            "Bearer realm=\"x\", error=\"invalid_token\"",
            "Bearer resource_metadata=\"https://h/.well-known\"",
            "bearer short",
            "Bearer ***",
        ] {
            assert!(matches!(redact_bearer(kept), Cow::Borrowed(_)), "{kept}");
        }
        assert_eq!(
            redact_jwts("got eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln, ok"),
            "got ***, ok"
        );
        assert!(matches!(redact_jwts("eyJust a word"), Cow::Borrowed(_)));
    }
}

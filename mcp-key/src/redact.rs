//! Text safe to show: URLs with userinfo and query strings redacted (they hold secrets:
//! `?api_key=…`, `https://user:token@host`, `postgres://user:password@db`), secrets in
//! free text ([`redact_secrets`]: URLs, `token=…` pairs, `Bearer` credentials, JWTs), and
//! error chains on one line.

use std::borrow::Cow;

use crate::secret_text;

/// What replaces a redacted part.
pub const REDACTED: &str = "***";

/// `url` with its userinfo and query string replaced by [`REDACTED`] and its fragment
/// dropped: `https://u:p@host/mcp?k=v#f` becomes `https://***@host/mcp?***`, and
/// `POSTGRES://u:p@db/app` becomes `POSTGRES://***@db/app` (any scheme, any case). Text
/// that is not a `scheme://` URL is returned unchanged.
pub fn redact_url(url: &str) -> Cow<'_, str> {
    let Some(scheme_end) = url.find("://") else {
        return Cow::Borrowed(url);
    };
    let rest_start = scheme_end + 3;
    let rest = &url[rest_start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let after = &rest[authority_end..];
    let host = authority.rfind('@').map(|at| &authority[at + 1..]);
    let path_end = after.find(['?', '#']).unwrap_or(after.len());
    let has_query = after[path_end..].starts_with('?');
    let has_fragment = after.contains('#');
    if host.is_none() && !has_query && !has_fragment {
        return Cow::Borrowed(url);
    }
    let mut out = String::with_capacity(url.len());
    out.push_str(&url[..rest_start]);
    if let Some(host) = host {
        out.push_str(REDACTED);
        out.push('@');
        out.push_str(host);
    } else {
        out.push_str(authority);
    }
    out.push_str(&after[..path_end]);
    if has_query {
        out.push('?');
        out.push_str(REDACTED);
    }
    Cow::Owned(out)
}

/// `text` with every `scheme://` URL in it (any scheme: `https`, `postgres`, `redis`,
/// `AMQP`, …) passed through [`redact_url`] (a URL ends at whitespace, a quote, `)` or
/// `>`), for messages that quote URLs, such as an HTTP client's errors. Text that may hold
/// other secrets (a server's stderr, an error chain) goes through [`redact_secrets`].
pub fn redact_urls(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = find_url(&text[search..]) {
        let start = search + found;
        let len = text[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ')' | '>' | '`'))
            .unwrap_or(text.len() - start);
        let url = &text[start..start + len];
        if let Cow::Owned(redacted) = redact_url(url) {
            out.push_str(&text[copied..start]);
            out.push_str(&redacted);
            copied = start + len;
        }
        search = start + len.max(1);
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// `text` with every secret it can tell apart replaced by [`REDACTED`]: URLs' userinfo and
/// query strings ([`redact_urls`]), the values of `name=value`, `name: value` and
/// `"name": "value"` pairs whose name [is a secret's](crate::is_secret_name) (`token=…`,
/// `PGPASSWORD=…`, `"api_key": "…"`, `Authorization: Bearer …`), `Bearer` credentials and
/// JWT-shaped tokens. For what a server writes and what errors say, before it is shown or
/// logged; a secret in prose without a name is not found.
///
/// ```
/// use mcp_key::redact_secrets;
///
/// assert_eq!(
///     redact_secrets("connect postgres://app:pw@db/app failed; token=sk-live-1 \"password\": \"x\""),
///     "connect postgres://***@db/app failed; token=*** \"password\": \"***\""
/// );
/// assert_eq!(redact_secrets("Authorization: Bearer abc"), "Authorization: Bearer ***");
/// ```
pub fn redact_secrets(text: &str) -> Cow<'_, str> {
    let passes: [for<'a> fn(&'a str) -> Cow<'a, str>; 4] = [
        redact_urls,
        secret_text::redact_pairs,
        secret_text::redact_bearer,
        secret_text::redact_jwts,
    ];
    let mut out = Cow::Borrowed(text);
    for pass in passes {
        let changed = match pass(&out) {
            Cow::Owned(text) => Some(text),
            Cow::Borrowed(_) => None,
        };
        if let Some(text) = changed {
            out = Cow::Owned(text);
        }
    }
    out
}

/// Where the next `scheme://` URL in `text` starts: a scheme is a letter then letters,
/// digits, `+`, `-` or `.`.
fn find_url(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let sep = from + found;
        let mut start = sep;
        while start > 0
            && (bytes[start - 1].is_ascii_alphanumeric()
                || matches!(bytes[start - 1], b'+' | b'-' | b'.'))
        {
            start -= 1;
        }
        while start < sep && !bytes[start].is_ascii_alphabetic() {
            start += 1;
        }
        if start < sep {
            return Some(start);
        }
        from = sep + 3;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_query_and_fragment_are_redacted() {
        assert_eq!(
            redact_url("https://user:tok@example.com:8443/mcp?api_key=s3cr3t&x=1#frag"),
            "https://***@example.com:8443/mcp?***"
        );
        assert_eq!(
            redact_url("http://127.0.0.1:9/mcp?k=v"),
            "http://127.0.0.1:9/mcp?***"
        );
        assert_eq!(redact_url("http://h?k=v"), "http://h?***");
    }

    #[test]
    fn clean_urls_and_other_text_are_unchanged() {
        assert!(matches!(
            redact_url("https://example.com/mcp"),
            Cow::Borrowed(_)
        ));
        assert_eq!(redact_url("not a url"), "not a url");
    }

    #[test]
    fn urls_of_any_scheme_and_case_are_redacted() {
        let text = "db postgres://user:password@db:5432/app?sslmode=require down; \
                    cache REDIS://:pw@h:6379/0, (amqp+ssl://u:p@mq/vh) HTTPS://u:t@h/x";
        assert_eq!(
            redact_urls(text),
            "db postgres://***@db:5432/app?*** down; \
                    cache REDIS://***@h:6379/0, (amqp+ssl://***@mq/vh) HTTPS://***@h/x"
        );
        assert!(matches!(redact_urls("a :// b, 9://x"), Cow::Borrowed(_)));
    }

    #[test]
    fn secrets_in_free_text_are_redacted() {
        let stderr = "FATAL: DATABASE_URL=postgres://admin:hunter2@db/app\n\
                      retrying with token=sk-live-0123 and Authorization: Bearer abcdefghij\n\
                      config {\"api_key\": \"k-1\", \"user\": \"bob\"} jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";
        let shown = redact_secrets(stderr);
        assert_eq!(
            shown,
            "FATAL: DATABASE_URL=postgres://***@db/app\n\
             retrying with token=*** and Authorization: Bearer ***\n\
             config {\"api_key\": \"***\", \"user\": \"bob\"} jwt ***"
        );
        assert_eq!(
            redact_secrets(&shown),
            shown,
            "redacting twice changes nothing"
        );
        assert!(matches!(
            redact_secrets("server files failed: exited with status 3"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn urls_inside_messages_are_redacted() {
        let text = "error sending request for url (http://127.0.0.1:1/mcp?token=abc): refused; see https://docs.example/x";
        assert_eq!(
            redact_urls(text),
            "error sending request for url (http://127.0.0.1:1/mcp?***): refused; see https://docs.example/x"
        );
        assert!(matches!(redact_urls("no urls here"), Cow::Borrowed(_)));
    }
}

/// An error and its sources on one line, `error: cause: cause`, each layer's text as it is
/// (each layer writes its own sentence, so nothing is left out; an empty text is skipped).
/// Secrets in it are redacted ([`redact_secrets`]).
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        let text = e.to_string();
        if !text.is_empty() {
            parts.push(text);
        }
        cur = e.source();
    }
    redact_secrets(&parts.join(": ")).into_owned()
}

#[cfg(test)]
mod chain_tests {
    use super::error_chain;

    #[derive(Debug)]
    struct E(&'static str, Option<Box<E>>);

    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for E {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1
                .as_deref()
                .map(|e| e as &(dyn std::error::Error + 'static))
        }
    }

    #[test]
    fn every_cause_is_joined_and_secrets_redacted() {
        let err = E(
            "connect failed",
            Some(Box::new(E(
                "http://h/mcp?k=secret refused",
                Some(Box::new(E("stderr: password=pw", None))),
            ))),
        );
        assert_eq!(
            error_chain(&err),
            "connect failed: http://h/mcp?*** refused: stderr: password=***"
        );
        let empty = E(
            "outer",
            Some(Box::new(E("", Some(Box::new(E("inner", None)))))),
        );
        assert_eq!(error_chain(&empty), "outer: inner");
    }
}

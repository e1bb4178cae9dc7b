//! Text safe to show: URLs with userinfo and query strings redacted (they hold secrets:
//! `?api_key=…`, `https://user:token@host`), and error chains on one line.

use std::borrow::Cow;

/// What replaces a redacted part.
pub const REDACTED: &str = "***";

/// `url` with its userinfo and query string replaced by [`REDACTED`] and its fragment
/// dropped: `https://u:p@host/mcp?k=v#f` becomes `https://***@host/mcp?***`. Text that is
/// not an `http(s)://` URL is returned unchanged.
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

/// `text` with every `http://` or `https://` URL in it passed through [`redact_url`] (a URL
/// ends at whitespace, a quote, `)` or `>`), for messages that quote URLs, such as an HTTP
/// client's errors.
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

fn find_url(text: &str) -> Option<usize> {
    match (text.find("http://"), text.find("https://")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
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
/// URLs in it are redacted ([`redact_urls`]).
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
    redact_urls(&parts.join(": ")).into_owned()
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
    fn every_cause_is_joined_and_urls_redacted() {
        let err = E(
            "connect failed",
            Some(Box::new(E(
                "http://h/mcp?k=secret refused",
                Some(Box::new(E("refused", None))),
            ))),
        );
        assert_eq!(
            error_chain(&err),
            "connect failed: http://h/mcp?*** refused: refused"
        );
        let empty = E(
            "outer",
            Some(Box::new(E("", Some(Box::new(E("inner", None)))))),
        );
        assert_eq!(error_chain(&empty), "outer: inner");
    }
}

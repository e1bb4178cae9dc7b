//! Where credentials may go: `https://`, or plain `http://` to this machine. The one
//! definition of the rule for every credential the workspace sends (the MCP client's
//! `Authorization` headers, this crate's OAuth endpoints, the gateway's requests to its
//! authorization server).

use std::net::IpAddr;

/// Whether a request to a URL of `scheme` and `host` may carry credentials: `https`, or
/// `http` to a loopback host (`localhost` in any case, `127.0.0.0/8`, `::1`).
///
/// `host` is the URL's host as a URL parser normalized it (`url::Url::host_str`: IPv4 in
/// dotted decimal, IPv6 in brackets), never a hand-cut piece of the text. Anything else
/// (`ws`, `file`, another scheme, a name that merely starts with `localhost`, an
/// IPv4-mapped IPv6 address, no host) may not.
///
/// ```
/// use mcp_auth::may_carry_credentials;
///
/// assert!(may_carry_credentials("https", Some("tickets.example")));
/// assert!(may_carry_credentials("http", Some("127.0.0.1")));
/// assert!(may_carry_credentials("http", Some("[::1]")));
/// assert!(!may_carry_credentials("http", Some("tickets.example")));
/// assert!(!may_carry_credentials("ws", Some("localhost")));
/// ```
pub fn may_carry_credentials(scheme: &str, host: Option<&str>) -> bool {
    match scheme {
        "https" => true,
        "http" => host.is_some_and(is_loopback_host),
        _ => false,
    }
}

/// Whether `host` (normalized, see [`may_carry_credentials`]) names this machine:
/// `localhost` in any case, or a loopback IP address.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::may_carry_credentials;

    #[test]
    fn only_https_or_plain_http_to_loopback() {
        for (scheme, host) in [
            ("https", "example.com"),
            ("https", "10.0.0.1"),
            ("http", "127.0.0.1"),
            ("http", "127.9.9.9"),
            ("http", "[::1]"),
            ("http", "::1"),
            ("http", "localhost"),
            ("http", "LOCALHOST"),
        ] {
            assert!(may_carry_credentials(scheme, Some(host)), "{scheme} {host}");
        }
        for (scheme, host) in [
            ("http", "example.com"),
            ("http", "10.0.0.1"),
            ("http", "0.0.0.0"),
            ("http", "[::]"),
            ("http", "[::ffff:127.0.0.1]"),
            ("http", "localhost.evil.com"),
            ("http", "evil.localhost"),
            ("http", "127.0.0.1.nip.io"),
            ("http", "[::1"),
            ("ws", "localhost"),
            ("ftp", "127.0.0.1"),
            ("file", ""),
            ("HTTP", "localhost"),
        ] {
            assert!(
                !may_carry_credentials(scheme, Some(host)),
                "{scheme} {host}"
            );
        }
        assert!(!may_carry_credentials("http", None));
        assert!(
            may_carry_credentials("https", None),
            "the scheme alone decides"
        );
    }
}

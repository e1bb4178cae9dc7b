//! Resources that several servers list under one URI. The same server installed in two
//! environments lists the same URIs, and a client of the gateway names a resource by its
//! URI alone; so each such resource is shown under a URI that names its server
//! (`mcpctl-server://github@devbox/file:///readme`), and reads, subscriptions and updates
//! of that URI go to that server with the server's own URI. A URI only one server lists is
//! shown unchanged.

use mcp_key::McpServerKey;

/// The scheme of URIs that name their server.
const PREFIX: &str = "mcpctl-server://";

/// `uri` of `server`, as the gateway shows it when other servers list `uri` too.
pub(crate) fn qualified(server: &McpServerKey, uri: &str) -> String {
    format!("{PREFIX}{server}/{uri}")
}

/// The server and its own URI, for a URI [`qualified`] made; `None` for any other URI.
pub(crate) fn split(uri: &str) -> Option<(McpServerKey, &str)> {
    let rest = uri.strip_prefix(PREFIX)?;
    let (key, original) = rest.split_once('/')?;
    Some((key.parse().ok()?, original))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn a_qualified_uri_splits_back_into_its_server_and_uri() {
        let devbox: McpServerKey = "github@devbox".parse().unwrap();
        let uri = qualified(&devbox, "file:///a/b?c#d");
        assert_eq!(uri, "mcpctl-server://github@devbox/file:///a/b?c#d");
        assert_eq!(split(&uri), Some((devbox, "file:///a/b?c#d")));
        let local: McpServerKey = "github".parse().unwrap();
        assert_eq!(split(&qualified(&local, "x://y")), Some((local, "x://y")));
        assert_eq!(split("file:///readme"), None);
        assert_eq!(split("mcpctl-server://not a key/x"), None);
        assert_eq!(split("mcpctl-server://github"), None);
    }
}

//! `allow_plain_http`: off by default, read from TOML.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use mcp_catalog::Config;

#[test]
fn allow_plain_http_is_off_unless_set() {
    let loaded = Config::from_toml_str(
        "[mcp_servers.a]\nurl = \"http://10.0.0.2/mcp\"\n\n[mcp_servers.b]\nurl = \"http://10.0.0.2/mcp\"\nallow_plain_http = true\n",
        "t.toml",
    )
    .unwrap();
    let servers = loaded.config().servers();
    let http = |name: &str| {
        servers[&name.parse().unwrap()]
            .transport()
            .as_http()
            .unwrap()
            .allow_plain_http()
    };
    assert!(!http("a"));
    assert!(http("b"));
    assert!(loaded.warnings().is_empty(), "{:?}", loaded.warnings());
}

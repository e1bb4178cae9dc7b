//! Built without the `http` feature (`cargo test -p mcp-connections --no-default-features
//! --lib`, run by `scripts/package-check.sh`): an HTTP server fails alone, with reason
//! `config` and the feature named, and the stdio servers of the same catalog still start.

use mcp_catalog::{CatalogBuilder, Config};

use crate::{ConnectionSet, ConnectionSetOptions, FailureReason, ServerState};

#[tokio::test]
async fn an_http_server_fails_alone_naming_the_feature() {
    // `sh` answers nothing MCP-like: it fails too, but as a stdio server (not `config`).
    let loaded = Config::from_toml_str(
        r#"
        [mcp_servers.remote]
        url = "http://127.0.0.1:9/mcp"

        [mcp_servers.local]
        command = "sh"
        args = ["-c", "exit 3"]
        "#,
        "mcp.toml",
    )
    .unwrap();
    let catalog = CatalogBuilder::new().with_user_config(loaded).build();
    let set = ConnectionSet::start(&catalog, ConnectionSetOptions::new());
    set.wait_startup().await;
    let status = set.status();
    let failure = |name: &str| {
        let server = status
            .iter()
            .find(|s| s.key.name().as_str() == name)
            .unwrap();
        match &server.state {
            ServerState::Failed(f) => f.clone(),
            other => panic!("{name}: {other:?}"),
        }
    };
    let remote = failure("remote");
    assert_eq!(remote.reason(), &FailureReason::Config);
    assert!(remote.to_string().contains("feature `http`"), "{remote}");
    assert!(remote.to_string().contains("`remote`"), "{remote}");
    let local = failure("local");
    assert_ne!(local.reason(), &FailureReason::Config, "{local}");
    set.shutdown().await;
}

//! The registry client against `mcp-testkit`'s fake registry on loopback: searches across
//! pages, versions without deleted ones, fetches validated with their place, cached
//! answers, timeouts, failures and bundles checked before they are returned.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::{FileSha256, InputValues, PackageType};
use mcp_registry::{EntryStatus, RegistryClient, RegistryError, RegistryOptions};
use mcp_testkit::{BROKEN_JSON_SERVER, FakeRegistry, RegistryContents, RegistryEntry};
use pretty_assertions::assert_eq;
use serde_json::json;

const BRAVE: &str = "io.modelcontextprotocol.anonymous/brave-search";

async fn start(contents: RegistryContents) -> (FakeRegistry, RegistryClient) {
    let registry = FakeRegistry::start(contents).await.unwrap();
    let client = RegistryClient::new(RegistryOptions::new(registry.url())).unwrap();
    (registry, client)
}

#[tokio::test]
async fn a_search_follows_pages_and_never_offers_deleted_versions() {
    let (registry, client) = start(RegistryContents::examples().with_page_size(2)).await;
    let found = client.search("", 100).await.unwrap();
    let names: Vec<String> = found
        .iter()
        .map(|s| format!("{}@{}", s.name, s.version))
        .collect();
    assert_eq!(found.len(), 11, "{names:?}");
    assert!(names.contains(&format!("{BRAVE}@1.0.2")));
    assert!(
        found
            .iter()
            .all(|s| s.status != EntryStatus::Deleted && s.is_latest)
    );

    let brave = client.search("BRAVE", 5).await.unwrap();
    assert_eq!(brave.len(), 1);
    assert_eq!(brave[0].title.as_deref(), Some("Brave Search"));
    // Eleven servers, two per page: six pages; a limit of 3 stops after two.
    let requests_before = registry.requests().len();
    assert_eq!(client.search("io", 3).await.unwrap().len(), 3);
    assert_eq!(registry.requests().len() - requests_before, 2);
    assert!(registry.requests()[0].starts_with("/v0.1/servers?search=&version=latest&limit="));
    registry.shutdown().await;
}

#[tokio::test]
async fn versions_show_deprecated_ones_marked_and_leave_deleted_ones_out() {
    let (registry, client) = start(RegistryContents::examples()).await;
    let versions = client.versions(BRAVE).await.unwrap();
    let shown: Vec<(String, EntryStatus, Option<String>)> = versions
        .into_iter()
        .map(|v| (v.version, v.status, v.status_message))
        .collect();
    assert_eq!(
        shown,
        [
            ("1.0.2".to_owned(), EntryStatus::Active, None),
            (
                "1.0.1".to_owned(),
                EntryStatus::Deprecated,
                Some("upgrade to 1.0.2".to_owned())
            ),
        ]
    );
    assert_eq!(
        registry.requests(),
        ["/v0.1/servers/io.modelcontextprotocol.anonymous%2Fbrave-search/versions"]
    );

    let err = client.versions("io.example/none").await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "the registry has no server io.example/none (GET {}/v0.1/servers/io.example%2Fnone/versions \
             answered 404): check the name with a search",
            registry.url()
        )
    );
    let err = client.versions("not a name").await.unwrap_err();
    assert!(matches!(err, RegistryError::InvalidName { .. }));
    registry.shutdown().await;
}

#[tokio::test]
async fn a_fetch_gives_a_validated_document_that_plans_a_pinned_command() {
    let (registry, client) = start(RegistryContents::examples()).await;
    let latest = client
        .fetch("io.github.example/weather-mcp", None)
        .await
        .unwrap();
    assert_eq!(latest.server.version(), "0.5.0");
    assert!(latest.summary.is_latest);
    let old = client
        .fetch("io.github.example/weather-mcp", Some("0.4.0"))
        .await
        .unwrap();
    let target = old.server.package_target(PackageType::Pypi).unwrap();
    let plan = old
        .server
        .install_plan(target, &InputValues::new())
        .unwrap();
    assert_eq!(
        plan.command_line().unwrap(),
        ["uvx", "weather-mcp-server==0.4.0"]
    );

    let deprecated = client.fetch(BRAVE, Some("1.0.1")).await.unwrap();
    assert_eq!(deprecated.summary.status, EntryStatus::Deprecated);
    let deleted = client.fetch(BRAVE, Some("1.0.0")).await.unwrap_err();
    assert!(deleted.is_not_found(), "{deleted}");
    registry.shutdown().await;
}

#[tokio::test]
async fn a_malformed_document_is_refused_with_its_url_line_and_what_is_wrong() {
    let (registry, client) = start(RegistryContents::examples()).await;
    let err = client
        .fetch("io.github.user/bad-version", None)
        .await
        .unwrap_err();
    assert!(err.is_invalid_document());
    let url = format!(
        "{}/v0.1/servers/io.github.user%2Fbad-version/versions/latest",
        registry.url()
    );
    assert_eq!(
        err.to_string(),
        format!(
            "the server.json of io.github.user/bad-version served at {url} is not valid; ask its publisher to fix it"
        )
    );
    let located = err.config_errors().unwrap().to_string();
    assert!(located.starts_with(&format!("{url}:")), "{located}");
    assert!(located.contains("server.packages[0].version"), "{located}");
    assert!(located.contains("latest"), "{located}");

    let broken = client
        .fetch(BROKEN_JSON_SERVER, Some("1.0.0"))
        .await
        .unwrap_err();
    let located = broken.config_errors().unwrap().to_string();
    assert!(located.contains("invalid JSON"), "{located}");

    // An answer about another server than the one asked for is not taken.
    registry.publish(RegistryEntry::raw(
        "io.example/liar",
        "1.0.0",
        &json!({"server": {"name": "io.example/other", "version": "1.0.0", "description": "x",
            "packages": [{"registryType": "npm", "identifier": "x", "version": "1.0.0",
            "transport": {"type": "stdio"}}]}})
        .to_string(),
    ));
    let err = client
        .fetch("io.example/liar", Some("1.0.0"))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::BadAnswer { .. }), "{err}");

    // A registry that serves a deleted version anyway is not followed.
    registry.publish(RegistryEntry::raw(
        "io.example/gone",
        "1.0.0",
        &json!({"server": {"name": "io.example/gone", "version": "1.0.0", "description": "x",
            "packages": [{"registryType": "npm", "identifier": "x", "version": "1.0.0",
            "transport": {"type": "stdio"}}]},
            "_meta": {"io.modelcontextprotocol.registry/official": {"status": "deleted"}}})
        .to_string(),
    ));
    let err = client
        .fetch("io.example/gone", Some("1.0.0"))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::Deleted { .. }), "{err}");
    registry.shutdown().await;
}

#[tokio::test]
async fn answers_are_cached_and_one_request_serves_concurrent_askers() {
    let (registry, client) = start(RegistryContents::examples()).await;
    registry.set_delay(Duration::from_millis(100));
    let client = Arc::new(client);
    let (a, b) = tokio::join!(client.fetch(BRAVE, None), client.fetch(BRAVE, None));
    assert_eq!(a.unwrap().server.version(), b.unwrap().server.version());
    client.fetch(BRAVE, None).await.unwrap();
    assert_eq!(registry.requests().len(), 1);

    let uncached =
        RegistryClient::new(RegistryOptions::new(registry.url()).with_cache_ttl(Duration::ZERO))
            .unwrap();
    uncached.fetch(BRAVE, None).await.unwrap();
    uncached.fetch(BRAVE, None).await.unwrap();
    assert_eq!(registry.requests().len(), 3);
    registry.shutdown().await;
}

#[tokio::test]
async fn timeouts_and_failures_name_the_url_and_are_not_cached() {
    let (registry, _) = start(RegistryContents::examples()).await;
    let client = RegistryClient::new(
        RegistryOptions::new(registry.url()).with_timeout(Duration::from_millis(200)),
    )
    .unwrap();
    registry.set_delay(Duration::from_secs(5));
    let err = client.search("brave", 5).await.unwrap_err();
    assert!(err.is_timeout() && err.is_retryable(), "{err:?}");
    assert!(
        err.to_string()
            .contains(&format!("{}/v0.1/servers?search=brave", registry.url())),
        "{err}"
    );

    registry.set_delay(Duration::ZERO);
    registry.fail_next(503);
    let err = client.search("brave", 5).await.unwrap_err();
    assert!(err.is_retryable(), "{err:?}");
    assert!(
        err.to_string().contains("HTTP 503 (injected failure)"),
        "{err}"
    );
    assert_eq!(
        client.search("brave", 5).await.unwrap().len(),
        1,
        "the failure was not kept"
    );

    let err = RegistryClient::new(RegistryOptions::new("http://registry.example.com")).unwrap_err();
    assert!(matches!(err, RegistryError::InvalidUrl { .. }), "{err}");
    registry.shutdown().await;
}

#[tokio::test]
async fn a_download_is_returned_only_when_its_bytes_match_the_pinned_sha256() {
    let (registry, client) = start(RegistryContents::new()).await;
    let good = b"the bundle as published".to_vec();
    registry.add_file("good.mcpb", good.clone());
    registry.add_file(
        "changed.mcpb",
        b"the bundle changed after publishing".to_vec(),
    );
    let pinned = FileSha256::of(&good);
    let url = registry.file_url("good.mcpb");
    assert_eq!(client.download_checked(&url, &pinned).await.unwrap(), good);

    let changed = registry.file_url("changed.mcpb");
    let err = client
        .download_checked(&changed, &pinned)
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::BundleMismatch { .. }), "{err}");
    assert!(err.is_invalid_document());
    let actual = FileSha256::of(b"the bundle changed after publishing");
    assert_eq!(
        err.to_string(),
        format!(
            "refusing the file downloaded from {changed}: its SHA-256 is {actual}, not the pinned \
             {pinned}; do not run it: download it again, and if it still differs it was changed \
             after publishing (ask its publisher)"
        )
    );
    let err = client
        .download_checked("http://example.com/x.mcpb", &pinned)
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::InvalidUrl { .. }), "{err}");
    registry.shutdown().await;
}

/// A hostile or broken registry that answers without end is cut at the bound, with the
/// URL named: the answer is never read whole into memory.
#[tokio::test]
async fn an_answer_over_the_bound_is_refused_naming_the_url() {
    let (registry, client) = start(RegistryContents::new()).await;
    let padding = "x".repeat(mcp_registry::MAX_ANSWER_BYTES);
    registry.publish(RegistryEntry::raw(
        "io.example/huge",
        "1.0.0",
        &json!({"server": {"name": "io.example/huge", "version": "1.0.0", "description": padding,
            "packages": [{"registryType": "npm", "identifier": "x", "version": "1.0.0",
            "transport": {"type": "stdio"}}]}})
        .to_string(),
    ));
    let err = client
        .fetch("io.example/huge", Some("1.0.0"))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::BadAnswer { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "larger than {} bytes",
            mcp_registry::MAX_ANSWER_BYTES
        )),
        "{text}"
    );
    assert!(text.contains(&registry.url()), "{text}");
    registry.shutdown().await;
}

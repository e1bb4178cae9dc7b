//! The fake MCP Registry answers in the registry's REST shape: pages with cursors,
//! versions newest first, deleted entries hidden, deprecated ones marked, malformed answers.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use mcp_testkit::{
    BROKEN_JSON_SERVER, FakeRegistry, REGISTRY_OFFICIAL_META, RegistryContents, RegistryEntry,
    RegistryStatus,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

async fn get(registry: &FakeRegistry, path: &str) -> (u16, String) {
    let answer = reqwest::get(format!("{}{path}", registry.url()))
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.text().await.unwrap())
}

async fn get_json(registry: &FakeRegistry, path: &str) -> Value {
    let (status, body) = get(registry, path).await;
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn names_and_versions(page: &Value) -> Vec<String> {
    page["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{}@{}",
                s["server"]["name"].as_str().unwrap(),
                s["server"]["version"].as_str().unwrap()
            )
        })
        .collect()
}

fn official(answer: &Value) -> &Value {
    &answer["_meta"][REGISTRY_OFFICIAL_META]
}

#[tokio::test]
async fn pages_follow_the_cursor_to_the_end() {
    let registry = FakeRegistry::start(RegistryContents::examples().with_page_size(4))
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut path = "/v0.1/servers?version=latest".to_owned();
    let mut pages = 0;
    loop {
        let page = get_json(&registry, &path).await;
        pages += 1;
        assert!(page["metadata"]["count"].as_u64().unwrap() <= 4);
        seen.extend(names_and_versions(&page));
        match page["metadata"]["nextCursor"].as_str() {
            Some(cursor) => path = format!("/v0.1/servers?version=latest&cursor={cursor}"),
            None => break,
        }
    }
    // Ten examples and the broken entry, one latest version each, sorted by name.
    assert_eq!(seen.len(), 11, "{seen:?}");
    assert_eq!(pages, 3);
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted);
    assert!(seen.contains(&"io.modelcontextprotocol.anonymous/brave-search@1.0.2".to_owned()));
    assert!(!seen.iter().any(|s| s.ends_with("brave-search@1.0.1")));

    let (status, body) = get(&registry, "/v0.1/servers?cursor=nonsense").await;
    assert_eq!(
        (status, body.as_str()),
        (400, r#"{"error":"invalid cursor"}"#)
    );
    let (status, _) = get(&registry, "/v0.1/servers?limit=101").await;
    assert_eq!(status, 400);
    registry.shutdown().await;
}

#[tokio::test]
async fn versions_are_newest_first_without_deleted_ones() {
    let registry = FakeRegistry::start(RegistryContents::examples())
        .await
        .unwrap();
    let name = "io.modelcontextprotocol.anonymous%2Fbrave-search";
    let versions = get_json(&registry, &format!("/v0.1/servers/{name}/versions")).await;
    assert_eq!(
        names_and_versions(&versions),
        [
            "io.modelcontextprotocol.anonymous/brave-search@1.0.2",
            "io.modelcontextprotocol.anonymous/brave-search@1.0.1"
        ]
    );
    assert_eq!(official(&versions["servers"][0])["isLatest"], true);
    assert_eq!(official(&versions["servers"][1])["status"], "deprecated");
    assert_eq!(
        official(&versions["servers"][1])["statusMessage"],
        "upgrade to 1.0.2"
    );

    let all = get_json(
        &registry,
        &format!("/v0.1/servers/{name}/versions?include_deleted=true"),
    )
    .await;
    assert_eq!(all["servers"].as_array().unwrap().len(), 3);
    assert_eq!(official(&all["servers"][2])["status"], "deleted");

    let (status, _) = get(&registry, &format!("/v0.1/servers/{name}/versions/1.0.0")).await;
    assert_eq!(status, 404, "a deleted version is not served");
    let latest = get_json(&registry, &format!("/v0.1/servers/{name}/versions/latest")).await;
    assert_eq!(latest["server"]["packages"][0]["version"], "1.0.2");
    let old = get_json(&registry, &format!("/v0.1/servers/{name}/versions/1.0.1")).await;
    assert_eq!(old["server"]["packages"][0]["version"], "1.0.1");
    assert_eq!(official(&old)["isLatest"], false);

    let (status, body) = get(&registry, "/v0.1/servers/io.example%2Fnone/versions").await;
    assert_eq!(
        (status, body.as_str()),
        (404, r#"{"error":"Server not found"}"#)
    );
    registry.shutdown().await;
}

#[tokio::test]
async fn publishing_deleting_and_malformed_answers() {
    let registry = FakeRegistry::start(RegistryContents::new()).await.unwrap();
    let doc = json!({"name": "io.example/one", "version": "1.0.0", "description": "one"});
    registry.publish(RegistryEntry::new(doc.clone()));
    registry.publish(RegistryEntry::new(doc).as_version("2.0.0"));
    let latest = get_json(&registry, "/v0.1/servers/io.example%2Fone/versions/latest").await;
    assert_eq!(latest["server"]["version"], "2.0.0");
    assert!(registry.set_status("io.example/one", "2.0.0", RegistryStatus::Deleted, None));
    let latest = get_json(&registry, "/v0.1/servers/io.example%2Fone/versions/latest").await;
    assert_eq!(
        latest["server"]["version"], "1.0.0",
        "the newest not deleted"
    );

    registry.publish(RegistryEntry::raw(
        BROKEN_JSON_SERVER,
        "1.0.0",
        "{\"server\": ",
    ));
    let (status, body) = get(
        &registry,
        "/v0.1/servers/io.github.example%2Fbroken-json/versions/1.0.0",
    )
    .await;
    assert_eq!((status, body.as_str()), (200, "{\"server\": "));

    registry.add_file("a.mcpb", b"bytes".to_vec());
    let (status, body) = get(&registry, "/files/a.mcpb").await;
    assert_eq!((status, body.as_str()), (200, "bytes"));

    registry.fail_next(503);
    let (status, _) = get(&registry, "/v0.1/servers").await;
    assert_eq!(status, 503);
    let (status, _) = get(&registry, "/v0.1/servers").await;
    assert_eq!(status, 200);
    assert_eq!(registry.requests().len(), 6);
    assert_eq!(
        registry.requests()[0],
        "/v0.1/servers/io.example%2Fone/versions/latest"
    );
    registry.shutdown().await;
}

//! Protocol eras per server (`protocol = "auto" | "2026-07-28" | "2025-11-25"`), against
//! real `mcp-fake-server` processes serving one era or the other.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use mcp_catalog::{ProtocolChoice, ServerConfig};
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, ServerPool, ServerState,
};
use mcp_testkit::{HttpFakeServer, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::mpsc;

/// A stdio server behind `sh`, which appends a line to `launches` each time it is started,
/// so a test can count processes (the probe of a 2025-era server costs one).
fn counted(fx: &mut Fixture, name: &str, scenario: Scenario, launches: &Path) -> ServerConfig {
    let path = fx.home.join(format!("{name}.json"));
    scenario.write_json(&path).unwrap();
    let bin = mcp_testkit::fake_server_bin();
    ServerConfig::stdio("sh").with_args([
        "-c".to_owned(),
        format!(
            "echo started >> '{}'; exec '{}' --scenario '{}'",
            launches.display(),
            bin.display(),
            path.display()
        ),
    ])
}

fn launches(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

fn modern(name: &str) -> Scenario {
    Scenario::new(name)
        .with_tool(ToolSpec::echo("echo"))
        .with_faults(faults(|f| f.protocol_version = Some("2026-07-28".into())))
}

/// A 2025-era server as rmcp 3.x builds one: it answers the probe with the versions it
/// speaks and waits for `initialize`.
fn legacy(name: &str) -> Scenario {
    Scenario::new(name).with_tool(ToolSpec::echo("echo"))
}

/// A 2025-era server as rmcp releases before 2026-07-28 build one: it exits on the probe.
fn closing(name: &str) -> Scenario {
    legacy(name).with_faults(faults(|f| f.close_on_discover = true))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_speaks_2026_to_a_modern_server_and_2025_to_an_older_one_and_remembers() {
    let mut fx = Fixture::new();
    let modern_log = fx.home.join("modern.launches");
    let legacy_log = fx.home.join("legacy.launches");
    let closing_log = fx.home.join("closing.launches");
    let config = counted(&mut fx, "new", modern("new"), &modern_log);
    fx.add("new", config);
    let config = counted(&mut fx, "old", legacy("old"), &legacy_log);
    fx.add("old", config);
    let config = counted(&mut fx, "oldest", closing("oldest"), &closing_log);
    fx.add("oldest", config);
    let catalog = fx.catalog();
    let counts = || {
        (
            launches(&modern_log),
            launches(&legacy_log),
            launches(&closing_log),
        )
    };
    let pool = ServerPool::new();
    let options = || {
        ConnectionSetOptions::new()
            .with_shared_pool(pool.clone())
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
    };

    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(&catalog, options().with_events(tx));
    assert_eq!(set.wait_startup().await.ready(), 3, "{:?}", set.status());
    let eras: Vec<(String, Option<String>)> = set
        .status()
        .into_iter()
        .map(|s| (s.key.to_string(), s.protocol_version))
        .collect();
    assert_eq!(
        eras,
        vec![
            ("new".to_owned(), Some("2026-07-28".to_owned())),
            ("old".to_owned(), Some("2025-11-25".to_owned())),
            ("oldest".to_owned(), Some("2025-11-25".to_owned())),
        ]
    );
    // The era is in the events too.
    let ready = wait_event(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, ConnectionEvent::Ready { server, .. } if server.to_string() == "new"),
    )
    .await;
    assert!(
        matches!(ready, ConnectionEvent::Ready { ref protocol_version, .. } if protocol_version == "2026-07-28")
    );
    // Calls work in both eras.
    for name in ["new", "old", "oldest"] {
        let result = set
            .call_tool(
                &name.parse().unwrap(),
                "echo",
                Some(json!({"n": 1})),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(result.structured_content, Some(json!({"n": 1})), "{name}");
    }
    // The modern server took one process, and so did the older one that answered the
    // probe with its versions (the 2025 handshake followed on the same process); the one
    // that exited on the probe was started again for the 2025 handshake: two.
    assert_eq!(counts(), (1, 1, 2));
    set.shutdown().await;
    fx.assert_no_processes().await;

    // The next start remembers each era: no probe, one process each.
    let set = ConnectionSet::start(&catalog, options());
    assert_eq!(set.wait_startup().await.ready(), 3);
    assert_eq!(counts(), (2, 2, 3));
    set.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_era_never_probes_and_a_mismatch_fails_with_the_servers_versions() {
    let mut fx = Fixture::new();
    let legacy_log = fx.home.join("legacy.launches");
    let config = counted(&mut fx, "old", legacy("old"), &legacy_log);
    fx.add("old", config.with_protocol(ProtocolChoice::V2025_11_25));
    let modern_log = fx.home.join("modern.launches");
    let config = counted(&mut fx, "new", modern("new"), &modern_log);
    // A 2026-only server pinned to the 2025 handshake cannot be spoken to.
    fx.add("new", config.with_protocol(ProtocolChoice::V2025_11_25));
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_client(|c| c.with_process_grace(Duration::from_millis(300))),
    );
    let summary = set.wait_startup().await;
    let states: Vec<(String, bool)> = summary
        .servers
        .iter()
        .map(|s| {
            (
                s.key.to_string(),
                matches!(s.state, ServerState::Ready { .. }),
            )
        })
        .collect();
    assert_eq!(
        states,
        vec![("new".to_owned(), false), ("old".to_owned(), true)]
    );
    assert_eq!(launches(&legacy_log), 1, "pinned: no probe");
    let failed = summary
        .servers
        .iter()
        .find(|s| s.key.to_string() == "new")
        .unwrap();
    let ServerState::Failed(f) = &failed.state else {
        unreachable!()
    };
    // The server refused the 2025 handshake and said which version it speaks.
    assert!(f.to_string().contains("2026-07-28"), "{f}");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_servers_of_both_eras_under_auto() {
    let new = HttpFakeServer::start(modern("new")).await.unwrap();
    let old = HttpFakeServer::start(legacy("old")).await.unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "new",
        ServerConfig::from(mcp_catalog::HttpConfig::new(new.url())),
    );
    fx.add(
        "old",
        ServerConfig::from(mcp_catalog::HttpConfig::new(old.url())),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    assert_eq!(set.wait_startup().await.ready(), 2);
    let eras: Vec<Option<String>> = set
        .status()
        .into_iter()
        .map(|s| s.protocol_version)
        .collect();
    assert_eq!(
        eras,
        vec![Some("2026-07-28".to_owned()), Some("2025-11-25".to_owned())]
    );
    for name in ["new", "old"] {
        let result = set
            .call_tool(
                &name.parse().unwrap(),
                "echo",
                Some(json!({"n": 2})),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(result.structured_content, Some(json!({"n": 2})), "{name}");
    }
    set.shutdown().await;
    new.shutdown().await;
    old.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_process_takes_the_era_from_the_persisted_catalog_cache() {
    let mut fx = Fixture::new();
    let legacy_log = fx.home.join("legacy.launches");
    // A server that exits on the probe: its process count tells a probe from none.
    let config = counted(&mut fx, "old", closing("old"), &legacy_log);
    fx.add("old", config);
    let catalog = fx.catalog();
    let dir = tempfile::tempdir().unwrap();
    let host = || {
        // A new pool and a cache read from the file: what a new process has.
        ConnectionSetOptions::new()
            .with_shared_pool(ServerPool::new())
            .with_tool_cache(mcp_connections::ToolCache::persisted(
                dir.path(),
                8,
                Duration::from_secs(3600),
            ))
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
    };
    let first = ConnectionSet::start(&catalog, host());
    assert_eq!(first.wait_startup().await.ready(), 1);
    first.shutdown().await;
    assert_eq!(launches(&legacy_log), 2, "the first start probes");
    fx.assert_no_processes().await;

    let second = ConnectionSet::start(&catalog, host());
    assert_eq!(second.wait_startup().await.ready(), 1);
    assert_eq!(
        second.status()[0].protocol_version.as_deref(),
        Some("2025-11-25")
    );
    assert_eq!(
        launches(&legacy_log),
        3,
        "the era came from the cache: no probe"
    );
    second.shutdown().await;
    fx.assert_no_processes().await;
}

/// A 2025-era server that leaves `server/discover` unanswered (neither answers nor closes).
fn silent(name: &str) -> Scenario {
    legacy(name).with_faults(faults(|f| f.ignore_discover = true))
}

/// rmcp alone waits 10 s for such a server; the set gives up on the probe after its probe
/// timeout. With a startup timeout of 5 s each attempt would fail if the probe were not
/// bounded below it: that it connects at all is the proof (no timed assertion).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_silent_on_the_probe_is_connected_within_the_probe_bound() {
    let mut fx = Fixture::new();
    let log = fx.home.join("silent.launches");
    let config = counted(&mut fx, "quiet", silent("quiet"), &log)
        .with_startup_timeout(Duration::from_secs(5));
    fx.add("quiet", config);
    let http = HttpFakeServer::start(silent("web")).await.unwrap();
    fx.add(
        "web",
        ServerConfig::from(mcp_catalog::HttpConfig::new(http.url()))
            .with_startup_timeout(Duration::from_secs(5)),
    );
    let options = ConnectionSetOptions::new().with_client(|c| {
        c.with_probe_timeout(Duration::from_millis(500))
            .with_process_grace(Duration::from_millis(300))
    });
    let set = ConnectionSet::start(&fx.catalog(), options);
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 2, "{:?}", set.status());
    for status in set.status() {
        assert_eq!(
            status.protocol_version.as_deref(),
            Some("2025-11-25"),
            "{}",
            status.key
        );
    }
    // Over stdio the unanswered probe cost one process, stopped before the second start.
    assert_eq!(launches(&log), 2);
    let result = set
        .call_tool(
            &"quiet".parse().unwrap(),
            "echo",
            Some(json!({"n": 3})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"n": 3})));
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// A 2025-era server that answers the probe with "method not found" (as the TypeScript and
/// Python SDKs' servers do) is connected on the same process: the probe costs a round
/// trip, not a second start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_the_probe_keeps_its_process() {
    let mut fx = Fixture::new();
    let log = fx.home.join("refusing.launches");
    let scenario = legacy("refusing").with_faults(faults(|f| f.refuse_discover = true));
    let config = counted(&mut fx, "refusing", scenario, &log);
    fx.add("refusing", config);
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    assert_eq!(set.wait_startup().await.ready(), 1);
    assert_eq!(
        set.status()[0].protocol_version.as_deref(),
        Some("2025-11-25")
    );
    assert_eq!(launches(&log), 1);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// Caching hints: a listing the server marks `cacheScope: "private"` is cached only when
/// the cache key (the connection fingerprint) identifies the authorization it was listed
/// under (a static token); behind a login or a host's credential provider only its era is
/// remembered. A `public` listing is cached either way, for as long as its `ttlMs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_listings_are_cached_only_under_a_key_that_names_their_authorization() {
    use std::sync::Arc;

    use mcp_connections::{StaticBearer, ToolCache};
    use mcp_key::Secret;
    use mcp_testkit::{CacheHints, HttpOptions};

    let hinted =
        |name: &str, scope: &str| modern(name).with_cache_hints(CacheHints::new(3_600_000, scope));
    let token = HttpOptions::new().with_bearer_token("t0ken");
    let fixed = HttpFakeServer::start_with(hinted("fixed", "private"), token.clone())
        .await
        .unwrap();
    let login = HttpFakeServer::start_with(hinted("login", "private"), token.clone())
        .await
        .unwrap();
    let public = HttpFakeServer::start_with(hinted("public", "public"), token)
        .await
        .unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "fixed",
        ServerConfig::from(
            mcp_catalog::HttpConfig::new(fixed.url()).with_bearer_token_env_var("FIXED_TOKEN"),
        ),
    );
    fx.add(
        "login",
        ServerConfig::from(mcp_catalog::HttpConfig::new(login.url())),
    );
    fx.add(
        "public",
        ServerConfig::from(mcp_catalog::HttpConfig::new(public.url())),
    );
    let dir = tempfile::tempdir().unwrap();
    let provider = Arc::new(StaticBearer::new(Secret::new("t0ken")));
    let options = ConnectionSetOptions::new()
        .with_env_lookup(Arc::new(|name: &str| {
            (name == "FIXED_TOKEN").then(|| "t0ken".to_owned())
        }))
        .with_auth_provider("login".parse().unwrap(), provider.clone())
        .with_auth_provider("public".parse().unwrap(), provider)
        .with_tool_cache(ToolCache::persisted(dir.path(), 8, Duration::from_secs(60)));
    let set = ConnectionSet::start(&fx.catalog(), options);
    assert_eq!(set.wait_startup().await.ready(), 3);
    set.shutdown().await;

    let file: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join(mcp_connections::TOOL_CACHE_FILE)).unwrap(),
    )
    .unwrap();
    let entries: Vec<(String, usize, bool, u64, String)> = file["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["server"].as_str().unwrap().to_owned(),
                e["tools"].as_array().unwrap().len(),
                e["era_only"].as_bool().unwrap_or(false),
                e["ttl_ms"].as_u64().unwrap(),
                e["protocol_version"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    let era = "2026-07-28".to_owned();
    assert_eq!(
        entries,
        vec![
            ("fixed".to_owned(), 1, false, 3_600_000, era.clone()),
            ("login".to_owned(), 0, true, 60_000, era.clone()),
            ("public".to_owned(), 1, false, 3_600_000, era),
        ]
    );
    fixed.shutdown().await;
    login.shutdown().await;
    public.shutdown().await;
}

/// A listing with no time to live (`ttlMs: 0, cacheScope: "private"`, what rmcp's 2026-era
/// servers send by default) keeps only its era in the persisted cache, and sets attaching
/// one after another to that connection (a gateway's per-request sets) leave the file as
/// it is: before, each attach dropped the era-only entry and wrote it back, renaming and
/// syncing the file every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sets_attaching_to_an_uncacheable_listing_do_not_rewrite_the_cache_file() {
    use std::os::unix::fs::MetadataExt;

    let mut fx = Fixture::new();
    fx.stdio("fresh", modern("fresh"));
    let catalog = fx.catalog();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(mcp_connections::TOOL_CACHE_FILE);
    let pool = ServerPool::new();
    let cache = mcp_connections::ToolCache::persisted(dir.path(), 8, Duration::from_secs(3600));
    let options = || {
        ConnectionSetOptions::new()
            .with_shared_pool(pool.clone())
            .with_tool_cache(cache.clone())
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
    };
    let first = ConnectionSet::start(&catalog, options());
    assert_eq!(first.wait_startup().await.ready(), 1);
    first.shutdown().await;
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let entry = &written["entries"][0];
    assert_eq!(
        (
            entry["era_only"].as_bool(),
            entry["tools"].as_array().map(Vec::len)
        ),
        (Some(true), Some(0)),
        "only the era is kept: {written}"
    );
    assert_eq!(entry["protocol_version"], "2026-07-28");
    let inode = std::fs::metadata(&file).unwrap().ino();
    for _ in 0..5 {
        let again = ConnectionSet::start(&catalog, options());
        assert_eq!(again.wait_startup().await.ready(), 1);
        again.shutdown().await;
    }
    assert_eq!(
        std::fs::metadata(&file).unwrap().ino(),
        inode,
        "the file was written again though nothing changed"
    );
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

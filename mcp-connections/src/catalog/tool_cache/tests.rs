//! Unit tests of the tool catalog cache (no processes: temp dirs and wall-clock ages).

use super::*;
use mcp_key::{EnvironmentId, ServerName};
use pretty_assertions::assert_eq;
use rmcp::model::ToolAnnotations;

const HOUR: Duration = Duration::from_secs(3600);

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(ServerName::new(name).unwrap())
}

fn fp(label: &str) -> Fingerprint {
    Fingerprint::builder("test").str("label", label).finish()
}

fn tool(name: &str) -> Tool {
    Tool::new(
        name.to_owned(),
        format!("{name} does things"),
        serde_json::Map::new(),
    )
    .with_annotations(ToolAnnotations::new().read_only(true))
}

/// Now, at millisecond precision (what the file keeps).
fn now_ms() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(unix_ms(SystemTime::now()))
}

fn without_annotations(tools: &[Tool]) -> Vec<Tool> {
    tools
        .iter()
        .cloned()
        .map(|mut t| {
            t.annotations = None;
            t
        })
        .collect()
}

fn file(dir: &Path) -> PathBuf {
    dir.join(TOOL_CACHE_FILE)
}

#[test]
fn round_trip_through_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let cache_dir = dir.path().join("nested").join("cache");
    let cache = ToolCache::persisted(&cache_dir, 32, DEFAULT_TOOL_CACHE_TTL);
    assert_eq!(cache.load_problem(), None);
    assert_eq!(cache.path(), Some(file(&cache_dir).as_path()));
    let at = now_ms();
    assert!(cache.insert(&key("a"), &fp("1"), vec![tool("x"), tool("y")], at, None));
    assert!(cache.insert(&key("b"), &fp("2"), vec![tool("z")], at, Some(2 * HOUR)));
    cache.persist().unwrap();

    let next = ToolCache::persisted(&cache_dir, 32, DEFAULT_TOOL_CACHE_TTL);
    assert_eq!(next.load_problem(), None);
    assert_eq!(next.entries(), cache.entries());
    let got = next.get(&key("a"), &fp("1")).unwrap();
    assert_eq!(got.tools, without_annotations(&[tool("x"), tool("y")]));
    assert_eq!(got.fetched_at, at);
    assert!(got.age() < HOUR);
    assert_eq!(next.get(&key("a"), &fp("2")), None);

    let text = fs::read_to_string(file(&cache_dir)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["format"], FORMAT);
    assert_eq!(json["version"], 1);
    assert_eq!(json["entries"][1]["ttl_ms"], 2 * 3600 * 1000);
    // The file holds a keyed digest of each fingerprint, never the fingerprint (which
    // hashes the connection's token values).
    assert_ne!(json["entries"][1]["fingerprint"], fp("2").to_hex());
    assert!(!text.contains(&fp("1").to_hex()) && !text.contains(&fp("2").to_hex()));
    // No temporary file is left behind: the cache and its key.
    let mut names: Vec<String> = fs::read_dir(&cache_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [TOOL_CACHE_FILE, TOOL_CACHE_KEY_FILE]);

    // Without its key the file's entries match nothing (and are not served).
    fs::remove_file(cache_dir.join(TOOL_CACHE_KEY_FILE)).unwrap();
    let rekeyed = ToolCache::persisted(&cache_dir, 32, DEFAULT_TOOL_CACHE_TTL);
    assert_eq!(rekeyed.get(&key("a"), &fp("1")), None);
    assert_eq!(rekeyed.entries(), []);
}

#[test]
fn a_missing_file_is_an_empty_cache_without_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    assert_eq!(cache.load_problem(), None);
    assert_eq!(cache.entries(), []);
}

#[test]
fn a_corrupt_file_is_reported_ignored_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(file(dir.path()), "{ this is not json").unwrap();
    let cache = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    let problem = cache.load_problem().unwrap();
    assert!(problem.contains("not a tool catalog cache"), "{problem}");
    assert!(problem.contains(TOOL_CACHE_FILE), "{problem}");
    assert_eq!(cache.entries(), []);

    assert!(cache.insert(&key("a"), &fp("1"), vec![tool("x")], now_ms(), None));
    cache.persist().unwrap();
    let next = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    assert_eq!(next.load_problem(), None);
    assert_eq!(next.entries().len(), 1);
}

#[test]
fn a_truncated_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    cache.insert(&key("a"), &fp("1"), vec![tool("x")], now_ms(), None);
    cache.persist().unwrap();
    let full = fs::read(file(dir.path())).unwrap();
    fs::write(file(dir.path()), &full[..full.len() / 2]).unwrap();
    let next = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    let problem = next.load_problem().unwrap();
    assert!(problem.contains("truncated"), "{problem}");
    assert_eq!(next.entries(), []);
}

#[test]
fn foreign_and_newer_files_are_reported() {
    let cases = [
        (
            r#"{"format": "someone-else/cache", "version": 1, "entries": []}"#,
            "format is `someone-else/cache`",
        ),
        (r#"{"version": 1, "entries": []}"#, "no `format`"),
        (
            r#"{"format": "mcp-connections/tool-cache", "version": 2, "entries": [{"new": true}]}"#,
            "newer version",
        ),
        (
            r#"{"format": "mcp-connections/tool-cache", "version": 0}"#,
            "unsupported file version 0",
        ),
        ("[1, 2, 3]", "not a tool catalog cache"),
        ("", "truncated"),
    ];
    for (text, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        fs::write(file(dir.path()), text).unwrap();
        let cache = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
        let problem = cache.load_problem().unwrap();
        assert!(problem.contains(expected), "{text}: {problem}");
        assert_eq!(cache.entries(), [], "{text}");
    }
}

#[test]
fn unreadable_and_expired_entries_are_dropped_on_load() {
    let dir = tempfile::tempdir().unwrap();
    // The directory's key, as a first process made it.
    let digest = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL)
        .inner
        .digest(&fp("1"));
    let two_hours_ago = unix_ms(SystemTime::now() - 2 * HOUR);
    let entry = |server: &str, ttl_ms: u64, tools: serde_json::Value| {
        serde_json::json!({
            "server": server,
            "fingerprint": digest.to_hex(),
            "fetched_at_ms": two_hours_ago,
            "ttl_ms": ttl_ms,
            "tools": tools,
        })
    };
    let good_tools = serde_json::to_value(vec![tool("x")]).unwrap();
    let text = serde_json::json!({
        "format": FORMAT,
        "version": 1,
        "entries": [
            entry("kept", 3 * 3600 * 1000, good_tools.clone()),
            entry("expired", 3600 * 1000, good_tools.clone()),
            entry("bad-tools", 3 * 3600 * 1000, serde_json::json!([{"name": 7}])),
            entry("bad key!", 3 * 3600 * 1000, good_tools.clone()),
            {"server": "no-fields"},
        ],
    });
    fs::write(file(dir.path()), text.to_string()).unwrap();
    let cache = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    assert_eq!(cache.load_problem(), None);
    let servers: Vec<String> = cache
        .entries()
        .iter()
        .map(|e| e.server.to_string())
        .collect();
    assert_eq!(servers, ["kept"]);
    let kept = cache.get(&key("kept"), &fp("1")).unwrap();
    assert!(kept.age() >= 2 * HOUR - Duration::from_secs(60));
}

#[test]
fn an_older_fetch_never_overwrites_a_newer_one() {
    let cache = ToolCache::in_memory(32, DEFAULT_TOOL_CACHE_TTL);
    let newer = SystemTime::now();
    let older = newer - Duration::from_secs(10);
    assert!(cache.insert(&key("a"), &fp("1"), vec![tool("new")], newer, None));
    assert!(!cache.insert(&key("a"), &fp("1"), vec![tool("old")], older, None));
    let got = cache.get(&key("a"), &fp("1")).unwrap();
    assert_eq!(got.tools, without_annotations(&[tool("new")]));
    assert_eq!(got.fetched_at, newer);
    // The same listing again changes nothing; another one of the same or a later start
    // replaces it.
    assert!(!cache.insert(&key("a"), &fp("1"), vec![tool("new")], newer, None));
    assert!(cache.insert(&key("a"), &fp("1"), vec![tool("same")], newer, None));
    let latest = newer + Duration::from_secs(1);
    assert!(cache.insert(&key("a"), &fp("1"), vec![tool("latest")], latest, None));
    assert_eq!(
        cache.get(&key("a"), &fp("1")).unwrap().tools,
        without_annotations(&[tool("latest")])
    );
    // Another fingerprint is another entry.
    assert!(cache.insert(&key("a"), &fp("2"), vec![tool("other")], older, None));
}

#[test]
fn invalidate_forgets_one_entry() {
    let cache = ToolCache::in_memory(32, DEFAULT_TOOL_CACHE_TTL);
    let now = SystemTime::now();
    cache.insert(&key("a"), &fp("1"), vec![tool("x")], now, None);
    cache.insert(&key("a"), &fp("2"), vec![tool("y")], now, None);
    cache.invalidate(&key("a"), &fp("1"));
    assert_eq!(cache.get(&key("a"), &fp("1")), None);
    assert!(cache.get(&key("a"), &fp("2")).is_some());
    assert_eq!(cache.entries().len(), 1);
    // After invalidation any fetch may fill it again.
    assert!(cache.insert(&key("a"), &fp("1"), vec![tool("x")], now - HOUR / 2, None));
}

#[test]
fn entries_expire_after_their_own_ttl() {
    let cache = ToolCache::in_memory(32, DEFAULT_TOOL_CACHE_TTL);
    let two_hours_ago = SystemTime::now() - 2 * HOUR;
    // The cache's TTL (30 min) is over: stored, but never returned.
    cache.insert(
        &key("default"),
        &fp("1"),
        vec![tool("x")],
        two_hours_ago,
        None,
    );
    assert_eq!(cache.get(&key("default"), &fp("1")), None);
    // A server-declared TTL of 3 h keeps it; one of 1 h does not.
    cache.insert(
        &key("long"),
        &fp("1"),
        vec![tool("x")],
        two_hours_ago,
        Some(3 * HOUR),
    );
    cache.insert(
        &key("short"),
        &fp("1"),
        vec![tool("x")],
        two_hours_ago,
        Some(HOUR),
    );
    assert!(cache.get(&key("long"), &fp("1")).is_some());
    assert_eq!(cache.get(&key("short"), &fp("1")), None);
    let servers: Vec<String> = cache
        .entries()
        .iter()
        .map(|e| e.server.to_string())
        .collect();
    assert_eq!(servers, ["long"]);
    // An expired entry does not block a fetch that started before it.
    assert!(cache.insert(
        &key("short"),
        &fp("1"),
        vec![tool("y")],
        two_hours_ago - HOUR,
        Some(10 * HOUR)
    ));
}

#[test]
fn moka_itself_expires_an_entry_after_its_declared_ttl() {
    let cache = ToolCache::in_memory(32, DEFAULT_TOOL_CACHE_TTL);
    let k = (key("a"), fp("1"));
    let ttl = Some(Duration::from_millis(20));
    cache.insert(&k.0, &k.1, vec![tool("x")], SystemTime::now(), ttl);
    // Ten times the TTL: moka's per-entry expiry (not only our own check) hides it.
    std::thread::sleep(Duration::from_millis(200));
    assert!(cache.inner.entries.get(&k).is_none());
    assert_eq!(cache.get(&k.0, &k.1), None);
}

#[test]
fn get_clears_annotations_and_entries_keep_them() {
    let cache = ToolCache::in_memory(32, DEFAULT_TOOL_CACHE_TTL);
    cache.insert(
        &key("a"),
        &fp("1"),
        vec![tool("x")],
        SystemTime::now(),
        None,
    );
    let got = cache.get(&key("a"), &fp("1")).unwrap();
    assert_eq!(got.tools[0].annotations, None);
    assert_eq!(got.tools[0].description.as_deref(), Some("x does things"));
    assert!(cache.entries()[0].tools[0].annotations.is_some());
}

#[test]
fn a_full_cache_of_default_capacity_keeps_every_entry() {
    let cache = ToolCache::in_memory(DEFAULT_TOOL_CACHE_CAPACITY, DEFAULT_TOOL_CACHE_TTL);
    let now = SystemTime::now();
    for i in 0..32 {
        assert!(cache.insert(&key(&format!("s{i}")), &fp("1"), vec![tool("x")], now, None));
    }
    for i in 0..32 {
        assert!(
            cache.get(&key(&format!("s{i}")), &fp("1")).is_some(),
            "s{i}"
        );
    }
    assert_eq!(cache.entries().len(), 32);
}

#[test]
fn entries_are_sorted_by_server_then_fingerprint() {
    let cache = ToolCache::in_memory(32, DEFAULT_TOOL_CACHE_TTL);
    let devbox = EnvironmentId::new("devbox").unwrap();
    let scoped = McpServerKey::in_environment(devbox, ServerName::new("a").unwrap());
    let now = SystemTime::now();
    let (f1, f2) = (fp("1"), fp("2"));
    let mut inserted = vec![
        (key("b"), f2),
        (key("b"), f1),
        (scoped.clone(), f1),
        (key("a"), f2),
        (key("a"), f1),
    ];
    for (server, fingerprint) in &inserted {
        cache.insert(server, fingerprint, vec![tool("x")], now, None);
    }
    inserted.sort();
    let listed: Vec<(McpServerKey, Fingerprint)> = cache
        .entries()
        .into_iter()
        .map(|e| (e.server, e.fingerprint))
        .collect();
    assert_eq!(listed, inserted);
}

#[test]
fn persist_writes_only_what_changed_since_the_last_write() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    // The first write happens even with nothing in it.
    cache.persist().unwrap();
    assert!(file(dir.path()).is_file());
    let now = now_ms();
    assert!(cache.insert(&key("a"), &fp("1"), vec![tool("t")], now, None));
    cache.persist().unwrap();
    fs::remove_file(file(dir.path())).unwrap();
    // Nothing changed since: no write. The same listing inserted again is no change.
    assert!(!cache.insert(&key("a"), &fp("1"), vec![tool("t")], now, None));
    cache.remember_protocol(&key("a"), &fp("1"), "2025-11-25");
    cache.remember_protocol(&key("a"), &fp("1"), "2025-11-25");
    cache.persist().unwrap();
    assert!(file(dir.path()).is_file(), "a new era is a change");
    fs::remove_file(file(dir.path())).unwrap();
    cache.remember_protocol(&key("a"), &fp("1"), "2025-11-25");
    cache.persist().unwrap();
    assert!(!file(dir.path()).exists(), "the same era again is none");
    cache.invalidate(&key("a"), &fp("1"));
    cache.persist().unwrap();
    assert!(file(dir.path()).is_file(), "a forgotten entry is a change");
}

#[test]
fn two_caches_persisting_to_one_directory_never_tear_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let one = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    let two = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    let now = now_ms();
    let many: Vec<Tool> = (0..200).map(|i| tool(&format!("t{i}"))).collect();
    one.insert(&key("one"), &fp("1"), many.clone(), now, None);
    two.insert(&key("two"), &fp("2"), many, now, None);
    std::thread::scope(|s| {
        for cache in [&one, &two] {
            s.spawn(move || {
                for _ in 0..20 {
                    cache.persist().unwrap();
                }
            });
        }
    });
    let read = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    assert_eq!(read.load_problem(), None);
    let entries = read.entries();
    assert!(entries == one.entries() || entries == two.entries());
    assert!(!entries.is_empty(), "both caches hash with the one key");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn an_in_memory_cache_has_no_file() {
    let cache = ToolCache::in_memory(32, DEFAULT_TOOL_CACHE_TTL);
    assert_eq!(cache.path(), None);
    assert_eq!(cache.load_problem(), None);
    cache.persist().unwrap();
    let clone = cache.clone();
    clone.insert(
        &key("a"),
        &fp("1"),
        vec![tool("x")],
        SystemTime::now(),
        None,
    );
    assert_eq!(cache.entries().len(), 1);
    assert!(format!("{cache:?}").starts_with("ToolCache {"));
}

#[test]
fn an_era_is_remembered_without_a_cached_listing_and_serves_no_tools() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    // A listing declared stale at once (`ttlMs: 0`) is not kept; its era is.
    cache.insert(
        &key("a"),
        &fp("1"),
        vec![tool("x")],
        SystemTime::now(),
        Some(Duration::ZERO),
    );
    cache.remember_protocol(&key("a"), &fp("1"), "2026-07-28");
    assert_eq!(
        cache.protocol(&key("a"), &fp("1")).as_deref(),
        Some("2026-07-28")
    );
    assert_eq!(cache.get(&key("a"), &fp("1")), None);
    assert_eq!(cache.entries(), Vec::new());

    cache.persist().unwrap();
    let next = ToolCache::persisted(dir.path(), 32, DEFAULT_TOOL_CACHE_TTL);
    assert_eq!(next.load_problem(), None);
    assert_eq!(
        next.protocol(&key("a"), &fp("1")).as_deref(),
        Some("2026-07-28")
    );
    assert_eq!(next.get(&key("a"), &fp("1")), None);

    // A listing cached later takes the place of the era-only entry, whenever its fetch
    // began, and keeps the era.
    let earlier = SystemTime::now() - Duration::from_secs(5);
    assert!(next.insert(&key("a"), &fp("1"), vec![tool("y")], earlier, None));
    assert_eq!(next.get(&key("a"), &fp("1")).unwrap().tools[0].name, "y");
    assert_eq!(
        next.protocol(&key("a"), &fp("1")).as_deref(),
        Some("2026-07-28")
    );
}

#[cfg(unix)]
#[test]
fn the_persisted_file_and_a_new_folder_are_the_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache_dir = dir.path().join("data/cache");
    let cache = ToolCache::persisted(&cache_dir, 32, DEFAULT_TOOL_CACHE_TTL);
    cache.insert(&key("a"), &fp("1"), vec![tool("t")], now_ms(), None);
    cache.persist().unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file(&cache_dir)), 0o600);
    assert_eq!(mode(&cache_dir), 0o700);
    assert_eq!(mode(&dir.path().join("data")), 0o700);
}

//! Settings by scope: every setting a connection is opened with is part of the key the
//! pool shares it by, so a connection set never uses a connection opened (and refreshed)
//! with another set's settings. Two sets on one pool, against the fake server binary.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{Fixture, wait_event};
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, ServerPool,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, Scenario, ToolSpec};
use serde_json::json;
use tokio::sync::mpsc;

fn key(name: &str) -> McpServerKey {
    name.parse().unwrap()
}

fn opts(pool: &ServerPool) -> ConnectionSetOptions {
    ConnectionSetOptions::new()
        .with_shared_pool(pool.clone())
        .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
}

/// The raw names of `set`'s tools.
async fn names(set: &ConnectionSet) -> Vec<String> {
    set.tools()
        .await
        .into_iter()
        .map(|t| t.tool.name.to_string())
        .collect()
}

/// The process ids of `sets`' servers.
fn pids(sets: &[&ConnectionSet]) -> BTreeSet<u32> {
    sets.iter()
        .flat_map(|set| set.status())
        .filter_map(|s| s.pid)
        .collect()
}

/// Shuts the sets and the pool down and checks that none of `pids` is left.
async fn shut_down(sets: Vec<ConnectionSet>, pool: ServerPool, pids: BTreeSet<u32>) {
    for set in sets {
        set.shutdown().await;
    }
    pool.shutdown().await;
    for pid in pids {
        assert!(
            mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await,
            "server process {pid} outlived its sets"
        );
        mcp_testkit::assert_no_process_group(pid);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sets_that_open_a_connection_differently_do_not_share_it() {
    let mut fx = Fixture::new();
    fx.stdio("s", Scenario::new("s").with_tool(ToolSpec::echo("echo")));
    let catalog = fx.catalog();
    let pool = ServerPool::new();

    // The same settings: one connection.
    let a = ConnectionSet::start(&catalog, opts(&pool));
    let same = ConnectionSet::start(&catalog, opts(&pool));
    assert_eq!(a.wait_startup().await.ready(), 1);
    assert_eq!(same.wait_startup().await.ready(), 1);
    assert_eq!(pool.stats().starts, 1);

    // Each connection setting the set passes on, changed alone: a connection of its own.
    let changed = [
        opts(&pool).with_client(|c| c.with_probe_timeout(Duration::from_millis(1500))),
        opts(&pool).with_client(|c| c.with_list_byte_budget(1024 * 1024)),
        opts(&pool).with_client(|c| c.with_list_changed_debounce(Duration::from_millis(5))),
        opts(&pool).with_client(|c| c.with_listen_stall(Duration::from_secs(90))),
        opts(&pool).with_client(|c| c.with_process_grace(Duration::from_millis(400))),
    ];
    let mut others = Vec::new();
    for (i, options) in changed.into_iter().enumerate() {
        let set = ConnectionSet::start(&catalog, options);
        assert_eq!(set.wait_startup().await.ready(), 1);
        assert_eq!(pool.stats().starts, 2 + i as u64, "setting {i}");
        others.push(set);
    }
    let mut sets = vec![a, same];
    sets.extend(others);
    let all = pids(&sets.iter().collect::<Vec<_>>());
    assert_eq!(all.len(), 6);
    shut_down(sets, pool, all).await;
}

/// A tool whose input schema holds `elements` array elements (about 2 bytes each).
fn fat_tool(name: &str, elements: usize) -> ToolSpec {
    ToolSpec::echo(name).with_input_schema(json!({
        "type": "object",
        "properties": {"x": {"enum": vec![0; elements]}},
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_set_refreshes_tools_within_its_own_byte_budget() {
    let mut fx = Fixture::new();
    // `grow` adds a tool of ~40 KB: within the default budget, over a 16 KiB one.
    fx.stdio(
        "dyn",
        Scenario::new("d").with_tool(ToolSpec::new(
            "grow",
            Behavior::ChangeTools {
                add: vec![fat_tool("fat", 20_000)],
                remove: vec![],
            },
        )),
    );
    let catalog = fx.catalog();
    let pool = ServerPool::new();
    let (tx_roomy, mut rx_roomy) = mpsc::unbounded_channel();
    let roomy = ConnectionSet::start(&catalog, opts(&pool).with_events(tx_roomy));
    assert_eq!(roomy.wait_startup().await.ready(), 1);
    // Started second, on the same pool, with a small budget.
    let tight = ConnectionSet::start(
        &catalog,
        opts(&pool).with_client(|c| c.with_list_byte_budget(16 * 1024)),
    );
    assert_eq!(tight.wait_startup().await.ready(), 1);
    assert_eq!(pool.stats().starts, 2, "a connection per budget");

    // The tight set's server grows past its budget: its refresh fails, its tools stay.
    let log = fx.request_log("dyn");
    let lists = || {
        mcp_testkit::RecordedRequest::read_log(&log)
            .iter()
            .filter(|r| r.method == "tools/list")
            .count()
    };
    tight
        .call_tool(&key("dyn"), "grow", None, CallOptions::new())
        .await
        .unwrap();
    // Two first listings and the tight connection's refresh.
    tokio::time::timeout(Duration::from_secs(10), async {
        while lists() < 3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the tight connection lists its tools again");
    assert_eq!(names(&tight).await, ["grow"]);

    // The roomy set's server grows too, and its refresh fits its budget.
    roomy
        .call_tool(&key("dyn"), "grow", None, CallOptions::new())
        .await
        .unwrap();
    wait_event(
        &mut rx_roomy,
        Duration::from_secs(10),
        |e| matches!(e, ConnectionEvent::ToolsChanged { server, .. } if server == &key("dyn")),
    )
    .await;
    assert_eq!(names(&roomy).await, ["fat", "grow"]);
    assert_eq!(names(&tight).await, ["grow"]);

    let all = pids(&[&roomy, &tight]);
    assert_eq!(all.len(), 2);
    shut_down(vec![roomy, tight], pool, all).await;
}

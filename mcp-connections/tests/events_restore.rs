//! Event feeds the set keeps (SEP-3415), against real `mcp-fake-server` processes: a feed
//! goes on by itself over a server killed and restarted, from its last cursor, with
//! nothing lost and nothing twice, by push and by poll; a gap the restarted server
//! reports reaches the host as `Truncated`, and a restarted server that refuses the
//! cursor ends the feed; a host that restarts itself resumes from the cursor its store
//! kept; sets sharing one connection each get their own feed, and one set's dropped feed
//! or shutdown ends none of the other's. No process is left.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use mcp_connections::{
    CallOptions, ConnectionSet, ConnectionSetOptions, CursorStore, DeliveryMode, EventFeed,
    EventFeedError, EventFeedOptions, FileCursorStore, ServerPool, StreamItem,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, EventTypeSpec, EventsSpec, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(50);

/// The inbox server, its event history kept in `history` across restarts.
fn scenario(history: &Path) -> Scenario {
    Scenario::new("inbox")
        .with_events(
            EventsSpec::new()
                .with_type(EventTypeSpec::new("mail"))
                .with_heartbeat_ms(100)
                .with_next_poll_ms(50)
                .with_history_file(history),
        )
        .with_tool(ToolSpec::new(
            "send",
            Behavior::EmitEvent {
                name: "mail".into(),
                data: json!({"folder": "inbox"}),
            },
        ))
}

fn inbox() -> McpServerKey {
    "inbox".parse().unwrap()
}

fn opts() -> ConnectionSetOptions {
    ConnectionSetOptions::new().with_client(|c| c.with_process_grace(Duration::from_millis(300)))
}

/// A fixture with the inbox server, and the path of its history file.
fn fixture() -> (Fixture, std::path::PathBuf) {
    let mut fx = Fixture::new();
    let history = fx.home.join("inbox-history.jsonl");
    fx.stdio("inbox", scenario(&history));
    (fx, history)
}

async fn started(fx: &Fixture, options: ConnectionSetOptions) -> ConnectionSet {
    let set = ConnectionSet::start(&fx.catalog(), options);
    assert_eq!(set.wait_startup().await.ready(), 1);
    set
}

async fn send(set: &ConnectionSet, n: u64) {
    set.call_tool(
        &inbox(),
        "send",
        Some(json!({ "n": n })),
        CallOptions::new(),
    )
    .await
    .unwrap();
}

async fn subscribe(set: &ConnectionSet, options: EventFeedOptions) -> EventFeed {
    set.subscribe_events(&inbox(), "mail", serde_json::Map::new(), options)
        .await
        .unwrap()
}

fn mode_options(mode: DeliveryMode) -> EventFeedOptions {
    EventFeedOptions::new()
        .with_mode(mode)
        .with_min_poll_interval(POLL)
        .with_stall(Duration::from_secs(2))
}

/// The feed's items until `count` events came: the events' data, and every item's kind
/// in order (`event`, `lost`, `restored`, `truncated`, ...).
async fn events(feed: &mut EventFeed, count: usize) -> (Vec<Value>, Vec<&'static str>) {
    let mut events = Vec::new();
    let mut kinds = Vec::new();
    tokio::time::timeout(WAIT, async {
        while events.len() < count {
            let item = feed.next().await.expect("the feed goes on");
            kinds.push(match &item {
                StreamItem::Event(_) => "event",
                StreamItem::Lost { .. } => "lost",
                StreamItem::Restored => "restored",
                StreamItem::Truncated { .. } => "truncated",
                StreamItem::Ended(e) => panic!("the feed ended: {e}"),
                _ => "other",
            });
            if let StreamItem::Event(event) = item {
                events.push(event.data);
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{count} events never came; got {events:?} and {kinds:?}"));
    (events, kinds)
}

/// The data of mails `ns`, as the fake server emits them.
fn mails(ns: impl IntoIterator<Item = u64>) -> Vec<Value> {
    ns.into_iter()
        .map(|n| json!({"folder": "inbox", "n": n}))
        .collect()
}

/// Kills the server process and waits until the set started another one, without any
/// call: the feed brings it back. Returns the killed pid.
async fn kill_and_wait_for_restart(fx: &Fixture) -> u32 {
    let killed = fx.pids()[0];
    mcp_testkit::kill_process(killed);
    assert!(
        mcp_testkit::wait_gone(killed, WAIT).await,
        "the killed server is gone"
    );
    tokio::time::timeout(WAIT, async {
        while fx.pids().first() == Some(&killed) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the feed starts the server again");
    killed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_goes_on_over_a_killed_and_restarted_server_with_nothing_lost_or_twice() {
    for mode in [DeliveryMode::Push, DeliveryMode::Poll] {
        let (fx, _) = fixture();
        let set = started(&fx, opts()).await;
        let mut feed = subscribe(&set, mode_options(mode)).await;
        assert_eq!(feed.mode(), mode);
        send(&set, 1).await;
        send(&set, 2).await;
        let (before, _) = events(&mut feed, 2).await;
        assert_eq!(before, mails(1..=2), "{mode}");
        // The set lists the subscription it keeps.
        let kept = set.event_feeds();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            (&kept[0].server, kept[0].event_type.as_str(), kept[0].mode),
            (&inbox(), "mail", mode)
        );
        assert_eq!(kept[0].filter, serde_json::Map::new());
        assert_eq!(
            (kept[0].cursor.as_deref(), kept[0].connected),
            (Some("pos-2"), true)
        );

        let killed = kill_and_wait_for_restart(&fx).await;
        send(&set, 3).await;
        send(&set, 4).await;
        let (after, kinds) = events(&mut feed, 2).await;
        assert_eq!(after, mails(3..=4), "{mode}: nothing lost, nothing twice");
        // The outage is told once, then its end, before the events after it.
        let outage: Vec<&str> = kinds.iter().copied().filter(|k| *k != "event").collect();
        assert_eq!(outage, vec!["lost", "restored"], "{mode}: {kinds:?}");
        assert_eq!(kinds.last(), Some(&"event"), "{mode}");
        send(&set, 5).await;
        let (next, kinds) = events(&mut feed, 1).await;
        assert_eq!((next, kinds), (mails([5]), vec!["event"]), "{mode}");
        assert_eq!(feed.dropped(), 0);
        assert_eq!(feed.cursor(), Some("pos-5"), "{mode}");
        let kept = set.event_feeds();
        assert_eq!(
            (kept[0].cursor.as_deref(), kept[0].connected),
            (Some("pos-5"), true)
        );

        // A dropped feed leaves the list.
        drop(feed);
        wait_until(|| set.event_feeds().is_empty()).await;
        set.shutdown().await;
        assert!(mcp_testkit::wait_gone(killed, WAIT).await);
        fx.assert_no_processes().await;
    }
}

/// Waits until `done` holds.
async fn wait_until(done: impl Fn() -> bool) {
    tokio::time::timeout(WAIT, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the condition came true");
}

/// One line of the fake server's history file: mail `n` as event number `n`.
fn history_line(n: u64) -> String {
    json!({
        "seq": n,
        "name": "mail",
        "occurrence": {
            "eventId": format!("evt-{n}"),
            "name": "mail",
            "timestamp": "2026-12-06T00:00:00.000Z",
            "data": {"folder": "inbox", "n": n},
        },
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gap_the_restarted_server_reports_reaches_the_host_as_truncated() {
    for mode in [DeliveryMode::Push, DeliveryMode::Poll] {
        let (fx, history) = fixture();
        let set = started(&fx, opts()).await;
        let mut feed = subscribe(&set, mode_options(mode)).await;
        send(&set, 1).await;
        send(&set, 2).await;
        let (before, _) = events(&mut feed, 2).await;
        assert_eq!(before, mails(1..=2));
        // While it is down the server emits mails 3 to 5 and forgets mail 3: its history
        // starts at mail 4 when it comes back.
        std::fs::write(
            &history,
            format!("{}\n{}\n", history_line(4), history_line(5)),
        )
        .unwrap();
        kill_and_wait_for_restart(&fx).await;
        let (after, kinds) = events(&mut feed, 2).await;
        assert_eq!(after, mails(4..=5), "{mode}");
        assert_eq!(
            kinds,
            vec!["lost", "restored", "truncated", "event", "event"],
            "{mode}"
        );
        drop(feed);
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_host_resumes_from_the_cursor_its_store_kept() {
    let (fx, _) = fixture();
    let kept = fx.home.join("mail.cursor");
    let store = || FileCursorStore::new(&kept);
    assert_eq!(store().load().unwrap(), None, "nothing kept yet");

    // The first host takes mails 1 and 2, not 3, and stops.
    let host = started(&fx, opts()).await;
    let mut feed = subscribe(&host, EventFeedOptions::new().persist_cursor(store())).await;
    for n in 1..=3 {
        send(&host, n).await;
    }
    let (taken, _) = events(&mut feed, 2).await;
    assert_eq!(taken, mails(1..=2));
    // Mail 1 was dealt with when mail 2 was asked for; mail 2 when the feed ends.
    assert_eq!(store().load().unwrap().as_deref(), Some("pos-1"));
    feed.shutdown().await;
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "pos-2");
    host.shutdown().await;
    fx.assert_no_processes().await;

    // The restarted host gets exactly what came after: mail 3, then new mails.
    let host = started(&fx, opts()).await;
    let mut feed = subscribe(&host, EventFeedOptions::new().persist_cursor(store())).await;
    let (missed, _) = events(&mut feed, 1).await;
    assert_eq!(missed, mails([3]));
    send(&host, 4).await;
    let (next, kinds) = events(&mut feed, 1).await;
    assert_eq!((next, kinds), (mails([4]), vec!["event"]));
    assert_eq!(store().load().unwrap().as_deref(), Some("pos-3"));
    // A cursor given outright wins over the one kept.
    let mut from_one = subscribe(
        &host,
        EventFeedOptions::new()
            .resume_from("pos-1")
            .persist_cursor(store()),
    )
    .await;
    let (again, _) = events(&mut from_one, 3).await;
    assert_eq!(again, mails(2..=4));
    drop((feed, from_one));
    // No temporary file is left beside the store.
    let names: Vec<String> = std::fs::read_dir(fx.home.join(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("mail.cursor"))
        .collect();
    assert_eq!(names, vec!["mail.cursor".to_owned()]);

    // A store that cannot be read is an error naming the server and the event type.
    let unreadable = FileCursorStore::new(fx.home.join(""));
    let err = host
        .subscribe_events(
            &inbox(),
            "mail",
            serde_json::Map::new(),
            EventFeedOptions::new().persist_cursor(unreadable),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, EventFeedError::CursorStore { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "could not read the kept cursor of event type `mail` of server `inbox`; fix the cursor store (or remove its file to start from now)"
    );
    host.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sets_sharing_a_connection_each_get_their_own_feed() {
    let (fx, _) = fixture();
    let pool = ServerPool::new();
    let shared = || opts().with_shared_pool(pool.clone());
    let a = started(&fx, shared()).await;
    let b = started(&fx, shared()).await;
    assert_eq!(fx.pids().len(), 1);
    let first_pid = fx.pids()[0];

    let mut a_pushed = subscribe(&a, mode_options(DeliveryMode::Push)).await;
    let mut a_polled = subscribe(&a, mode_options(DeliveryMode::Poll)).await;
    let mut b_pushed = subscribe(&b, mode_options(DeliveryMode::Push)).await;
    send(&a, 1).await;
    send(&b, 2).await;
    for feed in [&mut a_pushed, &mut a_polled, &mut b_pushed] {
        let (got, kinds) = events(feed, 2).await;
        assert_eq!((got, kinds), (mails(1..=2), vec!["event", "event"]));
    }

    // Each set lists its own feeds only.
    let modes = |set: &ConnectionSet| -> Vec<DeliveryMode> {
        set.event_feeds().iter().map(|f| f.mode).collect()
    };
    assert_eq!(modes(&a), vec![DeliveryMode::Push, DeliveryMode::Poll]);
    assert_eq!(modes(&b), vec![DeliveryMode::Push]);

    // A's push feed dropped: B's goes on.
    drop(a_pushed);
    wait_until(|| modes(&a) == vec![DeliveryMode::Poll]).await;
    assert_eq!(modes(&b), vec![DeliveryMode::Push]);
    send(&b, 3).await;
    let (got, _) = events(&mut b_pushed, 1).await;
    assert_eq!(got, mails([3]));
    // A shut down: B's feed goes on, on the same connection.
    a.shutdown().await;
    let end = tokio::time::timeout(WAIT, a_polled.next())
        .await
        .expect("A's feed ends with A");
    assert!(matches!(end, None | Some(StreamItem::Ended(_))), "{end:?}");
    send(&b, 4).await;
    let (got, kinds) = events(&mut b_pushed, 1).await;
    assert_eq!((got, kinds), (mails([4]), vec!["event"]));
    assert_eq!(fx.pids(), vec![first_pid], "the same server process");

    drop(b_pushed);
    b.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_ends_when_the_restarted_server_refuses_its_cursor() {
    let (fx, history) = fixture();
    let set = started(&fx, opts()).await;
    let mut feed = subscribe(&set, mode_options(DeliveryMode::Push)).await;
    send(&set, 1).await;
    let (before, _) = events(&mut feed, 1).await;
    assert_eq!(before, mails([1]));
    // The server comes back with no history: it never gave the feed's cursor.
    std::fs::write(&history, "").unwrap();
    kill_and_wait_for_restart(&fx).await;
    let (lost, end) = tokio::time::timeout(WAIT, async { (feed.next().await, feed.next().await) })
        .await
        .expect("the feed ends");
    assert!(matches!(lost, Some(StreamItem::Lost { .. })), "{lost:?}");
    let Some(StreamItem::Ended(e)) = end else {
        panic!("{end:?}")
    };
    assert!(
        matches!(e, mcp_connections::EventError::Refused { .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("server `inbox`"), "{e}");
    assert!(feed.next().await.is_none());
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[test]
fn stores_into_one_cursor_file_at_once_never_leave_a_part_of_a_cursor() {
    // Two stores of one file (a host that gave two feeds one file, or a second host
    // process) store at once while a third reads: every store succeeds and every read is
    // one whole cursor, never bytes of both.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mail.cursor");
    let (short, long) = ("a", "bbbbbbbbbbbbbbbb");
    std::thread::scope(|s| {
        for cursor in [short, long] {
            let store = FileCursorStore::new(&path);
            s.spawn(move || {
                for _ in 0..300 {
                    store.store(cursor).unwrap();
                }
            });
        }
        let reader = FileCursorStore::new(&path);
        s.spawn(move || {
            for _ in 0..300 {
                if let Some(read) = reader.load().unwrap() {
                    assert!(read == short || read == long, "a torn cursor: {read:?}");
                }
            }
        });
    });
    let last = FileCursorStore::new(&path).load().unwrap().unwrap();
    assert!(last == short || last == long, "{last:?}");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["mail.cursor".to_owned()],
        "no temporary file left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_cursor_the_server_never_gave_is_refused_naming_the_server() {
    // The store's file was swapped for one the server never gave a cursor in.
    let (fx, _) = fixture();
    let kept = fx.home.join("mail.cursor");
    std::fs::write(&kept, "not-a-cursor\n").unwrap();
    let host = started(&fx, opts()).await;
    let err = host
        .subscribe_events(
            &inbox(),
            "mail",
            serde_json::Map::new(),
            EventFeedOptions::new().persist_cursor(FileCursorStore::new(&kept)),
        )
        .await
        .unwrap_err();
    let EventFeedError::Event(e) = &err else {
        panic!("{err:?}")
    };
    assert!(
        matches!(e, mcp_connections::EventError::Refused { .. }),
        "{e:?}"
    );
    assert!(err.to_string().contains("server `inbox`"), "{err}");
    // Nothing was subscribed and the store is left as it was for the host to fix.
    assert!(host.event_feeds().is_empty());
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "not-a-cursor\n");
    host.shutdown().await;
    fx.assert_no_processes().await;
}

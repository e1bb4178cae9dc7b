//! Unit tests of the session gate.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pretty_assertions::assert_eq;

use super::*;

/// Polls once; `Some` if it completed.
fn poll_once<F: Future>(fut: Pin<&mut F>) -> Option<F::Output> {
    match fut.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => Some(out),
        Poll::Pending => None,
    }
}

fn route_target(gate: &SessionGate<&'static str>) -> Result<&'static str, DeclineReason> {
    match gate.route() {
        Route::Deliver { handler, .. } => Ok(handler),
        Route::Decline(reason) => Err(reason),
    }
}

#[test]
fn operations_of_one_session_run_concurrently() {
    let gate = SessionGate::new();
    let a = gate.open_session("a");
    let one = poll_once(pin!(a.begin())).unwrap();
    let two = poll_once(pin!(a.begin())).unwrap();
    assert_eq!(gate.active_session(), Some(a.id()));
    drop(one);
    assert_eq!(route_target(&gate), Ok("a"));
    drop(two);
    assert_eq!(gate.active_session(), None);
    // The only session: nobody else can have caused a request.
    assert_eq!(route_target(&gate), Ok("a"));
    let _b = gate.open_session("b");
    assert_eq!(route_target(&gate), Err(DeclineReason::NoActiveOperation));
}

#[test]
fn sessions_take_turns_in_arrival_order() {
    let gate = SessionGate::new();
    let (a, b, c) = (
        gate.open_session("a"),
        gate.open_session("b"),
        gate.open_session("c"),
    );
    let a1 = poll_once(pin!(a.begin())).unwrap();
    let mut b1 = pin!(b.begin());
    let mut c1 = pin!(c.begin());
    let mut a2 = pin!(a.begin()); // a is active, but others wait: no jumping ahead
    assert!(poll_once(b1.as_mut()).is_none());
    assert!(poll_once(c1.as_mut()).is_none());
    assert!(poll_once(a2.as_mut()).is_none());
    assert_eq!(gate.queued(), 3);
    assert_eq!(route_target(&gate), Ok("a"));

    drop(a1);
    let b1 = poll_once(b1).unwrap();
    assert!(poll_once(c1.as_mut()).is_none());
    assert_eq!(route_target(&gate), Ok("b"));
    drop(b1);
    let c1 = poll_once(c1).unwrap();
    assert!(poll_once(a2.as_mut()).is_none());
    assert_eq!(route_target(&gate), Ok("c"));
    drop(c1);
    let a2 = poll_once(a2).unwrap();
    assert_eq!(route_target(&gate), Ok("a"));
    drop(a2);
    assert_eq!((gate.queued(), gate.active_session()), (0, None));
}

#[test]
fn a_turn_covers_the_queued_operations_of_the_same_session_in_a_row() {
    let gate = SessionGate::new();
    let (a, b, c) = (
        gate.open_session("a"),
        gate.open_session("b"),
        gate.open_session("c"),
    );
    let a1 = poll_once(pin!(a.begin())).unwrap();
    let mut b1 = pin!(b.begin());
    let mut b2 = pin!(b.begin());
    let mut c1 = pin!(c.begin());
    let mut b3 = pin!(b.begin());
    for fut in [b1.as_mut(), b2.as_mut()] {
        assert!(poll_once(fut).is_none());
    }
    assert!(poll_once(c1.as_mut()).is_none());
    assert!(poll_once(b3.as_mut()).is_none());
    drop(a1);
    let b1 = poll_once(b1).unwrap();
    let b2 = poll_once(b2).unwrap();
    assert!(poll_once(b3.as_mut()).is_none(), "b3 arrived after c1");
    assert!(poll_once(c1.as_mut()).is_none());
    drop((b1, b2));
    let c1 = poll_once(c1).unwrap();
    drop(c1);
    assert!(poll_once(b3).is_some());
}

#[test]
fn dropping_a_queued_operation_leaves_the_queue() {
    let gate = SessionGate::new();
    let (a, b) = (gate.open_session("a"), gate.open_session("b"));
    let a1 = poll_once(pin!(a.begin())).unwrap();
    {
        let mut b1 = pin!(b.begin());
        assert!(poll_once(b1.as_mut()).is_none());
        assert_eq!(gate.queued(), 1);
    }
    assert_eq!(gate.queued(), 0);
    drop(a1);
    assert_eq!(gate.active_session(), None);
}

#[test]
fn dropping_the_head_lets_the_active_session_continue() {
    let gate = SessionGate::new();
    let (a, b) = (gate.open_session("a"), gate.open_session("b"));
    let a1 = poll_once(pin!(a.begin())).unwrap();
    let mut a2 = pin!(a.begin());
    {
        let mut b1 = pin!(b.begin());
        assert!(poll_once(b1.as_mut()).is_none());
        assert!(poll_once(a2.as_mut()).is_none());
    }
    // b1 is gone: a2 is now first in line and a is active, so it runs.
    let a2 = poll_once(a2).unwrap();
    drop((a1, a2));
    assert_eq!((gate.queued(), gate.active_session()), (0, None));
}

#[test]
fn dropping_a_granted_but_unobserved_operation_gives_the_turn_back() {
    let gate = SessionGate::new();
    let (a, b, c) = (
        gate.open_session("a"),
        gate.open_session("b"),
        gate.open_session("c"),
    );
    let a1 = poll_once(pin!(a.begin())).unwrap();
    let mut c1 = pin!(c.begin());
    {
        let mut b1 = pin!(b.begin());
        assert!(poll_once(b1.as_mut()).is_none());
        assert!(poll_once(c1.as_mut()).is_none());
        drop(a1); // grants b1, which is never polled again
        assert_eq!(gate.active_session(), Some(b.id()));
    }
    assert_eq!(gate.active_session(), Some(c.id()));
    assert!(poll_once(c1).is_some());
}

#[test]
fn server_requests_go_only_to_the_active_session() {
    let gate = SessionGate::new();
    let (a, b) = (gate.open_session("a"), gate.open_session("b"));
    assert_eq!(route_target(&gate), Err(DeclineReason::NoActiveOperation));
    let b1 = poll_once(pin!(b.begin())).unwrap();
    let mut a1 = pin!(a.begin());
    assert!(poll_once(a1.as_mut()).is_none());
    // a is waiting, b is running: never a.
    assert_eq!(route_target(&gate), Ok("b"));
    drop(b);
    // b's session closed while its operation runs: fail closed, not "a".
    assert_eq!(route_target(&gate), Err(DeclineReason::SessionClosed));
    drop(b1);
    let _a1 = poll_once(a1).unwrap();
    assert_eq!(route_target(&gate), Ok("a"));
    assert_eq!(gate.sessions(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_two_sessions_at_once_under_contention() {
    let gate: SessionGate<usize> = SessionGate::new();
    // Which session is inside (usize::MAX = none) and how many of its operations.
    let inside = Arc::new((AtomicUsize::new(usize::MAX), AtomicUsize::new(0)));
    let violations = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for s in 0..16 {
        let session = Arc::new(gate.open_session(s));
        for _ in 0..4 {
            let (session, inside, violations, gate) = (
                session.clone(),
                inside.clone(),
                violations.clone(),
                gate.clone(),
            );
            tasks.spawn(async move {
                for round in 0..50 {
                    let op = session.begin().await;
                    let (who, count) = (&inside.0, &inside.1);
                    let prev = who.swap(s, Ordering::SeqCst);
                    if prev != usize::MAX && prev != s {
                        violations.fetch_add(1, Ordering::SeqCst);
                    }
                    count.fetch_add(1, Ordering::SeqCst);
                    if !matches!(gate.route(), Route::Deliver { handler, .. } if handler == s) {
                        violations.fetch_add(1, Ordering::SeqCst);
                    }
                    if round % 3 == 0 {
                        tokio::task::yield_now().await;
                    }
                    if count.fetch_sub(1, Ordering::SeqCst) == 1 {
                        let _ =
                            who.compare_exchange(s, usize::MAX, Ordering::SeqCst, Ordering::SeqCst);
                    }
                    drop(op);
                }
            });
        }
    }
    // Also cancel some waiters mid-queue.
    let extra = gate.open_session(99);
    for _ in 0..50 {
        let _ = tokio::time::timeout(std::time::Duration::from_micros(50), extra.begin()).await;
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    assert_eq!(violations.load(Ordering::SeqCst), 0);
    assert_eq!((gate.queued(), gate.active_session()), (0, None));
}

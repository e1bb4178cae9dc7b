//! What stays on the screen while mcpctl waits for a person: progress (startup spinners,
//! a call's bar) registers here while it is live, and anything that asks (an elicitation's
//! form, an approval, a drift question) runs through [`asking`], which takes every live
//! bar off the screen for as long as the question is open and draws it again below the
//! answer. Without it a spinner's redraw (carriage return, clear line) wipes the question
//! it waits for.
//!
//! Progress that arrives while a question is open is kept, not drawn ([`is_asking`]):
//! the thread that delivers it never waits for the person.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use indicatif::{MultiProgress, ProgressBar};

/// Something drawn live on the terminal.
#[derive(Clone)]
pub(crate) enum Live {
    /// One bar (a call's progress).
    Bar(ProgressBar),
    /// A group of bars drawn together (the startup spinners).
    Multi(MultiProgress),
}

impl Live {
    fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match self {
            Live::Bar(bar) => bar.suspend(f),
            Live::Multi(multi) => multi.suspend(f),
        }
    }
}

/// The live displays, by registration id.
static LIVE: Mutex<Vec<(u64, Live)>> = Mutex::new(Vec::new());
/// The next registration id.
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// How many questions are open.
static ASKING: AtomicUsize = AtomicUsize::new(0);

/// A live display's place on the screen; dropping it takes the display off the list.
#[must_use = "the display is unregistered when this is dropped"]
pub(crate) struct Registration(u64);

/// Registers `live` until the returned value is dropped.
pub(crate) fn register(live: Live) -> Registration {
    let id = NEXT.fetch_add(1, Ordering::Relaxed) as u64;
    LIVE.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push((id, live));
    Registration(id)
}

impl Drop for Registration {
    fn drop(&mut self) {
        LIVE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(id, _)| *id != self.0);
    }
}

/// Runs `ask` (which writes a question and reads its answer) with every live display off
/// the screen, and draws them again after it. Blocking: call it where blocking is fine
/// (a `spawn_blocking` thread).
pub(crate) fn asking<R>(ask: impl FnOnce() -> R) -> R {
    let live: Vec<Live> = LIVE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|(_, l)| l.clone())
        .collect();
    ASKING.fetch_add(1, Ordering::SeqCst);
    let answer = suspend_all(&live, ask);
    ASKING.fetch_sub(1, Ordering::SeqCst);
    answer
}

/// `f` inside every display's suspension, nested.
fn suspend_all<R>(live: &[Live], f: impl FnOnce() -> R) -> R {
    match live.split_first() {
        None => f(),
        Some((first, rest)) => first.suspend(|| suspend_all(rest, f)),
    }
}

/// Whether a question is open: a display's update is kept for later, not drawn, so the
/// thread delivering it does not wait for the person to answer.
pub(crate) fn is_asking() -> bool {
    ASKING.load(Ordering::SeqCst) > 0
}

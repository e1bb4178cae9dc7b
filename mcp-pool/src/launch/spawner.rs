//! The spawner thread: one thread, alive as long as the process, that runs every spawn.
//!
//! Linux's parent-death signal (see `parent_death.rs`) fires when the *thread* that
//! forked the child exits, not the process. Tokio's blocking threads exit after a few
//! seconds of idleness, so a server spawned from one would be killed at a random
//! moment. Spawning from this thread ties the signal to the life of the process.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, PoisonError};

type Job = Box<dyn FnOnce() + Send>;

/// The queue of the running spawner thread (started by the first job).
static SPAWNER: Mutex<Option<Sender<Job>>> = Mutex::new(None);

/// Runs `job` on the spawner thread and returns its result.
///
/// # Errors
/// When the thread cannot be started (the OS refused a new thread).
///
/// # Cancel safety
/// The job runs to completion even if this future is dropped; its result is then
/// dropped (a spawned child's guard kills it).
pub(crate) async fn run<T, F>(job: F) -> io::Result<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    submit(Box::new(move || {
        let _ = tx.send(job());
    }))?;
    rx.await
        .map_err(|_| io::Error::other("the spawner thread dropped the job (it panicked)"))
}

fn submit(job: Job) -> io::Result<()> {
    let mut spawner = SPAWNER.lock().unwrap_or_else(PoisonError::into_inner);
    let job = match spawner.as_ref() {
        Some(queue) => match queue.send(job) {
            Ok(()) => return Ok(()),
            // The thread is gone (it cannot end while this sender lives, but if it
            // did, start another rather than fail every later launch).
            Err(mpsc::SendError(job)) => job,
        },
        None => job,
    };
    let (queue, jobs) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("mcp-pool-spawner".into())
        .spawn(move || serve(jobs))?;
    queue
        .send(job)
        .map_err(|_| io::Error::other("the spawner thread exited at once"))?;
    *spawner = Some(queue);
    Ok(())
}

/// The thread's loop. A panicking job must not end the thread: its exit would send
/// the parent-death signal to every server it spawned.
fn serve(jobs: mpsc::Receiver<Job>) {
    for job in jobs {
        let _ = catch_unwind(AssertUnwindSafe(job));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[tokio::test]
    async fn jobs_run_on_one_long_lived_thread_that_survives_a_panic() {
        let name = || std::thread::current().name().map(str::to_owned);
        let first = run(name).await.unwrap();
        assert_eq!(first.as_deref(), Some("mcp-pool-spawner"));
        let id = run(|| std::thread::current().id()).await.unwrap();
        assert!(run(|| panic!("a job fails")).await.is_err());
        assert_eq!(run(|| std::thread::current().id()).await.unwrap(), id);
    }
}

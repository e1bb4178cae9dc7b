//! Watching a child's exit.

use std::fmt;
use std::process::ExitStatus;

use tokio::sync::watch;

/// How a server process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessExit {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it.
    Signaled(i32),
    /// Its status could not be collected (the message says why).
    Unknown(String),
}

impl ProcessExit {
    pub(crate) fn from_status(status: ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => Self::Exited(code),
            (None, Some(signal)) => Self::Signaled(signal),
            (None, None) => Self::Unknown(format!("{status}")),
        }
    }

    /// Whether it exited with code 0.
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Exited(0))
    }

    /// The signal that ended it, if any.
    pub fn signal(&self) -> Option<i32> {
        match self {
            Self::Signaled(signal) => Some(*signal),
            _ => None,
        }
    }
}

impl fmt::Display for ProcessExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exited(code) => write!(f, "exited with code {code}"),
            Self::Signaled(signal) => {
                let name = nix::sys::signal::Signal::try_from(*signal)
                    .map(|s| s.as_str())
                    .unwrap_or("unknown signal");
                write!(f, "killed by signal {signal} ({name})")
            }
            Self::Unknown(why) => write!(f, "exit status unknown: {why}"),
        }
    }
}

/// A cloneable handle that learns when the server process exits. Works after the
/// transport is gone and after the [`StdioProcess`](crate::StdioProcess) is dropped.
#[derive(Clone, Debug)]
pub struct ExitWatcher {
    rx: watch::Receiver<Option<ProcessExit>>,
}

impl ExitWatcher {
    pub(crate) fn channel() -> (watch::Sender<Option<ProcessExit>>, Self) {
        let (tx, rx) = watch::channel(None);
        (tx, Self { rx })
    }

    /// Waits until the process has exited (and been reaped).
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future loses nothing.
    pub async fn wait_exit(&self) -> ProcessExit {
        let mut rx = self.rx.clone();
        // An error means the reaper task is gone without a result (its runtime shut
        // down); the last value is still the best answer.
        let _ = rx.wait_for(Option::is_some).await;
        let result = rx.borrow().clone();
        result
            .unwrap_or_else(|| ProcessExit::Unknown("the runtime that watched it shut down".into()))
    }

    /// The exit, if it already happened.
    pub fn try_exit(&self) -> Option<ProcessExit> {
        self.rx.borrow().clone()
    }

    /// Whether the process has exited.
    pub fn has_exited(&self) -> bool {
        self.rx.borrow().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_signal() {
        assert_eq!(
            ProcessExit::Signaled(9).to_string(),
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(ProcessExit::Exited(3).to_string(), "exited with code 3");
        assert!(ProcessExit::Exited(0).is_success());
    }

    #[tokio::test]
    async fn wait_exit_sees_value_sent_before_and_after() {
        let (tx, watcher) = ExitWatcher::channel();
        let clone = watcher.clone();
        let waiter = tokio::spawn(async move { clone.wait_exit().await });
        tokio::task::yield_now().await;
        assert_eq!(watcher.try_exit(), None);
        tx.send_replace(Some(ProcessExit::Exited(1)));
        assert_eq!(waiter.await.unwrap(), ProcessExit::Exited(1));
        assert_eq!(watcher.wait_exit().await, ProcessExit::Exited(1));
    }
}

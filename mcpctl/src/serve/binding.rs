//! What is bound to a caller ([`super::caller::Caller`]) and how much each may hold.
//!
//! - A 2025-era session (`Mcp-Session-Id`) belongs to the caller whose `initialize`
//!   created it, on the path it was created on: the HTTP guard records the id when the
//!   response hands it out, and answers `404` to a request naming a session that is not
//!   that caller's on that path (the same answer as for a session that does not exist), so
//!   a session id seen by someone else is of no use to them. Its subscriptions, its
//!   stream and its pending questions go with it.
//! - A 2026-era parked call's `requestState` and a task's id are kept with their caller's
//!   id (in `modern.rs` and `tasks.rs`); another caller presenting them gets a JSON-RPC
//!   error and the call stays parked for its own caller.
//! - Limits per caller, with `[gateway.oauth]` only (the static token's one caller keeps
//!   `--max-clients` and `--max-calls`): sessions plus open `subscriptions/listen`
//!   requests ([`DEFAULT_CLIENTS_PER_CALLER`]) and calls in flight
//!   ([`DEFAULT_CALLS_PER_CALLER`]), set by `[gateway.limits]`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::caller::Caller;

/// Sessions, listens and event streams one caller may hold at once unless `[gateway.limits]
/// clients_per_principal` says otherwise.
pub(crate) const DEFAULT_CLIENTS_PER_CALLER: usize = 8;

/// Calls one caller may have in flight at once unless `[gateway.limits]
/// calls_per_principal` says otherwise.
pub(crate) const DEFAULT_CALLS_PER_CALLER: usize = 16;

/// Who owns a session, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    caller: String,
    path: String,
}

/// The limits per caller, `None` when they do not apply (the static token).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Sessions, listens and event streams.
    pub(crate) clients: usize,
    /// Calls in flight.
    pub(crate) calls: usize,
}

/// Sessions by owner, and what each caller holds.
#[derive(Debug, Default)]
pub(crate) struct Bindings {
    limits: Option<Limits>,
    sessions: Mutex<HashMap<String, Owner>>,
    clients: Mutex<HashMap<String, usize>>,
    calls: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// One session, listen or event stream counted against its caller until dropped.
#[derive(Debug)]
pub(crate) struct ClientSlot {
    bindings: Arc<Bindings>,
    caller: String,
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut clients = self
            .bindings
            .clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = clients.get_mut(&self.caller) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                clients.remove(&self.caller);
            }
        }
    }
}

impl Bindings {
    /// Bindings with `limits` per caller (`None`: no limit per caller).
    pub(crate) fn new(limits: Option<Limits>) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Records that `session`, handed out on `path`, is `caller`'s.
    pub(crate) fn bind_session(&self, session: &str, caller: &Caller, path: &str) {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                session.to_owned(),
                Owner {
                    caller: caller.id().to_owned(),
                    path: path.to_owned(),
                },
            );
    }

    /// Whether `session` is `caller`'s, on `path`. An id not recorded is nobody's.
    pub(crate) fn owns_session(&self, session: &str, caller: &Caller, path: &str) -> bool {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session)
            .is_some_and(|o| o.caller == caller.id() && o.path == path)
    }

    /// Forgets `session` (it ended).
    pub(crate) fn forget_session(&self, session: &str) {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session);
    }

    /// The recorded session ids, to drop those that ended meanwhile.
    pub(crate) fn session_ids(&self) -> Vec<String> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    /// Counts a session or listen of `caller`; the limit when it holds that many already.
    pub(crate) fn admit_client(self: &Arc<Self>, caller: &Caller) -> Result<ClientSlot, usize> {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        let held = clients.entry(caller.id().to_owned()).or_insert(0);
        if let Some(limits) = self.limits
            && *held >= limits.clients
        {
            return Err(limits.clients);
        }
        *held += 1;
        Ok(ClientSlot {
            bindings: Arc::clone(self),
            caller: caller.id().to_owned(),
        })
    }

    /// A turn for one call of `caller` (`None` inside: no limit per caller); the limit
    /// when that many of its calls are in flight.
    pub(crate) fn call_permit(
        &self,
        caller: &Caller,
    ) -> Result<Option<OwnedSemaphorePermit>, usize> {
        let Some(limits) = self.limits else {
            return Ok(None);
        };
        let semaphore = {
            let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
            // Callers with nothing in flight need no entry: keep the map small.
            if calls.len() > 1024 {
                calls.retain(|_, s| s.available_permits() < limits.calls);
            }
            Arc::clone(
                calls
                    .entry(caller.id().to_owned())
                    .or_insert_with(|| Arc::new(Semaphore::new(limits.calls))),
            )
        };
        semaphore
            .try_acquire_owned()
            .map(Some)
            .map_err(|_| limits.calls)
    }

    /// How many sessions and listens each caller holds now, by caller id (sorted): the
    /// status page's clients per principal.
    pub(crate) fn clients_by_caller(&self) -> std::collections::BTreeMap<String, usize> {
        self.clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(id, n)| (id.clone(), *n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn caller(sub: &str) -> Caller {
        Caller::from_token(sub.to_owned(), Vec::new(), Vec::new(), &[])
    }

    #[test]
    fn a_session_is_its_creators_on_its_path() {
        let bindings = Bindings::new(None);
        let (alice, bob) = (caller("alice"), caller("bob"));
        bindings.bind_session("s1", &alice, "/mcp");
        assert!(bindings.owns_session("s1", &alice, "/mcp"));
        assert!(!bindings.owns_session("s1", &bob, "/mcp"));
        assert!(!bindings.owns_session("s1", &alice, "/other"));
        assert!(!bindings.owns_session("s2", &alice, "/mcp"));
        bindings.forget_session("s1");
        assert!(!bindings.owns_session("s1", &alice, "/mcp"));
    }

    #[test]
    fn each_caller_has_its_own_bounds() {
        let bindings = Arc::new(Bindings::new(Some(Limits {
            clients: 1,
            calls: 2,
        })));
        let (alice, bob) = (caller("alice"), caller("bob"));
        let slot = bindings.admit_client(&alice).unwrap();
        assert_eq!(bindings.admit_client(&alice).unwrap_err(), 1);
        let _bob = bindings.admit_client(&bob).unwrap();
        drop(slot);
        let _again = bindings.admit_client(&alice).unwrap();
        let first = bindings.call_permit(&alice).unwrap();
        let _second = bindings.call_permit(&alice).unwrap();
        assert_eq!(bindings.call_permit(&alice).unwrap_err(), 2);
        assert!(bindings.call_permit(&bob).unwrap().is_some());
        drop(first);
        assert!(bindings.call_permit(&alice).is_ok());
        assert_eq!(
            bindings.clients_by_caller().into_iter().collect::<Vec<_>>(),
            vec![("sub:alice".to_owned(), 1), ("sub:bob".to_owned(), 1)]
        );
        let unbounded = Bindings::new(None);
        assert!(unbounded.call_permit(&alice).unwrap().is_none());
    }
}

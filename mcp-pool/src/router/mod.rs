//! Request routing on a shared connection: [`SessionGate`].
//!
//! Several sessions share one connection. Operations of different sessions take
//! turns in arrival order (FIFO); operations of the session whose turn it is may run
//! concurrently. A server-to-client request (elicitation, sampling, roots) can then
//! only have been caused by the active session, so [`SessionGate::route`] hands it
//! to that session's handler, and declines when that is not clear.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// Identifies a session within one [`SessionGate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(u64);

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "session#{}", self.0)
    }
}

/// Where a server-to-client request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Route<H> {
    /// Deliver it to this session's handler.
    Deliver {
        /// The session whose operation is active.
        session: SessionId,
        /// Its handler.
        handler: H,
    },
    /// Decline it (fail closed).
    Decline(DeclineReason),
}

/// Why a server-to-client request is declined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeclineReason {
    /// No operation is running and several sessions share the connection, so it is
    /// unclear which one caused it.
    NoActiveOperation,
    /// The session whose operation is running has closed.
    SessionClosed,
}

impl fmt::Display for DeclineReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoActiveOperation => "no operation is running on this connection",
            Self::SessionClosed => "the session that started the operation has closed",
        })
    }
}

/// Serializes the sessions of one shared connection and routes server requests to
/// the active one. Cheap to clone (clones share the gate).
///
/// ```
/// use mcp_pool::{Route, SessionGate};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let gate = SessionGate::new();
/// let alice = gate.open_session("alice's elicitation handler");
/// let _bob = gate.open_session("bob's elicitation handler");
/// let op = alice.begin().await; // e.g. around a tools/call
/// match gate.route() {
///     Route::Deliver { handler, .. } => assert_eq!(handler, "alice's elicitation handler"),
///     Route::Decline(reason) => panic!("{reason}"),
///     _ => unreachable!(),
/// }
/// drop(op);
/// // No operation running and two sessions: nobody can tell whose it is.
/// assert!(matches!(gate.route(), Route::Decline(_)));
/// # });
/// ```
pub struct SessionGate<H> {
    inner: Arc<Mutex<GateState<H>>>,
}

impl<H> Clone for SessionGate<H> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<H: Clone> Default for SessionGate<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H> fmt::Debug for SessionGate<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.inner);
        f.debug_struct("SessionGate")
            .field("sessions", &state.sessions.len())
            .field("active", &state.active)
            .field("queued", &state.queue.len())
            .finish()
    }
}

struct GateState<H> {
    sessions: HashMap<u64, H>,
    next_session: u64,
    /// The session whose turn it is, and how many of its operations run.
    active: Option<(u64, usize)>,
    queue: VecDeque<Waiter>,
    next_ticket: u64,
}

struct Waiter {
    ticket: u64,
    session: u64,
    grant: oneshot::Sender<()>,
}

fn lock<H>(inner: &Mutex<GateState<H>>) -> MutexGuard<'_, GateState<H>> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<H> GateState<H> {
    /// Grants the turn to the front of the queue (and every queued operation of the
    /// same session directly behind it) when the active session allows it.
    fn pump(&mut self) {
        while let Some(front) = self.queue.front() {
            let session = front.session;
            match self.active {
                None => self.active = Some((session, 0)),
                Some((active, _)) if active == session => {}
                Some(_) => break,
            }
            if let Some(waiter) = self.queue.pop_front() {
                if let Some((_, ops)) = &mut self.active {
                    *ops += 1;
                }
                // A dropped receiver gives the turn back from its own Drop.
                let _ = waiter.grant.send(());
            }
        }
    }

    fn end_operation(&mut self, session: u64) {
        if let Some((active, ops)) = &mut self.active
            && *active == session
        {
            *ops = ops.saturating_sub(1);
            if *ops == 0 {
                self.active = None;
            }
        }
        self.pump();
    }
}

impl<H: Clone> SessionGate<H> {
    /// A gate with no session.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Mutex::new(GateState {
                sessions: HashMap::new(),
                next_session: 0,
                active: None,
                queue: VecDeque::new(),
                next_ticket: 0,
            })),
        }
    }

    /// Registers a session whose server requests go to `handler`. Dropping the
    /// [`Session`] unregisters it.
    pub fn open_session(&self, handler: H) -> Session<H> {
        let mut state = lock(&self.inner);
        let id = state.next_session;
        state.next_session += 1;
        state.sessions.insert(id, handler);
        Session {
            gate: self.clone(),
            id,
        }
    }

    /// Where a server-to-client request arriving now must go: to the session whose
    /// operation is running; with no operation running, to the only registered
    /// session if there is exactly one (nobody else can have caused it); else
    /// declined.
    pub fn route(&self) -> Route<H> {
        let state = lock(&self.inner);
        match state.active {
            Some((session, ops)) if ops > 0 => match state.sessions.get(&session) {
                Some(handler) => Route::Deliver {
                    session: SessionId(session),
                    handler: handler.clone(),
                },
                None => Route::Decline(DeclineReason::SessionClosed),
            },
            _ => {
                let mut sessions = state.sessions.iter();
                match (sessions.next(), sessions.next()) {
                    (Some((id, handler)), None) => Route::Deliver {
                        session: SessionId(*id),
                        handler: handler.clone(),
                    },
                    _ => Route::Decline(DeclineReason::NoActiveOperation),
                }
            }
        }
    }

    /// The session whose operations are running, if any.
    pub fn active_session(&self) -> Option<SessionId> {
        lock(&self.inner)
            .active
            .map(|(session, _)| SessionId(session))
    }

    /// Operations waiting for their turn.
    pub fn queued(&self) -> usize {
        lock(&self.inner).queue.len()
    }

    /// Registered sessions.
    pub fn sessions(&self) -> usize {
        lock(&self.inner).sessions.len()
    }
}

/// One session on a shared connection. Dropping it unregisters its handler; its
/// running operations keep their turn until they end, but server requests during
/// them are declined.
pub struct Session<H> {
    gate: SessionGate<H>,
    id: u64,
}

impl<H> fmt::Debug for Session<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Session").field(&SessionId(self.id)).finish()
    }
}

impl<H> Session<H> {
    /// This session's id.
    pub fn id(&self) -> SessionId {
        SessionId(self.id)
    }

    /// The handler this session registered, while the session is open: for a request
    /// the transport already ties to this session's operation (nothing to route).
    pub fn handler(&self) -> Option<H>
    where
        H: Clone,
    {
        lock(&self.gate.inner).sessions.get(&self.id).cloned()
    }

    /// Waits for this session's turn and starts one operation; the turn lasts while
    /// the returned guard (or another operation of this session) lives.
    ///
    /// An operation joins at once when its session is active and nobody waits;
    /// otherwise it queues behind everything that arrived before it.
    ///
    /// # Cancel safety
    /// Cancel-safe: a dropped call leaves the queue (or, if the turn was already
    /// granted, gives it back).
    pub async fn begin(&self) -> OperationGuard<H> {
        let (ticket, granted) = {
            let mut state = lock(&self.gate.inner);
            let joins =
                state.queue.is_empty() && state.active.is_none_or(|(active, _)| active == self.id);
            if joins {
                let ops = state.active.map_or(0, |(_, ops)| ops);
                state.active = Some((self.id, ops + 1));
                return self.guard();
            }
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            let (grant, granted) = oneshot::channel();
            state.queue.push_back(Waiter {
                ticket,
                session: self.id,
                grant,
            });
            (ticket, granted)
        };
        let mut pending = Pending {
            gate: &self.gate,
            ticket,
            session: self.id,
            armed: true,
        };
        // The sender is only dropped after sending or by `Pending::drop` (which
        // cannot run while this await is alive).
        let _ = granted.await;
        pending.armed = false;
        self.guard()
    }

    fn guard(&self) -> OperationGuard<H> {
        OperationGuard {
            gate: self.gate.clone(),
            session: self.id,
        }
    }
}

impl<H> Drop for Session<H> {
    fn drop(&mut self) {
        lock(&self.gate.inner).sessions.remove(&self.id);
    }
}

/// A queued operation that has not yet observed its grant.
struct Pending<'a, H> {
    gate: &'a SessionGate<H>,
    ticket: u64,
    session: u64,
    armed: bool,
}

impl<H> Drop for Pending<'_, H> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut state = lock(&self.gate.inner);
        if let Some(pos) = state.queue.iter().position(|w| w.ticket == self.ticket) {
            state.queue.remove(pos);
            state.pump();
        } else {
            // Granted, but dropped before it could run: give the turn back.
            state.end_operation(self.session);
        }
    }
}

/// One running operation of a session; dropping it ends the operation.
pub struct OperationGuard<H> {
    gate: SessionGate<H>,
    session: u64,
}

impl<H> OperationGuard<H> {
    /// The session this operation belongs to.
    pub fn session(&self) -> SessionId {
        SessionId(self.session)
    }
}

impl<H> fmt::Debug for OperationGuard<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OperationGuard")
            .field(&SessionId(self.session))
            .finish()
    }
}

impl<H> Drop for OperationGuard<H> {
    fn drop(&mut self) {
        lock(&self.gate.inner).end_operation(self.session);
    }
}

#[cfg(test)]
mod tests;

//! The connection sets 2026-era calls run on, kept between calls ([`KeptSets`]).
//!
//! A 2026-era client has no session, so each of its calls once started a connection set
//! of its own and shut it down after; that start and shutdown cost more than the call
//! itself. The hub now keeps, per caller and what the caller's client can answer
//! (elicitation, sampling), the sets of ended calls, idle, for as long as the pool keeps
//! an idle server (`--keep-alive`; zero keeps none, as over stdio by default), and lends
//! one to the next call of the same caller and abilities ([`KeptSets::lend`]); a set is
//! started only when none is idle. A kept set holds its servers' leases: the pool's own
//! keep-alive of a server begins when the last kept set using it expires.
//!
//! A set serves one call at a time: while lent it is that call's alone, as a set of its
//! own was, so the pool's session gate still routes an upstream server's elicitation or
//! sampling request to exactly that call. The set's handlers route per request: they put
//! the question to the call the set is lent to now ([`Lent`]'s route), checked against
//! that call's caller and only while that call's server runs; a request while no call
//! holds the set is declined. A call given up midway (cancelled, expired) shuts its set
//! down instead of returning it: its server may still be working on the abandoned
//! request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{
    ConnectionSet, ElicitationRequest, SamplingRefusal, SamplingRequest, elicitation_fn,
    sampling_fn,
};
use tokio::sync::mpsc;

use super::{Abilities, Ask, ask, sample};
use crate::serve::Hub;
use crate::serve::caller::Caller;
use crate::serve::host_requests::{InCalls, refusal, with_asker};

/// Idle sets kept for one caller and abilities, at most; a set ending a call beyond it is
/// shut down.
pub(crate) const MAX_IDLE_PER_CALLER: usize = 4;

/// Idle sets kept for all callers, at most.
pub(crate) const MAX_IDLE: usize = 64;

/// Whose sets are kept together: a caller, and what its client can answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    caller: String,
    elicit: bool,
    sample: bool,
}

impl Key {
    fn of(caller: &Caller, can: Abilities) -> Self {
        Self {
            caller: caller.id().to_owned(),
            elicit: can.elicit,
            sample: can.sample,
        }
    }
}

/// The call a set is lent to: where its upstream questions go, and whose call it is.
#[derive(Clone)]
struct CallRoute {
    asks: mpsc::Sender<Ask>,
    caller: Arc<Caller>,
    can: Abilities,
}

/// The call a set serves now, if any (read by the set's handlers at each request).
#[derive(Default)]
struct Route(Mutex<Option<CallRoute>>);

impl Route {
    fn get(&self) -> Option<CallRoute> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, call: Option<CallRoute>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = call;
    }
}

/// A set and what routes its upstream questions.
struct Held {
    set: ConnectionSet,
    route: Arc<Route>,
    /// The servers in a call of the set now (the ones that may ask the client).
    in_calls: Arc<InCalls>,
}

/// The idle sets, by whose they are, each with when it was returned.
#[derive(Default)]
struct Idle {
    by_key: HashMap<Key, Vec<(Held, Instant)>>,
    count: usize,
}

/// The sets of ended 2026-era calls, kept for the next calls of the same caller and
/// abilities. Cheap to clone (clones share the sets).
#[derive(Clone)]
pub(crate) struct KeptSets {
    idle: Arc<Mutex<Idle>>,
    /// How long an idle set is kept (zero: none is).
    keep: Duration,
}

impl std::fmt::Debug for KeptSets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptSets")
            .field("idle", &self.lock().count)
            .field("keep", &self.keep)
            .finish()
    }
}

impl KeptSets {
    /// No set kept yet; idle sets are kept for `keep` (the pool's keep-alive), none when
    /// it is zero.
    pub(crate) fn new(keep: Duration) -> Self {
        Self {
            idle: Arc::default(),
            keep,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A set for one call of `caller` whose client can answer `can`: an idle one of theirs
    /// when there is one, else a new one on the hub's pool. Its upstream questions go to
    /// `asks` until the call ends.
    pub(crate) fn lend(
        &self,
        hub: &Hub,
        caller: &Arc<Caller>,
        can: Abilities,
        asks: &mpsc::Sender<Ask>,
    ) -> Lent {
        let key = Key::of(caller, can);
        let reused = {
            let mut idle = self.lock();
            let held = idle.by_key.get_mut(&key).and_then(Vec::pop);
            if held.is_some() {
                idle.count -= 1;
                if idle.by_key.get(&key).is_some_and(Vec::is_empty) {
                    idle.by_key.remove(&key);
                }
            }
            held.map(|(held, _)| held)
        };
        let held = match reused {
            Some(held) => {
                tracing::debug!(caller = %key.caller, "kept connection set lent to a 2026-era call");
                held
            }
            None => {
                tracing::debug!(caller = %key.caller, "connection set started for a 2026-era call");
                start(hub, caller)
            }
        };
        held.route.set(Some(CallRoute {
            asks: asks.clone(),
            caller: Arc::clone(caller),
            can,
        }));
        Lent {
            held,
            home: Box::new((key, self.clone())),
        }
    }

    /// Keeps `held` for the next call of `key`, unless too many are idle or sets are not
    /// kept: then it is shut down.
    async fn take_back(&self, key: Key, held: Held) {
        let refused = {
            let mut idle = self.lock();
            let theirs = idle.by_key.get(&key).map_or(0, Vec::len);
            if self.keep.is_zero() || idle.count >= MAX_IDLE || theirs >= MAX_IDLE_PER_CALLER {
                Some(held)
            } else {
                idle.count += 1;
                idle.by_key
                    .entry(key)
                    .or_default()
                    .push((held, Instant::now()));
                None
            }
        };
        if let Some(held) = refused {
            held.set.shutdown().await;
        }
    }

    /// Shuts down the sets idle longer than the keep-alive.
    pub(crate) async fn expire(&self) {
        let old = self.drain(|since| since.elapsed() > self.keep);
        for held in old {
            held.set.shutdown().await;
        }
    }

    /// Shuts down every idle set (the gateway stops).
    pub(crate) async fn clear(&self) {
        for held in self.drain(|_| true) {
            held.set.shutdown().await;
        }
    }

    /// Takes out the idle sets returned at an instant `old` says of.
    fn drain(&self, old: impl Fn(Instant) -> bool) -> Vec<Held> {
        let mut idle = self.lock();
        let mut out = Vec::new();
        for sets in idle.by_key.values_mut() {
            let (gone, kept): (Vec<_>, Vec<_>) = sets.drain(..).partition(|(_, t)| old(*t));
            *sets = kept;
            out.extend(gone.into_iter().map(|(held, _)| held));
        }
        idle.by_key.retain(|_, sets| !sets.is_empty());
        idle.count -= out.len();
        out
    }
}

/// A set lent to one call ([`KeptSets::lend`]): the call's alone until it ends.
pub(crate) struct Lent {
    held: Held,
    /// Where it goes back to (boxed: a parked call is moved around whole).
    home: Box<(Key, KeptSets)>,
}

impl Lent {
    /// The set.
    pub(crate) fn set(&self) -> &ConnectionSet {
        &self.held.set
    }

    /// The servers in a call of the set now.
    pub(crate) fn in_calls(&self) -> &Arc<InCalls> {
        &self.held.in_calls
    }

    /// The call ended (its task is over): the set goes back to be kept for its caller's
    /// next call, or shuts down when it is not kept.
    pub(crate) async fn release(self) {
        self.held.route.set(None);
        let (key, kept) = *self.home;
        kept.take_back(key, self.held).await;
    }

    /// The call was given up midway: the set shuts down (its server may still be at the
    /// abandoned request, so no other call gets it).
    pub(crate) async fn shutdown(self) {
        self.held.route.set(None);
        self.held.set.shutdown().await;
    }
}

/// A new set on the hub's pool whose handlers route per request (see the module docs).
/// Its `caller`/`exchange` servers are reached as `caller` ([`crate::serve::identity`]):
/// sets are kept per caller, so the set never carries another caller's calls.
fn start(hub: &Hub, caller: &Arc<Caller>) -> Held {
    let route = Arc::<Route>::default();
    let in_calls = Arc::<InCalls>::default();
    let options = crate::serve::identity::options_for(
        hub,
        crate::serve::identity::CallerSource::Known(Arc::clone(caller)),
        hub.options.clone(),
    )
    .with_shared_pool(hub.pool.clone())
    .with_elicitation_handler(elicitation_handler(&route, &in_calls))
    .with_sampling_handler(sampling_handler(&route, &in_calls));
    Held {
        set: ConnectionSet::start(&hub.catalog, options),
        route,
        in_calls,
    }
}

/// Why a request of `server` is not put to the call `call` (none: the set serves no call).
fn refused(
    call: Option<&CallRoute>,
    in_calls: &InCalls,
    server: &mcp_key::McpServerKey,
) -> Option<String> {
    match call {
        None => Some("no call of a client runs on this connection set".to_owned()),
        Some(call) => refusal(in_calls, Some(&call.caller), server),
    }
}

/// Puts an upstream server's elicitation to the client of the call the set serves now
/// (declined when refused, or when the set serves none).
fn elicitation_handler(
    route: &Arc<Route>,
    in_calls: &Arc<InCalls>,
) -> Arc<dyn mcp_connections::ElicitationHandler> {
    let (route, in_calls) = (Arc::clone(route), Arc::clone(in_calls));
    elicitation_fn(move |request: ElicitationRequest| {
        let call = route.get();
        let why = refused(call.as_ref(), &in_calls, &request.server);
        async move {
            let call = match (why, call) {
                (None, Some(call)) => call,
                (why, _) => {
                    let why = why.unwrap_or_default();
                    tracing::info!(server = %request.server, "elicitation declined: {why}");
                    return ElicitResult::new(ElicitationAction::Decline);
                }
            };
            let params = with_asker(&request.server.to_string(), request.params);
            ask(&call.asks, call.can.elicit, params).await
        }
    })
}

/// Passes an upstream server's sampling request to the client of the call the set serves
/// now (refused when refused, or when the set serves none).
fn sampling_handler(
    route: &Arc<Route>,
    in_calls: &Arc<InCalls>,
) -> Arc<dyn mcp_connections::SamplingHandler> {
    let (route, in_calls) = (Arc::clone(route), Arc::clone(in_calls));
    sampling_fn(move |request: SamplingRequest| {
        let call = route.get();
        let why = refused(call.as_ref(), &in_calls, &request.server);
        async move {
            let call = match (why, call) {
                (None, Some(call)) => call,
                (why, _) => {
                    let why = why.unwrap_or_default();
                    tracing::info!(server = %request.server, "sampling refused: {why}");
                    return Err(SamplingRefusal::new(why));
                }
            };
            sample(&call.asks, call.can.sample, request).await
        }
    })
}

//! The fake server's answers to `events/list`, `events/poll`, `events/stream`,
//! `events/subscribe` and `events/unsubscribe`, and the tool behaviours that emit events
//! and kill streams.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::model::{CustomNotification, CustomRequest, CustomResult, ErrorCode, ServerNotification};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use tokio_util::sync::CancellationToken;

use super::cursor::cursor;
use super::log::Stored;
use super::webhook;
use super::{EVENTS_EXTENSION_ID, EventsSpec, WebhookFault};
use crate::Scenario;
use crate::shared::Shared;

/// The `_meta` key that ties a push notification to its `events/stream` request.
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// Events a poll returns when it does not say (`maxEvents`).
const DEFAULT_MAX_EVENTS: usize = 100;

/// `NotFound`: an unknown event type.
const NOT_FOUND: i32 = -32011;
/// `Unsupported`: a delivery mode the event type does not offer.
const UNSUPPORTED: i32 = -32014;
/// `CallbackEndpointError`: the callback failed verification or could not be reached.
const CALLBACK_ENDPOINT_ERROR: i32 = -32015;

/// Announces the extension in `capabilities.extensions` when the scenario has events.
pub(crate) fn advertise(scenario: &Scenario, capabilities: &mut Map<String, Value>) {
    if scenario.events.is_none() {
        return;
    }
    let extensions = capabilities
        .entry("extensions")
        .or_insert_with(|| json!({}));
    if let Value::Object(extensions) = extensions {
        extensions.insert(
            EVENTS_EXTENSION_ID.to_owned(),
            json!({"listChanged": false}),
        );
    }
}

/// The params of `events/poll` and `events/stream`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Subscription {
    name: String,
    #[serde(default)]
    arguments: Map<String, Value>,
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    max_events: Option<usize>,
}

/// Answers a request rmcp does not know: the events methods when the scenario has events,
/// "method not found" otherwise.
pub(crate) async fn request(
    server: &Arc<Shared>,
    request: CustomRequest,
    context: RequestContext<RoleServer>,
) -> Result<CustomResult, McpError> {
    let Some(spec) = &server.scenario.events else {
        return Err(method_not_found(&request.method));
    };
    server.events.keep_in(spec.history_file.as_deref());
    server
        .events
        .start_timers(Arc::downgrade(server), &spec.types);
    match request.method.as_str() {
        "events/list" => Ok(CustomResult(list(spec))),
        "events/poll" => poll(server, spec, &request).map(CustomResult),
        "events/stream" => stream(server, spec, &request, context).await,
        "events/subscribe" => subscribe(server, spec, &request).await.map(CustomResult),
        "events/unsubscribe" => unsubscribe(server, &request).map(CustomResult),
        other => Err(method_not_found(other)),
    }
}

fn method_not_found(method: &str) -> McpError {
    McpError::new(ErrorCode::METHOD_NOT_FOUND, method.to_owned(), None)
}

fn list(spec: &EventsSpec) -> Value {
    let events: Vec<Value> = spec
        .types
        .iter()
        .map(|t| {
            let mut entry = json!({
                "name": t.name,
                "delivery": t.delivery,
                "inputSchema": t.input_schema,
                "payloadSchema": t.payload_schema,
            });
            if let Some(description) = &t.description {
                entry["description"] = json!(description);
            }
            entry
        })
        .collect();
    json!({ "events": events })
}

/// The params of `request`, checked against the event type's offer of `mode`.
fn subscription(
    spec: &EventsSpec,
    request: &CustomRequest,
    mode: &str,
) -> Result<Subscription, McpError> {
    let params: Subscription = request
        .params_as()
        .map_err(|e| McpError::invalid_params(format!("{}: {e}", request.method), None))?
        .ok_or_else(|| McpError::invalid_params(format!("{}: no params", request.method), None))?;
    let Some(event_type) = spec.types.iter().find(|t| t.name == params.name) else {
        return Err(McpError::new(
            ErrorCode(NOT_FOUND),
            format!("no event type {:?}", params.name),
            Some(json!({"kind": "event"})),
        ));
    };
    if !event_type.delivery.iter().any(|m| m == mode) {
        return Err(McpError::new(
            ErrorCode(UNSUPPORTED),
            format!("event type {:?} is not offered by {mode}", params.name),
            Some(json!({"feature": "deliveryMode", "value": mode})),
        ));
    }
    Ok(params)
}

fn poll(server: &Shared, spec: &EventsSpec, request: &CustomRequest) -> Result<Value, McpError> {
    let params = subscription(spec, request, "poll")?;
    let log = &server.events;
    let position = log
        .position(params.cursor.as_deref())
        .map_err(|e| McpError::invalid_params(e, None))?;
    let since = log.since(
        position,
        &params.name,
        &params.arguments,
        params.max_events.unwrap_or(DEFAULT_MAX_EVENTS),
    );
    let events: Vec<&Value> = since.events.iter().map(|e| &e.occurrence).collect();
    Ok(json!({
        "events": events,
        "cursor": cursor(since.checked),
        "truncated": since.truncated,
        "hasMore": since.has_more,
        "nextPollMs": spec.next_poll_ms,
    }))
}

/// Serves one push stream until the client cancels it, the server stops, or
/// [`crate::Behavior::EndEventStreams`] ends it (with the final result) or silences it.
async fn stream(
    server: &Shared,
    spec: &EventsSpec,
    request: &CustomRequest,
    context: RequestContext<RoleServer>,
) -> Result<CustomResult, McpError> {
    let params = subscription(spec, request, "push")?;
    let log = &server.events;
    let mut position = log
        .position(params.cursor.as_deref())
        .map_err(|e| McpError::invalid_params(e, None))?;
    let _open = log.stream_opened();
    let mut heads = log.head.subscribe();
    let mut ended = log.ended.subscribe();
    let mut silenced = log.silenced.subscribe();
    let id = serde_json::to_value(&context.id).unwrap_or(Value::Null);
    let meta = json!({ SUBSCRIPTION_ID_KEY: id });
    let send = |method: &'static str, mut params: Value| {
        params["_meta"] = meta.clone();
        let peer = context.peer.clone();
        async move {
            peer.send_notification(ServerNotification::CustomNotification(
                CustomNotification::new(method, Some(params)),
            ))
            .await
            .is_ok()
        }
    };
    let first = log.since(position, &params.name, &params.arguments, usize::MAX);
    let start = if first.truncated {
        resumed_at(&first)
    } else {
        position
    };
    if !send(
        "notifications/events/active",
        json!({"cursor": cursor(start), "truncated": first.truncated}),
    )
    .await
    {
        return Ok(final_result());
    }
    let heartbeat = Duration::from_millis(spec.heartbeat_ms.max(1));
    let mut announced_truncation = first.truncated;
    loop {
        heads.mark_unchanged();
        let since = log.since(position, &params.name, &params.arguments, usize::MAX);
        if since.truncated && !announced_truncation {
            send(
                "notifications/events/active",
                json!({"cursor": cursor(resumed_at(&since)), "truncated": true}),
            )
            .await;
        }
        announced_truncation = false;
        for event in &since.events {
            if !send("notifications/events/event", occurrence(event)).await {
                return Ok(final_result());
            }
        }
        position = since.checked;
        tokio::select! {
            () = context.ct.cancelled() => return Ok(final_result()),
            () = server.stop.cancelled() => return Ok(final_result()),
            _ = ended.changed() => return Ok(final_result()),
            _ = silenced.changed() => {
                tokio::select! {
                    () = context.ct.cancelled() => {}
                    () = server.stop.cancelled() => {}
                }
                return Ok(final_result());
            }
            _ = heads.changed() => {}
            () = tokio::time::sleep(heartbeat) => {
                if !send("notifications/events/heartbeat", json!({"cursor": cursor(position)})).await {
                    return Ok(final_result());
                }
            }
        }
    }
}

/// Where a truncated answer resumes: just before its first event (after the forgotten
/// ones).
fn resumed_at(since: &super::log::Since) -> u64 {
    since
        .events
        .first()
        .map_or(since.checked, |e| e.seq.saturating_sub(1))
}

/// `delivery` of `events/subscribe` and `events/unsubscribe`.
#[derive(Deserialize)]
struct Delivery {
    url: String,
    #[serde(default)]
    secret: Option<String>,
}

#[derive(Deserialize)]
struct WithDelivery {
    delivery: Delivery,
}

/// The subscription's id: derived from its URL, event type and arguments (stable across
/// refreshes).
fn webhook_id(url: &str, name: &str, arguments: &Map<String, Value>) -> String {
    let key = format!("{url}\n{name}\n{}", Value::Object(arguments.clone()));
    // FNV-1a: deterministic, and enough for a fake.
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("sub_{hash:016x}")
}

/// `events/subscribe` (webhook): checks the URL (`https`, or `http` to a loopback host)
/// and the secret (`whsec_`), verifies a loopback callback once (the `verification`
/// handshake), keeps the subscription (an idempotent upsert: a refresh of a live one
/// re-grants its TTL and replaces its secret, of a lapsed one starts again from the cursor
/// given) and starts its delivery task; answers the grant (`refreshBefore` from `ttlMs`,
/// default an hour, at least [`crate::WebhookSpec::min_ttl_ms`]; `null` when the client
/// asked for no expiry).
async fn subscribe(
    server: &Arc<Shared>,
    spec: &EventsSpec,
    request: &CustomRequest,
) -> Result<Value, McpError> {
    let asked = WebhookRequest::read(spec, request)?;
    let start = Start::at_cursor(server, &asked.params)?;
    let grant = Grant::asked_by(spec, request);
    let id = webhook_id(&asked.url, &asked.params.name, &asked.params.arguments);
    verify_callback(server, spec, &asked, &id).await?;
    let mut subs = crate::record::lock(&server.webhooks.subs);
    if let Some(sub) = subs.get_mut(&id).filter(|s| {
        s.lapses_at
            .is_none_or(|at| at > tokio::time::Instant::now())
    }) {
        return Ok(refresh(sub, asked.key, &id, grant));
    }
    if let Some(lapsed) = subs.remove(&id) {
        lapsed.cancel.cancel();
    }
    let cancel = CancellationToken::new();
    subs.insert(
        id.clone(),
        webhook::WebhookSub {
            name: asked.params.name,
            arguments: asked.params.arguments,
            key: asked.key,
            previous_key: None,
            lapses_at: grant.lapses_at,
            position: start.position,
            delivered: 0,
            posted: 0,
            last_delivery_at: None,
            last_error: None,
            cancel: cancel.clone(),
        },
    );
    drop(subs);
    if let webhook::CallbackKind::Loopback(callback) = asked.kind {
        super::delivery::spawn_delivery(
            Arc::downgrade(server),
            id.clone(),
            callback,
            cancel,
            spec.webhook.faults.clone(),
        );
    }
    Ok(json!({
        "id": id,
        "refreshBefore": grant.refresh_before,
        "cursor": cursor(start.resumes_at),
        "truncated": start.truncated,
    }))
}

/// What an `events/subscribe` request asks, checked.
struct WebhookRequest {
    /// The event type, its arguments and the cursor to start from.
    params: Subscription,
    /// `delivery.url`.
    url: String,
    /// What `url` allows.
    kind: webhook::CallbackKind,
    /// The HMAC key: `delivery.secret` decoded.
    key: Vec<u8>,
}

impl WebhookRequest {
    /// Step 1 of [`subscribe`]: reads the params: an event type offered by webhook
    /// (`NotFound` or `Unsupported` otherwise), a callback URL that is `https` or `http` to
    /// a loopback host, and a secret that is `whsec_` followed by base64 of 24 to 64 bytes
    /// (invalid params otherwise).
    fn read(spec: &EventsSpec, request: &CustomRequest) -> Result<Self, McpError> {
        let params = subscription(spec, request, "webhook")?;
        let WithDelivery { delivery } = request
            .params_as()
            .map_err(|e| McpError::invalid_params(format!("events/subscribe: {e}"), None))?
            .ok_or_else(|| McpError::invalid_params("events/subscribe: no params", None))?;
        let kind =
            webhook::callback(&delivery.url).map_err(|e| McpError::invalid_params(e, None))?;
        let key = delivery
            .secret
            .as_deref()
            .and_then(|s| s.strip_prefix("whsec_"))
            .and_then(|b| STANDARD.decode(b).ok())
            .filter(|k| (24..=64).contains(&k.len()));
        let Some(key) = key else {
            return Err(McpError::invalid_params(
                "delivery.secret is not `whsec_` followed by base64 of 24 to 64 bytes",
                None,
            ));
        };
        Ok(Self {
            params,
            url: delivery.url,
            kind,
            key,
        })
    }
}

/// Where a new subscription's delivery starts.
struct Start {
    /// The position of the cursor given (the log's start without one).
    position: u64,
    /// The cursor answered: `position`, or where delivery resumes after a cut replay.
    resumes_at: u64,
    /// Whether events after `position` were forgotten (the replay is cut).
    truncated: bool,
}

impl Start {
    /// Step 2 of [`subscribe`]: the position of the request's cursor (invalid params when
    /// the log does not know it) and, when events after it were forgotten, where delivery
    /// resumes (its delivery task starts with a `gap` envelope saying so).
    fn at_cursor(server: &Shared, params: &Subscription) -> Result<Self, McpError> {
        let log = &server.events;
        let position = log
            .position(params.cursor.as_deref())
            .map_err(|e| McpError::invalid_params(e, None))?;
        let since = log.since(position, &params.name, &params.arguments, 0);
        let resumes_at = if since.truncated {
            resumed_at(&log.since(position, &params.name, &params.arguments, usize::MAX))
        } else {
            position
        };
        Ok(Self {
            position,
            resumes_at,
            truncated: since.truncated,
        })
    }
}

/// The lifetime granted to a subscription.
struct Grant {
    /// `refreshBefore`: an RFC 3339 time, or `null` for no expiry.
    refresh_before: Value,
    /// When the server lets it lapse (`None`: never): the grant, or sooner under
    /// [`WebhookFault::LapseEarly`].
    lapses_at: Option<tokio::time::Instant>,
}

impl Grant {
    /// Step 3 of [`subscribe`]: the request's `ttlMs` (default an hour, at least
    /// [`crate::WebhookSpec::min_ttl_ms`], none when it is `null`), counted from now.
    fn asked_by(spec: &EventsSpec, request: &CustomRequest) -> Self {
        let ttl = request
            .params
            .as_ref()
            .and_then(|p| p.get("ttlMs"))
            .cloned();
        let granted = match ttl {
            Some(Value::Null) => None,
            other => Some(
                other
                    .and_then(|v| v.as_u64())
                    .unwrap_or(3_600_000)
                    .max(spec.webhook.min_ttl_ms),
            ),
        };
        let refresh_before = granted.map_or(Value::Null, |ms| {
            let at = chrono::Utc::now()
                + chrono::Duration::milliseconds(i64::try_from(ms).unwrap_or(i64::MAX));
            json!(at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        });
        let early = spec.webhook.faults.iter().find_map(|f| match f {
            WebhookFault::LapseEarly { after_ms } => Some(*after_ms),
            _ => None,
        });
        let lapse_ms = match (granted, early) {
            (Some(g), Some(e)) => Some(g.min(e)),
            (g, e) => g.or(e),
        };
        Self {
            refresh_before,
            lapses_at: lapse_ms.map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms)),
        }
    }
}

/// Step 4 of [`subscribe`]: when the scenario verifies callbacks, POSTs the `verification`
/// handshake to a loopback callback not verified yet; `CallbackEndpointError` (with the
/// failure as `data.reason`) when it fails. An `https` callback is never verified.
async fn verify_callback(
    server: &Shared,
    spec: &EventsSpec,
    asked: &WebhookRequest,
    id: &str,
) -> Result<(), McpError> {
    let webhook::CallbackKind::Loopback(callback) = &asked.kind else {
        return Ok(());
    };
    if !spec.webhook.verify_callbacks {
        return Ok(());
    }
    server
        .webhooks
        .verify(&asked.url, callback, &asked.key, id)
        .await
        .map_err(|reason| {
            McpError::new(
                ErrorCode(CALLBACK_ENDPOINT_ERROR),
                format!("the callback {:?} failed verification: {reason}", asked.url),
                Some(json!({ "reason": reason })),
            )
        })
}

/// Step 5 of [`subscribe`], for a live subscription: re-grants it and, when `key` is a new
/// secret, rotates it (the old one still signs for a grace); answers the grant with the
/// subscription's own cursor and delivery status.
fn refresh(sub: &mut webhook::WebhookSub, key: Vec<u8>, id: &str, grant: Grant) -> Value {
    if sub.key != key {
        let replaced = std::mem::replace(&mut sub.key, key);
        sub.previous_key = Some((replaced, webhook::rotation_ends()));
    }
    sub.lapses_at = grant.lapses_at;
    let status = json!({
        "active": true,
        "lastDeliveryAt": sub.last_delivery_at,
        "lastError": sub.last_error,
        "delivered": sub.delivered,
    });
    json!({
        "id": id,
        "refreshBefore": grant.refresh_before,
        "cursor": cursor(sub.position),
        "truncated": false,
        "deliveryStatus": status,
    })
}

/// `events/unsubscribe`: forgets the subscription (its POSTs stop), or answers `-32011`
/// (`kind: "subscription"`) when there is none (never made, ended, or lapsed).
fn unsubscribe(server: &Shared, request: &CustomRequest) -> Result<Value, McpError> {
    #[derive(Deserialize)]
    struct Params {
        name: String,
        #[serde(default)]
        arguments: Map<String, Value>,
        delivery: Delivery,
    }
    let params: Params = request
        .params_as()
        .map_err(|e| McpError::invalid_params(format!("events/unsubscribe: {e}"), None))?
        .ok_or_else(|| McpError::invalid_params("events/unsubscribe: no params", None))?;
    let id = webhook_id(&params.delivery.url, &params.name, &params.arguments);
    let mut subs = crate::record::lock(&server.webhooks.subs);
    let removed = subs.remove(&id);
    let live = removed.filter(|s| {
        s.cancel.cancel();
        s.lapses_at
            .is_none_or(|at| at > tokio::time::Instant::now())
    });
    match live {
        Some(_) => Ok(json!({})),
        None => Err(McpError::new(
            ErrorCode(NOT_FOUND),
            format!("no webhook subscription {id}"),
            Some(json!({"kind": "subscription"})),
        )),
    }
}

/// A push notification's params: the occurrence with its cursor.
fn occurrence(event: &Stored) -> Value {
    event.with_cursor()
}

/// `StreamEventsResult`: empty.
fn final_result() -> CustomResult {
    CustomResult(json!({"_meta": {}}))
}

/// [`crate::Behavior::EmitEvent`]: emits an event of type `name` whose `data` is `data`
/// (an object) with the call's arguments added. Returns the occurrence.
pub(crate) fn emit(
    server: &Shared,
    name: &str,
    data: &Value,
    arguments: Option<&Map<String, Value>>,
) -> Value {
    let mut data = match data {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        other => {
            let mut map = Map::new();
            map.insert("value".to_owned(), other.clone());
            map
        }
    };
    for (k, v) in arguments.into_iter().flatten() {
        data.insert(k.clone(), v.clone());
    }
    let file = server
        .scenario
        .events
        .as_ref()
        .and_then(|e| e.history_file.as_deref());
    server.events.keep_in(file);
    server.events.emit(name, Value::Object(data))
}

/// [`crate::Behavior::EndEventStreams`]: ends (or silences) every open push stream.
/// Returns `{"streams": N}`, the streams open at that moment.
pub(crate) fn end_streams(server: &Shared, silent: bool) -> Value {
    let streams = server.events.open_streams.load(Ordering::SeqCst);
    if silent {
        server.events.silenced.send_modify(|n| *n += 1);
    } else {
        server.events.ended.send_modify(|n| *n += 1);
    }
    json!({ "streams": streams })
}

/// [`crate::Behavior::ForgetEvents`]: forgets all events but the latest `keep`. Returns
/// `{"forgotten": N}`.
pub(crate) fn forget(server: &Shared, keep: usize) -> Value {
    json!({ "forgotten": server.events.forget(keep) })
}

//! The gateway's webhook receiver: `POST /events/webhook/<token>` on the `--http`
//! listener (reached through `[gateway] public_url`), where upstream servers deliver the
//! events of the webhook subscriptions the relay made ([`super::event_relay`]). No bearer
//! token: each delivery proves itself by the Standard Webhooks signature of its
//! subscription's secret. Refused, and counted (`GET /events/relay`, and a `tracing`
//! warning each): an unknown callback (404), a forged delivery or one missing a header
//! (401), a timestamp outside the window (400), a delivery id accepted before (409). A
//! signed callback verification (`{"type": "verification", "challenge": …}`) is answered
//! with its challenge; a signed event goes to its subscription's buffer; a signed `gap`
//! marks the subscription truncated (its clients' next read from before it says
//! `truncated`), a signed `terminated` ends it for its clients.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use mcp_client::{WebhookBody, WebhookHeaders, WebhookRejection};
use serde_json::{Value, json};

use super::Hub;
use super::event_relay::{Hook, WEBHOOK_PATH};

/// The largest delivery accepted (the extension's limit for one event).
const MAX_DELIVERY: usize = 256 * 1024;

/// The receiver's route, without the bearer guard; from now on the relay makes webhook
/// subscriptions.
pub(crate) fn routes(hub: Arc<Hub>) -> axum::Router {
    hub.events.receiving.store(true, Ordering::SeqCst);
    axum::Router::new()
        .route(
            &format!("{WEBHOOK_PATH}/{{token}}"),
            axum::routing::post(receive),
        )
        .layer(axum::extract::DefaultBodyLimit::max(MAX_DELIVERY))
        .with_state(hub)
}

/// The relay's counts (`GET /events/relay`), behind the bearer guard.
pub(crate) fn status_routes(hub: Arc<Hub>) -> axum::Router {
    axum::Router::new()
        .route("/events/relay", axum::routing::get(counts))
        .with_state(hub)
}

async fn counts(State(hub): State<Arc<Hub>>) -> Response {
    axum::Json(json!({
        "webhook": hub.events.counts.json(),
        "subscriptions": hub.events.subscriptions(),
    }))
    .into_response()
}

fn refused(status: StatusCode, why: &str) -> Response {
    (status, axum::Json(json!({ "error": why }))).into_response()
}

async fn receive(
    State(hub): State<Arc<Hub>>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let counts = &hub.events.counts;
    let Some(hook) = hub.events.hook(&token) else {
        counts.unknown.fetch_add(1, Ordering::Relaxed);
        tracing::warn!("webhook delivery refused: no subscription has that callback URL");
        return refused(
            StatusCode::NOT_FOUND,
            "no subscription has this callback URL",
        );
    };
    let lookup = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let checked = hook.verifier.verify(
        &WebhookHeaders::from_lookup(lookup),
        &body,
        SystemTime::now(),
    );
    if let Err(rejection) = checked {
        let (status, count) = match &rejection {
            WebhookRejection::Replayed(_) => (StatusCode::CONFLICT, &counts.replayed),
            WebhookRejection::OutsideWindow { .. } => (StatusCode::BAD_REQUEST, &counts.stale),
            _ => (StatusCode::UNAUTHORIZED, &counts.forged),
        };
        count.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(event_type = %hook.event_type, "webhook delivery refused: {rejection}");
        return refused(status, &rejection.to_string());
    }
    let Ok(delivery) = WebhookBody::parse(&body) else {
        return refused(StatusCode::BAD_REQUEST, "the delivery is not an event");
    };
    let event = match delivery {
        WebhookBody::Event(event) => event,
        WebhookBody::Verification { challenge } => {
            counts.accepted.fetch_add(1, Ordering::Relaxed);
            return axum::Json(json!({ "challenge": challenge })).into_response();
        }
        envelope => return control(&hub, &hook, envelope),
    };
    if event.name != hook.event_type {
        return refused(
            StatusCode::BAD_REQUEST,
            "the delivery's event type is not the subscription's",
        );
    }
    let Some(relayed) = hook.relayed.upgrade() else {
        // The subscription ended: the server may stop delivering.
        return refused(StatusCode::GONE, "the subscription ended");
    };
    counts.accepted.fetch_add(1, Ordering::Relaxed);
    // Where the lease's next refresh resumes, should the server have lost it meanwhile.
    hook.record_cursor(event.cursor.as_deref());
    relayed.deliver(event);
    StatusCode::NO_CONTENT.into_response()
}

/// A signed control envelope: a `gap` marks the relayed subscription truncated (its
/// clients' next read from before it says so), a `terminated` ends it with the server's
/// error; another kind is acknowledged and ignored.
fn control(hub: &Hub, hook: &Hook, envelope: WebhookBody) -> Response {
    let Some(relayed) = hook.relayed.upgrade() else {
        return refused(StatusCode::GONE, "the subscription ended");
    };
    hub.events.counts.accepted.fetch_add(1, Ordering::Relaxed);
    match envelope {
        WebhookBody::Gap { cursor } => {
            tracing::warn!(event_type = %hook.event_type, "the upstream skipped events (gap)");
            hook.record_cursor(cursor.as_deref());
            relayed.skipped();
        }
        WebhookBody::Terminated { error } => {
            let why = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the upstream server ended the subscription");
            relayed.terminated(format!("the upstream subscription ended: {why}"));
        }
        other => {
            tracing::debug!(event_type = %hook.event_type, "ignored webhook envelope {other:?}")
        }
    }
    StatusCode::NO_CONTENT.into_response()
}

//! A webhook subscription kept alive ([`WebhookLease`]): subscribed once, refreshed (the
//! same `events/subscribe` again, with the latest cursor) at half the time left before
//! each grant's `refreshBefore`, retried with backoff when a refresh fails (each failure
//! counted and its error kept in [`WebhookLeaseStatus`]), and ended by
//! [`WebhookLease::close`] (`events/unsubscribe`, awaited) or, best effort, by dropping it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_key::McpServerKey;
use rmcp::model::{ClientRequest, CustomRequest};
use rmcp::service::{Peer, PeerRequestOptions};
use rmcp::{RoleClient, ServiceError};
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::error::{EventError, NOT_FOUND};
use super::subscribe::{WebhookSubscription, WebhookTarget, subscribe_params, unsubscribe_params};
use super::{DeliveryMode, EVENTS_REQUEST_TIMEOUT, EventSubscription};
use crate::rmcp_errors::ServiceFailure;
use crate::{Client, RequestError};

/// The first pause before a failed refresh is tried again (doubled after each failure).
pub const DEFAULT_REFRESH_BACKOFF: Duration = Duration::from_millis(250);

/// The longest pause between refresh attempts after failures.
pub const DEFAULT_MAX_REFRESH_BACKOFF: Duration = Duration::from_secs(30);

/// The shortest wait before a refresh, however close the grant's end.
const MIN_REFRESH_WAIT: Duration = Duration::from_millis(10);

/// How a [`WebhookLease`] retries failed refreshes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebhookLeaseSettings {
    /// The first pause after a failed refresh. Default [`DEFAULT_REFRESH_BACKOFF`].
    pub backoff: Duration,
    /// The longest pause. Default [`DEFAULT_MAX_REFRESH_BACKOFF`].
    pub max_backoff: Duration,
}

impl Default for WebhookLeaseSettings {
    fn default() -> Self {
        Self {
            backoff: DEFAULT_REFRESH_BACKOFF,
            max_backoff: DEFAULT_MAX_REFRESH_BACKOFF,
        }
    }
}

impl WebhookLeaseSettings {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set the first and the longest pause after failed refreshes.
    #[must_use]
    pub fn with_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.backoff = first;
        self.max_backoff = max.max(first);
        self
    }
}

/// How a [`WebhookLease`] fares.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WebhookLeaseStatus {
    /// The server's latest grant (the first subscribe's, then each successful refresh's).
    pub grant: WebhookSubscription,
    /// Successful refreshes.
    pub refreshes: u64,
    /// Failed refreshes, in all.
    pub failures: u64,
    /// The error of the latest refresh, when it failed (cleared by the next success).
    pub last_error: Option<EventError>,
}

/// What the refresh task and the handle share.
struct Shared {
    status: watch::Sender<WebhookLeaseStatus>,
    /// The latest cursor received (deliveries the host recorded, refresh answers).
    cursor: Mutex<Option<String>>,
}

impl Shared {
    fn cursor(&self) -> Option<String> {
        self.cursor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_cursor(&self, cursor: Option<String>) {
        if cursor.is_some() {
            *self.cursor.lock().unwrap_or_else(PoisonError::into_inner) = cursor;
        }
    }
}

/// A webhook subscription kept alive by a task of its own (see [`Client::lease_webhook`]).
///
/// The host's HTTP server receives the deliveries (verified with
/// [`super::WebhookVerifier`] built from the target's secret) and tells the lease each
/// delivery's cursor ([`Self::record_cursor`]), so that a refresh after the server lost the
/// subscription (it lapsed, the server restarted) resumes from there.
///
/// [`Self::close`] ends it: the refresh task stops and `events/unsubscribe` is awaited.
/// Dropping it without `close` stops the task and sends `events/unsubscribe` from a task
/// of its own, best effort (nothing reports whether it arrived; the server's TTL ends the
/// subscription otherwise).
pub struct WebhookLease {
    peer: Peer<RoleClient>,
    server: McpServerKey,
    subscription: EventSubscription,
    url: String,
    shared: Arc<Shared>,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for WebhookLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookLease")
            .field("server", &self.server)
            .field("event_type", &self.subscription.name)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Subscribes `subscription` by webhook to `target` from `cursor` (`None`: from now)
    /// and keeps it alive: refreshed at half the time left before each `refreshBefore`
    /// (never, when the server granted no expiry), a failed refresh retried after
    /// `settings`' backoff, doubled up to its maximum, each failure counted in
    /// [`WebhookLeaseStatus`].
    ///
    /// # Errors
    /// As [`Client::subscribe_webhook`], for the first subscription (nothing is kept then).
    ///
    /// # Cancel safety
    /// Cancel-safe as a request: the server may have subscribed meanwhile (the
    /// subscription lapses at its TTL).
    pub async fn lease_webhook(
        &self,
        subscription: EventSubscription,
        target: WebhookTarget,
        cursor: Option<String>,
        settings: WebhookLeaseSettings,
    ) -> Result<WebhookLease, EventError> {
        let grant = self
            .subscribe_webhook(&subscription, &target, cursor.as_deref())
            .await?;
        let shared = Arc::new(Shared {
            cursor: Mutex::new(grant.cursor.clone().or(cursor)),
            status: watch::channel(WebhookLeaseStatus {
                grant,
                refreshes: 0,
                failures: 0,
                last_error: None,
            })
            .0,
        });
        let cancel = CancellationToken::new();
        let refresher = Refresher {
            peer: self.peer.clone(),
            server: self.server().clone(),
            subscription: subscription.clone(),
            target: target.clone(),
            shared: Arc::clone(&shared),
            settings,
        };
        let task = tokio::spawn(refresher.run(cancel.clone()));
        Ok(WebhookLease {
            peer: self.peer.clone(),
            server: self.server().clone(),
            subscription,
            url: target.url,
            shared,
            cancel,
            task: Some(task),
        })
    }
}

impl WebhookLease {
    /// The server's id of the subscription (the `X-MCP-Subscription-Id` of its
    /// deliveries).
    pub fn id(&self) -> String {
        self.shared.status.borrow().grant.id.clone()
    }

    /// How it fares now.
    pub fn status(&self) -> WebhookLeaseStatus {
        self.shared.status.borrow().clone()
    }

    /// Follows its status: changed after each refresh, successful or not.
    pub fn watch_status(&self) -> watch::Receiver<WebhookLeaseStatus> {
        self.shared.status.subscribe()
    }

    /// Records the cursor of a delivery the host accepted (a watermark, safe to persist):
    /// the next refresh gives it back.
    pub fn record_cursor(&self, cursor: impl Into<String>) {
        self.shared.set_cursor(Some(cursor.into()));
    }

    /// The latest cursor received (recorded deliveries, refresh answers): the one to
    /// persist.
    pub fn cursor(&self) -> Option<String> {
        self.shared.cursor()
    }

    /// Stops refreshing and ends the subscription (`events/unsubscribe`).
    ///
    /// # Errors
    /// As [`Client::unsubscribe_webhook`]: [`EventError::UnknownSubscription`] when the
    /// server no longer has it (it lapsed).
    ///
    /// # Cancel safety
    /// Not cancel-safe: dropped midway, the refreshes are stopped but the server may
    /// still hold the subscription until its TTL.
    pub async fn close(mut self) -> Result<(), EventError> {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _stopped = task.await;
        }
        unsubscribe(&self.peer, &self.server, &self.subscription, &self.url).await
    }
}

impl Drop for WebhookLease {
    fn drop(&mut self) {
        let Some(task) = self.task.take() else {
            return;
        };
        self.cancel.cancel();
        task.abort();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let peer = self.peer.clone();
            let server = self.server.clone();
            let subscription = self.subscription.clone();
            let url = std::mem::take(&mut self.url);
            runtime.spawn(async move {
                if let Err(e) = unsubscribe(&peer, &server, &subscription, &url).await {
                    tracing::debug!(%server, error = %e, "a dropped webhook lease was not unsubscribed");
                }
            });
        }
    }
}

/// The refresh loop of one lease.
struct Refresher {
    peer: Peer<RoleClient>,
    server: McpServerKey,
    subscription: EventSubscription,
    target: WebhookTarget,
    shared: Arc<Shared>,
    settings: WebhookLeaseSettings,
}

impl Refresher {
    async fn run(self, cancel: CancellationToken) {
        let mut backoff = self.settings.backoff;
        let mut wait = refresh_wait(&self.shared.status.borrow().grant);
        loop {
            let Some(pause) = wait else {
                // No expiry: nothing to refresh.
                return cancel.cancelled().await;
            };
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(pause) => {}
            }
            let cursor = self.shared.cursor();
            let answered = tokio::select! {
                () = cancel.cancelled() => return,
                answered = self.refresh(cursor.as_deref()) => answered,
            };
            match answered {
                Ok(grant) => {
                    backoff = self.settings.backoff;
                    wait = refresh_wait(&grant);
                    self.shared.set_cursor(grant.cursor.clone());
                    self.shared.status.send_modify(|s| {
                        s.grant = grant;
                        s.refreshes += 1;
                        s.last_error = None;
                    });
                }
                Err(e) => {
                    tracing::debug!(server = %self.server, error = %e, "a webhook refresh failed");
                    wait = Some(backoff);
                    backoff = (backoff * 2).min(self.settings.max_backoff);
                    self.shared.status.send_modify(|s| {
                        s.failures += 1;
                        s.last_error = Some(e);
                    });
                }
            }
        }
    }

    async fn refresh(&self, cursor: Option<&str>) -> Result<WebhookSubscription, EventError> {
        let params = subscribe_params(&self.subscription, &self.target, cursor);
        let what = || {
            format!(
                "refreshing the webhook subscription of event type `{}`",
                self.subscription.name
            )
        };
        let answer = request(&self.peer, "events/subscribe", params)
            .await
            .map_err(|e| {
                EventError::of_request(
                    &self.server,
                    &self.subscription.name,
                    DeliveryMode::Webhook,
                    what(),
                    e,
                )
            })?;
        serde_json::from_value(answer).map_err(|e| EventError::Request {
            server: self.server.clone(),
            what: what().into(),
            source: RequestError::Protocol {
                detail: format!("an events/subscribe answer that is not one: {e}"),
            },
        })
    }
}

/// How long to wait before refreshing `grant`: half the time left before its
/// `refreshBefore`; `None` for no expiry.
fn refresh_wait(grant: &WebhookSubscription) -> Option<Duration> {
    let before = grant.refresh_before.as_deref()?;
    let Some(at) = parse_rfc3339(before) else {
        // Unreadable: refresh soon rather than lose it.
        return Some(MIN_REFRESH_WAIT);
    };
    let left = at.duration_since(SystemTime::now()).unwrap_or_default();
    Some((left / 2).max(MIN_REFRESH_WAIT))
}

/// `events/unsubscribe` through `peer`.
async fn unsubscribe(
    peer: &Peer<RoleClient>,
    server: &McpServerKey,
    subscription: &EventSubscription,
    url: &str,
) -> Result<(), EventError> {
    match request(
        peer,
        "events/unsubscribe",
        unsubscribe_params(subscription, url),
    )
    .await
    {
        Ok(_) => Ok(()),
        Err(RequestError::Server { code, .. }) if code == NOT_FOUND => {
            Err(EventError::UnknownSubscription {
                server: server.clone(),
                event_type: subscription.name.as_str().into(),
                url: url.into(),
            })
        }
        Err(e) => Err(EventError::of_request(
            server,
            &subscription.name,
            DeliveryMode::Webhook,
            format!(
                "unsubscribing event type `{}` from `{url}`",
                subscription.name
            ),
            e,
        )),
    }
}

/// One events request through `peer` (the refresh task has no `Client`).
async fn request(
    peer: &Peer<RoleClient>,
    method: &'static str,
    params: Map<String, Value>,
) -> Result<Value, RequestError> {
    let mut request =
        ClientRequest::CustomRequest(CustomRequest::new(method, Some(Value::Object(params))));
    crate::telemetry::inject(&mut request);
    let sent = peer
        .send_request_with_option(
            request,
            PeerRequestOptions::with_timeout(EVENTS_REQUEST_TIMEOUT),
        )
        .await;
    let answered = match sent {
        Ok(handle) => handle.await_response().await,
        Err(e) => Err(e),
    };
    match answered {
        Ok(result) => serde_json::to_value(result).map_err(|e| RequestError::Protocol {
            detail: format!("an answer to {method} that cannot be read: {e}"),
        }),
        Err(e) => Err(of_service(&e)),
    }
}

fn of_service(e: &ServiceError) -> RequestError {
    match ServiceFailure::of(e) {
        ServiceFailure::Refused(data) => RequestError::Server {
            code: data.code.0,
            message: data.message.to_string(),
        },
        _ => RequestError::not_sent(e),
    }
}

/// An RFC 3339 date-time (`2026-12-06T14:00:00.123Z`, `…+02:00`) as a time.
pub(crate) fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let (date, rest) = text.split_once(['T', 't', ' '])?;
    let mut parts = date.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next()?.parse().ok()?;
    let day: u32 = parts.next()?.parse().ok()?;
    let zone_at = rest.find(['Z', 'z', '+', '-'])?;
    let (time, zone) = rest.split_at(zone_at);
    let mut hms = time.splitn(3, ':');
    let hour: i64 = hms.next()?.parse().ok()?;
    let minute: i64 = hms.next()?.parse().ok()?;
    let seconds = hms.next()?;
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    let second: i64 = whole.parse().ok()?;
    let nanos: u32 = if fraction.is_empty() {
        0
    } else {
        let digits: String = fraction.chars().take(9).collect();
        let scale = 10u32.pow(9 - u32::try_from(digits.len()).ok()?);
        digits.parse::<u32>().ok()? * scale
    };
    let offset: i64 = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let (h, m) = zone.get(1..)?.split_once(':')?;
            sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
        }
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_are_read_with_fractions_and_offsets() {
        let at = |s| {
            parse_rfc3339(s)
                .map(|t| t.duration_since(UNIX_EPOCH).unwrap())
                .unwrap()
        };
        assert_eq!(at("1970-01-01T00:00:00Z"), Duration::ZERO);
        assert_eq!(
            at("2026-12-06T14:00:00Z"),
            Duration::from_secs(1_796_565_600)
        );
        assert_eq!(
            at("2026-12-06T14:00:00.250Z"),
            Duration::from_millis(1_796_565_600_250)
        );
        assert_eq!(
            at("2026-12-06T16:00:00+02:00"),
            Duration::from_secs(1_796_565_600)
        );
        assert_eq!(
            at("2024-02-29T00:00:00Z"),
            Duration::from_secs(1_709_164_800)
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2026-13-01T00:00:00Z"), None);
    }

    #[test]
    fn a_refresh_is_due_at_half_the_time_left_and_never_without_expiry() {
        let grant = |refresh_before: Option<String>| WebhookSubscription {
            id: "sub_1".into(),
            refresh_before,
            cursor: None,
            truncated: false,
            delivery_status: None,
        };
        assert_eq!(refresh_wait(&grant(None)), None);
        let in_ten = SystemTime::now() + Duration::from_secs(10);
        let secs = in_ten.duration_since(UNIX_EPOCH).unwrap().as_secs();
        let text = chrono_free_format(secs);
        let wait = refresh_wait(&grant(Some(text))).unwrap();
        assert!(
            wait > Duration::from_secs(3) && wait <= Duration::from_secs(5),
            "{wait:?}"
        );
        let past = refresh_wait(&grant(Some("2000-01-01T00:00:00Z".into()))).unwrap();
        assert_eq!(past, MIN_REFRESH_WAIT);
    }

    /// `secs` since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (the inverse of
    /// `days_from_civil`, for the test).
    fn chrono_free_format(secs: u64) -> String {
        let days = i64::try_from(secs / 86_400).unwrap();
        let rest = secs % 86_400;
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rest / 3600,
            rest % 3600 / 60,
            rest % 60
        )
    }
}

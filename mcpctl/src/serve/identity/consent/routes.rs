//! The consent pages and the sign-out endpoints.
//!
//! [`routes`] (mounted outside the gateway's token guard: a browser brings no token):
//! `GET /connect/start`, `GET /connect/callback`, and `DELETE /connect/callers/{caller}`,
//! which checks the admin token itself. [`signed_in_routes`] (mounted behind the guard,
//! which names the caller): `DELETE /connect/servers/{server}`.

use std::sync::Arc;

use axum::extract::{Path, Query, Request, State};
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use mcp_key::McpServerKey;
use serde::Deserialize;

use super::Consent;
use crate::serve::caller::Caller;

/// The start page's path.
pub(crate) const START_PATH: &str = "/connect/start";
/// The callback's path (the redirect URI registered upstream).
pub(crate) const CALLBACK_PATH: &str = "/connect/callback";
/// Where a caller signs out of one server (`DELETE`, behind the guard).
pub(crate) const SIGN_OUT_PATH: &str = "/connect/servers/{server}";
/// The caller's own sign-ins (behind the guard, which names the caller).
pub(crate) const SIGN_INS_PATH: &str = "/connect/servers";
/// Where an administrator removes every credential of one caller (`DELETE`, admin token).
pub(crate) const REVOKE_CALLER_PATH: &str = "/connect/callers/{caller}";

/// The start of the name of the cookie that ties the browser at the callback to the one
/// at the start page ([`cookie_name`]).
const BROWSER_COOKIE: &str = "mcpctl_consent";

/// The cookie of the sign-in with `nonce`: one per sign-in, so sign-ins begun side by side
/// in one browser (two servers, or a link opened twice) do not displace each other.
fn cookie_name(nonce: &str) -> String {
    format!("{BROWSER_COOKIE}_{}", nonce.get(..16).unwrap_or(nonce))
}

/// No script, nothing loaded from elsewhere, no framing.
const PAGE_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The browser pages and the admin revocation: mount outside the token guard.
pub(crate) fn routes(consent: Arc<Consent>) -> axum::Router {
    axum::Router::new()
        .route(START_PATH, axum::routing::get(start))
        .route(CALLBACK_PATH, axum::routing::get(callback))
        .route(REVOKE_CALLER_PATH, axum::routing::delete(revoke_caller))
        .with_state(consent)
}

/// A caller's sign-out: mount behind the token guard (it reads the guard's caller).
pub(crate) fn signed_in_routes(consent: Arc<Consent>) -> axum::Router {
    axum::Router::new()
        .route(SIGN_OUT_PATH, axum::routing::delete(sign_out))
        .route(SIGN_INS_PATH, axum::routing::get(sign_ins))
        .with_state(consent)
}

#[derive(Deserialize)]
struct StartQuery {
    state: Option<String>,
}

async fn start(State(consent): State<Arc<Consent>>, Query(query): Query<StartQuery>) -> Response {
    let state = query.state.unwrap_or_default();
    let (sign_in, server, resource) = match consent.open(&state) {
        Ok(found) => found,
        Err(problem) => return page(StatusCode::BAD_REQUEST, "Sign-in failed", &problem.text()),
    };
    let Some(base) = consent.base() else {
        return page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Sign-in failed",
            &super::ConsentError::NoAddress.to_string(),
        );
    };
    let redirect_uri = format!("{base}{CALLBACK_PATH}");
    let browser = match crate::serve::random_hex(32) {
        Ok(b) => b,
        Err(e) => {
            return page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Sign-in failed",
                &e.to_string(),
            );
        }
    };
    let started = consent
        .upstream
        .start(&resource, &redirect_uri, &state, browser.clone())
        .await;
    let (url, started) = match started {
        Ok(done) => done,
        Err(e) => {
            return page(
                StatusCode::BAD_GATEWAY,
                "Sign-in failed",
                &format!(
                    "cannot reach the sign-in of server `{server}`: {e}. Nothing was stored; try again later, or ask the gateway's operator"
                ),
            );
        }
    };
    if let Err(problem) = consent.record_start(&sign_in, &started).await {
        return problem_page(&problem);
    }
    let secure = if base.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!(
        "{}={browser}; Path=/connect; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
        cookie_name(&sign_in.nonce),
        super::STATE_LIFETIME.as_secs()
    );
    (
        StatusCode::FOUND,
        [
            (header::LOCATION, url),
            (header::SET_COOKIE, cookie),
            (header::CACHE_CONTROL, "no-store".to_owned()),
            (header::REFERRER_POLICY, "no-referrer".to_owned()),
        ],
    )
        .into_response()
}

#[derive(Deserialize)]
struct CallbackQuery {
    state: Option<String>,
    code: Option<String>,
    error: Option<String>,
    iss: Option<String>,
}

async fn callback(
    State(consent): State<Arc<Consent>>,
    Query(query): Query<CallbackQuery>,
    request: Request,
) -> Response {
    let failed = "Sign-in failed";
    // Taken whatever happens next: a state is good for one callback.
    let state = query.state.as_deref().unwrap_or_default();
    let (sign_in, server, _) = match consent.open(state) {
        Ok(found) => found,
        Err(problem) => return page(StatusCode::BAD_REQUEST, failed, &problem.text()),
    };
    let started = match consent.take(&sign_in).await {
        Ok(started) => started,
        Err(problem) => return problem_page(&problem),
    };
    let server = &server;
    let cookie = browser_cookie(&request, &cookie_name(&sign_in.nonce));
    if !cookie.is_some_and(|c| started.is_browser(&c)) {
        return page(
            StatusCode::FORBIDDEN,
            failed,
            &format!(
                "this sign-in to `{server}` was started in another browser; nothing was stored. Retry the call and open its link here"
            ),
        );
    }
    if let Some(error) = &query.error {
        return page(
            StatusCode::FORBIDDEN,
            failed,
            &format!(
                "the authorization server of `{server}` did not grant access ({error}); nothing was stored. Retry the call to sign in again"
            ),
        );
    }
    if let (Some(iss), Some(issuer)) = (&query.iss, &started.issuer)
        && iss != issuer
    {
        return page(
            StatusCode::BAD_REQUEST,
            failed,
            &format!(
                "the answer came from `{iss}`, not from `{issuer}`, the authorization server of `{server}`; nothing was stored"
            ),
        );
    }
    let Some(code) = query.code.as_deref().filter(|c| !c.is_empty()) else {
        return page(
            StatusCode::BAD_REQUEST,
            failed,
            "the answer carries no code; nothing was stored. Retry the call to sign in again",
        );
    };
    let record = match consent.upstream.finish(&started, code).await {
        Ok(record) => record,
        Err(e) => {
            return page(
                StatusCode::BAD_GATEWAY,
                failed,
                &format!(
                    "signing in to `{server}` failed: {e}. Nothing was stored; retry the call to sign in again"
                ),
            );
        }
    };
    if let Err(e) = consent.vault.put(&sign_in.caller, server, &record).await {
        tracing::warn!(%server, error = %e, "a sign-in's credentials could not be stored");
        return page(
            StatusCode::SERVICE_UNAVAILABLE,
            failed,
            &format!(
                "the credentials for `{server}` cannot be stored: {e}. Ask the gateway's operator"
            ),
        );
    }
    page(
        StatusCode::OK,
        "Signed in",
        &format!("Signed in to {server}. You can close this page and retry the call."),
    )
}

/// The page of a start or callback that cannot go on.
fn problem_page(problem: &super::StartProblem) -> Response {
    let status = match problem {
        super::StartProblem::State(_) => StatusCode::BAD_REQUEST,
        super::StartProblem::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    page(status, "Sign-in failed", &problem.text())
}

/// The value of the cookie `name`, if the request carries it.
fn browser_cookie(request: &Request, name: &str) -> Option<String> {
    request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(found, _)| *found == name)
        .map(|(_, value)| value.to_owned())
}

async fn sign_out(
    State(consent): State<Arc<Consent>>,
    Path(server): Path<String>,
    request: Request,
) -> Response {
    let Some(caller) = request.extensions().get::<Arc<Caller>>().cloned() else {
        return (StatusCode::UNAUTHORIZED, "mcpctl serve: no caller\n").into_response();
    };
    let key = match server.parse::<McpServerKey>() {
        Ok(key) if consent.is_caller_server(&key) => key,
        _ => {
            return (
                StatusCode::NOT_FOUND,
                format!("mcpctl serve: `{server}` is no server callers sign in to here\n"),
            )
                .into_response();
        }
    };
    match consent.vault.delete(caller.id(), &key).await {
        Ok(removed) => {
            axum::Json(serde_json::json!({ "server": key.to_string(), "removed": removed }))
                .into_response()
        }
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("mcpctl serve: the credential store cannot remove `{key}`: {e}\n"),
        )
            .into_response(),
    }
}

/// `GET /connect/servers`: the requesting caller's view of every `caller` server, in
/// name order: whether it is signed in there, when the access token expires (unix
/// seconds), when the credentials were last written, and the last refresh failure. Never
/// a token, and never another caller's rows.
async fn sign_ins(State(consent): State<Arc<Consent>>, request: Request) -> Response {
    let Some(caller) = request.extensions().get::<Arc<Caller>>().cloned() else {
        return (StatusCode::UNAUTHORIZED, "mcpctl serve: no caller\n").into_response();
    };
    let entries = match consent.vault.list(caller.id()).await {
        Ok(entries) => entries,
        Err(e) => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("mcpctl serve: the credential store cannot be read: {e}\n"),
            )
                .into_response();
        }
    };
    let servers: Vec<serde_json::Value> = consent
        .caller_servers()
        .map(|server| {
            let entry = entries.iter().find(|e| &e.server == server);
            serde_json::json!({
                "server": server.to_string(),
                "signed_in": entry.is_some(),
                "expires_at": entry.and_then(|e| e.expires_at),
                "updated_at_ms": entry.map(|e| e.updated_at_ms),
                "refresh_failure": entry.and_then(|e| e.refresh_failure.as_ref()).map(|f| {
                    serde_json::json!({"reason": f.reason, "at_ms": f.at_ms})
                }),
            })
        })
        .collect();
    axum::Json(serde_json::json!({ "caller": caller.id(), "servers": servers })).into_response()
}

async fn revoke_caller(
    State(consent): State<Arc<Consent>>,
    Path(caller): Path<String>,
    request: Request,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let allowed = match (&consent.admin_token, presented) {
        (Some(token), Some(presented)) => same(token.as_bytes(), presented.as_bytes()),
        _ => false,
    };
    if !allowed {
        return (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                "Bearer realm=\"mcpctl serve admin\"",
            )],
            format!(
                "mcpctl serve: revoking a caller's credentials needs the admin token (${})\n",
                super::ADMIN_TOKEN_VAR
            ),
        )
            .into_response();
    }
    // The caller's credentials and the approvals remembered for it go together.
    let forget = async {
        let removed = consent.vault.delete_caller(&caller).await?;
        consent.vault.forget_approvals(&caller).await?;
        Ok::<_, mcp_auth::VaultError>(removed)
    };
    match forget.await {
        Ok(removed) => {
            consent.revoked(&caller);
            axum::Json(serde_json::json!({ "caller": caller, "removed": removed })).into_response()
        }
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("mcpctl serve: the credential store cannot remove the credentials of `{caller}`: {e}\n"),
        )
            .into_response(),
    }
}

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A small page: `title` and `text`, escaped.
fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body style=\"font-family:sans-serif;max-width:40em;margin:3em auto\">\
         <h1>{title}</h1><p>{text}</p></body></html>\n",
        title = escape_html(title),
        text = escape_html(text),
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, PAGE_POLICY),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        body,
    )
        .into_response()
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

//! The registry's endpoints over a [`Store`].

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{StatusCode, header};
use serde_json::{Value, json};

use crate::record::lock;
use crate::registry::contents::{
    MAX_REGISTRY_LIMIT, REGISTRY_OFFICIAL_META, RegistryEntry, RegistryStatus, Store,
};

type Shared = State<Arc<Store>>;
type Params = Query<BTreeMap<String, String>>;

pub(crate) fn router(store: Arc<Store>) -> axum::Router {
    axum::Router::new()
        .route("/v0.1/servers", get(list))
        .route("/v0.1/servers/{name}/versions", get(versions))
        .route("/v0.1/servers/{name}/versions/{version}", get(one))
        .route("/files/{name}", get(file))
        .with_state(store)
}

/// Records the request, waits the set delay, and answers an injected failure if one is due.
async fn arrive(store: &Store, uri: &Uri) -> Option<Response> {
    let shown = uri.path_and_query().map_or(uri.path(), |pq| pq.as_str());
    lock(&store.requests).push(shown.to_owned());
    let delay = *lock(&store.delay);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let failure = {
        let mut queue = lock(&store.fail_next);
        (!queue.is_empty()).then(|| queue.remove(0))
    };
    failure.map(|status| {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        error(status, "injected failure")
    })
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

fn include_deleted(params: &BTreeMap<String, String>) -> bool {
    params.get("include_deleted").is_some_and(|v| v == "true")
}

/// Whether `entries[index]` is its server's latest version: the newest one not deleted.
fn is_latest(entries: &[RegistryEntry], index: usize) -> bool {
    let name = &entries[index].name;
    entries
        .iter()
        .enumerate()
        .rev()
        .find(|(_, e)| e.name == *name && e.status != RegistryStatus::Deleted)
        .is_some_and(|(at, _)| at == index)
}

/// A `ServerResponse`: the document under `server`, the registry's metadata under `_meta`.
fn response(entries: &[RegistryEntry], index: usize) -> Value {
    let entry = &entries[index];
    let server = entry.document.clone().unwrap_or_else(
        || json!({ "name": entry.name, "version": entry.version, "description": "(not JSON)" }),
    );
    // Fixed, increasing timestamps: one minute per publication.
    let published = format!("2025-10-01T{:02}:{:02}:00Z", index / 60 % 24, index % 60);
    let mut official = json!({
        "status": entry.status.as_str(),
        "publishedAt": published,
        "updatedAt": published,
        "isLatest": is_latest(entries, index),
    });
    if let Some(message) = &entry.status_message {
        official["statusMessage"] = json!(message);
    }
    json!({ "server": server, "_meta": { REGISTRY_OFFICIAL_META: official } })
}

async fn list(State(store): Shared, uri: Uri, Query(params): Params) -> Response {
    if let Some(failure) = arrive(&store, &uri).await {
        return failure;
    }
    let limit = match params.get("limit").map(|l| l.parse::<usize>()) {
        None => store.page_size,
        // A registry may give fewer than asked: the page size bounds every page.
        Some(Ok(limit)) if (1..=MAX_REGISTRY_LIMIT).contains(&limit) => limit.min(store.page_size),
        Some(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("limit must be a number from 1 to {MAX_REGISTRY_LIMIT}"),
            );
        }
    };
    let start = match params.get("cursor").filter(|c| !c.is_empty()) {
        None => 0,
        Some(cursor) => match cursor.strip_prefix("after-").map(str::parse::<usize>) {
            Some(Ok(start)) => start,
            _ => return error(StatusCode::BAD_REQUEST, "invalid cursor"),
        },
    };
    let search = params.get("search").map(|s| s.to_lowercase());
    let deleted = include_deleted(&params);
    let entries = lock(&store.entries).clone();
    let mut matching: Vec<usize> = (0..entries.len())
        .filter(|&i| {
            let entry = &entries[i];
            (deleted || entry.status != RegistryStatus::Deleted)
                && search
                    .as_deref()
                    .is_none_or(|s| entry.name.to_lowercase().contains(s))
                && match params.get("version").map(String::as_str) {
                    None | Some("") => true,
                    Some("latest") => is_latest(&entries, i),
                    Some(version) => entry.version == version,
                }
        })
        .collect();
    matching.sort_by(|&a, &b| entries[a].name.cmp(&entries[b].name).then(a.cmp(&b)));
    let page: Vec<Value> = matching
        .iter()
        .skip(start)
        .take(limit)
        .map(|&i| response(&entries, i))
        .collect();
    let mut metadata = json!({ "count": page.len() });
    if start + limit < matching.len() {
        metadata["nextCursor"] = json!(format!("after-{}", start + limit));
    }
    axum::Json(json!({ "servers": page, "metadata": metadata })).into_response()
}

async fn versions(
    State(store): Shared,
    uri: Uri,
    Path(name): Path<String>,
    Query(params): Params,
) -> Response {
    if let Some(failure) = arrive(&store, &uri).await {
        return failure;
    }
    let deleted = include_deleted(&params);
    let entries = lock(&store.entries).clone();
    let servers: Vec<Value> = (0..entries.len())
        .rev()
        .filter(|&i| {
            entries[i].name == name && (deleted || entries[i].status != RegistryStatus::Deleted)
        })
        .map(|i| response(&entries, i))
        .collect();
    if servers.is_empty() {
        return error(StatusCode::NOT_FOUND, "Server not found");
    }
    let count = servers.len();
    axum::Json(json!({ "servers": servers, "metadata": { "count": count } })).into_response()
}

async fn one(
    State(store): Shared,
    uri: Uri,
    Path((name, version)): Path<(String, String)>,
    Query(params): Params,
) -> Response {
    if let Some(failure) = arrive(&store, &uri).await {
        return failure;
    }
    let deleted = include_deleted(&params);
    let entries = lock(&store.entries).clone();
    let found = (0..entries.len()).rev().find(|&i| {
        let entry = &entries[i];
        entry.name == name
            && (deleted || entry.status != RegistryStatus::Deleted)
            && if version == "latest" {
                is_latest(&entries, i)
            } else {
                entry.version == version
            }
    });
    let Some(index) = found else {
        return error(StatusCode::NOT_FOUND, "Server not found");
    };
    match &entries[index].raw {
        Some(body) => ([(header::CONTENT_TYPE, "application/json")], body.clone()).into_response(),
        None => axum::Json(response(&entries, index)).into_response(),
    }
}

async fn file(State(store): Shared, uri: Uri, Path(name): Path<String>) -> Response {
    if let Some(failure) = arrive(&store, &uri).await {
        return failure;
    }
    match lock(&store.files).get(&name) {
        Some(bytes) => (
            [(header::CONTENT_TYPE, "application/octet-stream")],
            bytes.clone(),
        )
            .into_response(),
        None => error(StatusCode::NOT_FOUND, "File not found"),
    }
}

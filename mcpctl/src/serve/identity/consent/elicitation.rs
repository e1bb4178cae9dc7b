//! How a client is sent to a start page: a URL-mode elicitation (MCP 2025-11-25
//! `elicitation/create` with `mode: "url"`), the same request inside a 2026-era
//! `input_required` result, the 2025-11-25 `URLElicitationRequiredError` (-32042) for a
//! call that cannot wait, and the plain text for a client that takes no URL elicitation.
//! Once the user signed in after a 2025-11-25 URL elicitation, the client is told with
//! `notifications/elicitation/complete` ([`completed`]).

use std::time::Duration;

use mcp_key::McpServerKey;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CustomNotification, ElicitRequest, ElicitRequestParams, ErrorCode, InputRequest,
    ServerNotification,
};

/// The 2025-11-25 `URLElicitationRequiredError` code: the call needs the user to open a
/// URL first; `data.elicitations` holds the URL elicitations.
pub(super) const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);

/// The message shown beside the URL.
fn message(server: &McpServerKey) -> String {
    format!("Sign in to {server} to let the gateway call it as you.")
}

/// A stable id for the elicitation of `url` (the client may match a later
/// `notifications/elicitation/complete` with it).
fn elicitation_id(server: &McpServerKey, url: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, url.as_bytes());
    format!(
        "sign-in-{server}-{}",
        mcp_key::hex_encode(&digest.as_ref()[..8])
    )
}

/// The params of a 2025-11-25 `elicitation/create` request with `mode: "url"` sending the
/// user to `url` to sign in to `server`.
pub(crate) fn url_elicitation(server: &McpServerKey, url: &str) -> ElicitRequestParams {
    ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: message(server),
        url: url.to_owned(),
        elicitation_id: elicitation_id(server, url),
    }
}

/// The same request as one entry of a 2026-era `input_required` result's
/// `inputRequests` (that era has no `elicitationId`: it is left empty, as rmcp models
/// that era).
pub(crate) fn url_input_request(server: &McpServerKey, url: &str) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: message(server),
            url: url.to_owned(),
            elicitation_id: String::new(),
        },
    ))
}

/// What a client that takes no URL elicitation is told.
pub(crate) fn cannot_elicit_text(server: &McpServerKey, url: &str) -> String {
    format!("open {url} to sign in to {server}, then retry")
}

/// The 2025-11-25 `URLElicitationRequiredError`: the call fails, naming the page in its
/// message (for clients that do not read `data`) and as a URL elicitation in `data`.
pub(crate) fn url_required_error(server: &McpServerKey, url: &str) -> McpError {
    let data = serde_json::json!({ "elicitations": [url_elicitation(server, url)] });
    McpError::new(
        URL_ELICITATION_REQUIRED,
        cannot_elicit_text(server, url),
        Some(data),
    )
}

/// The 2025-11-25 `notifications/elicitation/complete` for the URL elicitation `params`
/// (its `elicitationId`): the user finished at the page. `None` for a form elicitation.
pub(crate) fn completed(params: &ElicitRequestParams) -> Option<ServerNotification> {
    let ElicitRequestParams::UrlElicitationParams { elicitation_id, .. } = params else {
        return None;
    };
    Some(ServerNotification::CustomNotification(
        CustomNotification::new(
            "notifications/elicitation/complete",
            Some(serde_json::json!({ "elicitationId": elicitation_id })),
        ),
    ))
}

/// The tool error when the user declined (or cancelled) the URL elicitation to sign in.
pub(crate) fn declined_text(server: &McpServerKey, url: &str) -> String {
    format!(
        "sign-in to {server} was declined: the gateway calls {server} with your own credentials only; open {url} to sign in, then retry"
    )
}

/// The tool error when the client gave no answer to the URL elicitation.
pub(crate) fn unanswered_text(server: &McpServerKey, url: &str) -> String {
    format!(
        "the client did not answer the request to sign in to {server}; open {url} to sign in, then retry"
    )
}

/// The tool error when the user accepted but no credentials arrived within `waited`.
pub(crate) fn not_signed_in_text(server: &McpServerKey, url: &str, waited: Duration) -> String {
    format!(
        "no sign-in to {server} finished within {}s of accepting; open {url} to sign in, then retry",
        waited.as_secs()
    )
}

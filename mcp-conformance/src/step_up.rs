//! Finding the `WWW-Authenticate` challenge of a 403 the connection set reported only as an
//! error: the call is replayed once, directly, with the current token.
//!
//! This is a stand-in until the connection set hands 403 `insufficient_scope` challenges
//! to an auth hook itself (see the report to the lead).

use mcp_key::Secret;
use serde_json::{Value, json};

/// POSTs a `tools/call` for `tool` with `token`; returns the challenge of a 403
/// `insufficient_scope`, if that is what the server answers.
pub(crate) async fn insufficient_scope_challenge(
    url: &str,
    token: &Secret,
    tool: &str,
    arguments: &Value,
) -> Option<String> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}});
    let response = http
        .post(url)
        .bearer_auth(token.expose())
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .json(&body)
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::FORBIDDEN {
        return None;
    }
    let challenge = response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()?
        .to_owned();
    challenge
        .contains("insufficient_scope")
        .then_some(challenge)
}

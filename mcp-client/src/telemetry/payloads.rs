//! A call's arguments and result on its span, for a host that opts in
//! ([`CallSettings::with_recorded_payloads`](crate::CallSettings::with_recorded_payloads)):
//! as the conventions' opt-in `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`,
//! JSON text redacted the way this workspace redacts what it logs (URLs through
//! [`mcp_key::redact_urls`]) and, beyond that, with the value of every member whose name
//! marks a secret replaced (also inside text that is itself JSON), and cut at
//! [`MAX_RECORDED_PAYLOAD`] bytes.

use serde_json::Value;
use tracing::Span;

/// Longest JSON text recorded per attribute, in bytes; a longer one is cut at a character
/// boundary and ends with `…`.
pub const MAX_RECORDED_PAYLOAD: usize = 8 * 1024;

/// Words that mark a JSON member's value as a secret, matched in its name with case and
/// `_`/`-` ignored (`apiKey`, `X-Api-Key`, `client_secret`, `refresh_token`, …).
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "authorization",
    "cookie",
    "credential",
    "privatekey",
    "sessionid",
];

/// Records `arguments` on the current span (the call's).
pub(crate) fn record_arguments(arguments: Option<&serde_json::Map<String, Value>>) {
    let text = arguments.map_or_else(|| "{}".to_owned(), |a| recorded(&Value::Object(a.clone())));
    Span::current().record("gen_ai.tool.call.arguments", text.as_str());
}

/// Records the call's `result` on `span`.
pub(crate) fn record_result(span: &Span, result: &rmcp::model::CallToolResult) {
    if let Ok(value) = serde_json::to_value(result) {
        span.record("gen_ai.tool.call.result", recorded(&value).as_str());
    }
}

/// `value` redacted ([`redact`]) as JSON text of at most [`MAX_RECORDED_PAYLOAD`] bytes.
fn recorded(value: &Value) -> String {
    let mut text = redact(value).to_string();
    if text.len() > MAX_RECORDED_PAYLOAD {
        let mut end = MAX_RECORDED_PAYLOAD;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// `value` with the value of every member whose name marks a secret replaced by
/// [`mcp_key::REDACTED`] at any depth, every string's URLs redacted, and a string that is
/// itself a JSON object or array (a tool's text content often is) redacted as JSON. Other
/// text is kept as it is: a secret written into prose is not found.
fn redact(value: &Value) -> Value {
    match value {
        Value::String(text) => {
            let trimmed = text.trim_start();
            if (trimmed.starts_with('{') || trimmed.starts_with('['))
                && let Ok(inner @ (Value::Object(_) | Value::Array(_))) =
                    serde_json::from_str::<Value>(text)
            {
                return Value::String(redact(&inner).to_string());
            }
            Value::String(mcp_key::redact_urls(text).into_owned())
        }
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(name, value)| {
                    let value = if names_a_secret(name) {
                        Value::String(mcp_key::REDACTED.to_owned())
                    } else {
                        redact(value)
                    };
                    (name.clone(), value)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether a member named `name` holds a secret (see [`SECRET_NAMES`]).
fn names_a_secret(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_NAMES.iter().any(|word| folded.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_members_and_urls_are_redacted_at_any_depth() {
        let value = json!({
            "q": "weather",
            "X-Api-Key": "k",
            "nested": [{"refresh_token": {"a": 1}, "Password": 7, "link": "see http://h/?t=1"}],
            "tokens_used": 5,
        });
        assert_eq!(
            redact(&value),
            json!({
                "q": "weather",
                "X-Api-Key": "***",
                "nested": [{"refresh_token": "***", "Password": "***", "link": "see http://h/?***"}],
                "tokens_used": "***",
            })
        );
    }

    #[test]
    fn json_written_as_text_is_redacted_as_json() {
        let value = json!({"content": [{"type": "text", "text": r#"{"token": "t", "n": 1}"#}]});
        assert_eq!(
            redact(&value),
            json!({"content": [{"type": "text", "text": r#"{"n":1,"token":"***"}"#}]})
        );
        let prose = json!("token t, see {braces}");
        assert_eq!(redact(&prose), prose, "prose stays as written");
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        let text = recorded(&json!({"t": "é".repeat(MAX_RECORDED_PAYLOAD)}));
        assert!(
            text.len() <= MAX_RECORDED_PAYLOAD + '…'.len_utf8(),
            "{}",
            text.len()
        );
        assert!(text.ends_with('…'));
        assert_eq!(recorded(&json!({"a": 1})), r#"{"a":1}"#);
    }
}

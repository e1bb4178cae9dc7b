//! A call's arguments and result on its span, for a host that opts in
//! ([`CallSettings::with_recorded_payloads`](crate::CallSettings::with_recorded_payloads)):
//! as the conventions' opt-in `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`,
//! JSON text redacted the way this workspace redacts what it logs
//! ([`mcp_key::redact_secrets`]) and, beyond that, with the value of every member whose name
//! marks a secret ([`mcp_key::is_secret_name`]) and of every header written as a
//! name/value pair replaced (also inside text that is itself JSON), and cut at
//! [`MAX_RECORDED_PAYLOAD`] bytes.

use serde_json::Value;
use tracing::Span;

/// Longest JSON text recorded per attribute, in bytes; a longer one is cut at a character
/// boundary and ends with `…`.
pub const MAX_RECORDED_PAYLOAD: usize = 8 * 1024;

/// Records `arguments` on the current span (the call's).
pub(crate) fn record_arguments(arguments: Option<&serde_json::Map<String, Value>>) {
    let text = arguments.map_or_else(|| "{}".to_owned(), |a| recorded(&Value::Object(a.clone())));
    Span::current().record(super::semconv::GEN_AI_TOOL_CALL_ARGUMENTS, text.as_str());
}

/// Records the call's `result` on `span`.
pub(crate) fn record_result(span: &Span, result: &rmcp::model::CallToolResult) {
    if let Ok(value) = serde_json::to_value(result) {
        span.record(
            super::semconv::GEN_AI_TOOL_CALL_RESULT,
            recorded(&value).as_str(),
        );
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

/// `value` with the value of every member whose name marks a secret
/// ([`mcp_key::is_secret_name`]) replaced by [`mcp_key::REDACTED`] at any depth, and so the
/// value of a header written as a pair (`["Authorization", "Bearer …"]`,
/// `{"name": "X-Api-Key", "value": "…"}`); every string redacted as logs are
/// ([`mcp_key::redact_secrets`]: URLs of any scheme, `token=…` pairs, `Bearer` credentials),
/// and a string that is itself a JSON object or array (a tool's text content often is)
/// redacted as JSON. A secret written into prose without a name is not found.
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
            Value::String(mcp_key::redact_secrets(text).into_owned())
        }
        Value::Array(items) => match items.as_slice() {
            [Value::String(name), Value::String(_)] if mcp_key::is_secret_name(name) => {
                Value::Array(vec![Value::String(name.clone()), hidden()])
            }
            _ => Value::Array(items.iter().map(redact).collect()),
        },
        Value::Object(members) => {
            let header = ["name", "key", "header"]
                .iter()
                .filter_map(|field| members.get(*field)?.as_str())
                .any(mcp_key::is_secret_name);
            Value::Object(
                members
                    .iter()
                    .map(|(name, value)| {
                        let secret = if header && name == "value" {
                            true
                        } else if header && name == "key" {
                            false // the header's name, shown as it is
                        } else {
                            mcp_key::is_secret_name(name)
                        };
                        let value = if secret { hidden() } else { redact(value) };
                        (name.clone(), value)
                    })
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

fn hidden() -> Value {
    Value::String(mcp_key::REDACTED.to_owned())
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
            "tokens": 5,
        });
        assert_eq!(
            redact(&value),
            json!({
                "q": "weather",
                "X-Api-Key": "***",
                "nested": [{"refresh_token": "***", "Password": "***", "link": "see http://h/?***"}],
                "tokens": "***",
            })
        );
    }

    #[test]
    fn short_secret_names_header_pairs_and_other_urls_are_redacted() {
        let value = json!({
            "pass": "p", "db_pwd": "p", "key": "k", "auth": "a", "bearer": "b", "jwt": "j",
            "author": "Ann", "max_tokens": 5,
            "headers": [["Authorization", "Bearer abc"], ["Accept", "text/plain"]],
            "header_list": [
                {"name": "X-Api-Key", "value": "k2"},
                {"key": "Cookie", "value": "c=1"},
                {"name": "Accept", "value": "*/*"},
            ],
            "dsn": "POSTGRES://app:pw@db/app",
            "note": "run with token=sk-live-1 and Bearer abcdefghijk",
        });
        assert_eq!(
            redact(&value),
            json!({
                "pass": "***", "db_pwd": "***", "key": "***", "auth": "***", "bearer": "***",
                "jwt": "***", "author": "Ann", "max_tokens": 5,
                "headers": [["Authorization", "***"], ["Accept", "text/plain"]],
                "header_list": [
                    {"name": "X-Api-Key", "value": "***"},
                    {"key": "Cookie", "value": "***"},
                    {"name": "Accept", "value": "*/*"},
                ],
                "dsn": "POSTGRES://***@db/app",
                "note": "run with token=*** and Bearer ***",
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

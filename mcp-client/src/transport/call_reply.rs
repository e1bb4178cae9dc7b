//! A tool call's reply read as a `CallToolResult` directly, instead of through rmcp's
//! untagged `ServerResult` union.
//!
//! rmcp parses a response's `result` as its untagged `ServerResult` union: serde tries the
//! union's variants in order, and `CallToolResult` is the sixteenth. Each variant that does
//! not fit fails with an error whose message is formatted and then searched for a position,
//! so a tool call's reply costs fifteen formatted errors before it is read: measured with
//! callgrind on the client process of a loop of `echo` calls, that parse was 28 % of a bare
//! rmcp client's instructions per call over stdio (about 21,700 of 76,900), almost all of it
//! the failed variants.
//!
//! A reply whose `result` holds only `CallToolResult`'s own members (`content`,
//! `structuredContent`, `isError`, `_meta`, `resultType`) is read as a `CallToolResult`
//! directly: every variant before it in the union needs a member outside that set, so the
//! union would pick the same variant (`tests::the_fast_path_reads_what_rmcp_reads` holds
//! this against rmcp's own parse for every combination of those members). Whoever uses it
//! must know the reply answers a `tools/call` it sent: the stdio lines
//! ([`super::stdio_lines`]) and a tool call's HTTP reply ([`super::http_call_reply`]).

use rmcp::RoleClient;
use rmcp::model::{
    CallToolResult, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerResult,
};
use rmcp::service::RxJsonRpcMessage;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// A reply whose `result` may be a `CallToolResult`, read without parsing the result yet.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyShape<'a> {
    #[expect(dead_code, reason = "checked by its type: \"2.0\" or no fast path")]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    result: &'a RawValue,
}

/// The members a `CallToolResult` has: a result with any other member is left to rmcp.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[expect(dead_code, reason = "only which members are present matters")]
struct CallToolMembers {
    result_type: Option<IgnoredAny>,
    content: Option<IgnoredAny>,
    structured_content: Option<IgnoredAny>,
    is_error: Option<IgnoredAny>,
    #[serde(rename = "_meta")]
    meta: Option<IgnoredAny>,
}

/// A tool call's reply read on the fast path.
pub(crate) struct CallReply {
    pub(crate) id: RequestId,
    result: CallToolResult,
}

impl CallReply {
    /// The reply as the message rmcp's own parse gives.
    pub(crate) fn into_message(self) -> RxJsonRpcMessage<RoleClient> {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: self.id,
            result: ServerResult::CallToolResult(self.result),
        })
    }
}

/// `line` as the reply to a tool call, if it is one that rmcp's union would read as a
/// `CallToolResult` (see the module docs); `None` sends the line down the general path.
pub(crate) fn call_reply(line: &[u8]) -> Option<CallReply> {
    let shape: ReplyShape<'_> = serde_json::from_slice(line).ok()?;
    let result = shape.result.get();
    serde_json::from_str::<CallToolMembers>(result).ok()?;
    let result = serde_json::from_str::<CallToolResult>(result).ok()?;
    Some(CallReply {
        id: shape.id,
        result,
    })
}

/// The `CallToolResult` in `message`, as JSON, if it holds one (for tests that compare
/// what the fast path and rmcp read).
#[cfg(test)]
pub(crate) fn as_call_result(message: &RxJsonRpcMessage<RoleClient>) -> Option<serde_json::Value> {
    match message {
        JsonRpcMessage::Response(r) => match &r.result {
            ServerResult::CallToolResult(c) => serde_json::to_value(c).ok(),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// rmcp's own reading of a line.
    fn rmcp_reads(line: &str) -> Option<RxJsonRpcMessage<RoleClient>> {
        serde_json::from_str(line).ok()
    }

    /// Every combination of `CallToolResult`'s members (with values that fit and values
    /// that do not), alone or beside a member of another result: whenever the fast path
    /// reads a reply, rmcp's own parse reads the same `CallToolResult`; and a reply that
    /// rmcp reads as a `CallToolResult` with only those members is read on the fast path.
    #[test]
    fn the_fast_path_reads_what_rmcp_reads() {
        let members: [(&str, &[Value]); 5] = [
            (
                "content",
                &[json!([{"type": "text", "text": "hi"}]), json!([]), json!(7)],
            ),
            (
                "structuredContent",
                &[json!({"a": 1.5, "b": [1, -2]}), json!(null)],
            ),
            ("isError", &[json!(true), json!(false), json!("no")]),
            ("_meta", &[json!({"k": "v"}), json!(3)]),
            (
                "resultType",
                &[json!("complete"), json!("input_required"), json!("task")],
            ),
        ];
        let extras = [
            None,
            Some(("task", json!({"taskId": "t", "status": "working"}))),
            Some(("tools", json!([]))),
            Some(("action", json!("accept"))),
            Some(("other", json!(1))),
        ];
        let (mut fast, mut checked) = (0, 0);
        for mask in 0u32..(1 << members.len()) {
            // Each present member takes each of its values in turn (a few combinations).
            for pick in 0..3 {
                for extra in &extras {
                    let mut result = serde_json::Map::new();
                    for (i, (name, values)) in members.iter().enumerate() {
                        if mask & (1 << i) != 0 {
                            result.insert((*name).into(), values[pick % values.len()].clone());
                        }
                    }
                    if let Some((name, value)) = extra {
                        result.insert((*name).into(), value.clone());
                    }
                    let line = json!({"jsonrpc": "2.0", "id": 4, "result": result}).to_string();
                    let ours = call_reply(line.as_bytes()).map(CallReply::into_message);
                    let theirs = rmcp_reads(&line);
                    checked += 1;
                    if let Some(ours) = &ours {
                        fast += 1;
                        let theirs = theirs.as_ref().and_then(as_call_result);
                        assert_eq!(as_call_result(ours), theirs, "{line}");
                    } else if extra.is_none()
                        && let Some(theirs) = theirs.as_ref().and_then(as_call_result)
                    {
                        panic!("rmcp reads {theirs} from {line}, the fast path does not");
                    }
                }
            }
        }
        assert!(
            fast >= 30 && fast < checked,
            "{fast} of {checked} on the fast path"
        );
    }

    #[test]
    fn a_reply_with_both_a_result_and_an_error_is_not_read_fast() {
        let line =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":1,"message":"m"}}"#;
        assert!(call_reply(line).is_none());
        let wrong_version = br#"{"jsonrpc":"1.0","id":1,"result":{"content":[]}}"#;
        assert!(call_reply(wrong_version).is_none());
    }
}

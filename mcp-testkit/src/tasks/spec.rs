//! The scenario side of [`Behavior::Task`](crate::Behavior::Task): how its work ends
//! ([`TaskEnd`]) and what it asks the user ([`TaskAsk`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the work of a [`Behavior::Task`](crate::Behavior::Task) ends. In files:
/// `"end": "complete"`, `"end": "never"`, `"end": {"tool_error": {"message": "…"}}`,
/// `"end": {"fail": {"code": -32000, "message": "…"}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum TaskEnd {
    /// The task completes (`status: "completed"`) with the result a
    /// [`Behavior::Echo`](crate::Behavior::Echo) call returns: text content is the JSON of
    /// the arguments, `structuredContent` the arguments object. When the task asked the
    /// user ([`TaskAsk`]), the answer's `action` and `content` are added under the key
    /// `"answer"`: `{"answer": {"action": "accept", "content": {…}}, …arguments}` (an
    /// argument named `answer` is replaced).
    #[default]
    Complete,
    /// The task completes with a tool error: a `CallToolResult` with `isError: true` and
    /// `message` as its one text block.
    ToolError {
        /// The error text.
        message: String,
    },
    /// The task fails (`status: "failed"`) with the JSON-RPC error object
    /// `{"code": code, "message": message}`. Without the task path, the call itself is
    /// answered with that JSON-RPC error.
    Fail {
        /// The JSON-RPC error code.
        code: i32,
        /// The error message.
        message: String,
    },
    /// The work never ends: the task stays `working` (after its steps and question) until
    /// it is cancelled, forgotten (TTL) or the server stops. Without the task path, the
    /// call waits until it is cancelled.
    Never,
}

/// The question of a [`Behavior::Task`](crate::Behavior::Task): a form-mode
/// `elicitation/create`.
///
/// On the task path the task goes `input_required` with
/// `inputRequests: {"input": {"method": "elicitation/create", "params": {"mode": "form",
/// "message": message, "requestedSchema": schema}}}` and waits for `tasks/update` with
/// `inputResponses: {"input": <ElicitResult>}`. Without it, the question takes the way of
/// [`Behavior::ElicitForm`](crate::Behavior::ElicitForm): a request of the server's own
/// halfway through the work in the 2025-11-25 era, an MRTR round before the work in the
/// 2026-07-28 era.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TaskAsk {
    /// The message shown to the user.
    pub message: String,
    /// `requestedSchema` (an object schema of primitive properties).
    pub schema: Value,
}

impl TaskAsk {
    /// A question with `message` and `requestedSchema` `schema`.
    pub fn new(message: impl Into<String>, schema: Value) -> Self {
        Self {
            message: message.into(),
            schema,
        }
    }

    /// The `params` of its `elicitation/create`.
    pub(crate) fn params(&self) -> Value {
        serde_json::json!({
            "mode": "form",
            "message": self.message,
            "requestedSchema": self.schema,
        })
    }

    /// Its input request: `{"method": "elicitation/create", "params": …}`.
    pub(crate) fn input_request(&self) -> Value {
        serde_json::json!({"method": "elicitation/create", "params": self.params()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Behavior, Scenario};
    use serde_json::json;

    fn behavior(value: Value) -> Behavior {
        let scenario = json!({"tools": [{"name": "t", "behavior": value}]});
        Scenario::from_json_str(&scenario.to_string())
            .unwrap()
            .tools
            .remove(0)
            .behavior
    }

    #[test]
    fn only_work_ms_is_required() {
        assert_eq!(
            behavior(json!({"kind": "task", "work_ms": 5})),
            Behavior::Task {
                work_ms: 5,
                steps: 0,
                end: TaskEnd::Complete,
                ask: None,
                poll_interval_ms: None,
                ttl_ms: None,
                garbage_get: false,
            }
        );
    }

    #[test]
    fn ends_are_written_in_snake_case() {
        let ends = [
            (json!("complete"), TaskEnd::Complete),
            (json!("never"), TaskEnd::Never),
            (
                json!({"tool_error": {"message": "m"}}),
                TaskEnd::ToolError {
                    message: "m".into(),
                },
            ),
            (
                json!({"fail": {"code": -32000, "message": "m"}}),
                TaskEnd::Fail {
                    code: -32000,
                    message: "m".into(),
                },
            ),
        ];
        for (written, end) in ends {
            let parsed = behavior(json!({"kind": "task", "work_ms": 0, "end": written}));
            assert!(
                matches!(&parsed, Behavior::Task { end: e, .. } if *e == end),
                "{parsed:?}"
            );
            assert_eq!(serde_json::to_value(&end).unwrap(), written);
        }
    }
}

//! Sampling (`sampling/createMessage`): a server asks the host's model for a message. The
//! request is checked before the host sees it, and the host's answer is checked against
//! the request before the server sees it (a host must not answer with a tool the server
//! did not offer, nor use tools when the server asked for none).

#![expect(
    deprecated,
    reason = "rmcp marks sampling deprecated (SEP-2577), yet MCP 2025-11-25 and 2026-07-28 define sampling/createMessage"
)]

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ErrorCode, ErrorData,
    SamplingMessageContentBlock, ToolChoiceMode,
};

/// The method of server-to-client sampling requests.
pub(crate) const SAMPLING_CREATE: &str = "sampling/createMessage";

/// The JSON-RPC error code of a refused sampling request (the code the MCP specification
/// shows for a user who rejects one).
pub const SAMPLING_REFUSED_CODE: i32 = -1;

/// Why the host did not answer a sampling request: sent to the server as a JSON-RPC error
/// (code [`SAMPLING_REFUSED_CODE`]) in the 2025 era; in the 2026 era the call that asked
/// fails with [`RequestError::Declined`](crate::RequestError::Declined).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
#[non_exhaustive]
pub struct SamplingRefusal {
    /// What the server is told.
    pub reason: String,
}

impl SamplingRefusal {
    /// A refusal with `reason`, the text the server sees.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// The refusal the default [`ServerRequests`](crate::ServerRequests) gives: the host
    /// has no model to offer.
    pub fn not_offered() -> Self {
        Self::new("this client does not offer sampling")
    }

    pub(crate) fn into_error(self) -> ErrorData {
        ErrorData::new(ErrorCode(SAMPLING_REFUSED_CODE), self.reason, None)
    }
}

/// Checks a request before the host sees it: messages whose tool uses and results do not
/// pair up, tool content in the wrong role.
pub(crate) fn check_request(request: &CreateMessageRequestParams) -> Result<(), String> {
    if request.messages.is_empty() {
        return Err("the request has no messages".to_owned());
    }
    request.validate()
}

/// Checks the host's answer against the request it answers: the role is `assistant`, a
/// model is named, and tools are used only when the request offered them (and did not
/// forbid them with `toolChoice: none`), each one by a name the request offered.
pub fn check_answer(
    request: &CreateMessageRequestParams,
    answer: &CreateMessageResult,
) -> Result<(), String> {
    answer.validate()?;
    if answer.model.trim().is_empty() {
        return Err("the answer names no model".to_owned());
    }
    let offered: Vec<&str> = request
        .tools
        .iter()
        .flatten()
        .map(|tool| tool.name.as_ref())
        .collect();
    let forbidden = request
        .tool_choice
        .as_ref()
        .is_some_and(|choice| matches!(choice.mode, Some(ToolChoiceMode::None)));
    let mut uses = 0usize;
    for block in answer.message.content.iter() {
        if let SamplingMessageContentBlock::ToolUse(call) = block {
            uses += 1;
            if forbidden {
                return Err(format!(
                    "the answer uses tool `{}` though the request said toolChoice none",
                    call.name
                ));
            }
            if !offered.contains(&call.name.as_str()) {
                return Err(format!(
                    "the answer uses tool `{}`, which the request did not offer",
                    call.name
                ));
            }
        }
        if matches!(block, SamplingMessageContentBlock::ToolResult(_)) {
            return Err("the answer holds a tool result, which only a user message may".to_owned());
        }
    }
    let stops_for_tools =
        answer.stop_reason.as_deref() == Some(CreateMessageResult::STOP_REASON_TOOL_USE);
    if stops_for_tools && uses == 0 {
        return Err("the answer stops for tool use but uses no tool".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use rmcp::model::{Role, SamplingMessage, Tool, ToolChoice};
    use serde_json::{Map, json};

    use super::*;

    fn request(tools: &[&str]) -> CreateMessageRequestParams {
        let mut request =
            CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hi")], 100);
        if !tools.is_empty() {
            request.tools = Some(
                tools
                    .iter()
                    .map(|name| Tool::new(name.to_string(), "", Map::new()))
                    .collect(),
            );
        }
        request
    }

    fn text_answer() -> CreateMessageResult {
        CreateMessageResult::new(SamplingMessage::assistant_text("hello"), "m".to_owned())
    }

    fn tool_answer(name: &str) -> CreateMessageResult {
        CreateMessageResult::new(
            SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::tool_use("c1", name, Map::new()),
            ),
            "m".to_owned(),
        )
        .with_stop_reason(CreateMessageResult::STOP_REASON_TOOL_USE)
    }

    #[test]
    fn a_text_answer_to_a_plain_request_passes() {
        assert_eq!(check_answer(&request(&[]), &text_answer()), Ok(()));
    }

    #[test]
    fn tool_use_needs_an_offered_tool() {
        let err = check_answer(&request(&[]), &tool_answer("weather")).unwrap_err();
        assert!(err.contains("did not offer"), "{err}");
        assert_eq!(
            check_answer(&request(&["weather"]), &tool_answer("weather")),
            Ok(())
        );
        let mut forbidding = request(&["weather"]);
        forbidding.tool_choice = Some(ToolChoice::none());
        let err = check_answer(&forbidding, &tool_answer("weather")).unwrap_err();
        assert!(err.contains("toolChoice none"), "{err}");
    }

    #[test]
    fn the_answer_must_be_the_assistants_and_name_a_model() {
        let user = CreateMessageResult::new(SamplingMessage::user_text("x"), "m".to_owned());
        assert!(check_answer(&request(&[]), &user).is_err());
        let nameless = text_answer().with_model("  ");
        assert!(check_answer(&request(&[]), &nameless).is_err());
        let stop = text_answer().with_stop_reason("toolUse");
        assert!(check_answer(&request(&[]), &stop).is_err());
    }

    #[test]
    fn requests_without_messages_or_with_unpaired_tool_results_are_refused() {
        let empty = CreateMessageRequestParams::new(Vec::new(), 10);
        assert!(check_request(&empty).is_err());
        let unpaired: CreateMessageRequestParams = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "tool_result", "toolUseId": "x", "content": []}}],
            "maxTokens": 10
        }))
        .unwrap();
        assert!(check_request(&unpaired).is_err());
        assert_eq!(check_request(&request(&[])), Ok(()));
    }
}

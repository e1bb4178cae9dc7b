//! `completion/complete`: the values a scenario offers for an argument of a prompt
//! ([`crate::PromptSpec::completions`]) or of a resource template
//! ([`crate::ResourceTemplateSpec::completions`]).

use rmcp::ErrorData as McpError;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};

use crate::record::lock;
use crate::shared::Shared;

/// The offered values of the argument that start with what was typed (at most
/// [`CompletionInfo::MAX_VALUES`], `total` counting all of them); an unknown prompt,
/// template or argument is an "invalid params" error naming it.
pub(crate) fn complete(
    server: &Shared,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, McpError> {
    let argument = &request.argument;
    let offered = match &request.r#ref {
        Reference::Prompt(reference) => {
            let prompts = lock(&server.prompts);
            let prompt = prompts
                .iter()
                .find(|p| p.name == reference.name)
                .ok_or_else(|| {
                    invalid(format!("fake server has no prompt {:?}", reference.name))
                })?;
            prompt
                .completions
                .get(&argument.name)
                .cloned()
                .ok_or_else(|| {
                    invalid(format!(
                        "prompt {:?} has no completions for argument {:?}",
                        prompt.name, argument.name
                    ))
                })?
        }
        Reference::Resource(reference) => {
            let template = server
                .scenario
                .resource_templates
                .iter()
                .find(|t| t.uri_template == reference.uri)
                .ok_or_else(|| {
                    invalid(format!(
                        "fake server has no resource template {:?}",
                        reference.uri
                    ))
                })?;
            template
                .completions
                .get(&argument.name)
                .cloned()
                .ok_or_else(|| {
                    invalid(format!(
                        "resource template {:?} has no completions for argument {:?}",
                        template.uri_template, argument.name
                    ))
                })?
        }
        other => {
            return Err(invalid(format!(
                "fake server cannot complete a {:?}",
                other.reference_type()
            )));
        }
    };
    let matching: Vec<String> = offered
        .into_iter()
        .filter(|v| v.starts_with(&argument.value))
        .collect();
    let total = matching.len();
    let values = matching
        .into_iter()
        .take(CompletionInfo::MAX_VALUES)
        .collect();
    let info = CompletionInfo::with_pagination(
        values,
        Some(u32::try_from(total).unwrap_or(u32::MAX)),
        total > CompletionInfo::MAX_VALUES,
    )
    .map_err(|e| McpError::internal_error(e, None))?;
    Ok(CompleteResult::new(info))
}

fn invalid(message: String) -> McpError {
    McpError::invalid_params(message, None)
}

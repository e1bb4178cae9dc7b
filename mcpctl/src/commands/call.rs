//! `mcpctl call NAME [JSON_ARGS | -] [--server KEY]`: call a tool and print its result.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use mcp_connections::{CallOptions, Progress, ServerState};
use serde_json::Value;

use crate::cli::{CallArgs, GlobalArgs};
use crate::error::{CliError, EXIT_FAILURE};
use crate::progress::ProgressMode;
use crate::session::Session;
use crate::style::Style;

const ARGS_HINT: &str =
    r#"pass a JSON object, for example '{"text": "hello"}', or `-` to read it from stdin"#;

/// Reads and checks the arguments before any server starts: `None` when absent.
pub(crate) fn parse_arguments(args: &CallArgs) -> Result<Option<Value>, CliError> {
    let text = match args.arguments.as_deref() {
        None => return Ok(None),
        Some("-") => std::io::read_to_string(std::io::stdin()).map_err(|e| {
            CliError::usage(format!("cannot read the tool arguments from stdin: {e}"))
                .with_hint(ARGS_HINT)
        })?,
        Some(text) => text.to_owned(),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        CliError::usage(format!("the tool arguments are not valid JSON: {e}")).with_hint(ARGS_HINT)
    })?;
    match value {
        Value::Object(_) => Ok(Some(value)),
        Value::Null => Ok(None),
        other => Err(CliError::usage(format!(
            "the tool arguments must be a JSON object, got {}",
            json_kind(&other)
        ))
        .with_hint(ARGS_HINT)),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Runs `call`.
pub(crate) async fn run(
    session: &mut Session,
    global: &GlobalArgs,
    args: &CallArgs,
    arguments: Option<Value>,
) -> Result<u8, CliError> {
    let mut options = CallOptions::new();
    if let Some(secs) = args.timeout {
        let timeout = Duration::try_from_secs_f64(secs).map_err(|_| {
            CliError::usage(format!("--timeout {secs} is not a valid number of seconds"))
                .with_hint("pass a positive number such as --timeout 30")
        })?;
        options = options.with_timeout(timeout);
    }
    if !global.json && std::io::stderr().is_terminal() {
        options = options.with_progress(Arc::new(|p: Progress| {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = p.message.map(|m| format!(" {m}")).unwrap_or_default();
            eprintln!("progress: {}{total}{message}", p.progress);
        }));
    }
    let result = match &args.server {
        Some(server) => {
            let key = session.server_key(server)?;
            session
                .set
                .call_tool(&key, &args.name, arguments, options)
                .await
        }
        None => {
            let summary = session
                .wait_startup(ProgressMode::choose(global.json, false))
                .await;
            let outcome = session
                .set
                .call_qualified(&args.name, arguments, options)
                .await;
            if let Err(e) = &outcome
                && e.is_unknown()
            {
                return Err(unknown_tool(&args.name, &summary));
            }
            outcome
        }
    };
    let result = result.map_err(CliError::from)?;
    let wire = serde_json::to_value(&result)
        .map_err(|e| CliError::failure(format!("cannot encode the tool result as JSON: {e}")))?;
    let is_error = wire
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if global.json {
        super::out_json(&wire);
    } else if is_error {
        let s = Style::stderr();
        eprintln!(
            "{} tool `{}` returned an error:",
            s.red_bold("error:"),
            args.name
        );
        eprint!("{}", crate::render::call_result(&wire));
    } else {
        super::out(&crate::render::call_result(&wire));
    }
    Ok(if is_error { EXIT_FAILURE } else { 0 })
}

/// The unknown-tool error, naming servers that did not start (their tools are missing).
fn unknown_tool(name: &str, summary: &mcp_connections::StartupSummary) -> CliError {
    let unready: Vec<String> = summary
        .servers
        .iter()
        .filter(|s| !matches!(s.state, ServerState::Ready { .. }))
        .map(|s| s.key.to_string())
        .collect();
    let hint = if unready.is_empty() {
        "run `mcpctl tools` to see the qualified names, or pass --server KEY to call a tool by its own name".to_owned()
    } else {
        format!(
            "run `mcpctl tools` to see the qualified names; these servers are not ready, so their tools are missing: {} (see `mcpctl status`)",
            unready.join(", ")
        )
    };
    CliError::usage(format!("unknown tool `{name}`: no ready server offers it")).with_hint(hint)
}

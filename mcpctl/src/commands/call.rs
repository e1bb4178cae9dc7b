//! `mcpctl call NAME [JSON_ARGS | -] [--server KEY] [--yes]`: call a tool and print its
//! result, after asking on the terminal where the tool's approval mode asks.

use std::time::Duration;

use mcp_connections::{CallOptions, ServerState};
use serde_json::Value;

use crate::cli::{CallArgs, GlobalArgs};
use crate::error::{CliError, EXIT_FAILURE};
use crate::host::session::Session;
use crate::term::progress::{CallProgress, ProgressMode};
use crate::term::style::Style;

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
            mcp_catalog::json_type_name(&other)
        ))
        .with_hint(ARGS_HINT)),
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
        options = options.with_call(|c| c.with_timeout(timeout));
    }
    let (progress, callback) = CallProgress::start(global.json);
    if let Some(callback) = callback {
        options = options.with_call(|c| c.with_progress(Some(callback)));
    }
    let result = match &args.server {
        Some(server) => {
            let key = session.server_key(server)?;
            if args.yes {
                session
                    .set
                    .call_tool(&key, &args.name, arguments, options)
                    .await
            } else {
                session
                    .set
                    .call_tool_approved(&key, &args.name, arguments, options)
                    .await
            }
        }
        None => {
            // Call as soon as a ready server offers the tool; do not wait for the others.
            let set = session.set.clone();
            let name = args.name.clone();
            let offered = move || set.resolve_tool(&name).is_some();
            session
                .wait_until(ProgressMode::choose(global.json, false), &offered)
                .await;
            let outcome = if args.yes {
                session
                    .set
                    .call_qualified(&args.name, arguments, options)
                    .await
            } else {
                // Asked on the terminal where the tool's approval mode asks; the call
                // goes to exactly the definition the question showed.
                session
                    .set
                    .call_approved(&args.name, arguments, options)
                    .await
            };
            if let Err(e) = &outcome
                && e.is_unknown()
            {
                let summary = session.set.wait_startup().await;
                return Err(unknown_tool(session, &args.name, &summary).await);
            }
            outcome
        }
    };
    progress.finish();
    let result = result.map_err(|e| not_approved_hint(session, e))?;
    let wire = serde_json::to_value(&result)
        .map_err(|e| CliError::failure(format!("cannot encode the tool result as JSON: {e}")))?;
    let is_error = wire
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if global.json {
        crate::term::render::out_json(&wire);
    } else if is_error {
        let s = Style::stderr();
        eprintln!(
            "{} tool `{}` returned an error:",
            s.red_bold("error:"),
            args.name
        );
        eprint!("{}", crate::term::render::call_result(&wire));
    } else {
        crate::term::render::out(&crate::term::render::call_result(&wire));
    }
    Ok(if is_error { EXIT_FAILURE } else { 0 })
}

/// The error of a failed call; for a call that was not approved, what to do: a tool held
/// back since it changed is accepted with `mcpctl accept`, another approved on a terminal
/// or with `--yes`.
fn not_approved_hint(session: &Session, e: mcp_connections::Error) -> CliError {
    let hint = match &e {
        mcp_connections::Error::NotApproved { server, tool, .. } => {
            let held = session
                .set
                .tool_drift(server)
                .iter()
                .any(|d| d.tool == *tool);
            Some(if held {
                format!(
                    "it changed since it was approved: see the change with `mcpctl tools`, accept it with `mcpctl accept {} {}` or by answering yes on a terminal",
                    server,
                    crate::term::render::terminal_safe(tool)
                )
            } else {
                "answer the question on a terminal, or pass --yes to run it without asking"
                    .to_owned()
            })
        }
        _ => None,
    };
    let error = session.error(e);
    match hint {
        Some(hint) => error.with_kind("not_approved").with_hint(hint),
        None => error,
    }
}

/// The unknown-tool error: the tool filter when it hides the tool, else close names and
/// the servers that are not ready (their tools are missing).
async fn unknown_tool(
    session: &Session,
    name: &str,
    summary: &mcp_connections::StartupSummary,
) -> CliError {
    if let Some((server, tool)) = split_qualified(name)
        && let Ok(key) = session.server_key(server)
        && let Some(config) = session.catalog.get(&key)
        && !config.tool_filter().allows(tool)
    {
        return CliError::from(mcp_connections::Error::ToolFiltered {
            server: key,
            tool: tool.to_owned(),
        });
    }
    let names: Vec<String> = session
        .set
        .tools()
        .await
        .into_iter()
        .map(|t| t.qualified_name)
        .collect();
    let close = closest(name, &names);
    let unready: Vec<String> = summary
        .servers
        .iter()
        .filter(|s| !matches!(s.state, ServerState::Ready { .. }))
        .map(|s| s.key.to_string())
        .collect();
    let mut hint = match close {
        Some(close) => format!("did you mean `{close}`? "),
        None => String::new(),
    };
    hint.push_str("run `mcpctl tools` to see the qualified names");
    if unready.is_empty() {
        hint.push_str(", or pass --server KEY to call a tool by its own name");
    } else {
        hint.push_str(&format!(
            "; these servers are not ready, so their tools are missing: {} (see `mcpctl status`)",
            unready.join(", ")
        ));
    }
    CliError::usage(format!("unknown tool `{name}`: no ready server offers it"))
        .with_kind("unknown_tool")
        .with_hint(hint)
}

/// `mcp__server__tool` -> (`server`, `tool`), best effort.
fn split_qualified(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp__")?.split_once("__")
}

/// The known name closest to `name` (edit distance at most a fifth of its length).
fn closest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    let limit = (name.chars().count() / 5).max(1);
    known
        .iter()
        .map(|k| (mcp_key::edit_distance(name, k), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested() {
        let known = vec![
            "mcp__notes__echo".to_owned(),
            "mcp__notes__search_notes".to_owned(),
        ];
        assert_eq!(
            closest("mcp__notes__ecoh", &known),
            Some("mcp__notes__echo")
        );
        assert_eq!(closest("mcp__weather__rain", &known), None);
        assert_eq!(mcp_key::edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            split_qualified("mcp__notes__drop_table"),
            Some(("notes", "drop_table"))
        );
        assert_eq!(split_qualified("echo"), None);
    }

    #[test]
    fn arguments_must_be_a_json_object() {
        let args = |a: &str| CallArgs {
            name: "t".to_owned(),
            arguments: Some(a.to_owned()),
            server: None,
            timeout: None,
            yes: false,
        };
        assert_eq!(
            parse_arguments(&args(r#"{"a": 1}"#)).ok().flatten(),
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(parse_arguments(&args("null")).ok().flatten(), None);
        assert_eq!(parse_arguments(&args("  ")).ok().flatten(), None);
        assert!(parse_arguments(&args("[1]")).is_err());
        assert!(parse_arguments(&args("{")).is_err());
    }
}

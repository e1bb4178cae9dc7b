//! `mcpctl events SERVER`: the event types a server describes (the Events extension);
//! `mcpctl events watch SERVER TYPE [--filter JSON] [--count N]`: its events as they come,
//! one per line (JSON lines with `--json`), until Ctrl-C or `--count` events. The
//! subscription (push when offered, else poll) ends when the command does.

use mcp_connections::{EventFeedError, EventFeedOptions, EventType, StreamItem};
use serde_json::{Value, json};

use crate::cli::{EventsWatchArgs, GlobalArgs};
use crate::error::CliError;
use crate::host::session::Session;
use crate::serve::StopSignals;
use crate::term::render::{out, terminal_safe, warn};

/// Runs `events SERVER`.
pub(crate) async fn list(
    session: &mut Session,
    global: &GlobalArgs,
    server: Option<&str>,
) -> Result<u8, CliError> {
    let Some(server) = server else {
        return Err(CliError::usage(
            "name the server whose event types to list: mcpctl events SERVER",
        ));
    };
    let key = session.server_key(server)?;
    let types = session
        .set
        .event_types(&key)
        .await
        .map_err(|e| feed_error(session, e))?;
    if global.json {
        crate::term::render::out_json(&Value::Array(types.iter().map(to_json).collect()));
    } else if types.is_empty() {
        out(&format!("server `{key}` describes no event type\n"));
    } else {
        let mut rows = vec![vec![
            "EVENT TYPE".to_owned(),
            "DELIVERY".to_owned(),
            "DESCRIPTION".to_owned(),
        ]];
        for t in &types {
            rows.push(vec![
                terminal_safe(&t.name).into_owned(),
                delivery(t).join(", "),
                terminal_safe(t.description.as_deref().unwrap_or("")).into_owned(),
            ]);
        }
        let mut text = crate::term::render::table(&rows).join("\n");
        text.push('\n');
        out(&text);
    }
    Ok(0)
}

fn delivery(t: &EventType) -> Vec<String> {
    t.delivery.iter().map(ToString::to_string).collect()
}

fn to_json(t: &EventType) -> Value {
    json!({
        "name": t.name,
        "description": t.description,
        "delivery": delivery(t),
        "input_schema": t.input_schema,
        "payload_schema": t.payload_schema,
    })
}

/// Runs `events watch SERVER TYPE`.
pub(crate) async fn watch(
    session: &mut Session,
    global: &GlobalArgs,
    args: &EventsWatchArgs,
    stop: &mut StopSignals,
) -> Result<u8, CliError> {
    let filter = match &args.filter {
        None => serde_json::Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(filter)) => filter,
            Ok(_) => return Err(CliError::usage("--filter takes a JSON object")),
            Err(e) => {
                return Err(CliError::usage(format!("--filter is not valid JSON: {e}")));
            }
        },
    };
    let key = session.server_key(&args.server)?;
    let mut feed = session
        .set
        .subscribe_events(&key, &args.event_type, filter, EventFeedOptions::new())
        .await
        .map_err(|e| feed_error(session, e))?;
    let what = format!(
        "event type `{}` of server `{key}`",
        terminal_safe(&args.event_type)
    );
    let mut seen: u64 = 0;
    let mut reported_drops = 0;
    let outcome = loop {
        if args.count.is_some_and(|count| seen >= count) {
            break Ok(0);
        }
        // Ctrl-C ends the loop here, not by dropping it: the subscription is then ended
        // with the server (below) before the command's servers are shut down.
        let item = tokio::select! {
            item = feed.next() => item,
            () = stop.recv() => break Err(CliError::interrupted()),
        };
        let Some(item) = item else {
            break Ok(0);
        };
        if feed.dropped() > reported_drops {
            reported_drops = feed.dropped();
            warn(&format!(
                "{reported_drops} events of {what} were dropped: mcpctl fell behind"
            ));
        }
        match item {
            StreamItem::Event(event) => {
                seen += 1;
                let line = if global.json {
                    serde_json::to_string(&event).unwrap_or_default()
                } else {
                    let data = serde_json::to_string(&event.data).unwrap_or_default();
                    format!(
                        "{}  {}  {}  {}",
                        terminal_safe(&event.timestamp),
                        terminal_safe(&event.name),
                        terminal_safe(&event.event_id),
                        terminal_safe(&data),
                    )
                };
                out(&format!("{line}\n"));
            }
            StreamItem::Truncated { .. } => warn(&format!(
                "the server skipped events of {what} (it no longer holds them)"
            )),
            StreamItem::Lost { reason } => warn(&format!(
                "lost the subscription to {what} ({}); trying again",
                terminal_safe(&reason)
            )),
            StreamItem::Restored => warn(&format!("the subscription to {what} is back")),
            StreamItem::ServerError { code, message } => warn(&format!(
                "the server reported an error on {what} (error {code}: {})",
                terminal_safe(&message)
            )),
            StreamItem::Ended(e) => break Err(CliError::failure(mcp_key::error_chain(&e))),
            _ => {}
        }
    };
    feed.shutdown().await;
    outcome
}

/// The command's error for `e`.
fn feed_error(session: &Session, e: EventFeedError) -> CliError {
    match e {
        EventFeedError::Set(e) => session.error(*e),
        other => CliError::failure(mcp_key::error_chain(&other)),
    }
}

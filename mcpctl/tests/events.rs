//! `mcpctl events` against the real binary and `mcpctl fake-server`: the event types
//! listed (human and `--json`); `events watch` prints events as they come (JSON lines with
//! `--json`), stops after `--count`, and ends its subscription with the server on exit,
//! whether it stops by itself or by Ctrl-C; errors name the server and the event type.

#![allow(clippy::unwrap_used, reason = "test helpers may panic")]
#![allow(
    clippy::disallowed_methods,
    reason = "the test sends mcpctl a signal with `kill`"
)]

mod support;

use mcp_testkit::{EventTypeSpec, EventsSpec, RecordedRequest, Recording, Scenario, ToolSpec};
use serde_json::{Value, json};
use support::Workdir;

/// Writes `inbox.json`: a `tick` every 30 ms (push and poll), a poll-only `bell`, and a
/// `hook` only by webhook; requests recorded in `inbox.requests`.
fn config(wd: &Workdir) -> String {
    let mut record = Recording::default();
    record.request_log = Some(wd.path().join("inbox.requests"));
    record.pid_file = Some(wd.path().join("inbox.pid"));
    Scenario::new("inbox")
        .with_tool(ToolSpec::echo("echo"))
        .with_events(
            EventsSpec::new()
                .with_type(
                    EventTypeSpec::new("tick")
                        .with_description("A clock tick")
                        .with_every_ms(30),
                )
                .with_type(EventTypeSpec::new("bell").with_delivery(["poll"]))
                .with_type(EventTypeSpec::new("hook").with_delivery(["webhook"]))
                .with_heartbeat_ms(100),
        )
        .with_record(record)
        .write_json(wd.path().join("inbox.json"))
        .unwrap();
    Scenario::new("plain")
        .with_tool(ToolSpec::echo("echo"))
        .write_json(wd.path().join("plain.json"))
        .unwrap();
    let mut text = String::new();
    for name in ["inbox", "plain"] {
        text.push_str(&format!(
            "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario\", \"{name}.json\"]\n"
        ));
    }
    wd.write("mcp.toml", &text).to_str().unwrap().to_owned()
}

fn requests(wd: &Workdir, method: &str) -> Vec<RecordedRequest> {
    RecordedRequest::read_log(wd.path().join("inbox.requests"))
        .into_iter()
        .filter(|r| r.method == method)
        .collect()
}

#[test]
fn event_types_are_listed() {
    let wd = Workdir::new();
    let config = config(&wd);

    let human = wd.run(&["--config", &config, "events", "inbox"]);
    assert_eq!(human.code, 0, "{}", human.stderr);
    let lines: Vec<Vec<&str>> = human
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines,
        vec![
            vec!["EVENT", "TYPE", "DELIVERY", "DESCRIPTION"],
            vec!["tick", "poll,", "push", "A", "clock", "tick"],
            vec!["bell", "poll"],
            vec!["hook", "webhook"],
        ]
    );

    let json = wd.run(&["--config", &config, "--json", "events", "inbox"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let listed: Value = serde_json::from_str(&json.stdout).unwrap();
    let names: Vec<(&str, &Value, &Value)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                &t["delivery"],
                &t["description"],
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("tick", &json!(["poll", "push"]), &json!("A clock tick")),
            ("bell", &json!(["poll"]), &Value::Null),
            ("hook", &json!(["webhook"]), &Value::Null),
        ]
    );

    let plain = wd.run(&["--config", &config, "events", "plain"]);
    assert_eq!(plain.code, 1, "{}", plain.stdout);
    assert!(
        plain
            .stderr
            .contains("server `plain` does not offer events"),
        "{}",
        plain.stderr
    );
    wd.assert_no_server_left();
}

#[test]
fn watch_prints_events_as_json_lines_and_unsubscribes_on_exit() {
    let wd = Workdir::new();
    let config = config(&wd);

    let watch = wd.run(&[
        "--config", &config, "--json", "events", "watch", "inbox", "tick", "--count", "3",
    ]);
    assert_eq!(watch.code, 0, "{}", watch.stderr);
    let events: Vec<Value> = watch
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{}", watch.stdout);
    assert!(events.iter().all(|e| e["name"] == "tick"), "{events:?}");
    let ids: Vec<&str> = events
        .iter()
        .map(|e| e["eventId"].as_str().unwrap())
        .collect();
    let mut distinct = ids.clone();
    distinct.dedup();
    assert_eq!(distinct, ids, "an event twice");
    // By push, cancelled with the server on exit.
    assert_eq!(requests(&wd, "events/stream").len(), 1);
    assert_eq!(requests(&wd, "notifications/cancelled").len(), 1);

    // A poll-only type, human output, with a filter.
    let bell = wd.run(&[
        "--config",
        &config,
        "events",
        "watch",
        "inbox",
        "bell",
        "--count",
        "0",
        "--filter",
        r#"{"loud": true}"#,
    ]);
    assert_eq!(bell.code, 0, "{}", bell.stderr);
    let polls = requests(&wd, "events/poll");
    assert_eq!(polls.len(), 1, "{polls:?}");
    assert_eq!(polls[0].params["name"], "bell");
    assert_eq!(polls[0].params["arguments"], json!({"loud": true}));

    let human = wd.run(&[
        "--config", &config, "events", "watch", "inbox", "tick", "--count", "1",
    ]);
    assert_eq!(human.code, 0, "{}", human.stderr);
    let line: Vec<&str> = human.stdout.split_whitespace().collect();
    assert_eq!(line.len(), 4, "{}", human.stdout);
    assert_eq!(line[1], "tick");
    wd.assert_no_server_left();
}

#[test]
fn watch_errors_name_the_server_and_the_event_type() {
    let wd = Workdir::new();
    let config = config(&wd);
    for (args, code, expected) in [
        (
            vec!["events", "watch", "inbox", "fax"],
            1,
            "server `inbox` has no event type `fax`",
        ),
        (
            vec!["events", "watch", "inbox", "hook"],
            1,
            "server `inbox` delivers event type `hook` only by webhook",
        ),
        (
            vec!["events", "watch", "plain", "tick"],
            1,
            "server `plain` does not offer events",
        ),
        (
            vec!["events", "watch", "inbox", "tick", "--filter", "[1]"],
            2,
            "--filter takes a JSON object",
        ),
    ] {
        let mut all = vec!["--config", config.as_str()];
        all.extend(args);
        let run = wd.run(&all);
        assert_eq!(run.code, code, "{all:?}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{all:?}: {}", run.stderr);
    }
    wd.assert_no_server_left();
}

#[test]
fn ctrl_c_ends_a_watch_and_its_subscription() {
    let wd = Workdir::new();
    let config = config(&wd);
    let mut child = wd.spawn(&[
        "--config", &config, "--json", "events", "watch", "inbox", "tick",
    ]);
    // Once the first event is printed, interrupt mcpctl.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    let event: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(event["name"], "tick");
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let server_pid = mcp_testkit::read_pid_file(wd.path().join("inbox.pid")).unwrap();
    assert!(
        !mcp_testkit::process_alive(server_pid),
        "the server outlived mcpctl"
    );
    assert_eq!(requests(&wd, "events/stream").len(), 1);
    assert_eq!(requests(&wd, "notifications/cancelled").len(), 1);
    wd.assert_no_server_left();
}

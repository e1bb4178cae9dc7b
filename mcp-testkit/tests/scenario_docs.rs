//! The scenario format documented in `SCENARIOS.md` (part of the crate docs) cannot rot:
//! every JSON example in it parses into a `Scenario`, and together they show every tool
//! behaviour and every fault.

use mcp_testkit::{Behavior, Faults, Recording, ReplyFault, Scenario, TaskEnd, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;

const DOC: &str = include_str!("../SCENARIOS.md");

/// The bodies of the doc's fenced code blocks whose info string is `lang`.
fn blocks(lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in DOC.lines() {
        match (&mut current, line.trim_start().strip_prefix("```")) {
            (None, Some(info)) if info.trim() == lang => current = Some(String::new()),
            (Some(_), Some("")) => out.extend(current.take()),
            (Some(body), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "an unclosed ```{lang} block");
    out
}

fn examples() -> Vec<Scenario> {
    blocks("json")
        .iter()
        .map(|text| {
            Scenario::from_json_str(text).unwrap_or_else(|e| panic!("{e}\nin example:\n{text}"))
        })
        .collect()
}

#[test]
fn every_json_example_parses_and_says_something() {
    let examples = examples();
    // Server info, tools, behaviours, resources, templates, prompts, capabilities,
    // faults, recording, events.
    assert_eq!(examples.len(), 10);
    for example in &examples {
        assert_ne!(
            example,
            &Scenario::default(),
            "an example that sets nothing"
        );
    }
}

#[test]
fn the_examples_show_every_behavior() {
    let every = [
        Behavior::Echo,
        Behavior::Structured { value: json!(1) },
        Behavior::Error {
            message: String::new(),
        },
        Behavior::Sleep { ms: 0 },
        Behavior::Barrier {
            name: String::new(),
            parties: 1,
        },
        Behavior::Progress { steps: 0 },
        Behavior::SlowProgress {
            steps: 0,
            interval_ms: 0,
        },
        Behavior::ElicitForm {
            message: String::new(),
            schema: json!({}),
        },
        Behavior::ElicitUrl {
            message: String::new(),
            url: String::new(),
            elicitation_id: String::new(),
        },
        Behavior::ElicitRaw { params: json!({}) },
        Behavior::ChangeTools {
            add: Vec::new(),
            remove: Vec::new(),
        },
        Behavior::ChangePrompts {
            add: Vec::new(),
            remove: Vec::new(),
        },
        Behavior::ChangeResources {
            add: Vec::new(),
            remove: Vec::new(),
        },
        Behavior::Sample {
            prompt: String::new(),
            max_tokens: 0,
            tools: Vec::new(),
        },
        Behavior::Log {
            level: String::new(),
            logger: None,
            data: json!(null),
            count: 1,
        },
        Behavior::SampleRaw { params: json!({}) },
        Behavior::Result {
            result: json!({"content": []}),
        },
        Behavior::Exit { code: 0 },
        Behavior::Large { bytes: 0 },
        Behavior::ReportEnv,
        Behavior::BrokenReply {
            fault: ReplyFault::NotJson,
        },
        Behavior::Task {
            work_ms: 0,
            steps: 0,
            end: TaskEnd::Complete,
            ask: None,
            poll_interval_ms: None,
            ttl_ms: None,
            garbage_get: false,
        },
        Behavior::EndListens { hold: false },
        Behavior::ReleaseListens,
        Behavior::SilenceListens,
        Behavior::EmitEvent {
            name: String::new(),
            data: json!({}),
        },
        Behavior::ForgetEvents { keep: 0 },
        Behavior::EndEventStreams { silent: false },
    ];
    let shown: Vec<&str> = examples()
        .iter()
        .flat_map(|s| s.tools.iter().map(|t| t.behavior.kind()))
        .collect();
    for behavior in every {
        let kind = behavior.kind();
        assert!(shown.contains(&kind), "no JSON example of behavior {kind}");
        assert!(
            DOC.contains(&format!("| `{kind}` |")),
            "behavior {kind} is not in the table"
        );
    }
    // The behaviour example and its builder twin in the doc describe the same tools.
    let behaviours = examples()
        .into_iter()
        .find(|s| s.tools.len() > 10)
        .expect("the one-tool-per-behaviour example");
    let mut garble = ToolSpec::new(
        "garble",
        Behavior::BrokenReply {
            fault: ReplyFault::NotJson,
        },
    );
    garble.description = None;
    assert_eq!(behaviours.tools[14], garble);
}

#[test]
fn the_faults_and_recording_examples_match_their_builders() {
    let examples = examples();
    let faults = Faults::new()
        .with_init_delay_ms(200)
        .with_exit_at_startup(3)
        .with_stderr("config missing")
        .with_garbage_stdout()
        .with_huge_line(1 << 20)
        .with_flood_stderr(10_000)
        .with_page_size(2)
        .with_ignore_sigterm()
        .with_spawn_grandchild("/tmp/grandchild.pid")
        .with_protocol_version("2025-06-18")
        .with_sse_drop_after(3);
    assert!(examples.iter().any(|s| s.faults == faults));
    let record = Recording::new()
        .with_pid_file("/tmp/server.pid")
        .with_request_log("/tmp/requests.jsonl")
        .with_kept_requests(100);
    assert!(examples.iter().any(|s| s.record == record));

    // Every field of `Faults` has a row in the table.
    let every = Faults::new()
        .with_init_delay_ms(1)
        .with_list_delay_ms(1)
        .with_hang_initialize()
        .with_exit_at_startup(1)
        .with_stderr("")
        .with_garbage_stdout()
        .with_huge_line(1)
        .with_flood_stderr(1)
        .with_page_size(1)
        .with_repeating_cursor()
        .with_endless_pages()
        .with_ignore_sigterm()
        .with_spawn_grandchild("")
        .with_protocol_version("")
        .with_sse_keep_alive_ms(1);
    let fields = serde_json::to_value(&every).expect("faults serialize");
    for field in fields.as_object().expect("an object").keys() {
        assert!(
            DOC.contains(&format!("| `{field}` |")),
            "fault {field} is not in the table"
        );
    }
}

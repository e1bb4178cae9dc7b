//! One scenario with every tool behaviour, and the checks run over each transport.

use std::time::Duration;

use mcp_testkit::{
    Behavior, CapabilityFlags, PromptSpec, ResourceSpec, ResourceTemplateSpec, Scenario,
    ServerInfoSpec, ToolSpec,
};
use pretty_assertions::assert_eq;
use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, NumberOrString, ProgressToken,
    ReadResourceRequestParams, RequestMetaObject,
};
use serde_json::{Value, json};

use super::{Client, Seen, args, call};

pub(crate) const LARGE: usize = 300_000;

pub(crate) fn scenario() -> Scenario {
    Scenario::new("suite")
        .with_server_info(
            ServerInfoSpec::new("suite")
                .with_version("9.9.9")
                .with_title("Suite"),
        )
        .with_instructions("suite instructions")
        .with_capabilities(CapabilityFlags::default().with_tools_list_changed(true))
        .with_tool(
            ToolSpec::echo("echo")
                .with_title("Echo")
                .with_input_schema(
                    json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
                )
                .with_output_schema(json!({"type": "object"}))
                .with_annotations(json!({"readOnlyHint": true}))
                .with_meta(json!({"example.com/k": "v"})),
        )
        .with_tool(ToolSpec::new(
            "structured",
            Behavior::Structured {
                value: json!({"n": 42}),
            },
        ))
        .with_tool(ToolSpec::new(
            "fail",
            Behavior::Error {
                message: "it broke".into(),
            },
        ))
        .with_tool(ToolSpec::new("nap", Behavior::Sleep { ms: 20 }))
        .with_tool(ToolSpec::new(
            "meet",
            Behavior::Barrier {
                name: "b".into(),
                parties: 2,
            },
        ))
        .with_tool(ToolSpec::new("steps", Behavior::Progress { steps: 3 }))
        .with_tool(ToolSpec::new(
            "ask",
            Behavior::ElicitForm {
                message: "name?".into(),
                schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            },
        ))
        .with_tool(ToolSpec::new(
            "visit",
            Behavior::ElicitUrl {
                message: "go".into(),
                url: "https://example.invalid/x".into(),
                elicitation_id: "e1".into(),
            },
        ))
        .with_tool(ToolSpec::new("big", Behavior::Large { bytes: LARGE }))
        .with_tool(ToolSpec::new("env", Behavior::ReportEnv))
        .with_tool(ToolSpec::new(
            "swap",
            Behavior::ChangeTools {
                add: vec![ToolSpec::echo("added")],
                remove: vec!["nap".into()],
            },
        ))
        .with_resource(ResourceSpec::new("fake://a", "a", "alpha").with_mime_type("text/plain"))
        .with_resource_template(ResourceTemplateSpec::new("fake://t/{id}", "t"))
        .with_prompt(PromptSpec::new("greet", "hello {who}").with_argument("who"))
}

pub(crate) const TOOLS: [&str; 11] = [
    "echo",
    "structured",
    "fail",
    "nap",
    "meet",
    "steps",
    "ask",
    "visit",
    "big",
    "env",
    "swap",
];

async fn tool_names(client: &Client) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// Every behaviour except Exit (checked per transport).
pub(crate) async fn run(client: &Client, seen: &Seen) {
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "suite");
    assert_eq!(info.server_info.as_ref().unwrap().version, "9.9.9");
    assert_eq!(info.instructions.as_deref(), Some("suite instructions"));
    assert_eq!(
        info.capabilities.tools.as_ref().unwrap().list_changed,
        Some(true)
    );

    // tools/list with all the declared attributes.
    assert_eq!(tool_names(client).await, TOOLS);
    let echo = client.list_all_tools().await.unwrap().remove(0);
    let wire = serde_json::to_value(&echo).unwrap();
    assert_eq!(
        wire,
        json!({
            "name": "echo", "title": "Echo", "description": "fake tool (echo)",
            "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true},
            "_meta": {"example.com/k": "v"},
        })
    );

    // echo
    let r = call(client, "echo", json!({"x": 1})).await;
    assert_eq!(r.structured_content, Some(json!({"x": 1})));
    assert_eq!(r.content[0].as_text().unwrap().text, r#"{"x":1}"#);
    assert_eq!(r.is_error, Some(false));

    // structured, error, sleep
    assert_eq!(
        call(client, "structured", json!({}))
            .await
            .structured_content,
        Some(json!({"n": 42}))
    );
    let r = call(client, "fail", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(r.content[0].as_text().unwrap().text, "it broke");
    assert_eq!(
        call(client, "nap", json!({"z": 2}))
            .await
            .structured_content,
        Some(json!({"z": 2}))
    );

    // barrier: a lone caller waits; the second releases both.
    let first = {
        let peer = client.peer().clone();
        tokio::spawn(async move {
            peer.call_tool(CallToolRequestParams::new("meet").with_arguments(args(json!({"i": 1}))))
                .await
        })
    };
    // A round trip after the first call was sent: the barrier must still hold it.
    call(client, "echo", json!({})).await;
    assert!(!first.is_finished(), "a lone barrier caller must wait");
    let second = call(client, "meet", json!({"i": 2})).await;
    assert_eq!(second.structured_content, Some(json!({"i": 2})));
    let first = tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.structured_content, Some(json!({"i": 1})));

    // progress
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::String("tok".into())));
    let mut params = CallToolRequestParams::new("steps");
    params.meta = Some(meta);
    let r = client.call_tool(params).await.unwrap();
    // rmcp's client replaces the token with its own (the request id): read it back.
    let reported = r.structured_content.unwrap();
    assert_eq!(reported["steps"], 3);
    let token: ProgressToken = serde_json::from_value(reported["progress_token"].clone()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while seen.progress.lock().unwrap().len() < 3 {
            seen.progress_arrived.notified().await;
        }
    })
    .await
    .expect("3 progress notifications");
    let mut got: Vec<f64> = seen
        .progress
        .lock()
        .unwrap()
        .iter()
        .map(|p| p.progress)
        .collect();
    got.sort_by(f64::total_cmp);
    assert_eq!(got, [1.0, 2.0, 3.0]);
    assert!(
        seen.progress
            .lock()
            .unwrap()
            .iter()
            .all(|p| p.total == Some(3.0) && p.progress_token == token)
    );

    // elicitation, both modes
    let r = call(client, "ask", json!({})).await;
    assert_eq!(
        r.structured_content,
        Some(json!({"action": "accept", "content": {"name": "Ada"}}))
    );
    let r = call(client, "visit", json!({})).await;
    assert_eq!(r.structured_content, Some(json!({"action": "accept"})));
    let asked: Vec<Value> = seen
        .elicitations
        .lock()
        .unwrap()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(asked[0]["message"], "name?");
    assert_eq!(asked[1]["url"], "https://example.invalid/x");
    assert_eq!(asked[1]["elicitationId"], "e1");

    // large
    let r = call(client, "big", json!({})).await;
    assert_eq!(r.content[0].as_text().unwrap().text.len(), LARGE);

    // report_env
    let r = call(client, "env", json!({})).await;
    let s = r.structured_content.unwrap();
    assert!(s["env"]["PATH"].is_string(), "{s}");
    assert!(!s["cwd"].as_str().unwrap().is_empty());

    // resources, templates, prompts
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 1);
    assert_eq!(resources[0].uri, "fake://a");
    let read = client
        .read_resource(ReadResourceRequestParams::new("fake://a"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents).unwrap(),
        json!([{"uri": "fake://a", "mimeType": "text/plain", "text": "alpha"}])
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "fake://t/{id}");
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "greet");
    let got = client
        .get_prompt(GetPromptRequestParams::new("greet").with_arguments(args(json!({"who": "Bo"}))))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&got.messages).unwrap()[0]["content"]["text"],
        "hello Bo"
    );

    // change the tool set: list_changed notification, then the new list.
    let r = call(client, "swap", json!({})).await;
    assert_eq!(
        r.structured_content.unwrap()["tools"]
            .as_array()
            .unwrap()
            .len(),
        11
    );
    tokio::time::timeout(Duration::from_secs(10), seen.list_changed.notified())
        .await
        .expect("tools/list_changed");
    let names = tool_names(client).await;
    assert!(
        names.contains(&"added".to_owned()) && !names.contains(&"nap".to_owned()),
        "{names:?}"
    );
}

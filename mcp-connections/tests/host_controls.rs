//! What the host controls and reads: its authority replaced while the set runs,
//! host-owned call metadata, server info, readiness and fail-fast calls, plugin
//! attribution and stale qualified names, against real `mcp-fake-server` processes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Fixture, faults, wait_event};
use mcp_catalog::{CatalogBuilder, ElicitationPolicy, LoadedConfig, Plugin, PluginTier};
use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{
    ApprovalPolicy, CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions,
    HostAuthority, PermissionProfile, PluginOrigin, elicitation_fn, host_metadata_fn, reviewer_fn,
};
use mcp_key::{EnvironmentId, McpServerKey};
use mcp_testkit::{Behavior, CapabilityFlags, RecordedRequest, Scenario, ServerInfoSpec, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::mpsc;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

fn opts() -> ConnectionSetOptions {
    ConnectionSetOptions::new()
        .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
        .with_restart_backoff(Duration::from_millis(50), Duration::from_millis(400))
}

fn form_tool(name: &str, properties: Value) -> ToolSpec {
    ToolSpec::new(
        name,
        Behavior::ElicitForm {
            message: format!("{name}?"),
            schema: json!({"type": "object", "properties": properties}),
        },
    )
}

fn elicit_scenario() -> Scenario {
    Scenario::new("e")
        .with_tool(form_tool("confirm", json!({})))
        .with_tool(form_tool("ask", json!({"tag": {"type": "integer"}})))
}

/// What the fake server got back for its elicitation.
async fn answer(set: &ConnectionSet, server: &str, tool: &str) -> Value {
    set.call_tool(&key(server), tool, None, CallOptions::new())
        .await
        .unwrap()
        .structured_content
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sets_in_one_process_never_share_an_elicitation_id() {
    let mut fx = Fixture::new();
    fx.stdio("asker", elicit_scenario());
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let recorder = |seen: Arc<Mutex<Vec<String>>>| {
        elicitation_fn(move |request| {
            seen.lock().unwrap().push(request.id.clone());
            async { ElicitResult::new(ElicitationAction::Decline) }
        })
    };
    // Two sets with pools of their own: two connections, two servers numbering their
    // requests from the same start.
    let a = ConnectionSet::start(
        &fx.catalog(),
        opts().with_elicitation_handler(recorder(Arc::clone(&seen))),
    );
    let b = ConnectionSet::start(
        &fx.catalog(),
        opts().with_elicitation_handler(recorder(Arc::clone(&seen))),
    );
    a.wait_startup().await;
    b.wait_startup().await;
    for set in [&a, &b, &a, &b] {
        assert_eq!(answer(set, "asker", "ask").await["action"], "decline");
    }
    let ids = seen.lock().unwrap().clone();
    assert_eq!(ids.len(), 4);
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 4, "{ids:?}");
    // Never the server's JSON-RPC id (a number the server chose).
    assert!(
        ids.iter()
            .all(|id| id.starts_with("elicit-") && id.parse::<i64>().is_err()),
        "{ids:?}"
    );
    a.shutdown().await;
    b.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_authority_rule_applies_and_is_replaced_live() {
    let mut fx = Fixture::new();
    fx.stdio("asker", elicit_scenario());
    let asked = Arc::new(AtomicUsize::new(0));
    let asked2 = Arc::clone(&asked);
    let handler = elicitation_fn(move |_| {
        asked2.fetch_add(1, Ordering::SeqCst);
        async { ElicitResult::new(ElicitationAction::Accept).with_content(json!({"tag": 7})) }
    });
    let headless = HostAuthority::new()
        .with_approval_policy(ApprovalPolicy::Never)
        .with_default_profile(PermissionProfile::Unrestricted);
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts()
            .with_elicitation_handler(handler)
            .with_authority(headless.clone()),
    );
    set.wait_startup().await;
    let pid = set.status()[0].pid;

    // Never asks, full access: an empty form is accepted with {}, a form with fields is
    // declined (the user is never asked).
    assert_eq!(
        answer(&set, "asker", "confirm").await,
        json!({"action": "accept", "content": {}})
    );
    assert_eq!(answer(&set, "asker", "ask").await["action"], "decline");
    // Restricted: the empty-form rule does not apply.
    set.set_authority(
        headless
            .clone()
            .with_profile(EnvironmentId::LOCAL, PermissionProfile::Restricted),
    );
    assert_eq!(answer(&set, "asker", "confirm").await["action"], "decline");
    assert_eq!(asked.load(Ordering::SeqCst), 0);

    // The default authority asks the user through the handler.
    set.set_authority(HostAuthority::new());
    assert_eq!(
        answer(&set, "asker", "ask").await,
        json!({"action": "accept", "content": {"tag": 7}})
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // A reviewer answers before the handler; returning None hands on to it.
    let reviewed = reviewer_fn(|request| async move {
        (request.message() == "ask?")
            .then(|| ElicitResult::new(ElicitationAction::Accept).with_content(json!({"tag": 1})))
    });
    set.set_authority(HostAuthority::new().with_reviewer(reviewed));
    assert_eq!(
        answer(&set, "asker", "ask").await,
        json!({"action": "accept", "content": {"tag": 1}})
    );
    assert_eq!(answer(&set, "asker", "confirm").await["action"], "accept");
    assert_eq!(asked.load(Ordering::SeqCst), 2);

    // A policy that forbids elicitation declines, even an empty form.
    set.set_authority(HostAuthority::new().with_elicitation_policy(ElicitationPolicy::Decline));
    assert_eq!(answer(&set, "asker", "confirm").await["action"], "decline");
    assert_eq!(answer(&set, "asker", "ask").await["action"], "decline");
    assert_eq!(asked.load(Ordering::SeqCst), 2);

    // No replacement restarted the server.
    assert_eq!(set.status()[0].pid, pid);
    // A replacement set (new catalog) keeps the authority the host set last.
    let next = set.replace(&fx.catalog()).await;
    assert_eq!(
        next.authority().elicitation_policy,
        ElicitationPolicy::Decline
    );
    assert_eq!(answer(&next, "asker", "ask").await["action"], "decline");
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    next.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_authority_updates_never_yield_a_mixed_policy() {
    let mut fx = Fixture::new();
    fx.stdio("asker", elicit_scenario());
    // Policy n: even n lets servers elicit and its reviewer answers `{"tag": n}`; odd n
    // forbids elicitation and carries a reviewer that answers `{"tag": n}` too. A mixed
    // decision (one policy's elicitation rule, another's reviewer) shows as an accepted
    // odd tag; a handler reached shows as tag -1.
    let policy = |n: i64| {
        let reviewer = reviewer_fn(move |_| async move {
            tokio::task::yield_now().await;
            Some(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"tag": n})))
        });
        let elicitation = if n % 2 == 0 {
            ElicitationPolicy::Ask
        } else {
            ElicitationPolicy::Decline
        };
        HostAuthority::new()
            .with_elicitation_policy(elicitation)
            .with_reviewer(reviewer)
    };
    let handler = elicitation_fn(|_| async {
        ElicitResult::new(ElicitationAction::Accept).with_content(json!({"tag": -1}))
    });
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts()
            .with_elicitation_handler(handler)
            .with_authority(policy(0)),
    );
    set.wait_startup().await;

    let done = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let mut updaters = tokio::task::JoinSet::new();
    for start in 0..2 {
        let (set, done, swaps) = (set.clone(), Arc::clone(&done), Arc::clone(&swaps));
        updaters.spawn(async move {
            let mut n = start;
            while !done.load(Ordering::SeqCst) {
                set.set_authority(policy(n));
                swaps.fetch_add(1, Ordering::SeqCst);
                n += 1;
                tokio::task::yield_now().await;
            }
        });
    }
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let set = set.clone();
        calls.spawn(async move {
            let mut out = Vec::new();
            for _ in 0..10 {
                out.push(answer(&set, "asker", "ask").await);
            }
            out
        });
    }
    let mut answers = Vec::new();
    while let Some(batch) = calls.join_next().await {
        answers.extend(batch.unwrap());
    }
    done.store(true, Ordering::SeqCst);
    while updaters.join_next().await.is_some() {}

    assert_eq!(answers.len(), 40);
    assert!(swaps.load(Ordering::SeqCst) > 0);
    for a in &answers {
        match a["action"].as_str() {
            Some("decline") => {}
            Some("accept") => {
                let tag = a["content"]["tag"].as_i64().unwrap();
                assert!(tag >= 0 && tag % 2 == 0, "mixed policy: {a}");
            }
            _ => panic!("unexpected answer {a}"),
        }
    }
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_metadata_reaches_only_servers_that_advertise_it_and_cannot_be_forged() {
    let mut fx = Fixture::new();
    fx.stdio(
        "aware",
        Scenario::new("aware")
            .with_capabilities(
                CapabilityFlags::default().with_experimental("host.example/", json!({})),
            )
            .with_tool(ToolSpec::echo("echo")),
    );
    fx.stdio(
        "plain",
        Scenario::new("plain").with_tool(ToolSpec::echo("echo")),
    );
    let provider = host_metadata_fn(|context| {
        let mut keys = serde_json::Map::new();
        let sandbox = match context.profile {
            PermissionProfile::Unrestricted => "none",
            _ => "workspace-write",
        };
        keys.insert("host.example/sandbox".to_owned(), json!(sandbox));
        keys.insert(
            "host.example/environment".to_owned(),
            json!(context.environment.to_string()),
        );
        // Outside the prefix: callers own these keys; dropped.
        keys.insert("trace".to_owned(), json!("host"));
        keys
    });
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts()
            .with_reserved_meta_prefix("host.example/")
            .with_host_metadata(provider),
    );
    set.wait_startup().await;
    let caller_meta = || {
        let mut meta = serde_json::Map::new();
        meta.insert("host.example/sandbox".to_owned(), json!("forged"));
        meta.insert("host.example/extra".to_owned(), json!("forged"));
        meta.insert("trace".to_owned(), json!("abc"));
        CallOptions::new().with_call(|c| c.with_meta(Some(meta)))
    };
    for server in ["aware", "plain"] {
        set.call_tool(&key(server), "echo", None, caller_meta())
            .await
            .unwrap();
    }
    set.set_authority(HostAuthority::new().with_default_profile(PermissionProfile::Unrestricted));
    set.call_tool(&key("aware"), "echo", None, caller_meta())
        .await
        .unwrap();
    set.shutdown().await;

    let sent = |server: &str| -> Vec<Value> {
        RecordedRequest::read_log(fx.request_log(server))
            .into_iter()
            .filter(|r| r.method == "tools/call")
            .map(|r| {
                // rmcp adds a progress token to every request; not ours to check.
                let mut meta = r.params["_meta"].clone();
                meta.as_object_mut().unwrap().remove("progressToken");
                meta
            })
            .collect()
    };
    assert_eq!(
        sent("aware"),
        vec![
            json!({"trace": "abc", "host.example/sandbox": "workspace-write", "host.example/environment": "local"}),
            json!({"trace": "abc", "host.example/sandbox": "none", "host.example/environment": "local"}),
        ]
    );
    assert_eq!(sent("plain"), vec![json!({"trace": "abc"})]);
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_info_comes_from_the_live_connection() {
    let mut fx = Fixture::new();
    fx.stdio(
        "files",
        Scenario::new("ignored")
            .with_server_info(
                ServerInfoSpec::new("files-server")
                    .with_version("1.2.3")
                    .with_title("Files"),
            )
            .with_instructions("Use read_file.")
            .with_capabilities(CapabilityFlags::default().with_tools_list_changed(true))
            .with_tool(ToolSpec::echo("read_file")),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;
    let info = set.server_info(&key("files")).unwrap();
    assert_eq!(
        (
            info.name.as_str(),
            info.version.as_str(),
            info.title.as_deref(),
            info.instructions.as_deref(),
            info.protocol_version.as_str(),
        ),
        (
            "files-server",
            "1.2.3",
            Some("Files"),
            Some("Use read_file."),
            "2025-11-25"
        )
    );
    assert_eq!(
        serde_json::to_value(&info.capabilities).unwrap()["tools"],
        json!({"listChanged": true})
    );
    assert!(set.server_info(&key("nope")).is_none());
    set.shutdown().await;
    assert!(set.server_info(&key("files")).is_none());
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_waits_and_fail_fast_calls() {
    let mut fx = Fixture::new();
    fx.stdio(
        "slow",
        Scenario::new("slow")
            .with_faults(faults(|f| f.init_delay_ms = Some(1_500)))
            .with_tool(ToolSpec::echo("echo")),
    );
    fx.stdio(
        "broken",
        Scenario::new("broken").with_faults(faults(|f| f.exit_at_startup = Some(2))),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    // Still starting: a short wait says false (no error), a fail-fast call does not wait.
    assert!(
        !set.wait_for_server_ready(&key("slow"), Duration::from_millis(10))
            .await
    );
    let started = tokio::time::Instant::now();
    let err = set
        .call_tool(
            &key("slow"),
            "echo",
            None,
            CallOptions::new().with_fail_fast(true),
        )
        .await
        .unwrap_err();
    assert!(err.is_not_ready(), "{err}");
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(
        err.to_string(),
        "MCP server `slow` is not ready: still starting"
    );
    assert!(
        set.wait_for_server_ready(&key("slow"), Duration::from_secs(20))
            .await
    );
    assert!(
        set.wait_for_server_ready(&key("slow"), Duration::ZERO)
            .await
    );
    set.call_tool(
        &key("slow"),
        "echo",
        None,
        CallOptions::new().with_fail_fast(true),
    )
    .await
    .unwrap();
    // Unknown keys and servers that will not come up are false, never an error.
    assert!(
        !set.wait_for_server_ready(&key("nope"), Duration::from_secs(1))
            .await
    );
    set.wait_startup().await;
    let err = set
        .call_tool(
            &key("broken"),
            "x",
            None,
            CallOptions::new().with_fail_fast(true),
        )
        .await
        .unwrap_err();
    assert!(err.is_not_ready(), "{err}");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_are_named_on_their_servers_and_tools() {
    let mut fx = Fixture::new();
    fx.stdio("user", Scenario::new("u").with_tool(ToolSpec::echo("u1")));
    fx.stdio(
        "git",
        Scenario::new("g").with_tool(ToolSpec::echo("status")),
    );
    fx.stdio(
        "lint",
        Scenario::new("l").with_tool(ToolSpec::echo("check")),
    );
    let config = fx.config().clone();
    let server = |name: &str| {
        config
            .servers()
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(n, c)| (n.clone(), c.clone()))
            .unwrap()
    };
    let (user_name, user_config) = server("user");
    let (git_name, git_config) = server("git");
    let (lint_name, lint_config) = server("lint");
    let catalog = CatalogBuilder::new()
        .with_user_config(LoadedConfig::new(
            "test",
            mcp_catalog::Config::new().with_server(user_name, user_config),
        ))
        .with_plugin(
            PluginTier::Selected,
            &Plugin::new("git-tools").with_server(git_name, git_config),
            &[EnvironmentId::LOCAL],
        )
        .with_plugin(
            PluginTier::Discovered,
            &Plugin::new("linters").with_server(lint_name, lint_config),
            &[EnvironmentId::LOCAL],
        )
        .build();
    let set = ConnectionSet::start(&catalog, opts());
    set.wait_startup().await;
    let plugins: Vec<(String, Option<PluginOrigin>)> = set
        .status()
        .into_iter()
        .map(|s| (s.key.to_string(), s.plugin))
        .collect();
    let git = PluginOrigin::of(&catalog, &"git@local".parse().unwrap()).unwrap();
    let lint = PluginOrigin::of(&catalog, &"lint@local".parse().unwrap()).unwrap();
    assert_eq!((git.name.as_str(), git.selected), ("git-tools", true));
    assert_eq!((lint.name.as_str(), lint.selected), ("linters", false));
    assert_eq!(
        plugins,
        vec![
            ("git@local".to_owned(), Some(git.clone())),
            ("lint@local".to_owned(), Some(lint.clone())),
            ("user".to_owned(), None),
        ]
    );
    let tools: Vec<(String, Option<PluginOrigin>)> = set
        .tools()
        .await
        .into_iter()
        .map(|t| (t.raw_name().to_owned(), t.plugin))
        .collect();
    assert_eq!(
        tools
            .iter()
            .map(|(n, p)| (n.as_str(), p.as_ref().map(|p| p.name.as_str())))
            .collect::<std::collections::BTreeMap<_, _>>(),
        [
            ("check", Some("linters")),
            ("status", Some("git-tools")),
            ("u1", None)
        ]
        .into_iter()
        .collect()
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_qualified_name_never_reaches_a_different_tool() {
    let mut fx = Fixture::new();
    fx.stdio(
        "s",
        Scenario::new("s")
            .with_capabilities(CapabilityFlags::default().with_tools_list_changed(true))
            .with_tool(ToolSpec::echo("keep"))
            .with_tool(ToolSpec::echo("files.read"))
            .with_tool(ToolSpec::echo("old"))
            .with_tool(ToolSpec::new(
                "mutate",
                Behavior::ChangeTools {
                    // `files_read` now competes with `files.read` for one model name;
                    // `old` is gone.
                    add: vec![ToolSpec::echo("files_read")],
                    remove: vec!["old".to_owned()],
                },
            )),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), opts().with_events(tx));
    set.wait_startup().await;
    let before = set.tools().await;
    let name_of = |raw: &str| {
        before
            .iter()
            .find(|t| t.raw_name() == raw)
            .map(|t| (t.qualified_name.clone(), t.catalog_revision))
            .unwrap()
    };
    let (keep, revision) = name_of("keep");
    let (files_read, _) = name_of("files.read");
    let (old, _) = name_of("old");
    assert_eq!(revision, set.revision());
    set.call_qualified(&name_of("mutate").0, None, CallOptions::new())
        .await
        .unwrap();
    wait_event(&mut rx, Duration::from_secs(10), |e| {
        matches!(e, ConnectionEvent::ToolsChanged { .. })
    })
    .await;
    let current = set.revision();
    assert!(current > revision);
    let _ = set.tools().await;

    // An unchanged tool is still reached by its old name.
    let r = set
        .call_qualified(
            &keep,
            Some(json!({"x": 1})),
            CallOptions::new().with_catalog_revision(revision),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"x": 1})));
    for stale in [&old, &files_read] {
        let err = set
            .call_qualified(
                stale,
                None,
                CallOptions::new().with_catalog_revision(revision),
            )
            .await
            .unwrap_err();
        assert!(err.is_stale_name(), "{stale}: {err}");
        assert_eq!(
            err.to_string(),
            format!(
                "tool `{stale}` from catalog revision {revision} does not name the same tool in the current revision {current}; list the tools again"
            )
        );
    }
    // A revision the set never handed out proves nothing: refused too.
    let err = set
        .call_qualified(
            &keep,
            None,
            CallOptions::new().with_catalog_revision(u64::MAX),
        )
        .await
        .unwrap_err();
    assert!(err.is_stale_name(), "{err}");
    set.shutdown().await;
    let calls: Vec<String> = RecordedRequest::read_log(fx.request_log("s"))
        .into_iter()
        .filter(|r| r.method == "tools/call")
        .map(|r| r.params["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(calls, ["mutate", "keep"]);
    fx.assert_no_processes().await;
}

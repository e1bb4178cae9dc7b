//! Two `mcpctl serve --http` instances sharing one PostgreSQL (`$MCPCTL_CREDENTIAL_STORE`,
//! no server acting as each caller: the store is opened as the instances' shared state)
//! answer any caller alike:
//!
//! - a tool approval alice asked to be remembered on instance A is not asked again on B,
//!   for that definition of the tool; once the tool changed, alice is asked again; bob is
//!   asked on B;
//! - a tool change (drift) accepted on A is accepted on B without asking.
//!
//! Each instance runs its own upstream server and loads its tool pins only when it starts,
//! so what B knows of A's answers comes from the store. PostgreSQL is mcp-testkit's
//! fixture on loopback ("not run" without it, a failure without it when
//! `MCP_REQUIRE_POSTGRES` is set).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateways as a person would"
)]

mod support;
mod team;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_testkit::postgres::PostgresFixture;
use pretty_assertions::assert_eq;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::json;
use support::{Served, Workdir};
use team::STATIC_TOKEN;

/// The vault key every instance is given (hex of 32 bytes).
const VAULT_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// The URL clients know the instances by (the tokens' audience).
const RESOURCE: &str = "http://gateway.test/mcp";

/// The tool both instances' `notes` server lists; it rewrites it after its first call.
const ECHO: &str = "mcp__notes__echo";

/// A 2025-era client that answers every question with a yes and keeps their texts.
#[derive(Clone, Default)]
struct Approver {
    questions: Arc<Mutex<Vec<String>>>,
}

impl Approver {
    fn questions(&self) -> Vec<String> {
        self.questions.lock().unwrap().clone()
    }
}

impl ClientHandler for Approver {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::default());
        ClientConfig::new(capabilities, Implementation::new("approver", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = serde_json::to_value(&request).unwrap()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.questions.lock().unwrap().push(message);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true})))
    }
}

/// `notes` (its tool `echo` always asks for approval, and is rewritten by the server after its
/// first call), behind `[gateway.oauth]` for `issuer` with both instances as one resource.
fn config(wd: &Workdir, issuer: &str) -> std::path::PathBuf {
    let changed = "Echo the text, now in capitals.";
    let scenario = json!({
        "tools": [{"name": "echo", "description": "Echo the text.", "behavior": {"kind": "echo"}}],
        "tool_changes": [{
            "after_calls": 1,
            "remove": ["echo"],
            "add": [{"name": "echo", "description": changed, "behavior": {"kind": "echo"}}],
        }],
    });
    wd.write(
        "mcp.toml",
        &format!(
            "[mcp_servers.notes]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"prompt\"\n\n[gateway.oauth]\nissuer = {}\nscopes = [\"{}\"]\nresource = \"{RESOURCE}\"\n",
            support::toml_str(&scenario.to_string()),
            support::toml_str(issuer),
            team::SCOPE,
        ),
    )
}

/// A token of `subject` for the instances.
fn token(auth: &mcp_testkit::FakeAuthServer, subject: &str) -> String {
    auth.mint_jwt(
        &mcp_testkit::AccessTokenClaims::new(subject)
            .with_scopes([team::SCOPE])
            .with_audience(RESOURCE),
    )
}

async fn connect(
    url: &str,
    token: &str,
    client: &Approver,
) -> RunningService<RoleClient, Approver> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token),
    );
    client.clone().serve(transport).await.unwrap()
}

async fn call(client: &RunningService<RoleClient, Approver>) -> CallToolResult {
    let params = CallToolRequestParams::new(ECHO)
        .with_arguments(json!({"text": "hi"}).as_object().unwrap().clone());
    tokio::time::timeout(Duration::from_secs(60), client.call_tool(params))
        .await
        .expect("the call returned")
        .unwrap()
}

/// Waits (bounded) until `client`'s tool list holds `echo` (`listed`) or does not (held
/// back as changed).
async fn wait_echo(client: &RunningService<RoleClient, Approver>, listed: bool) {
    for _ in 0..600 {
        let tools = client.list_all_tools().await.unwrap();
        if tools.iter().any(|t| t.name == ECHO) == listed {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{ECHO} never became listed = {listed}");
}

#[test]
fn approvals_and_accepted_changes_are_shared_by_instances_on_one_store() {
    let Some(mut postgres) =
        PostgresFixture::start_or_skip("serve_shared_state: two instances on one PostgreSQL")
    else {
        return;
    };
    let mut postgres_pids = postgres.pids();
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let config = config(&wd, &auth.issuer());
    let url = postgres.url();
    let env = [
        ("MCPCTL_CREDENTIAL_STORE", url.as_str()),
        ("MCPCTL_VAULT_KEY", VAULT_KEY),
    ];
    let mut a = Served::start_with_env(&wd, &config, STATIC_TOKEN, &[], &env);
    let mut b = Served::start_with_env(&wd, &config, STATIC_TOKEN, &[], &env);
    let (alice, bob) = (token(&auth, "alice"), token(&auth, "bob"));
    runtime.block_on(async {
        // On A, alice approves echo (remembered for her, says the question), calls it
        // again unasked, and after the server rewrote it accepts the change.
        let alice_on_a = Approver::default();
        let client = connect(&a.url, &alice, &alice_on_a).await;
        wait_echo(&client, true).await;
        assert_ne!(call(&client).await.is_error, Some(true));
        let asked = alice_on_a.questions();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(
            asked[0].contains("remembered for you, for this tool of this server, in every session and on every instance"),
            "{asked:?}"
        );
        wait_echo(&client, false).await;
        let accepted = call(&client).await;
        assert_ne!(accepted.is_error, Some(true), "{accepted:?}");
        let asked = alice_on_a.questions();
        assert_eq!(asked.len(), 2, "{asked:?}");
        assert!(asked[1].contains("changed since it was approved"), "{asked:?}");
        let _ = client.cancel().await;

        // On B, a new session of alice's: her approval holds (B's server still lists the
        // definition she approved), then B's server rewrites the tool too and the change
        // accepted on A is accepted unasked.
        let alice_on_b = Approver::default();
        let client = connect(&b.url, &alice, &alice_on_b).await;
        wait_echo(&client, true).await;
        let first = call(&client).await;
        assert_ne!(first.is_error, Some(true), "{first:?}");
        assert_eq!(alice_on_b.questions(), Vec::<String>::new());
        wait_echo(&client, false).await;
        let second = call(&client).await;
        assert_ne!(second.is_error, Some(true), "{second:?}");
        assert_eq!(alice_on_b.questions(), Vec::<String>::new());
        // Her approval was of the first definition: the changed tool is asked about.
        wait_echo(&client, true).await;
        let third = call(&client).await;
        assert_ne!(third.is_error, Some(true), "{third:?}");
        let asked = alice_on_b.questions();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].starts_with("Allow the tool"), "{asked:?}");
        let _ = client.cancel().await;

        // Bob is asked: alice's approval is hers.
        let bob_on_b = Approver::default();
        let client = connect(&b.url, &bob, &bob_on_b).await;
        wait_echo(&client, true).await;
        assert_ne!(call(&client).await.is_error, Some(true));
        let asked = bob_on_b.questions();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].starts_with("Allow the tool"), "{asked:?}");
        let _ = client.cancel().await;
    });
    a.stop();
    b.stop();
    wd.assert_no_server_left();
    postgres_pids.extend(postgres.pids());
    postgres.stop();
    let left: Vec<u32> = postgres_pids
        .into_iter()
        .filter(|pid| mcp_testkit::process_alive(*pid))
        .collect();
    assert!(left.is_empty(), "PostgreSQL processes left: {left:?}");
}

//! `mcp-conformance-client <server-url>`: the client side of the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`), built only on this workspace's public API:
//! a one-server catalog (mcp-catalog), the connection set (mcp-connections) and OAuth
//! credentials (mcp-auth).
//!
//! The suite sets `MCP_CONFORMANCE_SCENARIO` and, for some scenarios,
//! `MCP_CONFORMANCE_CONTEXT` (JSON). The client logs in when the server asks for it,
//! connects, lists the tools, calls each one with arguments built from its schema, and exits
//! 0 on success. The skills scenarios (`sep-2640-client-*`) load a skill as a host does
//! instead (`skills.rs`, on mcp-client's connection directly).

mod args;
mod skills;

use std::process::ExitCode;
use std::sync::Arc;

use mcp_auth::{
    ClientCredentials, EnterpriseGrant, HeadlessAgent, MemoryStore, OAuthCredentials,
    OAuthSettings, WorkloadIdentity, WorkloadTokenSource,
};
use mcp_catalog::{CatalogBuilder, HttpConfig, ServerConfig, Source};
use mcp_connections::{
    AcceptDefaults, CallOptions, ConnectionSet, ConnectionSetOptions, OAuthProvider,
};
use mcp_key::{McpServerKey, Secret};
use serde_json::Value;

/// The client ID metadata document URL the suite expects (`auth/basic-cimd`).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// See the comment where it is used.
const GET_STREAM_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

fn field(ctx: &Value, name: &str) -> Result<String, BoxError> {
    ctx.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT lacks `{name}`").into())
}

/// The enterprise-managed (cross-app access, ID-JAG) scenario: named
/// `auth/enterprise-managed-authorization` since the suite's 0.2 releases and
/// `auth/cross-app-access-complete-flow` in 0.1.x (still npm's `latest`).
fn is_enterprise_scenario(name: &str) -> bool {
    matches!(
        name,
        "auth/enterprise-managed-authorization" | "auth/cross-app-access-complete-flow"
    )
}

/// Logs in before connecting where the scenario calls for a machine login, or when the
/// server answers the first request with 401.
async fn authenticate(
    creds: &OAuthCredentials,
    scenario: &str,
    ctx: &Value,
) -> Result<(), BoxError> {
    match scenario {
        "auth/client-credentials-jwt" => {
            let grant = ClientCredentials::private_key_jwt(
                field(ctx, "client_id")?,
                Secret::new(field(ctx, "private_key_pem")?),
                field(ctx, "signing_algorithm").unwrap_or_else(|_| "ES256".to_owned()),
            );
            creds.login_client_credentials(grant).await?;
        }
        "auth/client-credentials-basic" => {
            let grant = ClientCredentials::secret(
                field(ctx, "client_id")?,
                Secret::new(field(ctx, "client_secret")?),
            );
            creds.login_client_credentials(grant).await?;
        }
        name if is_enterprise_scenario(name) => {
            let grant = EnterpriseGrant::new(
                field(ctx, "idp_issuer")?,
                field(ctx, "idp_token_endpoint")?,
                field(ctx, "idp_client_id")?,
                Secret::new(field(ctx, "idp_id_token")?),
                field(ctx, "client_id")?,
            )
            .with_client_secret(Secret::new(field(ctx, "client_secret")?));
            creds.login_enterprise(grant).await?;
        }
        "auth/wif-jwt-bearer" => {
            // The platform token as a workload finds it: a file the platform writes.
            let dir = std::env::temp_dir().join(format!("mcp-conformance-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            let path = dir.join("workload-token");
            std::fs::write(&path, field(ctx, "valid_jwt")?)?;
            let identity = WorkloadIdentity::new(WorkloadTokenSource::File(path))
                .with_client_id(field(ctx, "client_id")?);
            let outcome = creds.login_workload_identity(&identity).await;
            let _ = std::fs::remove_dir_all(&dir);
            outcome?;
        }
        // Interactive scenarios: the connection set logs in when the server answers 401.
        _ => {}
    }
    Ok(())
}

async fn run(url: String) -> Result<(), BoxError> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let ctx = context();
    let key: McpServerKey = "conformance".parse()?;
    let server = HttpConfig::new(url.clone());
    let mut settings = OAuthSettings::from_config(&server, None, "mcp-conformance-client")
        .with_client_metadata_url(CLIENT_METADATA_URL)
        .with_login_timeout(std::time::Duration::from_secs(20))
        // DPoP-bound tokens wherever the authorization server offers them.
        .with_dpop(true);
    if scenario == "auth/pre-registration" {
        settings = settings
            .with_client_id(field(&ctx, "client_id")?)
            .with_client_secret(Secret::new(field(&ctx, "client_secret")?));
    }
    let creds = OAuthCredentials::new(
        key.clone(),
        url.clone(),
        settings,
        Arc::new(MemoryStore::new()),
    );
    authenticate(&creds, &scenario, &ctx).await?;
    if skills::is_skills_scenario(&scenario) {
        return skills::run(key, &url, &scenario).await;
    }

    let catalog = CatalogBuilder::new()
        .with_server(
            Source::runtime("conformance"),
            key.clone(),
            ServerConfig::from(server),
        )
        .build();
    let options = ConnectionSetOptions::new()
        // The set refreshes after a 401, logs in when refreshing cannot help, and steps up
        // on 403 insufficient_scope, all through this provider (headless: the suite's
        // authorization endpoints approve at once).
        .with_auth_provider(
            key.clone(),
            Arc::new(
                OAuthProvider::new(creds.clone()).with_login_agent(Arc::new(HeadlessAgent::new())),
            ),
        )
        .with_elicitation_handler(Arc::new(AcceptDefaults));
    let set = ConnectionSet::start(&catalog, options);
    let outcome = async {
        set.wait_required().await?;
        // rmcp opens the standalone GET (SSE) stream in the background after `initialize`,
        // and the connection set has no event for it. Servers that send requests outside a
        // request's own stream (the suite's elicitation scenario does) drop them while that
        // stream is not open yet, so give it a moment before the first call.
        tokio::time::sleep(GET_STREAM_GRACE).await;
        let tools = set.tools().await;
        // A scenario may say which calls to make, with which arguments (`toolCalls` in its
        // context); otherwise every tool is called with arguments made from its schema.
        let planned: Vec<(String, Value)> = match ctx.get("toolCalls").and_then(Value::as_array) {
            Some(calls) => calls
                .iter()
                .filter_map(|c| {
                    Some((
                        c.get("name")?.as_str()?.to_owned(),
                        c.get("arguments").cloned().unwrap_or(Value::Null),
                    ))
                })
                .collect(),
            None => tools
                .iter()
                .map(|tool| {
                    let arguments = match args::echo_schema_of(&tools, tool) {
                        // A schema-echo tool gets another tool's input schema exactly as
                        // listed, so the server can check that nothing dropped a keyword.
                        Some(schema) => serde_json::json!({ "schema": schema }),
                        None => args::synthesize(&tool.tool.input_schema),
                    };
                    (tool.raw_name().to_owned(), arguments)
                })
                .collect(),
        };
        for (name, arguments) in planned {
            match set
                .call_tool(&key, &name, Some(arguments), CallOptions::new())
                .await
            {
                Ok(result) => {
                    tracing::info!(tool = %name, is_error = ?result.is_error, "tool called");
                }
                // The server's own JSON-RPC error is an answer, not a client failure (some
                // scenario servers only serve the listing).
                Err(e) if e.is_server_error() => {
                    tracing::warn!(tool = %name, "the server answered with an error: {e}");
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok::<(), BoxError>(())
    }
    .await;
    set.shutdown().await;
    outcome
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let Some(url) = std::env::args().next_back().filter(|a| a.contains("://")) else {
        tracing::error!("usage: mcp-conformance-client <server-url>");
        return ExitCode::from(2);
    };
    match run(url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{}", mcp_key::error_chain(err.as_ref()));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_names_of_the_enterprise_scenario_log_in_as_the_enterprise() {
        assert!(is_enterprise_scenario(
            "auth/enterprise-managed-authorization"
        ));
        assert!(is_enterprise_scenario(
            "auth/cross-app-access-complete-flow"
        ));
        assert!(!is_enterprise_scenario("auth/client-credentials-basic"));
    }
}

//! A connection as the pool shares it between connection sets ([`Live`]): the server's
//! [`Client`] and the gate through which the server's requests reach the set whose
//! operation caused them ([`SessionRoute`], one per set).

use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_catalog::ElicitationPolicy;
use mcp_client::{BoxFuture, Client, ServerRequests};
use mcp_key::{EnvironmentId, McpServerKey};
use mcp_pool::{Route, SessionGate};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};

use crate::policy::authority::{AuthorityCell, Rule};
use crate::policy::elicitation::{ElicitationHandler, ElicitationRequest};

static NEXT_ELICITATION: AtomicU64 = AtomicU64::new(1);

/// How one session (connection set) answers server-to-client requests for one server:
/// its live authority (read once per request), the owning environment and its configured
/// policy, and its elicitation handler.
#[derive(Clone)]
pub(crate) struct SessionRoute {
    pub(crate) authority: AuthorityCell,
    pub(crate) environment: EnvironmentId,
    pub(crate) environment_policy: ElicitationPolicy,
    pub(crate) handler: Option<Arc<dyn ElicitationHandler>>,
    /// How long the handler may take (see `ConnectionSetOptions::with_answer_deadline`).
    pub(crate) answer_deadline: Option<std::time::Duration>,
}

impl SessionRoute {
    /// Answers one request by the rule of [`crate::HostAuthority`], applied to one
    /// snapshot of the authority.
    async fn answer(&self, request: ElicitationRequest) -> ElicitResult {
        let authority = self.authority.load();
        let ask_user = match authority.rule(
            &self.environment,
            self.environment_policy,
            &request.params,
        ) {
            Rule::Answer(answer) => {
                tracing::debug!(server = %request.server, id = %request.id, action = ?answer.action, "elicitation answered by the host's policy");
                return answer;
            }
            Rule::Review { ask_user } => ask_user,
        };
        if let Some(reviewer) = &authority.reviewer
            && let Some(answer) = reviewer.review(request.clone()).await
        {
            tracing::debug!(server = %request.server, id = %request.id, "elicitation answered by the reviewer");
            return answer;
        }
        let handler = match (&self.handler, ask_user) {
            (Some(handler), true) => handler,
            _ => return ElicitResult::new(ElicitationAction::Decline),
        };
        let Some(deadline) = self.answer_deadline else {
            return handler.elicit(request).await;
        };
        let (server, id) = (request.server.clone(), request.id.clone());
        match tokio::time::timeout(deadline, handler.elicit(request)).await {
            Ok(answer) => answer,
            Err(_) => {
                tracing::warn!(server = %server, %id, "elicitation not answered within {deadline:?}; cancelled");
                ElicitResult::new(ElicitationAction::Cancel)
            }
        }
    }
}

impl ServerRequests for SessionRoute {
    fn elicit<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async move {
            let id = format!(
                "elicit-{}",
                NEXT_ELICITATION.fetch_add(1, Ordering::Relaxed)
            );
            tracing::debug!(server = %server, %id, "elicitation request");
            self.answer(ElicitationRequest {
                id,
                server: server.clone(),
                params: request,
            })
            .await
        })
    }
}

/// The sessions (connection sets) sharing one connection: a server request goes to the
/// one whose operation is running (see [`mcp_pool::SessionGate`]), declined when that is
/// unclear.
#[derive(Default)]
pub(crate) struct Gate {
    pub(crate) sessions: SessionGate<SessionRoute>,
}

impl ServerRequests for Gate {
    fn elicit<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async move {
            match self.sessions.route() {
                Route::Deliver { handler, .. } => handler.elicit(server, request).await,
                Route::Decline(reason) => {
                    tracing::info!(server = %server, %reason, "elicitation declined");
                    ElicitResult::new(ElicitationAction::Decline)
                }
                _ => ElicitResult::new(ElicitationAction::Decline),
            }
        })
    }
}

/// One shared connection: the client and its gate.
pub(crate) struct Live {
    client: Client,
    pub(crate) gate: Arc<Gate>,
}

impl Live {
    pub(crate) fn new(client: Client, gate: Arc<Gate>) -> Self {
        Self { client, gate }
    }
}

impl Deref for Live {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

impl mcp_pool::PooledConnection for Live {
    fn is_alive(&self) -> bool {
        self.client.is_alive()
    }

    async fn shutdown(&self) {
        self.client.shutdown().await;
    }
}

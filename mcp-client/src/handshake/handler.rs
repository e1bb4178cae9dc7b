//! The rmcp client handler of one connection: hands elicitation and sampling requests to
//! the host, log messages to `tracing` and their subscribers, and list changes to whoever
//! watches them, through the connection's shared state ([`crate::state`]).

#![expect(
    deprecated,
    reason = "rmcp marks logging and sampling deprecated (SEP-2577), yet MCP 2025-11-25 defines them and hosts still meet them"
)]

use std::sync::Arc;

use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, CustomRequest, CustomResult,
    ElicitRequestParams, ElicitResult, ErrorCode, LoggingMessageNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};

use crate::host::sampling::{SAMPLING_CREATE, SamplingRefusal};
use crate::state::ConnectionShared;

/// The method of server-to-client elicitation requests.
const ELICITATION_CREATE: &str = "elicitation/create";

/// The rmcp client handler of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) shared: Arc<ConnectionShared>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.shared.config.clone()
    }

    #[expect(
        deprecated,
        reason = "roots are deprecated by SEP-2577 in rmcp, yet MCP 2025-11-25 defines roots/list"
    )]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        Ok(crate::host::roots::list_result(&self.shared.roots))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(self.shared.elicit(request).await)
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.shared
            .create_message(None, request)
            .await
            .map_err(SamplingRefusal::into_error)
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        let route = context
            .extensions
            .get::<crate::transport::read_order::RoutedLog>()
            .map(|routed| routed.0.clone());
        self.shared.receive_log(params, route);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.shared.key, "prompts/list_changed");
        self.shared.prompts_changed.announce();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.shared.key, "resources/list_changed");
        self.shared.resources_changed.announce();
    }

    /// rmcp hands a request it cannot parse to this method under its raw method name; for
    /// a malformed `elicitation/create` or `sampling/createMessage` (which this client
    /// advertises when it has a handler) the right answer is "invalid params", not rmcp's
    /// default "method not found".
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method == SAMPLING_CREATE && self.shared.announces_sampling() {
            let problem = malformed_sampling(&request);
            tracing::warn!(server = %self.shared.key, "malformed sampling/createMessage: {problem}");
            return Err(ErrorData::invalid_params(
                format!("malformed sampling/createMessage request: {problem}"),
                None,
            ));
        }
        if request.method != ELICITATION_CREATE {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let problem = match request.params_as::<ElicitRequestParams>() {
            Ok(None) => "params are missing".to_owned(),
            Err(e) => e.to_string(),
            // Parsed now but not by rmcp's typed dispatch (e.g. the method's typed form
            // rejected something else); still not a request this client can answer.
            Ok(Some(_)) => "the request does not match the elicitation/create schema".to_owned(),
        };
        tracing::warn!(server = %self.shared.key, "malformed elicitation/create: {problem}");
        Err(ErrorData::invalid_params(
            format!("malformed elicitation/create request: {problem}"),
            None,
        ))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.shared.key, "tools/list_changed");
        self.shared.tools_changed.notify_one();
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(server = %self.shared.key, uri = %params.uri, "resources/updated");
        let _ = self.shared.resource_updates.send(params.uri);
    }
}

/// What is wrong with a `sampling/createMessage` rmcp could not parse.
fn malformed_sampling(request: &CustomRequest) -> String {
    match request.params_as::<CreateMessageRequestParams>() {
        Ok(None) => "params are missing".to_owned(),
        Err(e) => e.to_string(),
        Ok(Some(_)) => "the request does not match the sampling/createMessage schema".to_owned(),
    }
}

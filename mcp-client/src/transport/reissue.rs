//! Idempotent reads sent again when their answer was lost (MCP 2026-07-28).
//!
//! The 2026 era has no stream resumption: when the stream carrying a request's answer
//! breaks (a proxy timeout, a server restarting behind a load balancer), the answer is
//! gone. A read (`tools/list`, `resources/list`, `resources/templates/list`,
//! `prompts/list`, `resources/read`, `prompts/get`) has no effect on the server, so it is
//! sent again, at most [`MAX_REISSUES`] times. Anything else, a tool call above all, is
//! never sent twice: it fails with [`crate::RequestError::Disconnected`], which is retryable, and
//! the host decides. In the 2025 era the transport resumes the stream instead.

use rmcp::RoleClient;
use rmcp::model::{ClientRequest, ServerResult};
use rmcp::service::{Peer, ServiceError};

use crate::rmcp_errors::ServiceFailure;

/// How many times a read whose answer was lost is sent again.
pub(crate) const MAX_REISSUES: u32 = 2;

/// Whether `request` only reads, so sending it twice changes nothing on the server.
fn is_idempotent_read(request: &ClientRequest) -> bool {
    matches!(
        request,
        ClientRequest::ListToolsRequest(_)
            | ClientRequest::ListResourcesRequest(_)
            | ClientRequest::ListResourceTemplatesRequest(_)
            | ClientRequest::ListPromptsRequest(_)
            | ClientRequest::ReadResourceRequest(_)
            | ClientRequest::GetPromptRequest(_)
    )
}

/// Sends `request` on `peer`; when the connection speaks the 2026 era, `request` is an
/// idempotent read, and its answer was lost while the connection stays open, sends it
/// again (at most [`MAX_REISSUES`] times).
///
/// # Cancel safety
/// Cancel-safe: dropping the future abandons the request in flight.
pub(crate) async fn send_read(
    peer: &Peer<RoleClient>,
    mut request: ClientRequest,
) -> Result<ServerResult, ServiceError> {
    crate::telemetry::inject(&mut request);
    let reissue = is_idempotent_read(&request)
        && peer
            .peer_info()
            .is_some_and(|info| crate::Era::of(&info.protocol_version) == crate::Era::V2026_07_28);
    let mut sent_again = 0;
    loop {
        match peer.send_request(request.clone()).await {
            Err(e)
                if matches!(ServiceFailure::of(&e), ServiceFailure::Closed)
                    && reissue
                    && sent_again < MAX_REISSUES
                    && !peer.is_transport_closed() =>
            {
                sent_again += 1;
                tracing::debug!(
                    method = request.method(),
                    attempt = sent_again,
                    "the answer to an idempotent read was lost; sending it again"
                );
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ListToolsRequest};

    use super::*;

    #[test]
    fn only_reads_are_sent_again() {
        assert!(is_idempotent_read(&ClientRequest::ListToolsRequest(
            ListToolsRequest::default()
        )));
        assert!(!is_idempotent_read(&ClientRequest::CallToolRequest(
            CallToolRequest::new(CallToolRequestParams::new("delete_everything"))
        )));
    }
}

//! Sampling: a server asks for a message of the host's model (`sampling/createMessage` in
//! the 2025 era, an `input_required` round in the 2026 era), routed to a host-supplied
//! [`SamplingHandler`] after the host's authority had its say.
//!
//! The rule, applied to one snapshot of the [`HostAuthority`](crate::HostAuthority):
//! 1. the sampling reviewer, if any, may answer or refuse;
//! 2. under [`ApprovalPolicy::Never`](crate::ApprovalPolicy::Never): refused (nobody may
//!    approve spending the host's model);
//! 3. otherwise the handler (refused without one: the capability is then not announced
//!    either).
//!
//! The request reaches the handler unchanged (`maxTokens`, tools, model preferences), and
//! the handler's answer is checked against it by `mcp-client` before the server sees it.

#![expect(
    deprecated,
    reason = "rmcp marks sampling deprecated (SEP-2577), yet MCP 2025-11-25 and 2026-07-28 define sampling/createMessage"
)]

use std::future::Future;
use std::sync::Arc;

use mcp_client::SamplingRefusal;
use mcp_key::McpServerKey;
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};

use crate::policy::elicitation::BoxFuture;

/// What a sampling handler or reviewer gives back: the model's message, or a refusal the
/// server is told.
pub type SamplingAnswer = Result<CreateMessageResult, SamplingRefusal>;

/// One sampling request from a server, as handed to the host.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// A host-side id, unique within this process (`sample-1`, `sample-2`, ...).
    pub id: String,
    /// The server that asked.
    pub server: McpServerKey,
    /// The request as the server sent it.
    pub params: CreateMessageRequestParams,
}

impl SamplingRequest {
    /// The most tokens the server asked for, as it asked (`maxTokens`): the handler
    /// decides whether to honour it.
    pub fn max_tokens(&self) -> u32 {
        self.params.max_tokens
    }

    /// Whether the request offers tools the model may use.
    pub fn offers_tools(&self) -> bool {
        self.params.tools.as_ref().is_some_and(|t| !t.is_empty())
    }
}

/// The host's model, answering sampling requests. Implementations call a model (and may
/// show the request to the user first).
pub trait SamplingHandler: Send + Sync {
    /// Answers one request. Dropping the returned future (when the call that caused the
    /// request is cancelled) must be harmless.
    fn create_message(&self, request: SamplingRequest) -> BoxFuture<'_, SamplingAnswer>;
}

/// A [`SamplingHandler`] that refuses everything. The set behaves like this without a
/// handler (and then does not announce sampling).
#[derive(Debug, Default, Clone, Copy)]
pub struct RefuseSampling;

impl SamplingHandler for RefuseSampling {
    fn create_message(&self, _request: SamplingRequest) -> BoxFuture<'_, SamplingAnswer> {
        Box::pin(std::future::ready(Err(SamplingRefusal::not_offered())))
    }
}

/// A host hook that sees every sampling request before the handler and may answer or
/// refuse it (a budget, a per-server allow list, a confirmation dialog).
pub trait SamplingReviewer: Send + Sync {
    /// `Some(answer)` decides the request (a message or a refusal); `None` hands it on
    /// to the handler. Dropping the returned future must be harmless.
    fn review(&self, request: SamplingRequest) -> BoxFuture<'_, Option<SamplingAnswer>>;
}

/// Wraps an async closure as a [`SamplingHandler`].
///
/// ```
/// #![deny(deprecated)] // host code naming the sampling types gets no warning
/// use mcp_connections::model::{CreateMessageResult, SamplingMessage};
/// use mcp_connections::{ConnectionSetOptions, sampling_fn};
///
/// let model = sampling_fn(|request| async move {
///     let reply = format!("{} tokens at most", request.max_tokens());
///     Ok(CreateMessageResult::new(SamplingMessage::assistant_text(reply), "echo-model".into()))
/// });
/// let options = ConnectionSetOptions::new().with_sampling_handler(model);
/// # drop(options);
/// ```
pub fn sampling_fn<F, Fut>(f: F) -> Arc<dyn SamplingHandler>
where
    F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = SamplingAnswer> + Send + 'static,
{
    Arc::new(FnSampling(f))
}

struct FnSampling<F>(F);

impl<F, Fut> SamplingHandler for FnSampling<F>
where
    F: Fn(SamplingRequest) -> Fut + Send + Sync,
    Fut: Future<Output = SamplingAnswer> + Send + 'static,
{
    fn create_message(&self, request: SamplingRequest) -> BoxFuture<'_, SamplingAnswer> {
        Box::pin((self.0)(request))
    }
}

/// Wraps an async closure as a [`SamplingReviewer`].
pub fn sampling_reviewer_fn<F, Fut>(f: F) -> Arc<dyn SamplingReviewer>
where
    F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Option<SamplingAnswer>> + Send + 'static,
{
    Arc::new(FnSamplingReviewer(f))
}

struct FnSamplingReviewer<F>(F);

impl<F, Fut> SamplingReviewer for FnSamplingReviewer<F>
where
    F: Fn(SamplingRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Option<SamplingAnswer>> + Send + 'static,
{
    fn review(&self, request: SamplingRequest) -> BoxFuture<'_, Option<SamplingAnswer>> {
        Box::pin((self.0)(request))
    }
}

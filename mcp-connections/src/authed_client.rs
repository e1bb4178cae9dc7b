//! An HTTP client for rmcp's streamable-HTTP transport that asks the server's
//! [`AuthHeaderProvider`] for the bearer token on every request, and after a 401 asks it once
//! for a fresh token and retries. Token refresh is invisible to the host.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use mcp_key::McpServerKey;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};

use crate::auth::{AuthError, AuthHeaderProvider};

type HttpError = StreamableHttpError<reqwest::Error>;

/// reqwest plus a credential provider.
#[derive(Clone)]
pub(crate) struct AuthedClient {
    inner: reqwest::Client,
    provider: Arc<dyn AuthHeaderProvider>,
    server: McpServerKey,
    /// Why the provider could not fix the last 401/403, so startup can report
    /// `relogin_required` (a rejected refresh) rather than a plain `login_required`.
    last_failure: Arc<std::sync::Mutex<Option<AuthError>>>,
}

impl AuthedClient {
    pub(crate) fn new(
        inner: reqwest::Client,
        provider: Arc<dyn AuthHeaderProvider>,
        server: McpServerKey,
    ) -> Self {
        Self {
            inner,
            provider,
            server,
            last_failure: Arc::default(),
        }
    }

    /// Why the provider last failed to supply credentials, if it did.
    pub(crate) fn last_failure(&self) -> Option<AuthError> {
        self.last_failure.lock().ok().and_then(|f| f.clone())
    }

    fn remember(&self, error: Option<AuthError>) {
        if let (Some(error), Ok(mut slot)) = (error, self.last_failure.lock()) {
            *slot = Some(error);
        }
    }

    fn unauthorized(detail: &str) -> HttpError {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(detail.to_owned()))
    }

    /// Runs `call` with the current token; after a 401 once more with a refreshed token,
    /// after a 403 `insufficient_scope` once more after a step-up.
    async fn with_auth<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let token = self
            .provider
            .authorization(&self.server)
            .await
            .map_err(|e| Self::unauthorized(&e.to_string()))?;
        let sent = token.as_ref().map(|t| t.expose().to_owned());
        let retry_token = match call(sent).await {
            Err(StreamableHttpError::AuthRequired(challenge)) => {
                tracing::debug!(server = %self.server, "HTTP 401: refreshing credentials once");
                let fresh = self
                    .provider
                    .refresh_after_unauthorized(
                        &self.server,
                        token.as_ref(),
                        Some(challenge.www_authenticate_header.as_str()),
                    )
                    .await;
                match fresh {
                    Ok(Some(fresh)) if Some(&fresh) != token.as_ref() => fresh,
                    other => {
                        self.remember(other.err());
                        return Err(StreamableHttpError::AuthRequired(challenge));
                    }
                }
            }
            Err(StreamableHttpError::InsufficientScope(challenge)) => {
                tracing::debug!(server = %self.server, "HTTP 403 insufficient_scope: stepping up once");
                let stepped = self
                    .provider
                    .step_up(&self.server, &challenge.www_authenticate_header)
                    .await;
                match stepped {
                    Ok(Some(fresh)) => fresh,
                    other => {
                        self.remember(other.err());
                        return Err(StreamableHttpError::InsufficientScope(challenge));
                    }
                }
            }
            Ok(value) => {
                self.provider.request_succeeded(&self.server);
                return Ok(value);
            }
            Err(other) => return Err(other),
        };
        let result = call(Some(retry_token.expose().to_owned())).await;
        if result.is_ok() {
            self.provider.request_succeeded(&self.server);
        }
        result
    }
}

impl StreamableHttpClient for AuthedClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.with_auth(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.with_auth(|token| {
            self.inner.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default().max_sse_event_size,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.with_auth(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}

//! Discovery where rmcp does the fetching: a metadata endpoint that redirects to another
//! origin (which must receive nothing) and one that answers a 32 MiB document (refused
//! without reading it). Against the testkit's servers with metadata faults.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail fast"
)]

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{AuthError, MemoryStore, OAuthCredentials, OAuthSettings};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, MetadataFault, ProtectedOptions,
    Scenario,
};

/// A document well over any metadata limit (rmcp reads at most 1 MiB).
const HUGE: usize = 32 * 1024 * 1024;

/// What the MCP server's metadata endpoints do.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Protected-resource metadata answers 307 to the other origin.
    RedirectResource,
    /// Protected-resource metadata is fine; authorization-server metadata answers 307
    /// to the other origin.
    RedirectServer,
    /// Protected-resource metadata is a 32 MiB document.
    HugeResource,
    /// Authorization-server metadata is a 32 MiB document.
    HugeServer,
}

/// An authorization server and an MCP server behind it.
struct Servers {
    auth: FakeAuthServer,
    mcp: FakeProtectedMcpServer,
}

impl Servers {
    async fn start(auth: AuthServerOptions, protected: ProtectedOptions) -> Self {
        let auth = FakeAuthServer::start(auth).await.unwrap();
        let mcp = FakeProtectedMcpServer::start(Scenario::new("tickets"), &auth, protected)
            .await
            .unwrap();
        Self { auth, mcp }
    }

    /// Requests for metadata and for the MCP endpoint, all origins together.
    fn hits(&self) -> u64 {
        let mcp = self.mcp.counters();
        self.auth.counters().metadata + mcp.metadata + mcp.total
    }
}

/// Starts the other origin (serving metadata that would make a login work, were it used,
/// so a followed redirect could not fail for want of a good answer) and the MCP server
/// in `mode`, then runs a login's discovery (with the 401 challenge, as a host would,
/// and without one).
async fn discover_in(mode: Mode) -> (Vec<AuthError>, Servers) {
    let elsewhere = Servers::start(AuthServerOptions::new(), ProtectedOptions::new()).await;
    let (auth, protected) = (AuthServerOptions::new(), ProtectedOptions::new());
    let (auth, protected) = match mode {
        Mode::RedirectResource => (
            auth,
            protected.with_metadata_fault(MetadataFault::Redirect(
                elsewhere.mcp.resource_metadata_url(),
            )),
        ),
        Mode::RedirectServer => (
            auth.with_metadata_fault(MetadataFault::Redirect(elsewhere.auth.metadata_url())),
            protected,
        ),
        Mode::HugeResource => (
            auth,
            protected.with_metadata_fault(MetadataFault::Oversized(HUGE)),
        ),
        Mode::HugeServer => (
            auth.with_metadata_fault(MetadataFault::Oversized(HUGE)),
            protected,
        ),
    };
    let servers = Servers::start(auth, protected).await;
    let creds = OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        servers.mcp.url(),
        OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
        Arc::new(MemoryStore::new()),
    );
    let challenge = creds
        .probe()
        .await
        .unwrap()
        .expect("the MCP endpoint answers 401");
    let mut errors = Vec::new();
    for challenge in [Some(challenge.as_str()), None] {
        // Promptly: far within the 30 s rmcp allows each request (a generous bound).
        let outcome = tokio::time::timeout(Duration::from_secs(20), creds.begin_login(challenge))
            .await
            .unwrap_or_else(|_| panic!("{mode:?}: discovery did not end promptly"));
        match outcome {
            Ok(_) => panic!("{mode:?}: discovery succeeded"),
            Err(e) => errors.push(e),
        }
    }
    (errors, elsewhere)
}

/// Classified as a failed OAuth request, with rmcp's refusal (`cause`) as a source.
fn assert_refused(mode: Mode, err: &AuthError, cause: &str) {
    assert!(matches!(err, AuthError::Http { .. }), "{mode:?}: {err:?}");
    assert!(!err.is_auth_required(), "{mode:?}: {err:?}");
    let mut chain = Vec::new();
    let mut source = std::error::Error::source(err);
    while let Some(e) = source {
        chain.push(e.to_string());
        source = e.source();
    }
    assert!(
        chain.iter().any(|text| text.contains(cause)),
        "{mode:?}: {chain:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_redirects_to_another_origin_are_not_followed() {
    for mode in [Mode::RedirectResource, Mode::RedirectServer] {
        let (errors, elsewhere) = discover_in(mode).await;
        assert_eq!(elsewhere.hits(), 0, "{mode:?}: the other origin was asked");
        for err in errors {
            assert_refused(mode, &err, "redirect to non-same-origin URL rejected");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_metadata_document_is_refused_promptly() {
    for mode in [Mode::HugeResource, Mode::HugeServer] {
        let (errors, elsewhere) = discover_in(mode).await;
        assert_eq!(elsewhere.hits(), 0);
        for err in errors {
            assert_refused(mode, &err, "response body exceeds 1048576 bytes");
        }
    }
}

//! The consent pages against the testkit's real authorization server and protected MCP
//! server, over loopback HTTP, with a real SQLite vault; a browser is played by reqwest
//! following each redirect by hand and carrying the cookie the start page sets.

use std::sync::Arc;

use mcp_auth::{CredentialVault, VaultKey, VaultKeys};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario, ToolSpec,
};
use reqwest::StatusCode;

use super::*;
use crate::serve::caller::Caller;

const ADMIN: &str = "admin-token-0123456789abcdef";

/// The authorization server, the protected server, a vault and the consent pages on a
/// loopback listener of their own.
struct World {
    auth: Option<FakeAuthServer>,
    mcp: FakeProtectedMcpServer,
    consent: Arc<Consent>,
    base: String,
    server: McpServerKey,
    stop: tokio_util::sync::CancellationToken,
    /// The vault's keys, for another instance on the same vault.
    keys: VaultKeys,
    _dir: tempfile::TempDir,
}

/// Another gateway instance on the same vault (file and keys), with its own memory and
/// listener: what instances behind a load balancer share.
struct Instance {
    consent: Arc<Consent>,
    base: String,
    stop: tokio_util::sync::CancellationToken,
}

/// Serves the consent routes of `consent` on a loopback listener of their own; the
/// signed-in routes behind a stand-in guard whose bearer token names the caller.
async fn serve(consent: &Arc<Consent>) -> (String, tokio_util::sync::CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    consent.listening_on(addr);
    // The guard's part for the signed-in routes: the bearer token names the caller.
    let guarded = signed_in_routes(Arc::clone(consent)).layer(axum::middleware::from_fn(
        |mut request: axum::extract::Request, next: axum::middleware::Next| async move {
            let subject = request
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or_default()
                .to_owned();
            let caller = Caller::from_token(subject, Vec::new(), Vec::new(), &[]);
            request.extensions_mut().insert(Arc::new(caller));
            next.run(request).await
        },
    ));
    let router = routes(Arc::clone(consent)).merge(guarded);
    let stop = tokio_util::sync::CancellationToken::new();
    let shutdown = stop.clone();
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
    });
    (format!("http://{addr}"), stop)
}

impl World {
    async fn start() -> Self {
        let auth = FakeAuthServer::start(AuthServerOptions::new())
            .await
            .unwrap();
        let scenario = Scenario::new("tickets").with_tool(ToolSpec::echo("echo"));
        let mcp = FakeProtectedMcpServer::start(scenario, &auth, ProtectedOptions::new())
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let keys = VaultKeys::new(VaultKey::generate("k1").unwrap());
        let vault = CredentialVault::open_sqlite(dir.path().join("vault.db"), keys.clone())
            .await
            .unwrap();
        let server: McpServerKey = "tickets".parse().unwrap();
        let consent = Consent::new(None, [(server.clone(), mcp.url())], Arc::new(vault))
            .unwrap()
            .with_admin_token(ADMIN.to_owned())
            .unwrap();
        let consent = Arc::new(consent);
        let (base, stop) = serve(&consent).await;
        Self {
            auth: Some(auth),
            mcp,
            consent,
            base,
            server,
            stop,
            keys,
            _dir: dir,
        }
    }

    /// A second instance: the same vault file and keys, nothing else shared.
    async fn other_instance(&self) -> Instance {
        let vault =
            CredentialVault::open_sqlite(self._dir.path().join("vault.db"), self.keys.clone())
                .await
                .unwrap();
        let consent = Consent::new(
            None,
            [(self.server.clone(), self.mcp.url())],
            Arc::new(vault),
        )
        .unwrap();
        let consent = Arc::new(consent);
        let (base, stop) = serve(&consent).await;
        Instance {
            consent,
            base,
            stop,
        }
    }

    fn auth(&self) -> &FakeAuthServer {
        self.auth.as_ref().unwrap()
    }

    async fn stored(&self, caller: &str) -> Option<mcp_auth::StoredCredentials> {
        self.consent
            .vault()
            .get(caller, &self.server)
            .await
            .unwrap()
    }

    async fn stop(mut self) {
        self.stop.cancel();
        if let Some(auth) = self.auth.take() {
            auth.shutdown().await;
        }
        self.mcp.shutdown().await;
        assert_no_child_process();
    }
}

/// Nothing these tests start may be a process of its own: the test process has no child.
fn assert_no_child_process() {
    let mut children = String::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let path = task.unwrap().path().join("children");
        children.push_str(&std::fs::read_to_string(path).unwrap_or_default());
    }
    assert_eq!(children.trim(), "", "processes left: {children}");
}

/// A browser: follows redirects by hand, keeping the consent cookies.
struct Browser {
    http: reqwest::Client,
    cookie: Option<String>,
}

/// Where a browser's walk ended.
#[derive(Debug)]
struct Landing {
    status: StatusCode,
    url: String,
    body: String,
}

impl Browser {
    fn new() -> Self {
        Self {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookie: None,
        }
    }

    /// Adds the cookie `response` sets to those sent from now on.
    fn keep_cookie(&mut self, response: &reqwest::Response) {
        if let Some(set) = response.headers().get(http::header::SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            self.cookie = Some(match self.cookie.take() {
                Some(kept) => format!("{kept}; {pair}"),
                None => pair.to_owned(),
            });
        }
    }

    /// Opens `url` and follows up to 5 redirects.
    async fn open(&mut self, url: &str) -> Landing {
        let mut url = url.to_owned();
        for _ in 0..5 {
            let mut request = self.http.get(&url);
            if let Some(cookie) = &self.cookie {
                request = request.header(http::header::COOKIE, cookie);
            }
            let response = request.send().await.unwrap();
            self.keep_cookie(&response);
            if response.status() != StatusCode::FOUND {
                let status = response.status();
                let body = response.text().await.unwrap();
                return Landing { status, url, body };
            }
            url = response.headers()[http::header::LOCATION]
                .to_str()
                .unwrap()
                .to_owned();
        }
        panic!("more than 5 redirects from {url}");
    }

    /// Opens `url` and returns the first redirect's target without following it.
    async fn first_hop(&mut self, url: &str) -> String {
        let response = self.http.get(url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::FOUND, "{url}");
        self.keep_cookie(&response);
        response.headers()[http::header::LOCATION]
            .to_str()
            .unwrap()
            .to_owned()
    }
}

#[tokio::test]
async fn a_sign_in_stores_the_callers_own_credentials_once() {
    let world = World::start().await;
    world.auth().set_subject("alice", &[]);
    let url = world.consent.begin("sub:alice", &world.server).unwrap();
    assert!(
        url.starts_with(&format!("{}/connect/start?state=", world.base)),
        "{url}"
    );
    // Nothing is kept for a link until its start page is opened.
    assert_eq!(world.consent.pending_count().await, 0);

    let mut browser = Browser::new();
    let authorize = browser.first_hop(&url).await;
    assert_eq!(world.consent.pending_count().await, 1);
    let landing = browser.open(&authorize).await;
    assert_eq!(landing.status, StatusCode::OK, "{landing:?}");
    assert!(
        landing.body.contains("Signed in to tickets"),
        "{}",
        landing.body
    );
    assert!(
        landing
            .url
            .starts_with(&format!("{}/connect/callback?", world.base))
    );

    // The authorization request: PKCE S256 and the server as the resource.
    let authorize = world.auth().authorize_requests().pop().unwrap();
    assert_eq!(authorize["code_challenge_method"], "S256");
    assert_eq!(authorize["resource"], world.mcp.url());
    assert_eq!(
        authorize["redirect_uri"],
        format!("{}/connect/callback", world.base)
    );
    // The verifier never left the gateway before the token request.
    let token_request = world.auth().token_requests().pop().unwrap();
    assert!(
        !authorize
            .values()
            .any(|v| v == &token_request["code_verifier"])
    );

    let stored = world
        .stored("sub:alice")
        .await
        .expect("alice's credentials");
    let token = stored.access_token.clone().unwrap();
    let info = world.auth().token_info(token.expose()).unwrap();
    assert_eq!(info.subject, "alice");
    assert_eq!(info.resource.as_deref(), Some(world.mcp.url().as_str()));
    assert!(world.auth().is_valid_token(token.expose()));
    assert_eq!(stored.resource.as_deref(), Some(world.mcp.url().as_str()));
    assert!(
        world.stored("sub:bob").await.is_none(),
        "nobody else has them"
    );
    assert_eq!(
        world.consent.pending_count().await,
        0,
        "the state is used up"
    );

    // The same callback again (a replay) is refused and changes nothing.
    let replay = browser.open(&landing.url).await;
    assert_eq!(replay.status, StatusCode::BAD_REQUEST);
    assert!(
        replay.body.contains("unknown or was already used"),
        "{}",
        replay.body
    );
    assert_eq!(world.stored("sub:alice").await, Some(stored));
    world.stop().await;
}

#[tokio::test]
async fn bobs_sign_in_never_lands_in_alices_row() {
    let world = World::start().await;
    world.auth().set_subject("alice", &[]);
    let alice_url = world.consent.begin("sub:alice", &world.server).unwrap();
    let landing = Browser::new().open(&alice_url).await;
    assert_eq!(landing.status, StatusCode::OK, "{landing:?}");
    let alice = world.stored("sub:alice").await.unwrap();

    // Bob signs in with his own state: his row, not alice's.
    world.auth().set_subject("bob", &[]);
    let bob_url = world.consent.begin("sub:bob", &world.server).unwrap();
    let landing = Browser::new().open(&bob_url).await;
    assert_eq!(landing.status, StatusCode::OK, "{landing:?}");
    let bob = world.stored("sub:bob").await.unwrap();
    let bob_token = bob.access_token.clone().unwrap();
    assert_eq!(
        world.auth().token_info(bob_token.expose()).unwrap().subject,
        "bob"
    );
    assert_eq!(
        world.stored("sub:alice").await,
        Some(alice.clone()),
        "alice's row unchanged"
    );

    // Alice's link opened by another browser (bob's): the authorization goes through,
    // but the callback is refused there, and nothing is stored for alice.
    world
        .consent
        .vault()
        .delete("sub:alice", &world.server)
        .await
        .unwrap();
    let alice_url = world.consent.begin("sub:alice", &world.server).unwrap();
    let mut alice_browser = Browser::new();
    let authorize = alice_browser.first_hop(&alice_url).await;
    let mut bob_browser = Browser::new();
    let landing = bob_browser.open(&authorize).await;
    assert_eq!(landing.status, StatusCode::FORBIDDEN, "{landing:?}");
    assert!(
        landing.body.contains("started in another browser"),
        "{}",
        landing.body
    );
    assert!(world.stored("sub:alice").await.is_none());

    // The same with bob's browser carrying a consent cookie of its own (from bob's own
    // start page): a cookie, but not the one alice's start page set.
    let bob_url = world.consent.begin("sub:bob", &world.server).unwrap();
    let mut bob_browser = Browser::new();
    bob_browser.first_hop(&bob_url).await;
    assert!(bob_browser.cookie.is_some());
    let alice_url = world.consent.begin("sub:alice", &world.server).unwrap();
    let authorize = Browser::new().first_hop(&alice_url).await;
    let landing = bob_browser.open(&authorize).await;
    assert_eq!(landing.status, StatusCode::FORBIDDEN, "{landing:?}");
    assert!(world.stored("sub:alice").await.is_none());
    assert_eq!(
        world.stored("sub:bob").await,
        Some(bob),
        "bob's row unchanged"
    );
    world.stop().await;
}

#[tokio::test]
async fn failures_show_a_page_and_store_nothing() {
    let mut world = World::start().await;

    // A state never made here, and none at all.
    let mut browser = Browser::new();
    for url in [
        format!("{}/connect/start?state=0123", world.base),
        format!("{}/connect/start", world.base),
        format!("{}/connect/callback?code=x&state=0123", world.base),
    ] {
        let landing = browser.open(&url).await;
        assert_eq!(landing.status, StatusCode::BAD_REQUEST, "{url}");
        assert!(landing.body.contains("Sign-in failed"), "{}", landing.body);
    }

    // Consent denied at the authorization server.
    world.auth().set_deny_authorization(true);
    let url = world.consent.begin("sub:alice", &world.server).unwrap();
    let landing = Browser::new().open(&url).await;
    assert_eq!(landing.status, StatusCode::FORBIDDEN, "{landing:?}");
    assert!(landing.body.contains("access_denied"), "{}", landing.body);
    world.auth().set_deny_authorization(false);

    // The authorization server down.
    let url = world.consent.begin("sub:alice", &world.server).unwrap();
    world.auth.take().unwrap().shutdown().await;
    let landing = Browser::new().open(&url).await;
    assert_eq!(landing.status, StatusCode::BAD_GATEWAY, "{landing:?}");
    assert!(
        landing
            .body
            .contains("cannot reach the sign-in of server `tickets`"),
        "{}",
        landing.body
    );

    assert!(world.stored("sub:alice").await.is_none());
    assert!(
        world
            .consent
            .vault()
            .list("sub:alice")
            .await
            .unwrap()
            .is_empty()
    );
    world.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_opened_again_elsewhere_cannot_take_the_sign_in_over() {
    let world = World::start().await;
    world.auth().set_subject("alice", &[]);
    let url = world.consent.begin("sub:alice", &world.server).unwrap();
    let mut alice = Browser::new();
    let authorize = alice.first_hop(&url).await;
    // The link leaked: someone else opens it after alice did, and is refused.
    let mut mallory = Browser::new();
    let taken = mallory.open(&url).await;
    assert_eq!(taken.status, StatusCode::BAD_REQUEST, "{taken:?}");
    assert!(taken.body.contains("already opened"), "{taken:?}");
    // Alice's own sign-in still finishes, as alice.
    let landing = alice.open(&authorize).await;
    assert_eq!(landing.status, StatusCode::OK, "{landing:?}");
    assert!(world.stored("sub:alice").await.is_some());
    world.stop().await;
}

#[tokio::test]
async fn two_sign_ins_begun_side_by_side_in_one_browser_both_finish() {
    let world = World::start().await;
    world.auth().set_subject("alice", &[]);
    let mut browser = Browser::new();
    let first = world.consent.begin("sub:alice", &world.server).unwrap();
    let second = world.consent.begin("sub:alice", &world.server).unwrap();
    let first = browser.first_hop(&first).await;
    let second = browser.first_hop(&second).await;
    // The first one back after the second was started: its cookie is still there.
    let landing = browser.open(&first).await;
    assert_eq!(landing.status, StatusCode::OK, "{landing:?}");
    let landing = browser.open(&second).await;
    assert_eq!(landing.status, StatusCode::OK, "{landing:?}");
    assert!(world.stored("sub:alice").await.is_some());
    world.stop().await;
}

#[tokio::test]
async fn an_expired_link_is_refused_at_the_start_page_and_at_the_callback() {
    let world = World::start().await;
    let url = world.consent.begin("sub:alice", &world.server).unwrap();
    world.consent.expire_all();
    let landing = Browser::new().open(&url).await;
    assert_eq!(landing.status, StatusCode::BAD_REQUEST, "{landing:?}");
    assert!(landing.body.contains("expired"), "{}", landing.body);

    // Started in time, back too late.
    let url = world.consent.begin("sub:alice", &world.server).unwrap();
    let mut browser = Browser::new();
    let authorize = browser.first_hop(&url).await;
    world.consent.expire_all();
    let landing = browser.open(&authorize).await;
    assert_eq!(landing.status, StatusCode::BAD_REQUEST, "{landing:?}");
    assert!(landing.body.contains("expired"), "{}", landing.body);
    assert!(world.stored("sub:alice").await.is_none());
    world.stop().await;
}

#[tokio::test]
async fn begin_refuses_other_servers_and_needs_an_address() {
    let dir = tempfile::tempdir().unwrap();
    let keys = VaultKeys::new(VaultKey::generate("k1").unwrap());
    let vault = CredentialVault::open_sqlite(dir.path().join("v.db"), keys)
        .await
        .unwrap();
    let tickets: McpServerKey = "tickets".parse().unwrap();
    let consent = Consent::new(
        None,
        [(tickets.clone(), "http://127.0.0.1:9/mcp".to_owned())],
        Arc::new(vault),
    )
    .unwrap();
    assert_eq!(
        consent.begin("sub:alice", &tickets),
        Err(ConsentError::NoAddress)
    );
    let other: McpServerKey = "other".parse().unwrap();
    let refused = consent.begin("sub:alice", &other).unwrap_err();
    assert!(refused.to_string().contains("`other`"), "{refused}");

    let vault = Arc::clone(consent.vault());
    let public = Consent::new(
        Some("https://mcp.example.com/"),
        [(tickets.clone(), "https://t.example/mcp".to_owned())],
        vault,
    )
    .unwrap();
    let url = public.begin("sub:alice", &tickets).unwrap();
    assert!(
        url.starts_with("https://mcp.example.com/connect/start?state="),
        "{url}"
    );
    // Each begin is a new nonce.
    assert_ne!(url, public.begin("sub:alice", &tickets).unwrap());
    assert!(
        Consent::new(None, [], Arc::clone(public.vault()))
            .unwrap()
            .with_admin_token("short".to_owned())
            .is_err()
    );
}

#[tokio::test]
async fn a_caller_signs_out_and_an_admin_revokes_a_caller() {
    let world = World::start().await;
    for subject in ["alice", "bob"] {
        world.auth().set_subject(subject, &[]);
        let url = world
            .consent
            .begin(&format!("sub:{subject}"), &world.server)
            .unwrap();
        assert_eq!(Browser::new().open(&url).await.status, StatusCode::OK);
    }

    // `mcpctl gateway sign-out`, with alice's token: alice's row goes, bob's stays.
    let token_file = world._dir.path().join("token");
    std::fs::write(&token_file, "alice").unwrap();
    let sign_out =
        crate::commands::gateway::GatewayCommand::SignOut(crate::commands::gateway::SignOutArgs {
            server: "tickets".to_owned(),
            gateway: crate::commands::gateway::GatewayArg {
                url: Some(world.base.clone()),
            },
            token_file: Some(token_file),
        });
    assert_eq!(crate::commands::gateway::run(&sign_out).await.unwrap(), 0);
    assert!(world.stored("sub:alice").await.is_none());
    assert!(world.stored("sub:bob").await.is_some());

    let http = reqwest::Client::new();
    let unknown = http
        .delete(format!("{}/connect/servers/other", world.base))
        .bearer_auth("alice")
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);

    // Approvals remembered for bob (and alice) in the same store.
    for caller in ["sub:alice", "sub:bob"] {
        world
            .consent
            .vault
            .remember_approval(caller, &world.server, "echo", None)
            .await
            .unwrap();
    }
    let remembered = |caller: &'static str| {
        let vault = Arc::clone(&world.consent.vault);
        let server = world.server.clone();
        async move {
            vault
                .remembered_approval(caller, &server, "echo")
                .await
                .unwrap()
        }
    };

    // Revocation of all of bob's credentials: not without the admin token.
    let revoke = format!("{}/connect/callers/sub:bob", world.base);
    for token in [None, Some("bob"), Some("admin-token-0123456789abcdeX")] {
        let mut request = http.delete(&revoke);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        assert_eq!(
            request.send().await.unwrap().status(),
            StatusCode::UNAUTHORIZED
        );
        assert!(world.stored("sub:bob").await.is_some());
    }
    let answer: serde_json::Value = http
        .delete(&revoke)
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["removed"], 1);
    assert!(world.stored("sub:bob").await.is_none());
    // Bob's remembered approvals went with his credentials; alice's stay.
    assert!(remembered("sub:bob").await.is_none());
    assert!(remembered("sub:alice").await.is_some());
    world.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_begun_on_one_instance_finishes_on_another_once() {
    let world = World::start().await;
    let other = world.other_instance().await;
    world.auth().set_subject("alice", &[]);
    // The link from instance A, its start page on A, its callback on B.
    let url = world.consent.begin("sub:alice", &world.server).unwrap();
    let mut browser = Browser::new();
    let authorize = browser.first_hop(&url).await;
    let callback = browser.first_hop(&authorize).await;
    assert!(callback.starts_with(&world.base), "{callback}");
    let on_other = callback.replacen(&world.base, &other.base, 1);
    let landing = browser.open(&on_other).await;
    assert_eq!(landing.status, StatusCode::OK, "{landing:?}");
    let stored = world
        .stored("sub:alice")
        .await
        .expect("alice's credentials");
    let token = stored.access_token.clone().unwrap();
    assert_eq!(
        world.auth().token_info(token.expose()).unwrap().subject,
        "alice"
    );
    assert_eq!(
        other.consent.pending_count().await,
        0,
        "the sign-in is used up"
    );

    // The callback replayed, on the other instance and on the same one: refused, nothing
    // changes.
    for replay in [&callback, &on_other] {
        let landing = browser.open(replay).await;
        assert_eq!(landing.status, StatusCode::BAD_REQUEST, "{landing:?}");
        assert!(
            landing.body.contains("unknown or was already used"),
            "{}",
            landing.body
        );
    }
    assert_eq!(world.stored("sub:alice").await, Some(stored));

    // A link made on B and opened on A, then again on B (a leaked link): the first
    // browser owns it on every instance.
    world.auth().set_subject("mallory", &[]);
    let url = other.consent.begin("sub:bob", &world.server).unwrap();
    let on_a = url.replacen(&other.base, &world.base, 1);
    let mut bob = Browser::new();
    let authorize = bob.first_hop(&on_a).await;
    let taken = Browser::new().open(&url).await;
    assert_eq!(taken.status, StatusCode::BAD_REQUEST, "{taken:?}");
    assert!(taken.body.contains("already opened"), "{taken:?}");
    // Bob's own browser finishes (here on A, whose start page it opened).
    world.auth().set_subject("bob", &[]);
    let landing = bob.open(&authorize).await;
    assert_eq!(landing.status, StatusCode::OK, "{landing:?}");
    assert!(world.stored("sub:bob").await.is_some());
    other.stop.cancel();
    world.stop().await;
}

#[tokio::test]
async fn a_link_sealed_by_a_gateway_with_other_keys_is_refused() {
    let world = World::start().await;
    let dir = tempfile::tempdir().unwrap();
    let keys = VaultKeys::new(VaultKey::generate("k1").unwrap());
    let vault = CredentialVault::open_sqlite(dir.path().join("v.db"), keys)
        .await
        .unwrap();
    let stranger = Consent::new(
        Some(&world.base),
        [(world.server.clone(), world.mcp.url())],
        Arc::new(vault),
    )
    .unwrap();
    let url = stranger.begin("sub:alice", &world.server).unwrap();
    let landing = Browser::new().open(&url).await;
    assert_eq!(landing.status, StatusCode::BAD_REQUEST, "{landing:?}");
    assert!(landing.body.contains("unknown"), "{}", landing.body);
    // Nothing was started anywhere.
    assert_eq!(world.consent.pending_count().await, 0);
    assert!(world.auth().authorize_requests().is_empty());
    world.stop().await;
}

#[tokio::test]
async fn a_wrong_issuer_or_an_unusable_store_is_a_page_and_stores_nothing() {
    let world = World::start().await;
    // The answer names another issuer than the authorization server's (a mix-up).
    world
        .auth()
        .set_iss_parameter_value(Some("http://evil.example"));
    let url = world.consent.begin("sub:alice", &world.server).unwrap();
    let landing = Browser::new().open(&url).await;
    assert_eq!(landing.status, StatusCode::BAD_REQUEST, "{landing:?}");
    assert!(
        landing.body.contains("not from") && landing.body.contains("evil.example"),
        "{}",
        landing.body
    );
    assert!(world.stored("sub:alice").await.is_none());
    world.auth().set_iss_parameter_value(None);

    // The store closed (down): the start page says so and sends nobody upstream.
    let url = world.consent.begin("sub:alice", &world.server).unwrap();
    world.consent.vault().close().await;
    let before = world.auth().authorize_requests().len();
    let landing = Browser::new().open(&url).await;
    assert_eq!(
        landing.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{landing:?}"
    );
    assert!(
        landing.body.contains("credential store cannot be used"),
        "{}",
        landing.body
    );
    assert_eq!(world.auth().authorize_requests().len(), before);
    world.stop().await;
}

#[test]
fn url_elicitations_have_the_spec_shapes() {
    let server: McpServerKey = "tickets".parse().unwrap();
    let url = "https://mcp.example.com/connect/start?state=abc";

    // 2025-11-25 `elicitation/create`, URL mode.
    let params = serde_json::to_value(url_elicitation(&server, url)).unwrap();
    assert_eq!(params["mode"], "url");
    assert_eq!(params["url"], url);
    assert!(
        params["elicitationId"]
            .as_str()
            .unwrap()
            .starts_with("sign-in-tickets-")
    );
    assert!(params["message"].as_str().unwrap().contains("tickets"));
    assert!(params.get("requestedSchema").is_none());

    // The 2026-era `input_required` entry: a whole request, without elicitationId.
    let request = serde_json::to_value(url_input_request(&server, url)).unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["mode"], "url");
    assert_eq!(request["params"]["url"], url);

    // The error for a call that cannot wait, readable without `data` too.
    let error = url_required_error(&server, url);
    assert_eq!(error.code.0, -32042);
    assert_eq!(
        error.message,
        format!("open {url} to sign in to tickets, then retry")
    );
    assert_eq!(error.data.unwrap()["elicitations"][0]["mode"], "url");
    assert_eq!(
        cannot_elicit_text(&server, url),
        format!("open {url} to sign in to tickets, then retry")
    );
}

//! `mcpctl serve --http` with `[gateway.oauth]`: an OAuth 2.1 resource server in front of
//! the team's servers, with the testkit's fake authorization server as the team's identity
//! provider. A client without a token gets `401` and where to log in (RFC 9728 metadata);
//! the pinned Python SDK client logs in by itself and calls through the gateway; tokens for
//! another audience, expired, from another issuer, signed with a rotated-out key, unsigned
//! or HMAC-signed with the public key, and bad `Authorization` headers are refused with
//! `401`, too few scopes with `403`; a key set endpoint that hangs or answers garbage is
//! bounded and refused while other callers are served; introspection works in place of
//! JWTs; the client's token never reaches an upstream server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and clients as a person would"
)]

mod support;
mod team;

use std::process::{Command, Stdio};

use futures::StreamExt as _;
use mcp_testkit::{AccessTokenClaims, AuthServerOptions, FakeAuthServer, JwksFault, OAuthClient};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Served, Workdir};
use team::{SCOPE, STATIC_TOKEN, bearer, initialize, post};

/// The `WWW-Authenticate` of a refusal with `error` (and its description).
fn challenge(metadata: &str, error: Option<(&str, &str)>) -> String {
    match error {
        None => format!("Bearer resource_metadata=\"{metadata}\""),
        Some((error, why)) => format!(
            "Bearer error=\"{error}\", error_description=\"{why}\", resource_metadata=\"{metadata}\""
        ),
    }
}

/// `<origin of url>/.well-known/oauth-protected-resource/mcp`.
fn metadata_url(url: &str) -> String {
    url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
}

#[test]
fn a_client_without_a_token_is_told_where_to_log_in_and_a_valid_token_gets_in() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let config = team::config(&wd, &auth.issuer(), "", "");
    let served = Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    runtime.block_on(async {
        let refused = post(&url, None, None, &initialize()).await;
        assert_eq!(refused.status, 401);
        assert_eq!(
            refused.header("www-authenticate"),
            Some(challenge(&metadata_url(&url), None))
        );
        let expected = json!({
            "resource": url,
            "authorization_servers": [auth.issuer()],
            "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"],
            "resource_name": "mcpctl serve",
        });
        for path in [
            metadata_url(&url),
            url.replace("/mcp", "/.well-known/oauth-protected-resource"),
        ] {
            let response = team::http().get(&path).send().await.unwrap();
            assert_eq!(response.status(), 200, "{path}");
            assert_eq!(response.json::<Value>().await.unwrap(), expected, "{path}");
        }
        // The static token means nothing here.
        let static_token = post(&url, Some(&bearer(STATIC_TOKEN)), None, &initialize()).await;
        assert_eq!(static_token.status, 401);
        let token = team::token(&auth, &url, "alice", &[]);
        let admitted = post(&url, Some(&bearer(&token)), None, &initialize()).await;
        assert_eq!(admitted.status, 200, "{admitted:?}");
        assert_eq!(
            admitted.body["result"]["serverInfo"]["name"],
            "mcpctl-serve"
        );
    });
    drop(served);
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

#[test]
fn tokens_not_valid_here_are_refused_with_the_status_and_challenge_they_deserve() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let config = team::config(&wd, &auth.issuer(), "", "");
    let served = Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    let metadata = metadata_url(&url);
    let good = || {
        AccessTokenClaims::new("alice")
            .with_scopes([SCOPE])
            .with_audience(url.clone())
    };
    let invalid = |why: &str| (401, challenge(&metadata, Some(("invalid_token", why))));
    // An HMAC token keyed with the issuer's public key (the classic confusion).
    let hmac = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"iss": auth.issuer(), "sub": "mallory", "aud": url, "scope": SCOPE,
                "exp": 4_000_000_000_u64}),
        &jsonwebtoken::EncodingKey::from_secret(mcp_testkit::TEST_RSA_PUBLIC_KEY_PEM.as_bytes()),
    )
    .unwrap();
    let cases: Vec<(&str, String, (u16, String))> = vec![
        (
            "another audience",
            auth.mint_jwt(&good().with_audience("http://127.0.0.1:1/mcp")),
            invalid("the token is for another resource"),
        ),
        (
            "expired",
            auth.mint_jwt(&good().with_expires_in(-120)),
            invalid("the token has expired"),
        ),
        (
            "another issuer",
            auth.mint_jwt(&good().with_issuer("http://127.0.0.1:1")),
            invalid("the token is from another issuer"),
        ),
        (
            "alg none",
            auth.mint_jwt(&good().unsigned()),
            invalid("the token is no JWT this gateway accepts"),
        ),
        (
            "HS256 with the public key",
            hmac,
            invalid("the token's signature algorithm is not accepted"),
        ),
        (
            "too few scopes",
            auth.mint_jwt(&AccessTokenClaims::new("alice").with_audience(url.clone())),
            (
                403,
                format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{SCOPE}\", resource_metadata=\"{metadata}\""
                ),
            ),
        ),
        (
            "not a JWT",
            "abc.def.ghi".to_owned(),
            invalid("the token is no JWT this gateway accepts"),
        ),
    ];
    runtime.block_on(async {
        for (what, token, expected) in cases {
            let answer = post(&url, Some(&bearer(&token)), None, &initialize()).await;
            assert_eq!(
                (
                    answer.status,
                    answer.header("www-authenticate").unwrap_or_default()
                ),
                expected,
                "{what}"
            );
        }
        // Bad `Authorization` headers: refused, never a crash.
        let malformed = [
            ("Bearer", invalid("the Authorization header has no token")),
            ("Bearer a b", invalid("the bearer token is malformed")),
            (
                "Bearer \"quoted\"",
                invalid("the bearer token is malformed"),
            ),
            ("Basic YWxpY2U6c2VjcmV0", (401, challenge(&metadata, None))),
            ("", (401, challenge(&metadata, None))),
        ];
        for (value, expected) in malformed {
            let answer = post(&url, Some(value), None, &initialize()).await;
            assert_eq!(
                (
                    answer.status,
                    answer.header("www-authenticate").unwrap_or_default()
                ),
                expected,
                "{value:?}"
            );
        }
        let two = team::http()
            .post(&url)
            .header(
                "authorization",
                bearer(&team::token(&auth, &url, "alice", &[])),
            )
            .header("authorization", "Bearer other")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&initialize())
            .send()
            .await
            .unwrap();
        assert_eq!(
            team::answer(two).await.header("www-authenticate"),
            Some(invalid("the request has several Authorization headers").1)
        );
        // A long token is refused before anything reads it; one beyond hyper's bound on a
        // request head (about 400 KB) is refused by hyper itself.
        let long = post(
            &url,
            Some(&bearer(&"a".repeat(64 * 1024))),
            None,
            &initialize(),
        )
        .await;
        assert_eq!(
            (
                long.status,
                long.header("www-authenticate").unwrap_or_default()
            ),
            invalid("the Authorization header is too long")
        );
        let huge = post(
            &url,
            Some(&bearer(&"a".repeat(1024 * 1024))),
            None,
            &initialize(),
        )
        .await;
        assert_eq!(huge.status, 431, "{huge:?}");

        // Keys: a token of the current key works; after a rotation a token of the new key
        // works (the key set is read again), and the old key no longer verifies anything.
        let before = team::token(&auth, &url, "alice", &[]);
        assert_eq!(
            post(&url, Some(&bearer(&before)), None, &initialize())
                .await
                .status,
            200
        );
        auth.rotate_signing_key();
        let after = team::token(&auth, &url, "alice", &[]);
        assert_eq!(
            post(&url, Some(&bearer(&after)), None, &initialize())
                .await
                .status,
            200
        );
        let rotated_out = post(&url, Some(&bearer(&before)), None, &initialize()).await;
        assert_eq!(
            (
                rotated_out.status,
                rotated_out.header("www-authenticate").unwrap_or_default()
            ),
            invalid("the token is signed with a key the issuer does not publish")
        );
        // A flood of made-up key ids reads the key set once, not once each.
        let reads = auth.counters().jwks;
        for n in 0..5 {
            let made_up = made_up_kid(&auth.issuer(), &url, &format!("made-up-{n}"));
            let answer = post(&url, Some(&bearer(&made_up)), None, &initialize()).await;
            assert_eq!(answer.status, 401);
        }
        assert!(auth.counters().jwks <= reads + 1, "{:?}", auth.counters());
        // Still serving.
        assert_eq!(
            post(&url, Some(&bearer(&after)), None, &initialize())
                .await
                .status,
            200
        );
    });
    drop(served);
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

/// A token for `url` signed with the testkit's RSA key under a key id (`kid`) the issuer
/// never published.
fn made_up_kid(issuer: &str, url: &str, kid: &str) -> String {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(
        &header,
        &json!({"iss": issuer, "sub": "mallory", "aud": url, "scope": SCOPE,
                "exp": 4_000_000_000_u64}),
        &jsonwebtoken::EncodingKey::from_rsa_pem(mcp_testkit::TEST_RSA_PRIVATE_KEY_PEM.as_bytes())
            .unwrap(),
    )
    .unwrap()
}

#[test]
fn a_key_set_endpoint_that_hangs_or_answers_garbage_is_bounded_and_others_are_served() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let config = team::config(&wd, &auth.issuer(), "", "");
    let served = Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &[]);
        assert_eq!(
            post(&url, Some(&bearer(&alice)), None, &initialize())
                .await
                .status,
            200
        );
        // The key set hangs; bob's token is signed with a key the gateway has not seen.
        auth.set_jwks_fault(Some(JwksFault::Hang));
        auth.rotate_signing_key();
        let bob = team::token(&auth, &url, "bob", &[]);
        let bob_url = url.clone();
        let waiting =
            tokio::spawn(
                async move { post(&bob_url, Some(&bearer(&bob)), None, &initialize()).await },
            );
        // Bob's request waits for the key set; alice, whose key is known, does not.
        while auth.counters().jwks < 2 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let served_meanwhile = post(&url, Some(&bearer(&alice)), None, &initialize()).await;
        assert_eq!(served_meanwhile.status, 200);
        assert!(!waiting.is_finished(), "alice went first");
        let bounded = waiting.await.unwrap();
        assert_eq!(bounded.status, 503, "{bounded:?}");
        assert_eq!(bounded.header("retry-after").as_deref(), Some("5"));
        assert_eq!(
            post(&url, Some(&bearer(&alice)), None, &initialize())
                .await
                .status,
            200
        );
    });
    drop(served);

    // Garbage, on a gateway that never read the key set.
    let served = Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    runtime.block_on(async {
        auth.set_jwks_fault(Some(JwksFault::Garbage));
        let carol = team::token(&auth, &url, "carol", &[]);
        let refused = post(&url, Some(&bearer(&carol)), None, &initialize()).await;
        assert_eq!(refused.status, 503, "{refused:?}");
        auth.set_jwks_fault(Some(JwksFault::Oversized(2 * 1024 * 1024)));
        // Refused again at once (the failure is remembered for a moment), not read again.
        let reads = auth.counters().jwks;
        let again = post(&url, Some(&bearer(&carol)), None, &initialize()).await;
        assert_eq!((again.status, auth.counters().jwks), (503, reads));
    });
    drop(served);
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

#[test]
fn introspection_accepts_active_tokens_for_this_gateway_only() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    // Opaque tokens: only the authorization server can tell what they are.
    let auth = runtime.block_on(async {
        let options = AuthServerOptions::new()
            .with_subject("alice", ["readers"])
            .with_client(OAuthClient::confidential("gateway", "gateway-secret"));
        FakeAuthServer::start(options).await.unwrap()
    });
    let oauth = "validation = \"introspection\"\nclient_id = \"gateway\"\nclient_secret_env = \"GATEWAY_SECRET\"\n";
    let config = team::config(&wd, &auth.issuer(), oauth, "");
    let run = wd.run(&[
        "--config",
        config.to_str().unwrap(),
        "serve",
        "--http",
        "127.0.0.1:0",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("[gateway.oauth] client_secret_env: $GATEWAY_SECRET is not set"),
        "{}",
        run.stderr
    );
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[("GATEWAY_SECRET", "gateway-secret")],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let opaque = auth.mint_token("some-client", &[SCOPE], Some(&url));
        assert!(!opaque.contains('.'), "an opaque token");
        let first = post(&url, Some(&bearer(&opaque)), None, &initialize()).await;
        assert_eq!(first.status, 200, "{first:?}");
        let asked = auth.counters().introspections;
        assert_eq!(asked, 1);
        // The answer is kept a moment: a session's requests do not each ask.
        let second = post(&url, Some(&bearer(&opaque)), None, &initialize()).await;
        assert_eq!(
            (second.status, auth.counters().introspections),
            (200, asked)
        );
        let elsewhere = auth.mint_token("some-client", &[SCOPE], Some("http://127.0.0.1:1/mcp"));
        let made_up = "not-a-token-anyone-issued";
        let few_scopes = auth.mint_token("some-client", &[], Some(&url));
        for (token, status, error) in [
            (elsewhere.as_str(), 401, "the token is for another resource"),
            (made_up, 401, "the token is not active"),
            (few_scopes.as_str(), 403, "insufficient_scope"),
        ] {
            let answer = post(&url, Some(&bearer(token)), None, &initialize()).await;
            assert_eq!(answer.status, status, "{token}");
            assert!(
                answer.header("www-authenticate").unwrap().contains(error),
                "{answer:?}"
            );
        }
    });
    drop(served);
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

/// Under `validation = "introspection"`, made-up tokens cost a bounded number of
/// introspections: a refused token is refused from memory for a while, and one client
/// address causes at most a burst of introspections, then gets `429` with `Retry-After`;
/// a token already accepted goes on being served meanwhile.
#[test]
fn made_up_tokens_cost_a_bounded_number_of_introspections() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(async {
        let options = AuthServerOptions::new()
            .with_subject("alice", ["readers"])
            .with_client(OAuthClient::confidential("gateway", "gateway-secret"));
        FakeAuthServer::start(options).await.unwrap()
    });
    let oauth = "validation = \"introspection\"\nclient_id = \"gateway\"\nclient_secret_env = \"GATEWAY_SECRET\"\n";
    let config = team::config(&wd, &auth.issuer(), oauth, "");
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[("GATEWAY_SECRET", "gateway-secret")],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let opaque = auth.mint_token("some-client", &[SCOPE], Some(&url));
        let accepted = post(&url, Some(&bearer(&opaque)), None, &initialize()).await;
        let accepted_at = std::time::Instant::now();
        assert_eq!(accepted.status, 200, "{accepted:?}");
        assert_eq!(auth.counters().introspections, 1);

        // One made-up token, again and again: asked about once.
        for _ in 0..50 {
            let refused = post(&url, Some(&bearer("made-up-token")), None, &initialize()).await;
            assert_eq!(refused.status, 401, "{refused:?}");
        }
        assert_eq!(auth.counters().introspections, 2, "a refusal is kept");

        // 300 made-up tokens from one address, eight at a time (as an attacker would send
        // them): a bounded burst of introspections.
        let started = std::time::Instant::now();
        let answers: Vec<_> = futures::stream::iter(0..300)
            .map(|i| {
                let token = format!("made-up-token-{i}");
                let url = url.clone();
                async move { post(&url, Some(&bearer(&token)), None, &initialize()).await }
            })
            .buffer_unordered(8)
            .collect()
            .await;
        let mut limited = 0;
        for answer in &answers {
            match answer.status {
                401 => {}
                429 => {
                    limited += 1;
                    assert!(answer.header("retry-after").is_some(), "{answer:?}");
                }
                other => panic!("{other}: {answer:?}"),
            }
        }
        let asked = auth.counters().introspections - 2;
        let allowed = 20 + started.elapsed().as_secs() + 1;
        assert!(
            asked <= allowed,
            "{asked} introspections for 300 made-up tokens"
        );
        assert!(limited >= 300 - allowed, "{limited} refused with 429");
        // The accepted token is still served while its answer is kept (30 s). On a machine
        // so loaded that the flood outlasted that, its introspection is due again and this
        // address is over its rate: a 429 that says when to retry, never a 401.
        let again = post(&url, Some(&bearer(&opaque)), None, &initialize()).await;
        if accepted_at.elapsed() < std::time::Duration::from_secs(28) {
            assert_eq!(again.status, 200, "{again:?}");
        } else {
            assert!(
                again.status == 200
                    || (again.status == 429 && again.header("retry-after").is_some()),
                "{again:?}"
            );
        }
    });
    drop(served);
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

#[test]
fn the_clients_token_never_reaches_an_upstream_server() {
    let wd = Workdir::new();
    let runtime = support::runtime();
    let (auth, upstream) = runtime.block_on(async {
        let scenario: mcp_testkit::Scenario = serde_json::from_value(json!({
            "tools": [{"name": "echo", "behavior": {"kind": "echo"}}],
        }))
        .unwrap();
        let upstream = mcp_testkit::HttpFakeServer::start_with(
            scenario,
            mcp_testkit::HttpOptions::new().with_bearer_token("the-gateways-own-token"),
        )
        .await
        .unwrap();
        (team::auth_server().await, upstream)
    });
    let text = format!(
        "[mcp_servers.remote]\nurl = \"{}\"\nbearer_token_env_var = \"REMOTE_TOKEN\"\ndefault_tools_approval_mode = \"approve\"\n\n[gateway.oauth]\nissuer = {}\nscopes = [\"{SCOPE}\"]\n",
        upstream.url(),
        support::toml_str(&auth.issuer())
    );
    let config = wd.write("mcp.toml", &text);
    let served = Served::start_with_env(
        &wd,
        &config,
        STATIC_TOKEN,
        &[],
        &[("REMOTE_TOKEN", "the-gateways-own-token")],
    );
    let url = served.url.clone();
    runtime.block_on(async {
        let token = team::token(&auth, &url, "alice", &[]);
        let session = team::open_session(&url, &token).await;
        let call = team::request(
            "tools/call",
            json!({"name": "mcp__remote__echo", "arguments": {"text": "hi"}}),
        );
        let answer = post(&url, Some(&bearer(&token)), Some(&session), &call).await;
        assert_eq!(
            answer.body["result"]["structuredContent"],
            json!({"text": "hi"}),
            "{answer:?}"
        );
        let seen = upstream.header_values("authorization");
        assert!(!seen.is_empty());
        assert!(
            seen.iter().all(|v| v == "Bearer the-gateways-own-token"),
            "{seen:?}"
        );
        assert!(!seen.iter().any(|v| v.contains(&token)));
    });
    drop(served);
    runtime.block_on(async {
        upstream.shutdown().await;
        auth.shutdown().await;
    });
    wd.assert_no_server_left();
}

/// The pinned Python SDK client logs in by itself: its own OAuth client
/// (`OAuthClientProvider`) finds the gateway's metadata from the 401, registers at the
/// fake authorization server, runs the authorization-code flow with PKCE and the
/// `resource` parameter (its redirect handler plays the browser: it requests the
/// authorization URL and hands the redirect's code back), and calls through the gateway
/// with the token it got, in both eras. The grants decide what it sees.
#[test]
fn the_python_sdk_client_logs_in_by_itself_and_calls_through_the_gateway() {
    let Some(clients) = support::gateway_clients(&[(
        "py_oauth_client.py",
        include_str!("gateway/py_oauth_client.py"),
    )]) else {
        return;
    };
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let grants =
        "[[gateway.grants]]\ngroups = [\"readers\"]\nservers = [\"notes\"]\ntools = [\"echo\"]\n";
    let config = team::config(&wd, &auth.issuer(), "", grants);
    let served = Served::start(&wd, &config, STATIC_TOKEN, &[]);
    for (era, logins) in [("2025", 1), ("2026", 2)] {
        let output = Command::new(clients.join("venv/bin/python"))
            .arg(clients.join("py_oauth_client.py"))
            .args([era, &served.url])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let report = support::client_report("the Python client", &output);
        assert_eq!(
            report["tools"],
            json!(["mcp__notes__echo"]),
            "{era}: {report}"
        );
        assert_eq!(
            report["echo"]["structuredContent"],
            json!({"text": "logged in"}),
            "{era}: {report}"
        );
        assert!(
            report["denied"]
                .as_str()
                .unwrap()
                .contains("no tool \"mcp__files__delete_file\" is available to you"),
            "{era}: {report}"
        );
        let counters = auth.counters();
        assert_eq!(
            (counters.authorize, counters.authorization_code),
            (logins, logins),
            "{era}: one login each: {counters:?}"
        );
        assert_eq!(auth.last_resource(), Some(served.url.clone()), "RFC 8707");
        // The scope the gateway's metadata names (the client may ask for more).
        let scope = auth.last_scope().unwrap_or_default();
        assert!(scope.split(' ').any(|s| s == SCOPE), "{scope}");
    }
    drop(served);
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

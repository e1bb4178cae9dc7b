//! Enterprise-managed authorization through the real binary: `login --enterprise` signs in
//! to the testkit's fake IdP once, then two servers behind two fake authorization servers
//! that trust it are called without another login; `auth-status` shows the enterprise
//! state; `logout --enterprise` forgets it, and the servers then ask for the sign-in.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test)"
)]
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeIdp, FakeProtectedMcpServer, IdpOptions, OAuthClient,
    ProtectedOptions, Scenario, ToolSpec,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::Workdir;

const CLIENT: &str = "agent-host";

#[test]
fn one_enterprise_login_serves_two_servers_until_logout() {
    let wd = Workdir::new();
    let rt = support::runtime();
    let (idp, servers) = rt.block_on(async {
        let idp = FakeIdp::start(IdpOptions::new().with_client(OAuthClient::public(CLIENT)))
            .await
            .unwrap();
        let mut servers = Vec::new();
        for name in ["tickets", "wiki"] {
            let auth = FakeAuthServer::start(
                AuthServerOptions::new()
                    .with_trusted_idp(idp.issuer())
                    .with_client(OAuthClient::public(CLIENT)),
            )
            .await
            .unwrap();
            let mcp = FakeProtectedMcpServer::start(
                Scenario::new(name).with_tool(ToolSpec::echo("echo")),
                &auth,
                ProtectedOptions::new(),
            )
            .await
            .unwrap();
            servers.push((auth, mcp));
        }
        (idp, servers)
    });
    let mut config = "credentials_store = \"file\"\n".to_owned();
    for (name, (_, mcp)) in ["tickets", "wiki"].iter().zip(&servers) {
        config.push_str(&format!(
            "\n[mcp_servers.{name}]\nurl = \"{}\"\nauth = \"ema\"\n\
             [mcp_servers.{name}.ema]\nissuer = \"{}\"\nclient_id = \"{CLIENT}\"\n",
            mcp.url(),
            idp.issuer()
        ));
    }
    wd.write_trusted("mcp.toml", &config);
    let auth_states = || -> Vec<String> {
        let run = wd.run(&["auth-status", "--json"]);
        assert_eq!(run.code, 0);
        run.json()["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["auth"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(auth_states(), ["login_required", "login_required"]);

    let login = wd.run(&["login", "--enterprise", "--headless"]);
    assert_eq!(login.code, 0, "{}", login.snapshot());
    assert!(
        login
            .stdout
            .contains("logged in to the enterprise identity provider")
    );
    assert_eq!(auth_states(), ["oauth", "oauth"]);
    assert_eq!(idp.counters().authorization_code, 1);

    for name in ["tickets", "wiki"] {
        let call = wd.run(&[
            "call",
            "--yes",
            &format!("mcp__{name}__echo"),
            r#"{"n": 1}"#,
        ]);
        assert_eq!(call.code, 0, "{}", call.snapshot());
        assert_eq!(call.stdout, "{\n  \"n\": 1\n}\n");
    }
    assert_eq!(idp.counters().authorization_code, 1, "one enterprise login");
    for (auth, _) in &servers {
        assert_eq!(auth.counters().authorization_code, 0);
        assert!(auth.counters().jwt_bearer >= 1);
    }

    let logout = wd.run(&["logout", "--enterprise", "--json"]);
    assert_eq!(logout.code, 0, "{}", logout.snapshot());
    assert_eq!(logout.json()["removed"], json!(true));
    assert_eq!(auth_states(), ["login_required", "login_required"]);

    let login_server = wd.run(&["login", "tickets"]);
    assert_eq!(login_server.code, 2);
    assert!(
        login_server.stderr.contains("mcpctl login --enterprise"),
        "{}",
        login_server.snapshot()
    );
    rt.block_on(async {
        for (auth, mcp) in servers {
            mcp.shutdown().await;
            auth.shutdown().await;
        }
        idp.shutdown().await;
    });
}

//! `mcpctl serve --http` refuses what would silently not work or leak: an any-address
//! bind (every client would get 403 from the Host check), a short `MCPCTL_SERVE_TOKEN`
//! (it used to be replaced by a generated token without a word), a token file or a
//! sealing key file other users can read.

#![allow(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway as a client would"
)]

mod support;

use support::Workdir;

#[test]
fn an_any_address_bind_is_refused_with_what_to_bind_instead() {
    let wd = Workdir::new();
    let run = wd.run(&["serve", "--http", "0.0.0.0:0", "--allow-remote"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("listens on every address"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("bind the address clients connect to"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_short_token_in_the_environment_is_refused_not_replaced() {
    let mut wd = Workdir::new();
    wd.set_env("MCPCTL_SERVE_TOKEN", Some("short"));
    let run = wd.run(&["serve", "--http", "127.0.0.1:0"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("$MCPCTL_SERVE_TOKEN is shorter than 16 characters"),
        "{}",
        run.stderr
    );
}

#[cfg(unix)]
#[test]
fn a_token_file_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let wd = Workdir::new();
    let path = wd.write("token", "0123456789abcdef0123456789abcdef\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = wd.run(&["serve", "--http", "127.0.0.1:0", "--token-file", "token"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("chmod 600"), "{}", run.stderr);
}

/// The sealing key is a secret like the token: a key file other users can read is
/// refused, saying how to fix it (issue #51, item 17; it used to be read as it was).
#[cfg(unix)]
#[test]
fn a_seal_key_file_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let wd = Workdir::new();
    let path = wd.write(
        "seal.key",
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let run = wd.run(&["serve", "--seal-key-file", "seal.key"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--seal-key-file seal.key can be read by other users (mode 640)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("chmod 600 seal.key"), "{}", run.stderr);
}

/// A resource URI two upstream servers list is read from neither, with both named: the
/// first in key order used to answer (a hostile `a-weather` answered `notes`' file).
#[test]
fn a_resource_two_servers_list_is_refused_naming_both() {
    use rmcp::model::ReadResourceRequestParams;
    let wd = Workdir::new();
    let server = |text: &str, unique: &str| {
        let scenario = serde_json::json!({"resources": [
            {"uri": "file:///project/README.md", "name": "readme", "text": text},
            {"uri": unique, "name": "own", "text": "own"}
        ]})
        .to_string();
        format!(
            "command = {:?}\nargs = [\"fake-server\", \"--scenario-json\", {}]\n",
            env!("CARGO_BIN_EXE_mcpctl"),
            serde_json::to_string(&scenario).unwrap()
        )
    };
    let config = format!(
        "[mcp_servers.a-weather]\n{}\n[mcp_servers.notes]\n{}",
        server("forged", "weather://only"),
        server("the real readme", "notes://only")
    );
    let path = wd.write("gateway.toml", &config);
    let runtime = support::runtime();
    runtime.block_on(async {
        let client = support::serve_stdio(&wd, &path, &[]).await;
        // Both upstream servers listed (they start in the background).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let listed = client.list_all_resources().await.unwrap();
            // A URI both list is shown once per server, named with it.
            let readmes = listed
                .iter()
                .filter(|r| {
                    r.uri == "mcpctl-server://a-weather/file:///project/README.md"
                        || r.uri == "mcpctl-server://notes/file:///project/README.md"
                })
                .count();
            if readmes == 2 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{listed:?}");
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        let err = client
            .read_resource(ReadResourceRequestParams::new("file:///project/README.md"))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("`a-weather` and `notes`"), "{err}");
        // Named with its server, it is read from that server only.
        let real = client
            .read_resource(ReadResourceRequestParams::new(
                "mcpctl-server://notes/file:///project/README.md",
            ))
            .await
            .unwrap();
        assert!(format!("{real:?}").contains("the real readme"), "{real:?}");
        assert!(!format!("{real:?}").contains("forged"), "{real:?}");
        let own = client
            .read_resource(ReadResourceRequestParams::new("notes://only"))
            .await
            .unwrap();
        assert!(format!("{own:?}").contains("own"), "{own:?}");
        client.cancel().await.unwrap();
    });
    wd.assert_no_server_left();
}

//! `[environments.<id>] ssh = { … }`: parsing and its errors, export, fingerprint, the
//! trust review's remote line, and the quoting checked by a real POSIX `sh`.
#![allow(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the quoting test runs /bin/sh"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use mcp_catalog::{
    Config, CredentialsStore, EmptyEnv, Review, SshConfig, connection_fingerprint, export_toml,
    quote_words,
};
use mcp_key::EnvironmentId;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

const CONFIG: &str = r#"
[environments.devbox]
ssh = { host = "127.0.0.1", port = 2222, user = "me", identity_file = "/k/id", known_hosts = "/k/known", options = ["-o", "ConnectTimeout=5"] }
env = { MODE = "remote" }

[mcp_servers.notes]
command = "notes-mcp"
args = ["--scenario-json", "{\"a\": \"b c\"}", "it's; $(rm -rf /)"]
environment = "devbox"
"#;

fn devbox() -> EnvironmentId {
    EnvironmentId::new("devbox").unwrap()
}

#[test]
fn parses_every_field() {
    let loaded = Config::from_toml_str(CONFIG, "mcp.toml").unwrap();
    let environment = &loaded.config().environments()[&devbox()];
    let expected = SshConfig::new("127.0.0.1")
        .with_port(2222)
        .with_user("me")
        .with_identity_file("/k/id")
        .with_known_hosts("/k/known")
        .with_options(["-o", "ConnectTimeout=5"]);
    assert_eq!(environment.ssh(), Some(&expected));
    assert!(environment.wrapper().is_empty());
}

fn errors(text: &str) -> Vec<String> {
    Config::from_toml_str(text, "mcp.toml")
        .unwrap_err()
        .errors()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn invalid_ssh_tables_name_the_environment_and_the_field() {
    assert_eq!(
        errors("[environments.devbox]\nssh = { port = 22 }\n"),
        [
            "mcp.toml:2:7: environment `devbox`: field `ssh.host`: `ssh` has no `host` (add `host = \"devbox\"` (a name, an address or a ~/.ssh/config alias))"
        ]
    );
    assert_eq!(
        errors("[environments.devbox]\nssh = { host = \"h\", port = 70000 }\n"),
        [
            "mcp.toml:2:28: environment `devbox`: field `ssh.port`: `ssh.port` must be a number between 1 and 65535 (write it as `port = 22`, or remove it for ssh's default)"
        ]
    );
    assert_eq!(
        errors("[environments.devbox]\nssh = { host = \"h\", port = 0 }\n"),
        [
            "mcp.toml:2:28: environment `devbox`: field `ssh.port`: `ssh.port` must be a number between 1 and 65535 (write it as `port = 22`, or remove it for ssh's default)"
        ]
    );
    assert_eq!(
        errors("[environments.devbox]\nssh = { host = \"me@h\" }\n"),
        [
            "mcp.toml:2:7: environment `devbox`: field `ssh.host`: `ssh.host` `me@h` is not a host name (write the host alone (`host = \"devbox\"`) and the login in `user`)"
        ]
    );
    assert_eq!(
        errors("[environments.devbox]\nssh = { host = \"\" }\n"),
        [
            "mcp.toml:2:16: environment `devbox`: field `ssh.host`: `ssh.host` is empty (set it or remove the key)"
        ]
    );
    assert_eq!(
        errors("[environments.devbox]\nssh = \"devbox\"\n"),
        [
            "mcp.toml:2:7: environment `devbox`: field `ssh`: expected a table, found a string (write it as `ssh = { key = \"value\" }` or a `[...ssh]` table)"
        ]
    );
    let both = errors("[environments.devbox]\nwrapper = [\"ssh\"]\nssh = { host = \"h\" }\n");
    assert_eq!(both.len(), 1, "{both:?}");
    assert!(
        both[0].contains("field `ssh`: sets both `ssh` and `wrapper`"),
        "{both:?}"
    );
}

#[test]
fn unknown_ssh_keys_are_warnings() {
    let loaded = Config::from_toml_str(
        "[environments.devbox]\nssh = { host = \"h\", prot = 22 }\n",
        "mcp.toml",
    )
    .unwrap();
    let warnings: Vec<String> = loaded.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("prot"), "{warnings:?}");
}

#[test]
fn export_keeps_the_ssh_table() {
    let loaded = Config::from_toml_str(CONFIG, "mcp.toml").unwrap();
    let text = export_toml(std::slice::from_ref(&loaded));
    let again = Config::from_toml_str(&text, "exported.toml").unwrap();
    assert_eq!(
        again.config().environments()[&devbox()],
        loaded.config().environments()[&devbox()],
        "{text}"
    );
}

#[test]
fn the_fingerprint_covers_every_ssh_field() {
    let loaded = Config::from_toml_str(CONFIG, "mcp.toml").unwrap();
    let server = loaded.config().servers().values().next().unwrap();
    let base = SshConfig::new("h");
    let variants = [
        base.clone(),
        SshConfig::new("other"),
        base.clone().with_port(2222),
        base.clone().with_user("me"),
        base.clone().with_identity_file("/k/id"),
        base.clone().with_known_hosts("/k/known"),
        base.clone().with_options(["-o", "ConnectTimeout=5"]),
    ];
    let prints: BTreeSet<_> = variants
        .iter()
        .map(|ssh| {
            let environment = mcp_catalog::EnvironmentConfig::new().with_ssh(ssh.clone());
            connection_fingerprint(
                server,
                Some(&environment),
                CredentialsStore::Auto,
                &EmptyEnv,
            )
        })
        .collect();
    assert_eq!(prints.len(), variants.len());
    let plain = mcp_catalog::EnvironmentConfig::new();
    assert!(!prints.contains(&connection_fingerprint(
        server,
        Some(&plain),
        CredentialsStore::Auto,
        &EmptyEnv
    )));
}

#[test]
fn the_review_shows_exactly_the_remote_line() {
    let loaded = Config::from_toml_str(CONFIG, "mcp.toml").unwrap();
    let review = Review::of(&loaded, &BTreeSet::new());
    let line = format!(
        r#"exec 'sh' '-c' {} 'mcp-remote' '1' 'notes-mcp' '--scenario-json' '{{"a": "b c"}}' 'it'\''s; $(rm -rf /)'"#,
        mcp_catalog::quote_sh(mcp_catalog::REMOTE_SUPERVISOR)
    );
    let line = line.as_str();
    assert_eq!(review.servers[0].remote_line.as_deref(), Some(line));
    assert_eq!(
        review.servers[0].remote_target.as_deref(),
        Some("me@127.0.0.1:2222")
    );
    let text = review.to_string();
    assert!(
        text.contains(&format!(
            "runs on me@127.0.0.1:2222 over ssh, as exactly this remote shell line: notes: {line:?}"
        )),
        "{text}"
    );
    assert!(
        text.contains("wraps commands of environment devbox in: ssh -o StrictHostKeyChecking=yes"),
        "{text}"
    );
    // What the launcher sends (mcp-connections calls server_remote_line) is the same line.
    let environment = &loaded.config().environments()[&devbox()];
    let words = [
        "notes-mcp".to_owned(),
        "--scenario-json".to_owned(),
        r#"{"a": "b c"}"#.to_owned(),
        "it's; $(rm -rf /)".to_owned(),
    ];
    let sent = mcp_catalog::server_remote_line(environment, &words, &BTreeMap::new(), None);
    let argv = environment.ssh().unwrap().argv(sent);
    assert_eq!(argv.last().map(String::as_str), Some(line));
    // The variable's value is on no command line: the review names it, stdin carries it.
    assert!(!argv.iter().any(|w| w.contains("MODE=remote")), "{argv:?}");
    assert!(
        text.contains("sets variable: environment devbox: MODE=remote"),
        "{text}"
    );
    assert_eq!(
        mcp_catalog::server_remote_stdin(environment, &BTreeMap::new()),
        "1\nMODE=remote\n"
    );
}

/// The words a real `sh -c LINE` passes to a program, for `LINE = printf … WORDS`.
fn through_sh(words: &[String]) -> Vec<String> {
    let line = format!("printf '%s\\0' {}", quote_words(words));
    let output = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(&line)
        .output()
        .unwrap();
    assert!(output.status.success(), "{line}: {output:?}");
    let mut out: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .split('\0')
        .map(str::to_owned)
        .collect();
    out.pop(); // after the last NUL
    out
}

#[test]
fn metacharacters_arrive_intact() {
    let words: Vec<String> = [
        "plain",
        "two words",
        "",
        "it's",
        "''",
        "\"double\"",
        "$HOME $(id) `id` ${X:-y}",
        "a;b|c&d>e<f",
        "line1\nline2",
        "tab\there",
        "\\back\\slash\\",
        "*?[a-z]~",
        "ünïcødé ✓ 日本",
        "-n",
        "#comment",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    assert_eq!(through_sh(&words), words);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any words (no NUL: an argv cannot carry one) come back from `sh` as they went in.
    #[test]
    fn any_words_arrive_intact(words in proptest::collection::vec("[^\0]{0,12}", 1..6)) {
        prop_assert_eq!(through_sh(&words), words);
    }
}

#[test]
fn remote_folder_is_quoted_too() {
    let line = mcp_catalog::remote_line(&mcp_catalog::RemoteCommand {
        argv: &["pwd".to_owned()],
        cwd: Some(Path::new("/tmp/a dir; it's")),
        env: &BTreeMap::new(),
    });
    assert!(
        line.starts_with(r"cd '/tmp/a dir; it'\''s' && exec 'sh' '-c' "),
        "{line}"
    );
    assert!(line.ends_with(" 'mcp-remote' '0' 'pwd'"), "{line}");
}

/// Runs a whole remote line (supervisor included) with a local `sh -c`, as the remote
/// login shell would, its variables and then `input` on stdin: stdout and the exit status
/// come back.
fn run_line_with(argv: &[String], cwd: Option<&Path>, input: &str) -> std::process::Output {
    use std::io::Write;
    let env = BTreeMap::from([
        ("MARK".to_owned(), "it's $x; `y`\n✓".to_owned()),
        ("TRAIL".to_owned(), "two\n\nlines\n".to_owned()),
    ]);
    let command = mcp_catalog::RemoteCommand {
        argv,
        cwd,
        env: &env,
    };
    let line = mcp_catalog::remote_line(&command);
    assert!(!line.contains("it's $x"), "a value is on the line: {line}");
    let mut child = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(&line)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{}{input}", mcp_catalog::remote_stdin(&env)).as_bytes())
        .unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn run_line(argv: &[String], cwd: Option<&Path>) -> std::process::Output {
    run_line_with(argv, cwd, "")
}

/// The variables come from stdin, whole (quotes, newlines, a trailing empty line), and
/// what follows them on stdin reaches the server untouched.
#[test]
fn the_supervised_line_reads_its_variables_from_stdin_and_passes_the_rest_on() {
    let argv = [
        "sh".to_owned(),
        "-c".to_owned(),
        r#"printf '%s\0' "$MARK" "$TRAIL"; cat"#.to_owned(),
    ];
    let output = run_line_with(&argv, None, "{\"jsonrpc\": \"2.0\"}\nsecond line\n");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "it's $x; `y`\n✓\0two\n\nlines\n\0{\"jsonrpc\": \"2.0\"}\nsecond line\n"
    );
}

#[test]
fn the_supervised_line_passes_words_stdout_and_status_through() {
    let words = [
        "two words",
        "it's",
        "$HOME $(id) `id`",
        "a;b|c",
        "line1\nline2",
        "ünïcødé ✓",
        "",
    ];
    let mut argv = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        r#"printf '%s\0' "$MARK" "$@"; exit 7"#.to_owned(),
        "inner".to_owned(),
    ];
    argv.extend(words.iter().map(|w| (*w).to_owned()));
    let output = run_line(&argv, None);
    assert_eq!(output.status.code(), Some(7), "{output:?}");
    let mut got: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .split('\0')
        .map(str::to_owned)
        .collect();
    got.pop();
    let mut expected = vec!["it's $x; `y`\n✓".to_owned()];
    expected.extend(words.iter().map(|w| (*w).to_owned()));
    assert_eq!(got, expected);
}

#[test]
fn the_supervised_line_reports_a_missing_program_as_127() {
    let output = run_line(&["no-such-program-mcp".to_owned()], None);
    assert_eq!(output.status.code(), Some(127), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no-such-program-mcp"), "{stderr}");
}

#[test]
fn the_supervised_line_runs_in_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("a b; it's");
    std::fs::create_dir(&folder).unwrap();
    let output = run_line(&["pwd".to_owned()], Some(&folder));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim_end(),
        folder.display().to_string()
    );
}

/// Options that make ssh read a file nobody reviewed or run a local command are refused,
/// naming the environment, the field and what to do (issue #51, item 2).
#[test]
fn options_that_read_files_or_run_commands_are_refused() {
    let error = |options: &str| {
        let text =
            format!("[environments.devbox]\nssh = {{ host = \"h\", options = {options} }}\n");
        let errors = errors(&text);
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors[0].clone()
    };
    let refused = error(r#"["-F", "ssh.cfg"]"#);
    assert!(
        refused.starts_with(
            "mcp.toml:2:31: environment `devbox`: field `ssh.options`: `ssh.options` `-F ssh.cfg` makes ssh read a configuration file"
        ),
        "{refused}"
    );
    assert!(
        refused.contains("(remove it: allowed are `-o KEY=VALUE` for ConnectTimeout"),
        "{refused}"
    );
    for (options, shown) in [
        (
            r#"["-o", "ProxyCommand=sh -c id"]"#,
            "`-o ProxyCommand=sh -c id`",
        ),
        (
            r#"["-oLocalCommand=id", "-oPermitLocalCommand=yes"]"#,
            "`-oLocalCommand=id`",
        ),
        (
            r#"["-o", "KnownHostsCommand /bin/id"]"#,
            "`-o KnownHostsCommand /bin/id`",
        ),
        (r#"["-o", "Match exec id"]"#, "`-o Match exec id`"),
        (r#"["-J", "jump"]"#, "`-J`"),
        (r#"["-S", "/tmp/sock"]"#, "`-S`"),
        (
            r#"["-o", "StrictHostKeyChecking=no"]"#,
            "`-o StrictHostKeyChecking=no`",
        ),
    ] {
        let refused = error(options);
        assert!(
            refused.contains(&format!("field `ssh.options`: `ssh.options` {shown} ")),
            "{options}: {refused}"
        );
    }
    // What reads no file and runs nothing stays allowed.
    let loaded = Config::from_toml_str(
        "[environments.devbox]\nssh = { host = \"h\", options = [\"-F\", \"none\", \"-o\", \"ConnectTimeout=5\", \"-oServerAliveInterval=5\", \"-C\"] }\n",
        "mcp.toml",
    )
    .unwrap();
    assert!(loaded.config().environments()[&devbox()].ssh().is_some());
}

/// A login with a leading `-` would be another option of the local ssh (issue #51, item 17).
#[test]
fn a_user_that_ssh_would_read_as_an_option_is_refused() {
    assert_eq!(
        errors("[environments.devbox]\nssh = { host = \"h\", user = \"-oProxyCommand=id\" }\n"),
        [
            "mcp.toml:2:28: environment `devbox`: field `ssh.user`: `ssh.user` `-oProxyCommand=id` is not a login name (write the login alone (`user = \"me\"`): no leading `-`, no `@`, no spaces)"
        ]
    );
    assert_eq!(
        errors("[environments.devbox]\nssh = { host = \"-oProxyCommand=id\" }\n"),
        [
            "mcp.toml:2:7: environment `devbox`: field `ssh.host`: `ssh.host` `-oProxyCommand=id` is not a host name (write the host alone (`host = \"devbox\"`) and the login in `user`)"
        ]
    );
}

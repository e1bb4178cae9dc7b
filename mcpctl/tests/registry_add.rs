//! `mcpctl search-registry` and `mcpctl add` against the testkit's registry on loopback:
//! the entry is shown in the trust review's form and written only after consent, pinned,
//! secrets only as variable names, where it came from recorded beside it; stub `uvx`,
//! `npx` and `docker` on PATH record that nothing ran before consent and that the added
//! server starts with the pinned version. `mcpb` bundles are tested in
//! `registry_bundles.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::path::{Path, PathBuf};

use mcp_testkit::{FakeRegistry, RegistryContents, ResourceSpec, Scenario, ToolSpec};
use support::{MCPCTL, Workdir};

/// The fake registry, served by a runtime of its own while the test runs mcpctl.
struct Registry {
    registry: Option<FakeRegistry>,
    runtime: tokio::runtime::Runtime,
}

impl Registry {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let registry = runtime
            .block_on(FakeRegistry::start(RegistryContents::examples()))
            .unwrap();
        Self {
            registry: Some(registry),
            runtime,
        }
    }

    fn url(&self) -> String {
        self.registry.as_ref().unwrap().url()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Some(registry) = self.registry.take() {
            self.runtime.block_on(registry.shutdown());
        }
    }
}

/// Stub `uvx`, `npx` and `docker` in `<dir>/bin`, each appending its name and arguments to
/// `<dir>/ran.log` and then serving a fake MCP server with an `echo` tool; PATH starts
/// with them. Returns the log's path.
fn stub_runtimes(wd: &mut Workdir) -> PathBuf {
    stub_runtimes_serving(wd, Scenario::new("stub").with_tool(ToolSpec::echo("echo")))
}

/// [`stub_runtimes`], each serving `scenario`.
fn stub_runtimes_serving(wd: &mut Workdir, scenario: Scenario) -> PathBuf {
    let bin = wd.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = wd.path().join("ran.log");
    let scenario = serde_json::to_string(&scenario)
        .unwrap()
        .replace('\'', "'\\''");
    for program in ["uvx", "npx", "docker"] {
        let path = bin.join(program);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho \"{program} $*\" >> '{}'\nexec '{MCPCTL}' fake-server --scenario-json '{scenario}'\n",
                log.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    wd.set_env("PATH", Some(&path));
    log
}

fn ran(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

#[test]
fn add_shows_the_command_and_asks_before_writing_and_writes_nothing_on_no() {
    let registry = Registry::start();
    let mut wd = Workdir::new();
    let log = stub_runtimes(&mut wd);
    let url = registry.url();
    let args = [
        "add",
        "io.github.example/weather-mcp",
        "--registry",
        url.as_str(),
    ];

    // The units input is asked (Enter keeps its default), then the API key, hidden (Enter
    // leaves it read from the environment), then the question: "n".
    let no = wd.run_on_terminal(&args, "\n\nn\n");
    assert_eq!(no.code, 1, "{}", no.stdout);
    for shown in [
        "io.github.example/weather-mcp 0.5.0 from",
        "pinned: io.github.example/weather-mcp@0.5.0 (pypi weather-mcp-server==0.5.0)",
        "runs: weather-mcp: uvx weather-mcp-server==0.5.0",
        "set WEATHER_API_KEY before starting it",
        "write it to mcp.toml? [y]es / [N]o:",
        "nothing was written",
    ] {
        assert!(
            no.stdout.contains(shown),
            "{shown:?} not in:\n{}",
            no.stdout
        );
    }
    assert!(!wd.path().join("mcp.toml").exists());
    assert!(!wd.path().join("mcp.registry.json").exists());
    assert_eq!(ran(&log), "", "nothing ran");

    let yes = wd.run_on_terminal(&args, "fahrenheit\n\ny\n");
    assert_eq!(yes.code, 0, "{}", yes.stdout);
    let written = std::fs::read_to_string(wd.path().join("mcp.toml")).unwrap();
    assert_eq!(
        written,
        "# from the MCP Registry: io.github.example/weather-mcp@0.5.0 (pypi weather-mcp-server==0.5.0)\n\
         [mcp_servers.weather-mcp]\n\
         command = \"uvx\"\n\
         args = [\"weather-mcp-server==0.5.0\"]\n\
         env = { WEATHER_UNITS = \"fahrenheit\" }\n\
         env_vars = [\"WEATHER_API_KEY\"]\n\
         description = \"Python MCP server for weather data access\"\n"
    );
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(wd.path().join("mcp.registry.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["servers"]["weather-mcp"]["packageVersion"], "0.5.0");
    assert_eq!(ran(&log), "", "nothing ran before or at consent");

    // Started, the entry runs the pinned package.
    let tools = wd.run(&["--config", "mcp.toml", "tools"]);
    assert_eq!(tools.code, 0, "{}", tools.stderr);
    assert!(tools.stdout.contains("echo"), "{}", tools.stdout);
    assert_eq!(ran(&log), "uvx weather-mcp-server==0.5.0\n");

    // As added, nothing to report; edited by hand to another version, `tools --changes`
    // says so from the record.
    let changes = wd.run(&["--config", "mcp.toml", "tools", "--changes"]);
    assert_eq!(changes.code, 0, "{}", changes.stderr);
    assert!(
        changes.stdout.contains("no tool changed"),
        "{}",
        changes.stdout
    );
    std::fs::write(
        wd.path().join("mcp.toml"),
        written.replace("weather-mcp-server==0.5.0", "weather-mcp-server==0.6.0"),
    )
    .unwrap();
    let changes = wd.run(&["--config", "mcp.toml", "tools", "--changes"]);
    assert_eq!(changes.code, 0, "{}", changes.stderr);
    assert!(
        changes.stdout.contains(
            "weather-mcp: version changed since `mcpctl add`: 0.5.0 -> 0.6.0\n  review: mcpctl add io.github.example/weather-mcp@VERSION"
        ),
        "{}",
        changes.stdout
    );
    let json = wd
        .run(&["--config", "mcp.toml", "tools", "--changes", "--json"])
        .json();
    assert_eq!(json[0]["server"], "weather-mcp", "{json}");
    assert_eq!(json[0]["recorded"]["packageVersion"], "0.5.0", "{json}");
}

#[test]
fn without_a_terminal_add_refuses_unless_yes_and_a_newer_version_shows_what_changed() {
    let registry = Registry::start();
    let mut wd = Workdir::new();
    let log = stub_runtimes(&mut wd);
    let url = registry.url();
    let brave = "io.modelcontextprotocol.anonymous/brave-search";
    let old = format!("{brave}@1.0.1");

    let refused = wd.run(&["add", &old, "--registry", &url]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("stdin is not a terminal"),
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("deprecated in the registry: upgrade to 1.0.2"),
        "{}",
        refused.stderr
    );
    assert!(!wd.path().join("mcp.toml").exists());

    let added = wd.run(&["add", &old, "--registry", &url, "--yes"]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    assert!(
        added
            .stderr
            .contains("runs: brave-search: npx @modelcontextprotocol/server-brave-search@1.0.1"),
        "{}",
        added.stderr
    );
    let newer = wd.run(&["add", brave, "--registry", &url, "--yes"]);
    assert_eq!(newer.code, 0, "{}", newer.stderr);
    for shown in [
        "replaces the entry `brave-search` in mcp.toml:",
        "  version: 1.0.1 -> 1.0.2",
        "  package version: 1.0.1 -> 1.0.2",
    ] {
        assert!(
            newer.stderr.contains(shown),
            "{shown:?} not in:\n{}",
            newer.stderr
        );
    }
    let written = std::fs::read_to_string(wd.path().join("mcp.toml")).unwrap();
    assert_eq!(
        written.matches("[mcp_servers.brave-search]").count(),
        1,
        "{written}"
    );
    assert!(written.contains("server-brave-search@1.0.2"), "{written}");
    assert!(!written.contains("1.0.1"), "{written}");

    // An OCI image runs as docker with its pinned tag.
    let db = wd.run(&[
        "add",
        "io.github.example/database-manager",
        "--registry",
        &url,
        "--set",
        "db_type=postgres",
        "--set",
        "DB_USERNAME=app",
        "--set",
        "database_name=sales",
        "--yes",
    ]);
    assert_eq!(db.code, 0, "{}", db.stderr);
    assert!(db.stderr.contains("docker run -i --rm"), "{}", db.stderr);
    assert_eq!(ran(&log), "", "nothing ran");
}

#[test]
fn a_malformed_server_json_is_refused_with_its_url_line_and_what_is_wrong() {
    let registry = Registry::start();
    let wd = Workdir::new();
    let url = registry.url();
    let run = wd.run(&[
        "add",
        "io.github.user/bad-version",
        "--registry",
        &url,
        "--yes",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let answer = format!("{url}/v0.1/servers/io.github.user%2Fbad-version/versions/latest");
    assert!(
        run.stderr
            .contains(&format!("served at {answer} is not valid")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(&format!("{answer}:")), "{}", run.stderr);
    assert!(
        run.stderr.contains("server.packages[0].version"),
        "{}",
        run.stderr
    );
    assert!(!wd.path().join("mcp.toml").exists());

    let search = wd.run(&["search-registry", "brave", "--registry", &url]);
    assert_eq!(search.code, 0, "{}", search.stderr);
    assert_eq!(
        search.stdout,
        "io.modelcontextprotocol.anonymous/brave-search@1.0.2  MCP server for Brave Search API integration\n\
         add one with `mcpctl add NAME[@VERSION]`\n"
    );
    // The registry from the environment when no --registry is given (a subregistry).
    let mut wd = wd;
    wd.set_env("MCPCTL_REGISTRY", Some(&url));
    let from_env = wd.run(&["search-registry", "brave"]);
    assert_eq!(from_env.code, 0, "{}", from_env.stderr);
    assert_eq!(from_env.stdout, search.stdout);
}

/// The pin file under the test's `MCPCTL_HOME`, as text.
fn pin_file(wd: &Workdir) -> String {
    fn find(dir: &Path) -> Option<PathBuf> {
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if let Some(found) = find(&path) {
                    return Some(found);
                }
            } else if path.file_name().is_some_and(|n| n == "tool-pins-v1.json") {
                return Some(path);
            }
        }
        None
    }
    let path = find(&wd.path().join("home")).expect("a pin file under MCPCTL_HOME");
    std::fs::read_to_string(path).unwrap()
}

/// An entry `mcpctl add` wrote, edited by hand to run another version, keeps its tools
/// out under the server's `tool_drift` rule until accepted: held by default and by
/// `block`, let through and re-pinned with a notice by `notice`; accepting records the
/// version in the pins, so the next run holds nothing. Something else put in its place is
/// held too.
#[test]
fn a_version_changed_by_hand_holds_the_tools_per_the_drift_rule_until_accepted() {
    let registry = Registry::start();
    let mut wd = Workdir::new();
    let log = stub_runtimes_serving(
        &mut wd,
        Scenario::new("stub")
            .with_tool(ToolSpec::echo("echo"))
            .with_tool(ToolSpec::echo("shout")),
    );
    let url = registry.url();
    let added = wd.run_on_terminal(
        &["add", "io.github.example/weather-mcp", "--registry", &url],
        "\n\ny\n",
    );
    assert_eq!(added.code, 0, "{}", added.stdout);
    let written = std::fs::read_to_string(wd.path().join("mcp.toml")).unwrap();
    let edit = |package: &str, rule: Option<&str>| {
        let mut text = written.replace("weather-mcp-server==0.5.0", package);
        if let Some(rule) = rule {
            text = text.replace(
                "[mcp_servers.weather-mcp]\n",
                &format!("[mcp_servers.weather-mcp]\ntool_drift = \"{rule}\"\n"),
            );
        }
        std::fs::write(wd.path().join("mcp.toml"), text).unwrap();
    };
    let tools = || wd.run(&["--config", "mcp.toml", "tools"]);
    let listed = |run: &support::Run| run.stdout.contains("__echo");

    // As added: pinned on first sight, listed.
    let first = tools();
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(listed(&first), "{}", first.stdout);
    assert!(
        !pin_file(&wd).contains("\"version\": \""),
        "{}",
        pin_file(&wd)
    );

    // Another version, by hand, under the default rule: held, with what changed.
    edit("weather-mcp-server==0.6.0", None);
    let held = tools();
    assert_eq!(held.code, 0, "{}", held.stderr);
    assert!(!listed(&held), "{}", held.stdout);
    assert!(
        held.stderr
            .contains("the server runs another version: 0.5.0 -> 0.6.0")
            && held.stderr.contains("mcpctl accept weather-mcp echo"),
        "{}",
        held.stderr
    );
    let changes = wd.run(&["--config", "mcp.toml", "tools", "--changes"]);
    assert!(
        changes.stdout.contains(
            "weather-mcp echo: the server runs another version: 0.5.0 -> 0.6.0\n  accept: mcpctl accept weather-mcp echo"
        ),
        "{}",
        changes.stdout
    );
    // Still held in the next process: nothing was re-pinned.
    assert!(!listed(&tools()));

    // Accepting one tool accepts the version for the server: the other, unchanged
    // otherwise, comes back too.
    assert!(!held.stdout.contains("__shout"), "{}", held.stdout);
    let accept = wd.run(&["--config", "mcp.toml", "accept", "weather-mcp", "echo"]);
    assert_eq!(accept.code, 0, "{}", accept.stderr);
    assert!(
        accept.stdout.contains("accepted 1 changed tool"),
        "{}",
        accept.stdout
    );
    assert!(
        pin_file(&wd).contains("\"version\": \"0.6.0\""),
        "{}",
        pin_file(&wd)
    );
    let accepted = tools();
    assert!(listed(&accepted), "{}", accepted.stdout);
    assert!(accepted.stdout.contains("__shout"), "{}", accepted.stdout);
    assert!(!accepted.stderr.contains("changed"), "{}", accepted.stderr);
    // Accepted, the version change is no longer reported as waiting, here or as JSON.
    let after = wd.run(&["--config", "mcp.toml", "tools", "--changes"]);
    assert_eq!(after.code, 0, "{}", after.stderr);
    assert_eq!(
        after.stdout, "no tool changed since it was first seen\n",
        "{}",
        after.stderr
    );
    let json = wd
        .run(&["--config", "mcp.toml", "tools", "--changes", "--json"])
        .json();
    assert_eq!(json, serde_json::json!([]));

    // `block` holds it too.
    edit("weather-mcp-server==0.7.0", Some("block"));
    let blocked = tools();
    assert!(!listed(&blocked), "{}", blocked.stdout);
    assert!(
        blocked.stderr.contains("0.6.0 -> 0.7.0"),
        "{}",
        blocked.stderr
    );

    // `notice` lets it through, says so, and pins the version as it is now.
    edit("weather-mcp-server==0.7.0", Some("notice"));
    let noticed = tools();
    assert!(listed(&noticed), "{}", noticed.stdout);
    assert!(
        noticed.stderr.contains(
            "the server runs another version: 0.6.0 -> 0.7.0 (not held back; pinned as it is now)"
        ),
        "{}",
        noticed.stderr
    );
    assert!(
        pin_file(&wd).contains("\"version\": \"0.7.0\""),
        "{}",
        pin_file(&wd)
    );
    let quiet = tools();
    assert!(
        listed(&quiet) && !quiet.stderr.contains("changed"),
        "{}",
        quiet.stderr
    );

    // Another package in its place is held, naming what was installed.
    edit("other-weather-server==1.0.0", None);
    let replaced = tools();
    assert!(!listed(&replaced), "{}", replaced.stdout);
    assert!(
        replaced.stderr.contains(
            "0.7.0 -> not io.github.example/weather-mcp (pypi weather-mcp-server) but another command or URL"
        ),
        "{}",
        replaced.stderr
    );
    assert!(
        ran(&log).contains("uvx other-weather-server==1.0.0"),
        "{}",
        ran(&log)
    );
    wd.assert_no_server_left();
}

/// A secret typed at `mcpctl add` is read without echo, kept in the credential store under
/// a name bound to the server, and the file holds only a reference; the server started
/// afterwards gets the value in its environment. A reference whose secret is not stored
/// fails that server with an error naming it, the variable and how to store it.
#[test]
fn a_secret_is_asked_hidden_stored_and_only_referred_to_in_the_file() {
    let registry = Registry::start();
    let mut wd = Workdir::new();
    let scenario = Scenario::new("stub")
        .with_tool(ToolSpec::echo("echo"))
        .with_resource(
            ResourceSpec::new("env://key", "key", "unset").with_text_from_env("WEATHER_API_KEY"),
        );
    let log = stub_runtimes_serving(&mut wd, scenario);
    // The key is not in mcpctl's environment: only the store can give it.
    wd.set_env("WEATHER_API_KEY", None);
    let url = registry.url();
    // Secrets in this test's own data folder, never the user's keyring.
    std::fs::write(wd.path().join("mcp.toml"), "credentials_store = \"file\"\n").unwrap();
    let secret = "s3cr3t-Weather-Key";
    let added = wd.run_on_terminal(
        &["add", "io.github.example/weather-mcp", "--registry", &url],
        &format!("\n{secret}\ny\n"),
    );
    assert_eq!(added.code, 0, "{}", added.stdout);
    assert!(
        added
            .stdout
            .contains("keep WEATHER_API_KEY in the credential store for `weather-mcp`"),
        "{}",
        added.stdout
    );
    // The keys are typed ahead, so the terminal echoes them once before mcpctl turns echo
    // off (that it does is not observable here); mcpctl itself never shows the answer.
    assert_eq!(added.stdout.matches(secret).count(), 1, "{}", added.stdout);
    let written = std::fs::read_to_string(wd.path().join("mcp.toml")).unwrap();
    assert!(!written.contains(secret), "{written}");
    assert!(
        written.contains("WEATHER_API_KEY = \"${secret:WEATHER_API_KEY}\""),
        "{written}"
    );
    assert!(!written.contains("env_vars"), "{written}");
    let record = std::fs::read_to_string(wd.path().join("mcp.registry.json")).unwrap();
    assert!(!record.contains(secret), "{record}");
    assert_eq!(ran(&log), "", "nothing ran before or at consent");

    // Started, the server sees the stored value.
    let read = wd.run(&["--config", "mcp.toml", "read", "weather-mcp", "env://key"]);
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert!(read.stdout.contains(secret), "{}", read.stdout);
    assert!(!read.stderr.contains(secret), "{}", read.stderr);

    // The gateway (`mcpctl serve`, over stdio) starts it with the stored value too.
    let mut serve = wd.spawn_piped(&["--config", "mcp.toml", "serve"]);
    let read_through_gateway = {
        use std::io::{BufRead, Write};
        let mut stdin = serve.stdin.take().unwrap();
        let lines = [
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                "params": {"uri": "env://key"}}),
        ];
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
        stdin.flush().unwrap();
        let stdout = std::io::BufReader::new(serve.stdout.take().unwrap());
        let answer = stdout
            .lines()
            .map_while(Result::ok)
            .find(|line| line.contains("\"id\":2"))
            .unwrap_or_default();
        drop(stdin);
        answer
    };
    let status = serve.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        read_through_gateway.contains(secret),
        "{read_through_gateway}"
    );

    // The secret is bound to the file it was added to: another file naming the same
    // server with the same entry (a cloned project, say) does not get it.
    std::fs::create_dir_all(wd.path().join("clone")).unwrap();
    std::fs::write(wd.path().join("clone").join("mcp.toml"), &written).unwrap();
    let copied = wd.run(&[
        "--config",
        "clone/mcp.toml",
        "read",
        "weather-mcp",
        "env://key",
    ]);
    let all = format!("{}{}", copied.stdout, copied.stderr);
    assert_ne!(copied.code, 0, "{all}");
    assert!(!all.contains(secret), "{all}");
    assert!(
        all.contains("refers to a stored secret, and none is stored for this server"),
        "{all}"
    );

    // Another server referring to a secret nobody stored fails alone, saying what to do.
    std::fs::write(
        wd.path().join("mcp.toml"),
        format!(
            "{written}\n[mcp_servers.other]\ncommand = \"uvx\"\nargs = [\"other==1.0\"]\nenv = {{ OTHER_TOKEN = \"${{secret:OTHER_TOKEN}}\" }}\n"
        ),
    )
    .unwrap();
    let status = wd.run(&["--config", "mcp.toml", "status"]);
    let all = format!("{}{}", status.stdout, status.stderr);
    assert!(
        all.contains("MCP server `other`: its OTHER_TOKEN refers to a stored secret, and none is stored for this server")
            && all.contains("mcpctl add"),
        "{all}"
    );
    assert!(!ran(&log).contains("other==1.0"), "{}", ran(&log));
    wd.assert_no_server_left();
}

/// A secret typed at `mcpctl add` is kept as a record of its own kind (no OAuth client,
/// no token; the value and the file it is bound to), and a secret an older mcpctl stored
/// (an OAuth-shaped record with the value as its access token) is still given to the
/// server.
#[test]
fn a_stored_secret_is_a_record_of_its_own_and_an_older_one_is_still_read() {
    let registry = Registry::start();
    let mut wd = Workdir::new();
    let scenario = Scenario::new("stub")
        .with_tool(ToolSpec::echo("echo"))
        .with_resource(
            ResourceSpec::new("env://key", "key", "unset").with_text_from_env("WEATHER_API_KEY"),
        );
    stub_runtimes_serving(&mut wd, scenario);
    wd.set_env("WEATHER_API_KEY", None);
    std::fs::write(wd.path().join("mcp.toml"), "credentials_store = \"file\"\n").unwrap();
    let secret = "kind-of-its-own-Key";
    let url = registry.url();
    let added = wd.run_on_terminal(
        &["add", "io.github.example/weather-mcp", "--registry", &url],
        &format!("\n{secret}\ny\n"),
    );
    assert_eq!(added.code, 0, "{}", added.stdout);

    let store_path = wd.path().join("home").join("credentials.json");
    let mut document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&store_path).unwrap()).unwrap();
    let records = document["credentials"].as_object_mut().unwrap();
    assert_eq!(records.len(), 1, "{records:?}");
    let record = records.values_mut().next().unwrap();
    let bound = wd
        .path()
        .canonicalize()
        .unwrap()
        .join("mcp.toml")
        .display()
        .to_string();
    assert_eq!(
        *record,
        serde_json::json!({
            "client_id": "",
            "stored_secret": {"value": secret, "config_file": bound}
        })
    );
    let read = || wd.run(&["--config", "mcp.toml", "read", "weather-mcp", "env://key"]);
    let first = read();
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(first.stdout.contains(secret), "{}", first.stdout);

    // The shape an older mcpctl wrote, under the same key: still read.
    *record = serde_json::json!({"client_id": "mcpctl-secret", "access_token": secret});
    std::fs::write(&store_path, serde_json::to_vec_pretty(&document).unwrap()).unwrap();
    let older = read();
    assert_eq!(older.code, 0, "{}", older.stderr);
    assert!(older.stdout.contains(secret), "{}", older.stdout);

    // A record of the new kind bound to another file is not given to this one.
    let records = document["credentials"].as_object_mut().unwrap();
    *records.values_mut().next().unwrap() = serde_json::json!({
        "client_id": "",
        "stored_secret": {"value": secret, "config_file": "/elsewhere/mcp.toml"}
    });
    std::fs::write(&store_path, serde_json::to_vec_pretty(&document).unwrap()).unwrap();
    let elsewhere = read();
    let all = format!("{}{}", elsewhere.stdout, elsewhere.stderr);
    assert_ne!(elsewhere.code, 0, "{all}");
    assert!(!all.contains(secret), "{all}");
    assert!(
        all.contains("refers to a stored secret, and none is stored for this server"),
        "{all}"
    );
    wd.assert_no_server_left();
}

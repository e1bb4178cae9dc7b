//! `server.json` documents (the registry's public examples, `fixtures/registry/`) turned
//! into pinned configurations: the command line of each package type as VS Code's mapping
//! gives it, remotes with headers and URL variables, secrets as references, and the
//! documents and answers that are refused, each error located.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::collections::BTreeMap;

use mcp_catalog::{
    ConfigErrorKind, ConfigErrors, FileSha256, InputValues, InstallTarget, PackageType,
    ProvenanceSource, RegistryServer, Transport,
};
use pretty_assertions::assert_eq;

fn fixture(name: &str) -> (String, String) {
    let path = format!(
        "{}/tests/fixtures/registry/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    (
        std::fs::read_to_string(&path).unwrap(),
        format!("fixtures/registry/{name}"),
    )
}

fn server(name: &str) -> RegistryServer {
    let (text, origin) = fixture(name);
    RegistryServer::from_json_str(&text, &origin).unwrap()
}

fn values(pairs: &[(&str, &[&str])]) -> InputValues {
    pairs.iter().fold(InputValues::new(), |v, (name, values)| {
        v.with_all(*name, values.iter().copied())
    })
}

/// What a stdio configuration runs, as data.
#[derive(Debug, PartialEq)]
struct Run {
    command: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    env_vars: Vec<String>,
}

fn run(command: &str, args: &[&str], env: &[(&str, &str)], env_vars: &[&str]) -> Run {
    Run {
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        env_vars: env_vars.iter().map(|v| (*v).to_owned()).collect(),
    }
}

fn planned_run(server: &RegistryServer, target: InstallTarget, answers: &InputValues) -> Run {
    let plan = server.install_plan(target, answers).unwrap();
    let stdio = plan
        .server_config()
        .unwrap()
        .transport()
        .as_stdio()
        .unwrap();
    Run {
        command: stdio.command().to_owned(),
        args: stdio.args().to_vec(),
        env: stdio.env().clone(),
        env_vars: stdio.env_vars().to_vec(),
    }
}

#[test]
fn each_package_type_runs_the_command_vs_code_maps_it_to() {
    use InstallTarget::Package;
    let cases: Vec<(&str, InstallTarget, InputValues, Run)> = vec![
        (
            "npm-brave-search.json",
            Package(0),
            InputValues::new(),
            run(
                "npx",
                &["@modelcontextprotocol/server-brave-search@1.0.2"],
                &[],
                &["BRAVE_API_KEY"],
            ),
        ),
        (
            "pypi-weather.json",
            Package(0),
            InputValues::new(),
            run(
                "uvx",
                &["weather-mcp-server==0.5.0"],
                &[("WEATHER_UNITS", "celsius")],
                &["WEATHER_API_KEY"],
            ),
        ),
        (
            "nuget-knapcode.json",
            Package(0),
            InputValues::new(),
            run(
                "dnx",
                &[
                    "Knapcode.SampleMcpServer@0.4.0-beta",
                    "--yes",
                    "--",
                    "mcp",
                    "start",
                ],
                &[],
                &[],
            ),
        ),
        (
            "oci-database-manager.json",
            Package(0),
            values(&[
                ("db_type", &["postgres"]),
                ("database_name", &["sales"]),
                ("DB_USERNAME", &["ann"]),
            ]),
            run(
                "docker",
                &[
                    "run",
                    "-i",
                    "--rm",
                    "--network",
                    "host",
                    "-e",
                    "DB_TYPE=postgres",
                    "-e",
                    "DB_USERNAME",
                    "-e",
                    "DB_PASSWORD",
                    "-e",
                    "SSL_MODE",
                    "docker.io/example/database-manager-mcp:3.1.0",
                    "--host",
                    "localhost",
                    "sales",
                ],
                &[("DB_USERNAME", "ann"), ("SSL_MODE", "prefer")],
                &["DB_PASSWORD"],
            ),
        ),
        (
            "oci-database-manager.json",
            Package(0),
            values(&[
                ("db_type", &["redis"]),
                ("database_name", &["cache"]),
                ("DB_USERNAME", &["ann"]),
                ("host", &["db.internal"]),
                ("port", &["6379"]),
                ("SSL_MODE", &["require"]),
            ]),
            run(
                "docker",
                &[
                    "run",
                    "-i",
                    "--rm",
                    "--network",
                    "host",
                    "-e",
                    "DB_TYPE=redis",
                    "-e",
                    "DB_USERNAME",
                    "-e",
                    "DB_PASSWORD",
                    "-e",
                    "SSL_MODE",
                    "docker.io/example/database-manager-mcp:3.1.0",
                    "--host",
                    "db.internal",
                    "--port",
                    "6379",
                    "cache",
                ],
                &[("DB_USERNAME", "ann"), ("SSL_MODE", "require")],
                &["DB_PASSWORD"],
            ),
        ),
        (
            "filesystem.json",
            Package(0),
            values(&[("target_dir", &["/src", "/docs"])]),
            run(
                "npx",
                &[
                    "@modelcontextprotocol/server-filesystem@1.0.2",
                    "/src",
                    "/docs",
                ],
                &[("LOG_LEVEL", "info")],
                &[],
            ),
        ),
        (
            "filesystem.json",
            Package(1),
            values(&[("source_path", &["/home/ann/src"])]),
            run(
                "docker",
                &[
                    "run",
                    "-i",
                    "--rm",
                    "--mount",
                    "type=bind,src=/home/ann/src,dst=/project",
                    "-e",
                    "LOG_LEVEL",
                    "docker.io/mcp/filesystem:1.0.2",
                    "/project",
                ],
                &[("LOG_LEVEL", "info")],
                &[],
            ),
        ),
        (
            "hybrid.json",
            Package(0),
            InputValues::new(),
            run(
                "npx",
                &["@example/hybrid-mcp-server@1.5.0", "--mode", "local"],
                &[],
                &[],
            ),
        ),
        (
            "with-package.json",
            Package(0),
            values(&[("config_path", &["/etc/weather.toml"])]),
            run(
                "npx",
                &[
                    "@modelcontextprotocol/server-weather@1.0.0",
                    "/etc/weather.toml",
                    "--port",
                    "8080",
                ],
                &[],
                &["API_KEY"],
            ),
        ),
    ];
    for (name, target, answers, expected) in cases {
        let server = server(name);
        assert_eq!(
            planned_run(&server, target, &answers),
            expected,
            "{name} {target}"
        );
    }
}

#[test]
fn the_provenance_pins_name_version_and_digest() {
    let text = r#"{"name": "io.github.example/pinned", "version": "2.0.0", "packages": [
        {"registryType": "oci", "transport": {"type": "stdio"},
         "identifier": "ghcr.io/example/server:2.0.0@sha256:1111111111111111111111111111111111111111111111111111111111111111"},
        {"registryType": "oci", "transport": {"type": "stdio"}, "identifier": "example/old-style", "version": "2.0.0"}
    ]}"#;
    let server = RegistryServer::from_json_str(text, "server.json").unwrap();
    let plan = server
        .install_plan(InstallTarget::Package(0), &InputValues::new())
        .unwrap();
    let digest = format!("sha256:{}", "1".repeat(64));
    assert_eq!(
        plan.command_line().unwrap(),
        [
            "docker",
            "run",
            "-i",
            "--rm",
            &format!("ghcr.io/example/server:2.0.0@{digest}")
        ]
    );
    assert_eq!(
        plan.provenance().source(),
        &ProvenanceSource::Package {
            registry_type: PackageType::Oci,
            identifier: "ghcr.io/example/server".to_owned(),
            version: Some("2.0.0".to_owned()),
            digest: Some(digest.clone()),
        }
    );
    assert_eq!(
        plan.provenance().to_string(),
        format!("io.github.example/pinned@2.0.0 (oci ghcr.io/example/server:2.0.0 {digest})")
    );
    // The 2025-09-29 form: the tag in `version`.
    let old = server
        .install_plan(InstallTarget::Package(1), &InputValues::new())
        .unwrap();
    assert_eq!(
        old.command_line().unwrap(),
        ["docker", "run", "-i", "--rm", "example/old-style:2.0.0"]
    );
    assert_ne!(old.provenance(), plan.provenance());

    let npm = server_plan("npm-brave-search.json", InstallTarget::Package(0));
    assert_eq!(
        npm.provenance().to_string(),
        "io.modelcontextprotocol.anonymous/brave-search@1.0.2 (npm @modelcontextprotocol/server-brave-search@1.0.2)"
    );
}

fn server_plan(name: &str, target: InstallTarget) -> mcp_catalog::InstallPlan {
    server(name)
        .install_plan(target, &InputValues::new())
        .unwrap()
}

#[test]
fn remotes_become_http_configurations_with_headers_as_references() {
    let hybrid = server("hybrid.json");
    let plan = hybrid
        .install_plan(InstallTarget::Remote(0), &InputValues::new())
        .unwrap();
    let Transport::StreamableHttp(http) = plan.server_config().unwrap().transport() else {
        panic!("streamable HTTP expected");
    };
    assert_eq!(
        http.url(),
        "https://mcp.anonymous.modelcontextprotocol.io/http"
    );
    assert_eq!(
        http.http_headers(),
        &BTreeMap::from([("X-Region".to_owned(), "us-east-1".to_owned())])
    );
    // The secret header is read from the host environment, never written.
    assert_eq!(
        http.env_http_headers(),
        &BTreeMap::from([("X-API-Key".to_owned(), "X_API_KEY".to_owned())])
    );
    let key = plan
        .inputs()
        .iter()
        .find(|i| i.name == "X-API-Key")
        .unwrap();
    assert!(key.secret);
    assert_eq!(key.variable.as_deref(), Some("X_API_KEY"));

    let sse = hybrid
        .install_plan(InstallTarget::Remote(1), &InputValues::new())
        .unwrap();
    assert!(
        matches!(sse.server_config().unwrap().transport(), Transport::Sse(h) if h.url() == "https://mcp.anonymous.modelcontextprotocol.io/sse")
    );

    let bearer = r#"{"name": "io.github.example/bearer", "version": "1.0.0", "remotes": [{
        "type": "streamable-http", "url": "https://mcp.example.com/mcp",
        "headers": [{"name": "Authorization", "value": "Bearer {token}",
                     "variables": {"token": {"isSecret": true, "isRequired": true}}}]}]}"#;
    let server = RegistryServer::from_json_str(bearer, "bearer.json").unwrap();
    let plan = server
        .install_plan(InstallTarget::Remote(0), &InputValues::new())
        .unwrap();
    let http = plan.server_config().unwrap().transport().as_http().unwrap();
    assert_eq!(http.bearer_token_env_var(), Some("TOKEN"));
    assert!(http.http_headers().is_empty());
}

#[test]
fn remote_url_variables_are_inputs() {
    let server = server("remote-url-template.json");
    let target = InstallTarget::Remote(0);
    let inputs = server.inputs(target);
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].name, "tenant_id");
    assert!(inputs[0].required);
    let plan = server
        .install_plan(target, &InputValues::new().with("tenant_id", "emea-cell1"))
        .unwrap();
    assert_eq!(
        plan.server_config()
            .unwrap()
            .transport()
            .as_http()
            .unwrap()
            .url(),
        "https://anonymous.modelcontextprotocol.io/mcp/emea-cell1"
    );
    let missing = server
        .install_plan(target, &InputValues::new())
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "fixtures/registry/remote-url-template.json:11:9: field `remotes[0].variables.tenant_id`: \
         the required input `tenant_id` (Tenant identifier (e.g., 'us-cell1', 'emea-cell1')) has no \
         value (supply a value for `tenant_id`)"
    );
}

#[test]
fn inputs_name_what_the_caller_supplies() {
    let server = server("oci-database-manager.json");
    let inputs = server.inputs(InstallTarget::Package(0));
    let summary: Vec<_> = inputs
        .iter()
        .map(|i| {
            (
                i.name.as_str(),
                i.required,
                i.secret,
                i.default.as_deref(),
                i.variable.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("db_type", true, false, None, None),
            ("DB_USERNAME", true, false, None, None),
            ("DB_PASSWORD", false, true, None, Some("DB_PASSWORD")),
            ("SSL_MODE", false, false, Some("prefer"), None),
            ("host", false, false, Some("localhost"), None),
            ("port", false, false, None, None),
            ("database_name", true, false, None, None),
        ]
    );
    assert_eq!(inputs[0].choices, ["postgres", "mysql", "mongodb", "redis"]);
}

fn errors(result: Result<impl std::fmt::Debug, ConfigErrors>) -> Vec<String> {
    result
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn answers_that_do_not_fit_are_refused() {
    let server = server("oci-database-manager.json");
    let target = InstallTarget::Package(0);
    let got = errors(server.install_plan(
        target,
        &values(&[
            ("db_type", &["oracle"]),
            ("database_name", &["a", "b"]),
            ("DB_USERNAME", &["ann"]),
            ("port", &["eighty"]),
            ("DB_PASSWORD", &["hunter2"]),
        ]),
    ));
    let origin = "fixtures/registry/oci-database-manager.json";
    assert_eq!(
        got,
        [
            format!(
                "{origin}:27:13: field `packages[0].runtimeArguments[1].variables.db_type`: `oracle` is not one of the choices for `db_type` (use one of: postgres, mysql, mongodb, redis)"
            ),
            format!(
                "{origin}:67:9: field `packages[0].environmentVariables[1]`: `DB_PASSWORD` is a secret and is not taken as a value (leave it out of the answers: the configuration reads it from the environment variable named by the input's `variable`)"
            ),
            format!(
                "{origin}:48:9: field `packages[0].packageArguments[1]`: `eighty` is not a valid value for `port` (give a decimal number)"
            ),
            format!(
                "{origin}:54:9: field `packages[0].packageArguments[2]`: `database_name` takes one value, 2 were given (give one value)"
            ),
        ]
    );
    // Nothing answered: each required input is named.
    let got = errors(server.install_plan(target, &InputValues::new()));
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(
        got[0].contains("`db_type`")
            && got[1].contains("`DB_USERNAME`")
            && got[2].contains("`database_name`")
    );
}

#[test]
fn latest_and_ranges_are_refused_with_their_place() {
    let (text, origin) = fixture("package-version-latest.json");
    assert_eq!(
        errors(RegistryServer::from_json_str(&text, &origin)),
        [format!(
            "{origin}:9:7: field `packages[0].version`: package version `latest` is `latest`, which \
             names whatever is newest when it runs (pin one exact version, e.g. `1.0.2`, so the same \
             code runs every time)"
        )]
    );
    let package = |kind: &str, extra: &str| {
        format!(
            "{{\"name\": \"io.github.x/y\", \"version\": \"1.0.0\", \"packages\": [\n  \
             {{\"registryType\": \"{kind}\", \"transport\": {{\"type\": \"stdio\"}}, {extra}}}]}}"
        )
    };
    for (kind, extra, wrong) in [
        (
            "npm",
            r#""identifier": "x", "version": "^1.2.3""#,
            "is a range",
        ),
        (
            "pypi",
            r#""identifier": "x", "version": ">=1.0""#,
            "is a range",
        ),
        (
            "nuget",
            r#""identifier": "x", "version": "1.x""#,
            "is a range",
        ),
        ("npm", r#""identifier": "x""#, "`version` is missing"),
    ] {
        let got = errors(RegistryServer::from_json_str(
            &package(kind, extra),
            "s.json",
        ));
        assert!(
            got.len() == 1 && got[0].starts_with("s.json:2:") && got[0].contains(wrong),
            "{kind} {extra}: {got:?}"
        );
    }
    for (identifier, wrong) in [
        ("owner/image:latest", "tagged `latest`"),
        ("owner/image", "neither a tag nor a digest"),
        ("owner/image@sha256:abc", "not an image digest"),
    ] {
        let text = package("oci", &format!("\"identifier\": \"{identifier}\""));
        let server = RegistryServer::from_json_str(&text, "s.json").unwrap();
        let got = errors(server.install_plan(InstallTarget::Package(0), &InputValues::new()));
        assert!(
            got.len() == 1 && got[0].starts_with("s.json:2:") && got[0].contains(wrong),
            "{identifier}: {got:?}"
        );
    }
    let server_range = r#"{"name": "io.github.x/y", "version": "~1.0.0"}"#;
    let got = errors(RegistryServer::from_json_str(server_range, "s.json"));
    assert_eq!(
        got,
        [
            "s.json:1:27: field `version`: version `~1.0.0` is a range, not one version (write one exact version, e.g. `1.0.2`)"
        ]
    );
}

#[test]
fn an_mcpb_bundle_is_pinned_to_its_sha256_and_checked_before_it_runs() {
    let bundle_bytes = b"a bundle";
    let digest = FileSha256::of(bundle_bytes);
    let (text, origin) = fixture("mcpb-text-editor.json");
    let text = text.replace(
        "fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce",
        digest.to_hex(),
    );
    let server = RegistryServer::from_json_str(&text, &origin).unwrap();
    let plan = server
        .install_plan(InstallTarget::Package(0), &InputValues::new())
        .unwrap();
    assert!(plan.server_config().is_none() && plan.command_line().is_none());
    let bundle = plan.bundle().unwrap();
    assert_eq!(
        bundle.url(),
        "https://github.com/modelcontextprotocol/text-editor-mcpb/releases/download/v1.0.2/text-editor.mcpb"
    );
    assert_eq!(bundle.sha256(), &digest);
    assert_eq!(
        plan.provenance().digest(),
        Some(digest.to_string().as_str())
    );
    assert_eq!(bundle.verify(bundle_bytes), Ok(()));
    let refused = bundle.verify(b"a bundle, changed").unwrap_err();
    assert_eq!(refused.len(), 1);
    let refused = &refused.errors()[0];
    assert_eq!(refused.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!(refused.location().to_string(), format!("{origin}:11:7"));
    assert_eq!(refused.field(), Some("packages[0].fileSha256"));
    assert!(
        refused
            .message()
            .contains(&FileSha256::of(b"a bundle, changed").to_hex().to_owned())
    );

    // Without `fileSha256` the document is refused.
    let (text, origin) = fixture("mcpb-text-editor.json");
    let without = text.replace(
        "\"fileSha256\": \"fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce\",\n",
        "",
    );
    assert_eq!(
        errors(RegistryServer::from_json_str(&without, &origin)),
        [format!(
            "{origin}:8:5: field `packages[0]`: an `mcpb` package needs `fileSha256`: without it the \
             downloaded bundle cannot be checked (add `\"fileSha256\"` with the bundle's SHA-256 (64 \
             lowercase hex digits))"
        )]
    );
}

#[test]
fn malformed_documents_get_file_line_column_and_what_to_do() {
    let cases: &[(&str, &[&str])] = &[
        (
            "{\n  \"name\": \"io.github.x/y\",\n  \"version\": \"1.0.0\"\n  \"packages\": []\n}",
            &["s.json:4:3: invalid JSON: expected `,` or `}` (fix the syntax at this position)"],
        ),
        (
            "{\n  \"name\": \"weather\",\n  \"version\": 1\n}",
            &[
                "s.json:2:3: field `name`: `weather` is not a registry server name (write a reverse-DNS namespace, one `/` and a name, e.g. `io.github.user/weather`)",
                "s.json:3:3: field `version`: expected a string, found a number (write the value in double quotes)",
            ],
        ),
        (
            "{\"name\": \"io.github.x/y\", \"version\": \"1.0.0\", \"packages\": [\n  {\"registry_type\": \"npm\", \"identifier\": \"x\", \"version\": \"1.0.0\", \"transport\": {\"type\": \"stdio\"}}\n]}",
            &[
                "s.json:2:4: field `packages[0].registry_type`: `registry_type` is the 2025-07-09 schema's name, which is no longer read (rename it `registryType` (schema 2025-09-16 and later use camelCase))",
                "s.json:2:3: field `packages[0]`: `registryType` is missing (add `\"registryType\"`: `npm`, `pypi`, `oci`, `nuget` or `mcpb`)",
            ],
        ),
        (
            "{\"name\": \"io.github.x/y\", \"version\": \"1.0.0\", \"remotes\": [\n  {\"type\": \"websocket\", \"url\": \"wss://x\"},\n  {\"type\": \"sse\"}\n]}",
            &[
                "s.json:2:4: field `remotes[0].type`: unknown transport type `websocket` (use `stdio`, `streamable-http` or `sse`)",
                "s.json:3:3: field `remotes[1]`: `url` is missing (add `\"url\"`: the endpoint URL)",
            ],
        ),
        (
            "{\"name\": \"io.github.x/y\", \"version\": \"1.0.0\", \"packages\": [\n  {\"registryType\": \"npm\", \"identifier\": \"x\", \"version\": \"1.0.0\", \"transport\": {\"type\": \"stdio\"},\n   \"packageArguments\": [{\"type\": \"positional\"}, {\"type\": \"named\"}]}\n]}",
            &[
                "s.json:3:25: field `packages[0].packageArguments[0]`: a positional argument needs a `value` or a `valueHint` (add `\"value\"` for a fixed argument or `\"valueHint\"` naming the one the user supplies)",
                "s.json:3:49: field `packages[0].packageArguments[1]`: `name` is missing (add `\"name\"`: the flag, with its dashes, e.g. `--port`)",
            ],
        ),
        (
            "{\"$schema\": \"https://static.modelcontextprotocol.io/schemas/2025-07-09/server.schema.json\",\n \"name\": \"io.github.x/y\", \"version\": \"1.0.0\"}",
            &[
                "s.json:1:2: field `$schema`: schema 2025-07-09 uses snake_case fields, which are no longer read (update the document to a current schema (2025-09-16, 2025-09-29, 2025-10-17, 2025-12-11), renaming its fields to camelCase)",
            ],
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(
            errors(RegistryServer::from_json_str(text, "s.json")),
            *expected,
            "{text}"
        );
    }
}

#[test]
fn secrets_that_cannot_stay_references_are_refused() {
    let text = r#"{"name": "io.github.x/y", "version": "1.0.0", "packages": [
  {"registryType": "npm", "identifier": "x", "version": "1.0.0", "transport": {"type": "stdio"},
   "packageArguments": [{"type": "named", "name": "--token", "isSecret": true, "isRequired": true}],
   "environmentVariables": [{"name": "DSN", "value": "postgres://app:{password}@db/app",
     "variables": {"password": {"isSecret": true}}}]}
]}"#;
    let server = RegistryServer::from_json_str(text, "s.json").unwrap();
    let got = errors(server.install_plan(InstallTarget::Package(0), &InputValues::new()));
    assert_eq!(got.len(), 2, "{got:#?}");
    assert!(got[0].starts_with("s.json:5:20: field `packages[0].environmentVariables[0].variables.password`: the secret `password` would be written into the environment variable `DSN`"), "{}", got[0]);
    assert!(got[1].starts_with("s.json:3:25: field `packages[0].packageArguments[0]`: the secret argument `token` would be written into the command line"), "{}", got[1]);
}

#[test]
fn a_registry_answer_is_read_with_its_status() {
    let (text, _) = fixture("npm-brave-search.json");
    let answer = format!(
        "{{\"server\": {text}, \"_meta\": {{\"io.modelcontextprotocol.registry/official\": \
         {{\"status\": \"deprecated\", \"isLatest\": false}}}}}}"
    );
    let server = RegistryServer::from_json_str(&answer, "registry").unwrap();
    assert_eq!(
        server.name(),
        "io.modelcontextprotocol.anonymous/brave-search"
    );
    assert_eq!(server.status(), Some("deprecated"));
    let broken = answer.replace(
        "\"version\": \"1.0.2\",\n  \"packages\"",
        "\"version\": \"*\",\n  \"packages\"",
    );
    let got = errors(RegistryServer::from_json_str(&broken, "registry"));
    assert_eq!(got.len(), 1);
    assert!(
        got[0].starts_with("registry:11:3: field `server.version`"),
        "{}",
        got[0]
    );
}

#[test]
fn an_http_package_or_a_missing_target_is_refused() {
    let text = r#"{"name": "io.github.x/y", "version": "1.0.0", "packages": [
  {"registryType": "npm", "identifier": "x", "version": "1.0.0",
   "transport": {"type": "streamable-http", "url": "http://localhost:8080/mcp"}}]}"#;
    let server = RegistryServer::from_json_str(text, "s.json").unwrap();
    let got = errors(server.install_plan(InstallTarget::Package(0), &InputValues::new()));
    assert_eq!(got.len(), 1);
    assert!(
        got[0].starts_with("s.json:3:4: field `packages[0].transport`: this package serves HTTP"),
        "{}",
        got[0]
    );
    let got = errors(server.install_plan(InstallTarget::Remote(0), &InputValues::new()));
    assert_eq!(
        got,
        ["s.json:1:1: `io.github.x/y` has no remotes[0] (choose one of: packages[0])"]
    );
}

/// Pieces of `server.json` that random documents are made of.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\n",
    "1",
    "null",
    "true",
    "\"name\": \"io.github.x/y\"",
    "\"version\": \"1.0.0\"",
    "\"version\": \"latest\"",
    "\"server\":",
    "\"packages\": [",
    "\"remotes\": [",
    "\"registryType\": \"oci\"",
    "\"registryType\": \"mcpb\"",
    "\"identifier\": \"a/b:1@sha256:x\"",
    "\"identifier\": \"é:/\"",
    "\"transport\": {\"type\": \"stdio\"}",
    "\"type\": \"sse\"",
    "\"url\": \"{u}\"",
    "\"packageArguments\": [",
    "\"type\": \"named\"",
    "\"type\": \"positional\"",
    "\"value\": \"{v}\"",
    "\"variables\": {\"v\": {\"isSecret\": true}}",
    "\"isSecret\": true",
    "\"environmentVariables\": [",
    "\"headers\": [",
    "\"fileSha256\": \"00\"",
];

proptest::proptest! {
    #[test]
    fn parsing_and_planning_never_panic(
        picks in proptest::collection::vec(0..PIECES.len(), 0..60),
        answer in "[a-z{}é/]{0,6}",
    ) {
        let text: String = picks.iter().map(|&i| PIECES[i]).collect();
        if let Ok(server) = RegistryServer::from_json_str(&text, "p.json") {
            let values = InputValues::new().with("v", answer.clone()).with("u", answer);
            for target in server.targets() {
                let _ = server.inputs(target);
                let _ = server.install_plan(target, &values);
            }
        }
    }

    #[test]
    fn edited_examples_never_panic(file in 0..FIXTURES.len(), at in 0usize..4000, piece in 0..PIECES.len()) {
        let (text, _) = fixture(FIXTURES[file]);
        let mut at = at.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let edited = format!("{}{}{}", &text[..at], PIECES[piece], &text[at..]);
        if let Ok(server) = RegistryServer::from_json_str(&edited, "p.json") {
            for target in server.targets() {
                let _ = server.install_plan(target, &InputValues::new());
            }
        }
    }
}

const FIXTURES: &[&str] = &[
    "npm-brave-search.json",
    "pypi-weather.json",
    "nuget-knapcode.json",
    "oci-database-manager.json",
    "mcpb-text-editor.json",
    "hybrid.json",
    "remote-url-template.json",
    "with-package.json",
    "filesystem.json",
];

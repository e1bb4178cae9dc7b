//! A loop of skills requests for profiling `mcp-client`'s own work per listing or load
//! against a bare rmcp client: `N` listings (`skills/list`) or loads (the skill's three
//! files read and verified) of the `mcp-fake-server` skills scenario the benchmark uses.
//! Prints the wall time and this process's CPU time per operation.
//!
//! ```text
//! cargo run --release -p mcp-client --example skills_loop -- client list 5000
//! cargo run --release -p mcp-client --example skills_loop -- bare load 5000
//! valgrind --tool=callgrind target/release/examples/skills_loop client list 300
//! ```

#![allow(
    clippy::disallowed_methods,
    reason = "the baseline is a bare rmcp client spawning the server itself"
)]
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a profiling harness run by hand"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_catalog::StdioConfig;
use mcp_client::{Client, ClientSettings, DeclineRequests, Handshake, SkillReadSettings, Target};
use mcp_key::{McpServerKey, ServerName};
use mcp_testkit::{Scenario, SkillSpec};
use rmcp::ServiceExt;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProtocolVersion, ReadResourceRequestParams,
    SKILLS_EXTENSION_ID, Skill, SkillResources,
};
use rmcp::transport::TokioChildProcess;

/// This process's CPU time so far (user + system, every thread), in clock ticks of 10 ms.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// The benchmark's scenario: the skill loaded has two reference files, beside two more.
fn scenario() -> Scenario {
    let reference = "Fill every field of the form, then check the totals.\n".repeat(40);
    Scenario::new("skills-loop")
        .with_skill(
            SkillSpec::new(
                "pdf-processing",
                "Extract, fill, and assemble PDF documents",
            )
            .with_frontmatter("license", serde_json::json!("MIT"))
            .with_body("Use references/FORMS.md for forms, references/API.md for the API.")
            .with_file("references/FORMS.md", &reference)
            .with_file("references/API.md", &reference),
        )
        .with_skill(SkillSpec::new("notes", "Take notes"))
        .with_skill(SkillSpec::new("review", "Review a change"))
}

enum Side {
    Client(Box<Client>),
    Bare(rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>),
}

impl Side {
    async fn list(&self) -> Vec<Skill> {
        match self {
            Self::Client(client) => client.list_skills(1 << 20).await.expect("list").skills,
            Self::Bare(bare) => bare.list_all_skills().await.expect("list"),
        }
    }

    async fn load(&self, skill: &Skill) {
        match self {
            Self::Client(client) => {
                let loaded = client
                    .load_skill(skill, &SkillReadSettings::new())
                    .await
                    .expect("load");
                assert_eq!(loaded.files.len(), 3);
            }
            Self::Bare(bare) => {
                let SkillResources::Files(files) = &skill.resources else {
                    panic!("dynamic skill");
                };
                for file in files {
                    let read = bare
                        .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
                        .await
                        .expect("read");
                    let [rmcp::model::ResourceContents::TextResourceContents { text, .. }] =
                        read.contents.as_slice()
                    else {
                        panic!("not one text");
                    };
                    file.verify(text.as_bytes()).expect("verify");
                }
            }
        }
    }
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let side = argv.next().unwrap_or_else(|| "client".to_owned());
    let op = argv.next().unwrap_or_else(|| "list".to_owned());
    let n: usize = argv.next().and_then(|n| n.parse().ok()).unwrap_or(5000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let home = mcp_testkit::TestHome::new().expect("temp dir");
    let path = home.join("skills.json");
    scenario().write_json(&path).expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let args = vec!["--scenario".to_owned(), path.to_string_lossy().into_owned()];
    rt.block_on(async {
        let side = if side == "bare" {
            let mut capabilities = ClientCapabilities::default();
            capabilities.extensions = Some(
                [(SKILLS_EXTENSION_ID.to_owned(), serde_json::Map::new())]
                    .into_iter()
                    .collect(),
            );
            let info = ClientConfig::new(capabilities, Implementation::new("bare", "0"))
                .with_protocol_version(ProtocolVersion::V_2025_11_25);
            let mut cmd = tokio::process::Command::new(&bin);
            cmd.args(&args);
            let transport = TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn")
                .0;
            Side::Bare(info.serve(transport).await.expect("initialize"))
        } else {
            let client = Client::connect(
                McpServerKey::unscoped(ServerName::new("skills").expect("name")),
                Target::stdio(StdioConfig::new(bin.to_string_lossy()).with_args(args)),
                ClientSettings::new()
                    .with_handshake(Handshake::Initialize)
                    .with_extension(SKILLS_EXTENSION_ID, serde_json::Map::new()),
                Arc::new(DeclineRequests),
            )
            .await
            .expect("connect");
            Side::Client(Box::new(client))
        };
        let skill = side
            .list()
            .await
            .into_iter()
            .find(|s| s.name() == "pdf-processing")
            .expect("the skill");
        for _ in 0..100 {
            side.list().await;
            side.load(&skill).await;
        }
        let (wall, cpu) = (Instant::now(), cpu_time());
        for _ in 0..n {
            if op == "load" {
                side.load(&skill).await;
            } else {
                side.list().await;
            }
        }
        let (wall, cpu) = (wall.elapsed(), cpu_time().saturating_sub(cpu));
        let per = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
        println!(
            "{n} {op}: wall {:.1} µs each, client CPU {:.1} µs each",
            per(wall),
            per(cpu)
        );
        match side {
            Side::Client(client) => client.shutdown().await,
            Side::Bare(bare) => {
                let _ = bare.cancel().await;
            }
        }
    });
}

//! Skills (SEP-2640): listing a server's skills, and loading one (its `SKILL.md` and two
//! reference files, each read and verified), through `mcp-client` versus a bare rmcp
//! client on the same `mcp-fake-server` skills scenario. The bare side does what a host
//! without this workspace would: `Peer::list_all_skills`, then `read_resource` of each
//! listed file and rmcp's own `SkillResource::verify` (size and digest); it does not
//! compare the `SKILL.md` frontmatter with the entry, which `mcp-client` does, so the
//! ratio includes that check. Both sides speak the 2025-11-25 handshake.

#![expect(
    clippy::disallowed_methods,
    reason = "the baseline is a bare rmcp client spawning the server itself, as a host without this workspace would"
)]

use std::sync::Arc;
use std::time::Instant;

use mcp_catalog::StdioConfig;
use mcp_client::{Client, ClientSettings, DeclineRequests, Handshake, SkillReadSettings, Target};
use mcp_key::{McpServerKey, ServerName};
use mcp_testkit::{Scenario, SkillSpec};
use rmcp::ServiceExt;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProtocolVersion, ReadResourceRequestParams,
    ResourceContents, SKILLS_EXTENSION_ID, Skill, SkillResources,
};
use rmcp::transport::TokioChildProcess;

use crate::fixture::{Bare, Fixture, cancel_all};
use crate::rows::calls::{latency_rows, sides};
use crate::table::Row;
use crate::{Result, Settings, fail};

/// The skill both sides load.
const SKILL: &str = "pdf-processing";
/// Most bytes of JSON a listing may take.
const BUDGET: usize = 1024 * 1024;

/// The scenario: the skill loaded, with two reference files, beside two more skills so
/// the listing has something to list.
fn scenario() -> Scenario {
    let reference = "Fill every field of the form, then check the totals.\n".repeat(40);
    Scenario::new("bench")
        .with_skill(
            SkillSpec::new(SKILL, "Extract, fill, and assemble PDF documents")
                .with_frontmatter("license", serde_json::json!("MIT"))
                .with_body("Use references/FORMS.md for forms, references/API.md for the API.")
                .with_file("references/FORMS.md", &reference)
                .with_file("references/API.md", &reference),
        )
        .with_skill(SkillSpec::new("notes", "Take notes"))
        .with_skill(SkillSpec::new("review", "Review a change"))
}

/// The two sides, connected to their own processes of the skills scenario.
struct Sides {
    client: Client,
    bare: Bare,
}

impl Sides {
    async fn start(fx: &Fixture) -> Result<Self> {
        // Its path starts with the fixture's scenario, so the leftover check finds it.
        let path = fx.join("bench.json.skills.json");
        scenario().write_json(&path)?;
        let (bin, _) = fx.server_command();
        let args = vec!["--scenario".to_owned(), path.to_string_lossy().into_owned()];
        let client = Client::connect(
            McpServerKey::unscoped(ServerName::new("skills")?),
            Target::stdio(StdioConfig::new(bin.to_string_lossy()).with_args(args.clone())),
            ClientSettings::new()
                .with_handshake(Handshake::Initialize)
                .with_extension(SKILLS_EXTENSION_ID, serde_json::Map::new()),
            Arc::new(DeclineRequests),
        )
        .await?;
        let mut cmd = tokio::process::Command::new(bin);
        cmd.args(&args);
        let spawned = TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn();
        let bare = match spawned {
            Ok((transport, _stderr)) => bare_info().serve(transport).await,
            Err(e) => {
                client.shutdown().await;
                return Err(e.into());
            }
        };
        match bare {
            Ok(bare) => Ok(Self { client, bare }),
            Err(e) => {
                client.shutdown().await;
                Err(e.into())
            }
        }
    }

    async fn shutdown(self) {
        self.client.shutdown().await;
        cancel_all(vec![self.bare]).await;
    }
}

/// A bare client announcing the skills extension, with the 2025-11-25 handshake.
fn bare_info() -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    capabilities.extensions = Some(
        [(SKILLS_EXTENSION_ID.to_owned(), serde_json::Map::new())]
            .into_iter()
            .collect(),
    );
    ClientConfig::new(capabilities, Implementation::new("mcp-bench-bare", "0"))
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

/// `mcp-client`: every skill listed.
async fn client_list(client: &Client) -> Result<Vec<Skill>> {
    let listing = client.list_skills(BUDGET).await?;
    if listing.skills.len() != 3 {
        return Err(fail(format!(
            "mcp-client listed {} skills, not 3",
            listing.skills.len()
        )));
    }
    Ok(listing.skills)
}

/// `mcp-client`: the skill loaded, every file verified.
async fn client_load(client: &Client, skill: &Skill) -> Result<()> {
    let loaded = client.load_skill(skill, &SkillReadSettings::new()).await?;
    if loaded.files.len() != 3 {
        return Err(fail(format!(
            "mcp-client loaded {} files, not 3",
            loaded.files.len()
        )));
    }
    Ok(())
}

/// Bare rmcp: every skill listed.
async fn bare_list(bare: &rmcp::Peer<rmcp::RoleClient>) -> Result<Vec<Skill>> {
    let skills = bare.list_all_skills().await?;
    if skills.len() != 3 {
        return Err(fail(format!(
            "bare rmcp listed {} skills, not 3",
            skills.len()
        )));
    }
    Ok(skills)
}

/// Bare rmcp: each file of the skill read and checked against its size and digest.
async fn bare_load(bare: &rmcp::Peer<rmcp::RoleClient>, skill: &Skill) -> Result<()> {
    let SkillResources::Files(files) = &skill.resources else {
        return Err(fail("the skill's files are listed as dynamic"));
    };
    for file in files {
        let read = bare
            .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
            .await?;
        let bytes = match read.contents.as_slice() {
            [ResourceContents::TextResourceContents { text, .. }] => text.as_bytes(),
            _ => return Err(fail(format!("`{}` was not served as one text", file.uri))),
        };
        file.verify(bytes)?;
    }
    Ok(())
}

fn chosen(skills: &[Skill]) -> Result<&Skill> {
    skills
        .iter()
        .find(|s| s.name() == SKILL)
        .ok_or_else(|| fail(format!("no skill `{SKILL}` listed")))
}

/// One timed listing and one timed load on side A (`mcp-client`) or B (bare rmcp).
async fn once(sides: &Sides, bare_side: bool) -> Result<(f64, f64)> {
    let peer = sides.bare.peer();
    let t = Instant::now();
    let skills = if bare_side {
        bare_list(peer).await?
    } else {
        client_list(&sides.client).await?
    };
    let listed = t.elapsed().as_secs_f64();
    let skill = chosen(&skills)?;
    let t = Instant::now();
    if bare_side {
        bare_load(peer, skill).await?;
    } else {
        client_load(&sides.client, skill).await?;
    }
    Ok((listed, t.elapsed().as_secs_f64()))
}

/// p50 and p99 of listing the skills and of loading one, `mcp-client` versus bare rmcp.
pub(crate) async fn skills(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    // A load is three reads: a quarter of the call rows' rounds keeps the row short.
    let s = s.slower(4);
    let sides_ = Sides::start(fx).await?;
    let measured = measure(&sides_, &s).await;
    sides_.shutdown().await;
    let (list_a, list_b, load_a, load_b) = measured?;
    let mut rows = latency_rows("skills: list", &list_a, &list_b, "bare rmcp client", &s);
    rows.extend(latency_rows(
        "skills: load one skill (3 files, verified)",
        &load_a,
        &load_b,
        "bare rmcp client",
        &s,
    ));
    Ok(rows)
}

type Samples = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

async fn measure(sides_: &Sides, s: &Settings) -> Result<Samples> {
    for _ in 0..s.warmup_calls {
        once(sides_, false).await?;
        once(sides_, true).await?;
    }
    let (mut list_a, mut list_b, mut load_a, mut load_b) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..s.rounds_calls {
        for bare_side in sides(round) {
            for _ in 0..s.calls_per_round {
                let (list, load) = once(sides_, bare_side).await?;
                if bare_side {
                    list_b.push(list);
                    load_b.push(load);
                } else {
                    list_a.push(list);
                    load_a.push(load);
                }
            }
        }
    }
    Ok((list_a, list_b, load_a, load_b))
}

//! Skills (SEP-2640): listing a server's skills, and loading one (its `SKILL.md` and two
//! reference files, each read and verified), through `mcp-client` and through the
//! connection set (`ConnectionSet::skills` and `ConnectionSet::load_skill`, under an
//! authority that allows skills) versus a bare rmcp client on the same `mcp-fake-server`
//! skills scenario. The set reuses a server's listing until its connection changes or the
//! server announces a resource list change, so its listing rows measure that reuse (the
//! set's own work: the catalog of every server's skills named like tools), not a
//! `skills/list` round trip; its load lists (reused) to find the entry, asks the authority,
//! then reads and verifies as `mcp-client` does. The bare side does what a host
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

use mcp_catalog::{ProtocolChoice, ServerConfig, StdioConfig};
use mcp_client::{Client, ClientSettings, DeclineRequests, Handshake, SkillReadSettings, Target};
use mcp_connections::{ConnectionSet, ConnectionSetOptions, HostAuthority, SkillLoading};
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

/// The skill's qualified name in the set (its one server is `s00`).
const QUALIFIED: &str = "mcp__s00__pdf-processing";

/// The three sides, connected to their own processes of the skills scenario.
struct Sides {
    client: Client,
    bare: Bare,
    set: ConnectionSet,
}

/// Which side a sample is taken on.
#[derive(Clone, Copy)]
enum Side {
    Client,
    Set,
    Bare,
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
        let bare = match bare {
            Ok(bare) => bare,
            Err(e) => {
                client.shutdown().await;
                return Err(e.into());
            }
        };
        let set = match ready_set(bin, args).await {
            Ok(set) => set,
            Err(e) => {
                client.shutdown().await;
                cancel_all(vec![bare]).await;
                return Err(e);
            }
        };
        Ok(Self { client, bare, set })
    }

    async fn shutdown(self) {
        self.client.shutdown().await;
        self.set.shutdown().await;
        cancel_all(vec![self.bare]).await;
    }
}

/// A set of one server (`s00`) of the scenario, 2025-11-25 handshake like the other sides,
/// under an authority that allows loading skills.
async fn ready_set(bin: &std::path::Path, args: Vec<String>) -> Result<ConnectionSet> {
    let catalog = Fixture::catalog_from([ServerConfig::stdio(bin.to_string_lossy())
        .with_args(args)
        .with_protocol(ProtocolChoice::V2025_11_25)])?;
    let set = ConnectionSet::start(&catalog, ConnectionSetOptions::new());
    let summary = set.wait_startup().await;
    if summary.ready() != 1 {
        set.shutdown().await;
        return Err(fail(format!(
            "the set's skills server did not start: {summary:?}"
        )));
    }
    set.set_authority(HostAuthority::new().with_skill_loading(SkillLoading::Allow));
    Ok(set)
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

/// The set: every skill listed (the listing reused after the first).
async fn set_list(set: &ConnectionSet) -> Result<()> {
    let skills = set.skills().await;
    if skills.len() != 3 || !skills.iter().any(|s| s.qualified_name == QUALIFIED) {
        return Err(fail(format!(
            "the set listed {} skills, not 3 with `{QUALIFIED}`",
            skills.len()
        )));
    }
    Ok(())
}

/// The set: the skill loaded through the authority, every file verified.
async fn set_load(set: &ConnectionSet) -> Result<()> {
    let loaded = set
        .load_skill(QUALIFIED, &SkillReadSettings::new())
        .await
        .map_err(|e| fail(e.to_string()))?;
    if loaded.files.len() != 3 || !loaded.files.iter().all(|f| f.verified) {
        return Err(fail(format!(
            "the set loaded {} files, not 3 verified",
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

/// One timed listing and one timed load on `side`.
async fn once(sides: &Sides, side: Side) -> Result<(f64, f64)> {
    let peer = sides.bare.peer();
    if let Side::Set = side {
        let t = Instant::now();
        set_list(&sides.set).await?;
        let listed = t.elapsed().as_secs_f64();
        let t = Instant::now();
        set_load(&sides.set).await?;
        return Ok((listed, t.elapsed().as_secs_f64()));
    }
    let t = Instant::now();
    let skills = if let Side::Bare = side {
        bare_list(peer).await?
    } else {
        client_list(&sides.client).await?
    };
    let listed = t.elapsed().as_secs_f64();
    let skill = chosen(&skills)?;
    let t = Instant::now();
    if let Side::Bare = side {
        bare_load(peer, skill).await?;
    } else {
        client_load(&sides.client, skill).await?;
    }
    Ok((listed, t.elapsed().as_secs_f64()))
}

/// p50 and p99 of listing the skills and of loading one, `mcp-client` and the set versus
/// bare rmcp.
pub(crate) async fn skills(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    // A load is three reads: a quarter of the call rows' rounds keeps the row short.
    let s = s.slower(4);
    let sides_ = Sides::start(fx).await?;
    let measured = measure(&sides_, &s).await;
    sides_.shutdown().await;
    let m = measured?;
    let bare = "bare rmcp client";
    let mut rows = latency_rows("skills: list", &m.list[0], &m.list[2], bare, &s);
    rows.extend(latency_rows(
        "skills: load one skill (3 files, verified)",
        &m.load[0],
        &m.load[2],
        bare,
        &s,
    ));
    rows.extend(latency_rows(
        "skills: list through the set (listing reused)",
        &m.list[1],
        &m.list[2],
        bare,
        &s,
    ));
    rows.extend(latency_rows(
        "skills: load one skill through the set (3 files, verified)",
        &m.load[1],
        &m.load[2],
        bare,
        &s,
    ));
    Ok(rows)
}

/// Samples per side (`mcp-client`, the set, bare rmcp), of listing and of loading.
struct Samples {
    list: [Vec<f64>; 3],
    load: [Vec<f64>; 3],
}

async fn measure(sides_: &Sides, s: &Settings) -> Result<Samples> {
    const ALL: [Side; 3] = [Side::Client, Side::Set, Side::Bare];
    for _ in 0..s.warmup_calls {
        for side in ALL {
            once(sides_, side).await?;
        }
    }
    let mut m = Samples {
        list: Default::default(),
        load: Default::default(),
    };
    for round in 0..s.rounds_calls {
        // The bare side first in every other round (ABBA, as the other rows), and ours
        // in turn.
        let order = match (sides(round)[0], round % 4 < 2) {
            (true, true) => [Side::Bare, Side::Client, Side::Set],
            (true, false) => [Side::Bare, Side::Set, Side::Client],
            (false, true) => [Side::Client, Side::Set, Side::Bare],
            (false, false) => [Side::Set, Side::Client, Side::Bare],
        };
        for side in order {
            for _ in 0..s.calls_per_round {
                let (list, load) = once(sides_, side).await?;
                m.list[side as usize].push(list);
                m.load[side as usize].push(load);
            }
        }
    }
    Ok(m)
}

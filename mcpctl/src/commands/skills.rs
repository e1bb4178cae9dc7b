//! `mcpctl skills [--server KEY]`: the skills the servers serve (the Skills extension),
//! listed without reading any file; `mcpctl skills show NAME`: one skill's files, read and
//! verified (the command itself is the user's approval), with their digests.

use mcp_connections::{HostAuthority, SkillInfo, SkillLoadError, SkillLoading, SkillReadSettings};
use rmcp::model::SkillResources;
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::error::{CliError, EXIT_FAILURE};
use crate::host::session::Session;
use crate::term::progress::plural;
use crate::term::style::Style;

/// Runs `skills`.
pub(crate) async fn run(
    session: &mut Session,
    global: &GlobalArgs,
    server: Option<&str>,
) -> Result<u8, CliError> {
    let (only, relevant, required_failed) = super::wait_relevant(session, global, server).await?;
    let skills: Vec<SkillInfo> = session
        .set
        .skills()
        .await
        .into_iter()
        .filter(|s| only.as_ref().is_none_or(|k| *k == s.server))
        .collect();
    warn_skill_drift(session, &relevant);
    if global.json {
        let items: Vec<Value> = skills.iter().map(|s| to_json(session, s)).collect();
        crate::term::render::out_json(&Value::Array(items));
    } else {
        crate::term::render::out(&human(&skills, Style::stdout()));
    }
    Ok(if required_failed { EXIT_FAILURE } else { 0 })
}

/// Says which skills of `servers` are held back since they changed, and how to accept
/// them, and which changes were only notices.
fn warn_skill_drift(session: &Session, servers: &[mcp_connections::ServerStatus]) {
    for status in servers {
        for notice in session.set.skill_notices(&status.key) {
            crate::term::render::warn(&format!(
                "skill `{}` of server `{}` changed since it was first seen: {} (not held back; pinned as it is now)",
                notice.skill.escape_debug(),
                status.key,
                notice.describe(),
            ));
        }
        for drift in session.set.skill_drift(&status.key) {
            crate::term::render::warn(&format!(
                "skill `{}` of server `{}` changed since it was first seen and is held back: {} (if you trust the change: mcpctl accept {} {})",
                drift.skill.escape_debug(),
                status.key,
                drift.describe(),
                status.key,
                drift.skill.escape_debug(),
            ));
        }
    }
}

/// A skill's files as listed: `[{uri, digest, size}]`, or `"dynamic"`.
fn files_json(skill: &SkillInfo) -> Value {
    match &skill.skill.resources {
        SkillResources::Files(files) => Value::Array(
            files
                .iter()
                .map(|f| json!({"uri": f.uri, "digest": f.digest, "size": f.size}))
                .collect(),
        ),
        _ => json!("dynamic"),
    }
}

fn to_json(session: &Session, skill: &SkillInfo) -> Value {
    let changes = skill.held.then(|| {
        session
            .set
            .skill_drift(&skill.server)
            .iter()
            .find(|d| d.uri == skill.skill.uri)
            .map(mcp_connections::SkillDrift::describe)
            .unwrap_or_default()
    });
    json!({
        "qualified_name": skill.qualified_name,
        "server": skill.server,
        "name": skill.name(),
        "description": skill.description(),
        "uri": skill.skill.uri,
        "files": files_json(skill),
        "held": skill.held,
        "changes": changes,
    })
}

fn file_count(skill: &SkillInfo) -> String {
    match &skill.skill.resources {
        SkillResources::Files(files) => files.len().to_string(),
        _ => "dynamic".to_owned(),
    }
}

fn human(skills: &[SkillInfo], s: Style) -> String {
    if skills.is_empty() {
        return "no skills\n".to_owned();
    }
    let safe = |t: &str| crate::term::render::terminal_safe(t).into_owned();
    let mut rows = vec![vec![
        "NAME".to_owned(),
        "SERVER".to_owned(),
        "FILES".to_owned(),
        "DESCRIPTION".to_owned(),
    ]];
    rows.extend(skills.iter().map(|k| {
        let name = if k.held {
            format!("{} (held: changed)", k.qualified_name)
        } else {
            k.qualified_name.clone()
        };
        vec![
            name,
            k.server.to_string(),
            file_count(k),
            safe(k.description()),
        ]
    }));
    let lines = crate::term::render::table_painted(&rows, |r, _, cell| {
        if r == 0 {
            s.bold(cell)
        } else {
            cell.to_owned()
        }
    });
    let mut text = lines.join("\n");
    text.push_str(&format!("\n\n{}\n", plural(skills.len(), "skill")));
    text
}

/// Runs `skills show NAME`: loads the skill (its files read and verified; asking is the
/// command itself) and prints its `SKILL.md` and its files with their digests.
pub(crate) async fn show(
    session: &mut Session,
    global: &GlobalArgs,
    name: &str,
) -> Result<u8, CliError> {
    super::wait_relevant(session, global, None).await?;
    // The user asked for this skill by name: that is the approval loading asks for.
    let authority = HostAuthority::clone(&session.set.authority());
    session
        .set
        .set_authority(authority.with_skill_loading(SkillLoading::Allow));
    let loaded = match session
        .set
        .load_skill(name, &SkillReadSettings::new())
        .await
    {
        Ok(loaded) => loaded,
        Err(e) => return Err(load_error(&e)),
    };
    let digests: Vec<(String, String, u64)> = match &loaded.skill.resources {
        SkillResources::Files(files) => files
            .iter()
            .map(|f| (f.uri.clone(), f.digest.clone(), f.size))
            .collect(),
        _ => Vec::new(),
    };
    let digest_of = |uri: &str| digests.iter().find(|(u, _, _)| u == uri);
    if global.json {
        let files: Vec<Value> = loaded
            .files
            .iter()
            .map(|f| {
                let (digest, size) = digest_of(&f.uri)
                    .map_or((None, f.bytes.len() as u64), |(_, d, s)| {
                        (Some(d.clone()), *s)
                    });
                json!({
                    "uri": f.uri,
                    "digest": digest,
                    "size": size,
                    "verified": f.verified,
                    "text": std::str::from_utf8(&f.bytes).ok(),
                })
            })
            .collect();
        crate::term::render::out_json(&json!({
            "qualified_name": name,
            "uri": loaded.skill.uri,
            "name": loaded.skill.name(),
            "description": loaded.skill.frontmatter.description,
            "files": files,
        }));
        return Ok(0);
    }
    let s = Style::stdout();
    let mut text = String::new();
    if let Some(md) = loaded.skill_md() {
        text.push_str(&crate::term::render::terminal_safe_text(md));
        if !md.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
    }
    let mut rows = vec![vec![
        "FILE".to_owned(),
        "SIZE".to_owned(),
        "DIGEST".to_owned(),
        "VERIFIED".to_owned(),
    ]];
    rows.extend(loaded.files.iter().map(|f| {
        let (digest, size) = digest_of(&f.uri).map_or_else(
            || ("-".to_owned(), f.bytes.len() as u64),
            |(_, d, s)| (d.clone(), *s),
        );
        vec![
            f.uri.clone(),
            size.to_string(),
            digest,
            if f.verified { "yes" } else { "no (dynamic)" }.to_owned(),
        ]
    }));
    let lines = crate::term::render::table_painted(&rows, |r, _, cell| {
        if r == 0 {
            s.bold(cell)
        } else {
            cell.to_owned()
        }
    });
    text.push_str(&lines.join("\n"));
    text.push('\n');
    crate::term::render::out(&text);
    Ok(0)
}

/// The CLI error of a skill that was not loaded.
fn load_error(e: &SkillLoadError) -> CliError {
    match e {
        SkillLoadError::UnknownSkill { .. } => CliError::usage(e.to_string())
            .with_hint("`mcpctl skills` lists the skills with their names"),
        SkillLoadError::Held { .. } => CliError::failure(e.to_string()),
        _ if e.is_verification_failure() => CliError::failure(e.to_string())
            .with_hint("the server served other bytes than its skill entry lists; nothing of the skill was shown"),
        _ => CliError::failure(e.to_string()),
    }
}

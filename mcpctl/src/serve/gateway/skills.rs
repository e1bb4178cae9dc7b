//! Skills (the Skills extension, `io.modelcontextprotocol/skills`) through the gateway:
//! every upstream server's skills in one `skills/list`, `skills/get` of one of them, and
//! `resources/read` of a skill's files, verified here before the bytes are passed on.
//!
//! - Names: each skill is shown under URIs that name its server
//!   ([`shared_uri::qualified`]: `mcpctl-server://docs/skill://pdf/SKILL.md`, its files
//!   likewise), so two servers' skills never collide; the skill's own name and folder
//!   layout are kept, so a client checks the entry as it would the server's.
//! - Listing reads no file: it is the connection set's listing
//!   ([`ConnectionSet::skills`](mcp_connections::ConnectionSet::skills)), pinned under the
//!   servers' `tool_drift` policy. A skill held back since it changed is not listed, and
//!   its files are not passed on until the change is accepted (`mcpctl accept`).
//! - Reads: a file of a listed skill is read through the set
//!   ([`ConnectionSet::load_skill`](mcp_connections::ConnectionSet::load_skill)), which
//!   reads only the files the entry lists and verifies each (size, digest, and the
//!   `SKILL.md` frontmatter); a file that fails is an error naming the server and the file,
//!   and no byte of it is passed on. The skill loaded is kept for the client's later reads
//!   of its other files while the server lists the same entry. The gateway's client is the host that asks its user,
//!   so the gateway's own set loads without asking. A `"dynamic"` skill's `SKILL.md` is
//!   checked against the entry's frontmatter; its other files have no digest to check and
//!   are passed through as any resource.
//! - Grants: a caller sees only the skills of servers it may use and cannot read or get
//!   the others (they answer as unknown).
//! - Cache hints: the listing depends on the caller's grants, so listings and entries are
//!   answered `cacheScope: private` (never shared across callers) with `ttlMs: 0` (the
//!   set keeps its upstream listings; a client asks again).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use mcp_connections::{LoadedSkill, SkillInfo, SkillReadSettings, skill_fingerprint};
use mcp_key::{Fingerprint, McpServerKey};
use rmcp::model::{
    CacheScope, GetSkillRequestParams, GetSkillResult, ListSkillsResult, ReadResourceResult,
    ResourceContents, Skill, SkillResources,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::Gateway;
use crate::serve::caller::Caller;
use crate::serve::shared_uri;

/// The skills this client's reads loaded, verified, by server and `SKILL.md` URI, with
/// the fingerprint of the entry they were verified against: a read of another file of the
/// same skill is answered from them while the server lists the same entry (a client reads
/// a skill's files one by one; each load reads them all).
#[derive(Default)]
pub(super) struct LoadedSkills(Mutex<HashMap<SkillKey, (Fingerprint, Arc<LoadedSkill>)>>);

/// A skill: its server and the URI of its `SKILL.md` there.
type SkillKey = (McpServerKey, String);

impl LoadedSkills {
    fn get(&self, info: &SkillInfo, fingerprint: &Fingerprint) -> Option<Arc<LoadedSkill>> {
        let loaded = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (pinned, skill) = loaded.get(&(info.server.clone(), info.skill.uri.clone()))?;
        (pinned == fingerprint).then(|| Arc::clone(skill))
    }

    fn keep(&self, info: &SkillInfo, fingerprint: Fingerprint, skill: Arc<LoadedSkill>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                (info.server.clone(), info.skill.uri.clone()),
                (fingerprint, skill),
            );
    }
}

/// The entry `skill` of `server` as the gateway shows it: every URI names its server.
fn shown(server: &McpServerKey, skill: &Skill) -> Skill {
    let mut skill = skill.clone();
    skill.uri = shared_uri::qualified(server, &skill.uri);
    if let SkillResources::Files(files) = &mut skill.resources {
        for file in files {
            file.uri = shared_uri::qualified(server, &file.uri);
        }
    }
    skill
}

/// Whether `uri` (the server's own) is a file of `skill`: its `SKILL.md`, a file its entry
/// lists, or, for a `"dynamic"` skill, anything within its folder.
fn is_file_of(skill: &Skill, uri: &str) -> bool {
    if skill.uri == uri {
        return true;
    }
    match &skill.resources {
        SkillResources::Files(files) => files.iter().any(|f| f.uri == uri),
        _ => skill
            .uri
            .strip_suffix(rmcp::model::SKILL_MD)
            .is_some_and(|root| uri.starts_with(root)),
    }
}

/// The error for a skill URI that names no skill the caller may use.
fn unknown_skill(uri: &str) -> McpError {
    McpError::invalid_params(
        format!(
            "no skill {uri:?} is available to you through this gateway; list the skills (skills/list) to see yours"
        ),
        None,
    )
}

impl Gateway {
    /// Whether an upstream server may serve skills: what `initialize` announces to the
    /// client. The servers get [`super::SETTLE_BOUND`] to start; the extension is left out
    /// only when then every server is ready and none announced it (one still starting,
    /// deferred or failed may serve skills later, and the gateway answers `skills/*`
    /// whatever it announced: with none while no server serves them).
    pub(super) async fn upstream_serves_skills(&self) -> bool {
        self.settle().await;
        let set = &self.inner.set;
        set.servers().any(|key| {
            set.server_info(key)
                .is_none_or(|info| info.capabilities.supports_skills())
        })
    }

    /// The skills `caller` may see: those of the servers it may use, not held back.
    async fn visible_skills(&self, caller: &Caller) -> Vec<SkillInfo> {
        let mut skills = self.inner.set.skills().await;
        skills.retain(|s| !s.held && caller.may_use_server(&s.server));
        skills
    }

    /// `skills/list`: every visible skill of every server, in one page.
    pub(super) async fn list_skills_for(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let caller = self.caller(context)?;
        self.settle_for(context).await;
        let skills = self
            .visible_skills(&caller)
            .await
            .iter()
            .map(|s| shown(&s.server, &s.skill))
            .collect();
        Ok(ListSkillsResult::with_all_items(skills)
            .with_ttl_ms(0)
            .with_cache_scope(CacheScope::Private))
    }

    /// `skills/get`: the entry of the skill at `request.uri` (a URI from the listing).
    pub(super) async fn get_skill_for(
        &self,
        request: &GetSkillRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let caller = self.caller(context)?;
        self.settle_for(context).await;
        let Some((server, uri)) = shared_uri::split(&request.uri) else {
            return Err(unknown_skill(&request.uri));
        };
        let found = self
            .visible_skills(&caller)
            .await
            .into_iter()
            .find(|s| s.server == server && s.skill.uri == uri);
        let Some(info) = found else {
            return Err(unknown_skill(&request.uri));
        };
        let mut result = GetSkillResult::new(shown(&info.server, &info.skill));
        result.ttl_ms = Some(0);
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    /// A `resources/read` of `uri` on `server` (shown to the client as `shown_uri`) when
    /// it is a file of one of the server's skills: the file as the set read and verified
    /// it, or the error naming the server and the file. `None` when it is no skill's file
    /// (or a `"dynamic"` skill's file other than its `SKILL.md`), to be read as any
    /// resource.
    pub(super) async fn read_skill_file(
        &self,
        server: &McpServerKey,
        uri: &str,
        shown_uri: &str,
    ) -> Option<Result<ReadResourceResult, McpError>> {
        let skills = self.inner.set.skills().await;
        let info = skills
            .into_iter()
            .find(|s| s.server == *server && is_file_of(&s.skill, uri))?;
        if !self.kept_caller().may_use_server(server) {
            return Some(Err(super::routing::not_listed(shown_uri)));
        }
        if matches!(info.skill.resources, SkillResources::Dynamic) && info.skill.uri != uri {
            return None;
        }
        let fingerprint = skill_fingerprint(&info.skill);
        let kept = (!info.held)
            .then(|| self.inner.loaded_skills.get(&info, &fingerprint))
            .flatten();
        let settings = SkillReadSettings::new().with_dynamic(true);
        let loaded = match kept {
            Some(loaded) => Ok(loaded),
            None => self
                .inner
                .set
                .load_skill(&info.qualified_name, &settings)
                .await
                .map(Arc::new),
        };
        let loaded = match loaded {
            Ok(loaded) => {
                self.inner
                    .loaded_skills
                    .keep(&info, fingerprint, Arc::clone(&loaded));
                loaded
            }
            Err(e) => {
                tracing::warn!(server = %server, file = uri, "skill file not passed on: {e}");
                return Some(Err(McpError::internal_error(
                    format!(
                        "mcpctl serve did not pass on {uri} of server `{server}`: {}",
                        mcp_key::error_chain(&e)
                    ),
                    None,
                )));
            }
        };
        let Some(file) = loaded.files.iter().find(|f| f.uri == uri).cloned() else {
            return Some(Err(McpError::internal_error(
                format!(
                    "server `{server}` gave no {uri} when skill `{}` was loaded",
                    info.skill.name()
                ),
                None,
            )));
        };
        let contents = match String::from_utf8(file.bytes) {
            Ok(text) => ResourceContents::text(text, shown_uri),
            Err(e) => ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
                shown_uri,
            ),
        };
        let contents = match file.mime_type {
            Some(mime) => contents.with_mime_type(mime),
            None => contents,
        };
        Some(Ok(ReadResourceResult::new(vec![contents])))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use rmcp::model::{SkillFrontmatter, SkillResource};

    use super::*;

    fn pdf() -> Skill {
        Skill::new(
            "skill://pdf/SKILL.md",
            SkillFrontmatter::new("pdf", "PDFs"),
            SkillResources::Files(vec![
                SkillResource::from_bytes("skill://pdf/SKILL.md", b"a"),
                SkillResource::from_bytes("skill://pdf/refs/FORMS.md", b"b"),
            ]),
        )
    }

    #[test]
    fn a_skill_is_shown_under_uris_naming_its_server_and_stays_a_valid_entry() {
        let skill = shown(&"docs".parse().unwrap(), &pdf());
        assert_eq!(skill.uri, "mcpctl-server://docs/skill://pdf/SKILL.md");
        let SkillResources::Files(files) = &skill.resources else {
            panic!("files expected");
        };
        assert_eq!(
            files[1].uri,
            "mcpctl-server://docs/skill://pdf/refs/FORMS.md"
        );
        assert_eq!(files[1].digest, rmcp::model::sha256_digest(b"b"));
        skill.validate().unwrap();
        rmcp::model::validate_skills(&[skill]).unwrap();
    }

    #[test]
    fn only_the_files_an_entry_lists_are_its_files_unless_it_is_dynamic() {
        let skill = pdf();
        assert!(is_file_of(&skill, "skill://pdf/SKILL.md"));
        assert!(is_file_of(&skill, "skill://pdf/refs/FORMS.md"));
        assert!(!is_file_of(&skill, "skill://pdf/refs/OTHER.md"));
        let mut dynamic = pdf();
        dynamic.resources = SkillResources::Dynamic;
        assert!(is_file_of(&dynamic, "skill://pdf/refs/OTHER.md"));
        assert!(!is_file_of(&dynamic, "skill://pdfx/SKILL.md"));
    }
}

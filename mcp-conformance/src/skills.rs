//! The skills scenarios (`sep-2640-client-*`): the client loads a skill the way a host
//! does. It connects announcing the Skills extension, lists the skills (which reads no
//! file), chooses one when the task needs one, and loads it: `SKILL.md` first, verified
//! (size, digest, frontmatter against the entry), then the other files, each verified.
//! A skill that fails verification is refused: nothing after the failing file is read,
//! and nothing unverified is used.

use std::sync::Arc;

use mcp_client::{
    Client, ClientSettings, DEFAULT_LIST_BYTE_BUDGET, DeclineRequests, HttpTarget,
    SKILLS_EXTENSION_ID, SkillReadSettings, Target,
};
use mcp_key::McpServerKey;

use crate::BoxError;

/// The scenarios of the Skills extension.
pub(crate) fn is_skills_scenario(name: &str) -> bool {
    name.starts_with("sep-2640-client-")
}

/// Whether the scenario's task needs a skill loaded: every one but `no-prefetch`, whose
/// host only lists (a host loads a skill when it is needed, never ahead).
fn needs_a_skill(name: &str) -> bool {
    name != "sep-2640-client-no-prefetch"
}

/// Lists the server's skills and, when the scenario needs one, loads the first listed.
pub(crate) async fn run(key: McpServerKey, url: &str, scenario: &str) -> Result<(), BoxError> {
    let settings =
        ClientSettings::new().with_extension(SKILLS_EXTENSION_ID, serde_json::Map::new());
    let client = Client::connect(
        key,
        Target::Http(HttpTarget::new(url)),
        settings,
        Arc::new(DeclineRequests),
    )
    .await?;
    let outcome = async {
        let listing = client.list_skills(DEFAULT_LIST_BYTE_BUDGET).await?;
        for skill in &listing.skills {
            tracing::info!(
                skill = %skill.uri,
                description = %skill.frontmatter.description,
                "skill listed"
            );
        }
        let chosen = listing.skills.first().filter(|_| needs_a_skill(scenario));
        let Some(skill) = chosen else {
            return Ok(());
        };
        match client.load_skill(skill, &SkillReadSettings::new()).await {
            Ok(loaded) => {
                tracing::info!(skill = %skill.uri, files = loaded.files.len(), "skill loaded, every file verified");
                Ok(())
            }
            // Refusing a tampered skill is the host's right answer, not a failure.
            Err(e) if e.is_verification_failure() => {
                tracing::warn!("skill refused: {e}");
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }
    .await;
    client.shutdown().await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_no_prefetch_lists_without_loading() {
        assert!(is_skills_scenario("sep-2640-client-verify-digest"));
        assert!(!is_skills_scenario("tools_call"));
        assert!(!needs_a_skill("sep-2640-client-no-prefetch"));
        for name in ["digest", "size", "frontmatter"] {
            assert!(needs_a_skill(&format!("sep-2640-client-verify-{name}")));
        }
    }
}

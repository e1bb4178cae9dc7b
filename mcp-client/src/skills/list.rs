//! `skills/list` (every page, within a byte budget) and `skills/get`.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{
    CacheScope, ClientRequest, GetSkillRequest, GetSkillRequestParams, ListSkillsRequest,
    PaginatedRequestParams, ServerResult, Skill,
};

use super::error::SkillError;
use super::{SkillEntry, SkillListing};
use crate::listing::paginate::{CursorCheck, PageError};
use crate::{Client, RequestError};

impl Client {
    /// Every skill the server lists (all pages, within `budget` bytes of JSON and the page
    /// limits), with the listing's cache hints. Reads no file.
    ///
    /// # Errors
    /// [`SkillError::Unsupported`] without asking when the server did not announce the
    /// extension; [`SkillError::Request`] when a page fails or the list is over its
    /// limits.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future abandons the page in flight.
    pub async fn list_skills(&self, budget: usize) -> Result<SkillListing, SkillError> {
        self.offers_skills()?;
        let listed = self
            .traced("skills/list", None, async {
                let pages = all_pages(self, budget).await;
                match pages {
                    Ok(pages) => Ok(pages),
                    Err(PageError::Service(e)) => Err(RequestError::of_service(self, e).await),
                    Err(other) => Err(RequestError::Protocol {
                        detail: other.to_string(),
                    }),
                }
            })
            .await
            .map_err(|source| SkillError::Request {
                server: self.server().clone(),
                what: "listing the skills".into(),
                source,
            })?;
        let (skills, warnings) = kept(listed.skills);
        for warning in &warnings {
            tracing::warn!(server = %self.server(), "{warning}");
        }
        Ok(SkillListing {
            skills,
            warnings,
            ttl: listed.ttl_ms.map(Duration::from_millis),
            private: listed.private,
        })
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`), with the
    /// answer's cache hints. Reads no file.
    ///
    /// # Errors
    /// [`SkillError::Unsupported`], [`SkillError::Request`] (a server that does not know
    /// the URI answers -32602), [`SkillError::InvalidEntry`] when the entry breaks the
    /// extension's rules or is another skill's.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, SkillError> {
        self.offers_skills()?;
        let answer = self
            .traced("skills/get", Some(uri), async {
                let request = ClientRequest::GetSkillRequest(GetSkillRequest::new(
                    GetSkillRequestParams::new(uri),
                ));
                match crate::transport::reissue::send_read(&self.peer, request).await {
                    Ok(ServerResult::GetSkillResult(r)) => Ok(r),
                    Ok(_) => Err(RequestError::Protocol {
                        detail: "the reply is not a skills/get result".to_owned(),
                    }),
                    Err(e) => Err(RequestError::of_service(self, e).await),
                }
            })
            .await
            .map_err(|source| SkillError::Request {
                server: self.server().clone(),
                what: format!("describing skill `{uri}`").into(),
                source,
            })?;
        let skill = answer.skill;
        let invalid = |detail: String| SkillError::InvalidEntry {
            server: self.server().clone(),
            skill: uri.into(),
            detail: detail.into(),
        };
        if skill.uri != uri {
            return Err(invalid(format!(
                "the answer describes `{}` instead",
                skill.uri
            )));
        }
        skill.validate().map_err(|e| invalid(e.to_string()))?;
        Ok(SkillEntry {
            skill,
            ttl: answer.ttl_ms.map(Duration::from_millis),
            private: answer.cache_scope == Some(CacheScope::Private),
        })
    }

    /// [`SkillError::Unsupported`] unless the server announced the skills extension.
    pub(crate) fn offers_skills(&self) -> Result<(), SkillError> {
        let offers = self
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_skills());
        if offers {
            Ok(())
        } else {
            Err(SkillError::Unsupported {
                server: self.server().clone(),
            })
        }
    }
}

/// Every page's skills and the pages' cache hints together.
struct Pages {
    skills: Vec<Skill>,
    ttl_ms: Option<u64>,
    private: bool,
}

async fn all_pages(client: &Client, budget: usize) -> Result<Pages, PageError> {
    let mut pages = Pages {
        skills: Vec::new(),
        ttl_ms: None,
        private: false,
    };
    let mut check = CursorCheck::new();
    let mut cursor: Option<String> = None;
    let mut bytes = 0usize;
    loop {
        let params = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let request = ClientRequest::ListSkillsRequest(ListSkillsRequest {
            params,
            ..Default::default()
        });
        let page = match crate::transport::reissue::send_read(&client.peer, request).await {
            Ok(ServerResult::ListSkillsResult(page)) => page,
            Ok(_) => return Err(PageError::UnexpectedResponse),
            Err(e) => return Err(PageError::Service(e)),
        };
        bytes = bytes.saturating_add(json_len(&page.skills));
        if bytes > budget {
            return Err(PageError::OverBudget(bytes, budget));
        }
        pages.ttl_ms = match (pages.ttl_ms, page.ttl_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        pages.private |= page.cache_scope == Some(CacheScope::Private);
        pages.skills.extend(page.skills);
        check.after_page(pages.skills.len(), page.next_cursor.as_deref())?;
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(pages),
        }
    }
}

/// How many bytes `value` takes as JSON, counted as it is written (nothing kept).
fn json_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(bytes.len());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}

/// The entries a host may use: each valid under the extension's rules, and each URI
/// listed once (an entry listed twice, as when split across pages, is dropped whole).
fn kept(skills: Vec<Skill>) -> (Vec<Skill>, Vec<String>) {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for skill in &skills {
        *count.entry(skill.uri.clone()).or_default() += 1;
    }
    let mut warnings = Vec::new();
    let mut kept = Vec::new();
    for skill in skills {
        let times = count.get(&skill.uri).copied().unwrap_or(0);
        if times > 1 {
            let warning = format!(
                "skill `{}` is listed {times} times; none of its entries is used",
                skill.uri
            );
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
            continue;
        }
        match skill.validate() {
            Ok(()) => kept.push(skill),
            Err(e) => warnings.push(format!("skill `{}` is left out: {e}", skill.uri)),
        }
    }
    (kept, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_counted_at_its_written_size() {
        let value =
            serde_json::json!([{"name": "pdf-processing", "description": "é \"quoted\"\n"}]);
        assert_eq!(json_len(&value), serde_json::to_vec(&value).unwrap().len());
        assert_eq!(json_len(&Vec::<Skill>::new()), 2);
    }
}

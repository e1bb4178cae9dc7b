//! Reading a skill's files on request, each verified against the skill's entry, and
//! listing its folders where the server offers directory reads.

use base64::Engine;
use rmcp::model::{
    ClientRequest, ReadResourceDirectoryRequest, ReadResourceDirectoryRequestParams,
    ReadResourceRequest, ReadResourceRequestParams, Resource, ResourceContents, SKILL_MD,
    ServerResult, Skill, SkillIntegrityError, SkillResource, SkillResources,
};

use super::error::SkillError;
use super::{LoadedSkill, SkillFile, SkillReadSettings, frontmatter};
use crate::listing::paginate::{CursorCheck, PageError};
use crate::{Client, RequestError};

/// What a read is checked against: an entry of the manifest, or nothing (dynamic).
enum Expected<'a> {
    Listed(&'a SkillResource),
    Dynamic,
}

impl Client {
    /// Reads file `uri` of `skill` (an entry from [`Client::list_skills`] or
    /// [`Client::get_skill`]) and verifies it: its size, then its digest, against the
    /// entry's, and for the skill's `SKILL.md` its frontmatter against the entry's, field
    /// by field. A URI the entry does not list is refused before any request.
    ///
    /// # Errors
    /// [`SkillError::NotListed`], [`SkillError::DynamicRefused`], [`SkillError::TooLarge`],
    /// [`SkillError::InvalidEntry`] before any request; [`SkillError::Request`] when the
    /// read fails; a verification failure ([`SkillError::is_verification_failure`]) when
    /// the bytes are not the entry's.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future abandons the read.
    pub async fn read_skill_file(
        &self,
        skill: &Skill,
        uri: &str,
        settings: &SkillReadSettings,
    ) -> Result<SkillFile, SkillError> {
        let expected = self.expected(skill, uri, settings)?;
        if let Expected::Listed(entry) = expected
            && entry.size > settings.max_bytes
        {
            return Err(self.too_large(skill, entry.size, settings.max_bytes));
        }
        self.read_verified(skill, uri, expected, settings).await
    }

    /// Loads `skill`: reads its `SKILL.md` and verifies it (size, digest, frontmatter),
    /// then every other file its entry lists, in order, each verified; stops at the first
    /// failure, having read nothing after it. A `"dynamic"` skill, when the settings
    /// allow it, loads its `SKILL.md` only (its frontmatter checked).
    ///
    /// # Errors
    /// As [`Client::read_skill_file`]; [`SkillError::TooLarge`] before any read when the
    /// listed sizes together exceed the settings' limit.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future abandons the read in flight.
    pub async fn load_skill(
        &self,
        skill: &Skill,
        settings: &SkillReadSettings,
    ) -> Result<LoadedSkill, SkillError> {
        let uris: Vec<&str> = match &skill.resources {
            SkillResources::Files(files) => {
                let total = files.iter().map(|f| f.size).fold(0u64, u64::saturating_add);
                if total > settings.max_bytes {
                    return Err(self.too_large(skill, total, settings.max_bytes));
                }
                std::iter::once(skill.uri.as_str())
                    .chain(
                        files
                            .iter()
                            .map(|f| f.uri.as_str())
                            .filter(|u| *u != skill.uri),
                    )
                    .collect()
            }
            _ => vec![skill.uri.as_str()],
        };
        // The entry is checked once for all its files (validating it costs about as much
        // as reading one small file).
        self.validated(skill)?;
        let mut files = Vec::with_capacity(uris.len());
        for uri in uris {
            let expected = self.expected_of_valid(skill, uri, settings)?;
            files.push(self.read_verified(skill, uri, expected, settings).await?);
        }
        Ok(LoadedSkill {
            skill: skill.clone(),
            files,
        })
    }

    /// The direct children of folder `uri` of `skill` (`resources/directory/read`, all
    /// pages): its files and folders (`mimeType: "inode/directory"`).
    ///
    /// # Errors
    /// [`SkillError::DirectoryUnsupported`] without asking when the server does not offer
    /// directory reads; [`SkillError::NotListed`] for a folder outside the skill's;
    /// [`SkillError::Request`] when a page fails.
    pub async fn read_skill_directory(
        &self,
        skill: &Skill,
        uri: &str,
    ) -> Result<Vec<Resource>, SkillError> {
        let offers = self
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_directory_read());
        if !offers {
            return Err(SkillError::DirectoryUnsupported {
                server: self.server().clone(),
                skill: skill.name().into(),
                directory: uri.into(),
            });
        }
        let root = skill
            .uri
            .strip_suffix(SKILL_MD)
            .unwrap_or(&skill.uri)
            .trim_end_matches('/');
        if uri.trim_end_matches('/') != root && !within(root, uri) {
            return Err(self.not_listed(skill, uri));
        }
        self.traced("resources/directory/read", Some(uri), async {
            let mut children = Vec::new();
            let mut check = CursorCheck::new();
            let mut cursor: Option<String> = None;
            loop {
                let mut params = ReadResourceDirectoryRequestParams::new(uri);
                if let Some(c) = cursor.take() {
                    params = params.with_cursor(c);
                }
                let request = ClientRequest::ReadResourceDirectoryRequest(
                    ReadResourceDirectoryRequest::new(params),
                );
                let page = match crate::transport::reissue::send_read(&self.peer, request).await {
                    Ok(ServerResult::ListResourcesResult(page)) => page,
                    Ok(_) => {
                        return Err(RequestError::Protocol {
                            detail: "the reply is not a resources/directory/read result".to_owned(),
                        });
                    }
                    Err(e) => return Err(RequestError::of_service(self, e).await),
                };
                children.extend(page.resources);
                if let Err(e) = check.after_page(children.len(), page.next_cursor.as_deref()) {
                    return Err(RequestError::Protocol {
                        detail: PageError::to_string(&e),
                    });
                }
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => return Ok(children),
                }
            }
        })
        .await
        .map_err(|source| SkillError::Request {
            server: self.server().clone(),
            what: format!("listing folder `{uri}` of skill `{}`", skill.name()).into(),
            source,
        })
    }

    /// What the read of `uri` is verified against, or why it is refused unsent.
    fn expected<'a>(
        &self,
        skill: &'a Skill,
        uri: &str,
        settings: &SkillReadSettings,
    ) -> Result<Expected<'a>, SkillError> {
        self.validated(skill)?;
        self.expected_of_valid(skill, uri, settings)
    }

    /// `Ok` when `skill`'s entry keeps the extension's rules.
    fn validated(&self, skill: &Skill) -> Result<(), SkillError> {
        skill.validate().map_err(|e| SkillError::InvalidEntry {
            server: self.server().clone(),
            skill: skill.uri.as_str().into(),
            detail: e.to_string().into(),
        })
    }

    /// [`Self::expected`] of a skill [`Self::validated`] already.
    fn expected_of_valid<'a>(
        &self,
        skill: &'a Skill,
        uri: &str,
        settings: &SkillReadSettings,
    ) -> Result<Expected<'a>, SkillError> {
        match &skill.resources {
            SkillResources::Files(files) => files
                .iter()
                .find(|f| f.uri == uri)
                .map(Expected::Listed)
                .ok_or_else(|| self.not_listed(skill, uri)),
            _ if !settings.allow_dynamic => Err(SkillError::DynamicRefused {
                server: self.server().clone(),
                skill: skill.name().into(),
            }),
            _ => {
                let root = skill.uri.strip_suffix(SKILL_MD).unwrap_or(&skill.uri);
                if uri == skill.uri || within(root.trim_end_matches('/'), uri) {
                    Ok(Expected::Dynamic)
                } else {
                    Err(self.not_listed(skill, uri))
                }
            }
        }
    }

    async fn read_verified(
        &self,
        skill: &Skill,
        uri: &str,
        expected: Expected<'_>,
        settings: &SkillReadSettings,
    ) -> Result<SkillFile, SkillError> {
        let server = || self.server().clone();
        let name = || Box::<str>::from(skill.name());
        let answer = self
            .traced("resources/read", Some(uri), async {
                let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
                    ReadResourceRequestParams::new(uri),
                ));
                match crate::transport::reissue::send_read(&self.peer, request).await {
                    Ok(ServerResult::ReadResourceResult(r)) => Ok(r),
                    Ok(_) => Err(RequestError::Protocol {
                        detail: "the reply is not a resources/read result".to_owned(),
                    }),
                    Err(e) => Err(RequestError::of_service(self, e).await),
                }
            })
            .await
            .map_err(|source| SkillError::Request {
                server: server(),
                what: format!("reading `{uri}` of skill `{}`", skill.name()).into(),
                source,
            })?;
        let contents = |detail: String| SkillError::Contents {
            server: server(),
            skill: name(),
            file: uri.into(),
            detail: detail.into(),
        };
        let [content] = answer.contents.as_slice() else {
            return Err(contents(format!(
                "{} contents instead of one",
                answer.contents.len()
            )));
        };
        let (bytes, mime_type) = match content {
            ResourceContents::TextResourceContents {
                uri: got,
                mime_type,
                text,
                ..
            } if got == uri => (text.as_bytes().to_vec(), mime_type.clone()),
            ResourceContents::BlobResourceContents {
                uri: got,
                mime_type,
                blob,
                ..
            } if got == uri => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_err(|e| contents(format!("the blob is not base64 ({e})")))?;
                (bytes, mime_type.clone())
            }
            ResourceContents::TextResourceContents { uri: got, .. }
            | ResourceContents::BlobResourceContents { uri: got, .. } => {
                return Err(contents(format!("the contents are of `{got}`")));
            }
            _ => return Err(contents("the contents are of an unknown kind".to_owned())),
        };
        let verified = match expected {
            Expected::Listed(entry) => {
                entry.verify(&bytes).map_err(|e| match e {
                    SkillIntegrityError::Size {
                        expected, actual, ..
                    } => SkillError::SizeMismatch {
                        server: server(),
                        skill: name(),
                        file: uri.into(),
                        expected,
                        actual,
                    },
                    SkillIntegrityError::Digest {
                        expected, actual, ..
                    } => SkillError::DigestMismatch {
                        server: server(),
                        skill: name(),
                        file: uri.into(),
                        expected: expected.into(),
                        actual: actual.into(),
                    },
                    other => contents(other.to_string()),
                })?;
                true
            }
            Expected::Dynamic => {
                let length = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
                if length > settings.max_bytes {
                    return Err(self.too_large(skill, length, settings.max_bytes));
                }
                false
            }
        };
        if uri == skill.uri {
            let mismatch =
                |field: Option<String>, detail: String| SkillError::FrontmatterMismatch {
                    server: server(),
                    skill: name(),
                    file: uri.into(),
                    field: field.map(Into::into),
                    detail: detail.into(),
                };
            let text = std::str::from_utf8(&bytes)
                .map_err(|_| mismatch(None, "is not UTF-8".to_owned()))?;
            let found = frontmatter::parse(text).map_err(|why| mismatch(None, why))?;
            if let Some((field, detail)) = frontmatter::first_difference(&skill.frontmatter, &found)
            {
                return Err(mismatch(Some(field), detail));
            }
        }
        Ok(SkillFile {
            uri: uri.to_owned(),
            bytes,
            mime_type,
            verified,
        })
    }

    fn not_listed(&self, skill: &Skill, uri: &str) -> SkillError {
        SkillError::NotListed {
            server: self.server().clone(),
            skill: skill.name().into(),
            file: uri.into(),
        }
    }

    fn too_large(&self, skill: &Skill, bytes: u64, limit: u64) -> SkillError {
        SkillError::TooLarge {
            server: self.server().clone(),
            skill: skill.name().into(),
            bytes,
            limit,
        }
    }
}

/// Whether `uri` names something below folder `root` (no trailing `/`): no dot segments,
/// no query or fragment.
fn within(root: &str, uri: &str) -> bool {
    let Some(rest) = uri.strip_prefix(root).and_then(|r| r.strip_prefix('/')) else {
        return false;
    };
    !rest.is_empty()
        && !rest.contains(['?', '#'])
        && rest
            .trim_end_matches('/')
            .split('/')
            .all(|s| !matches!(s, "" | "." | ".."))
        && !rest.to_ascii_lowercase().contains("%2e")
}

#[cfg(test)]
mod tests {
    use super::within;

    #[test]
    fn only_uris_below_the_folder_are_within() {
        let root = "skill://pdf";
        assert!(within(root, "skill://pdf/refs/FORMS.md"));
        assert!(within(root, "skill://pdf/refs/"));
        for outside in [
            "skill://pdf",
            "skill://pdf/",
            "skill://pdf-other/a.md",
            "skill://pdf/../other/SKILL.md",
            "skill://pdf/refs/%2E%2E/x",
            "skill://pdf/a.md?x=1",
            "skill://pdf//a.md",
            "skill://other/a.md",
        ] {
            assert!(!within(root, outside), "{outside}");
        }
    }
}

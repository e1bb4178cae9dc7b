//! Serving a scenario's skills: the extension in the capabilities, `skills/list` (paged,
//! with the scenario's cache hints), `skills/get`, `resources/read` of the skills' files
//! and `resources/directory/read`, each with the skills' faults applied.

use std::collections::BTreeSet;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CacheScope, GetSkillResult, ListSkillsResult, ReadResourceDirectoryResult, ReadResourceResult,
    SKILLS_EXTENSION_ID, Skill, SkillFrontmatter, SkillResource, SkillResources, sha256_digest,
};
use serde_json::{Map, Value, json};

use super::{SkillFault, SkillFileSpec, SkillSpec};
use crate::{Scenario, wire};

/// Adds the skills extension (and `resources`, which skills ride on) to the capabilities
/// of a scenario that has skills.
pub(crate) fn advertise(scenario: &Scenario, capabilities: &mut Map<String, Value>) {
    if scenario.skills.is_empty() {
        return;
    }
    capabilities
        .entry("resources")
        .or_insert_with(|| json!({"listChanged": false, "subscribe": false}));
    let settings = if scenario.skill_options.directory_read {
        json!({"directoryRead": true})
    } else {
        json!({})
    };
    let extensions = capabilities
        .entry("extensions")
        .or_insert_with(|| json!({}));
    if let Value::Object(extensions) = extensions {
        extensions.insert(SKILLS_EXTENSION_ID.to_owned(), settings);
    }
}

/// One page of `skills/list`: pages of [`crate::SkillOptions::page_size`] entries, a
/// [`SkillFault::SplitAcrossPages`] entry's halves on two pages; the cursor is the page's
/// number.
pub(crate) fn list(
    scenario: &Scenario,
    cursor: Option<&str>,
) -> Result<ListSkillsResult, McpError> {
    let pages = pages(scenario);
    let index = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|i| *i < pages.len())
            .ok_or_else(|| {
                McpError::invalid_params(format!("fake server: unknown cursor {c:?}"), None)
            })?,
    };
    let mut result =
        ListSkillsResult::with_all_items(pages.get(index).cloned().unwrap_or_default());
    result.next_cursor = (index + 1 < pages.len()).then(|| (index + 1).to_string());
    if let Some(hints) = &scenario.cache_hints {
        result.ttl_ms = hints.ttl_ms;
        result.cache_scope = cache_scope(hints.scope.as_deref());
    }
    Ok(result)
}

/// `skills/get` of the skill whose `SKILL.md` is at `uri` (its whole entry, faults but
/// the split applied); -32602 for any other URI.
pub(crate) fn get(scenario: &Scenario, uri: &str) -> Result<GetSkillResult, McpError> {
    let spec = scenario
        .skills
        .iter()
        .find(|s| s.uri() == uri)
        .ok_or_else(|| McpError::invalid_params(format!("unknown skill {uri}"), None))?;
    let mut result = GetSkillResult::new(entry(spec, &spec.served_files()));
    if let Some(hints) = &scenario.cache_hints {
        result.ttl_ms = hints.ttl_ms;
        result.cache_scope = cache_scope(hints.scope.as_deref());
    }
    Ok(result)
}

/// `resources/read` of a skill's file, or `None` when `uri` is no skill's file.
pub(crate) fn read(scenario: &Scenario, uri: &str) -> Option<Result<ReadResourceResult, McpError>> {
    let (spec, path) = scenario.skills.iter().find_map(|s| {
        uri.strip_prefix(&format!("skill://{}/", s.name))
            .map(|path| (s, path))
    })?;
    let not_served = spec
        .faults
        .iter()
        .any(|f| matches!(f, SkillFault::NotServed { path: p } if p == path));
    let file = spec.served_files().into_iter().find(|f| f.path == path);
    let file = match file {
        Some(file) if !not_served => file,
        _ => {
            return Some(Err(McpError::resource_not_found(
                format!("fake server has no skill file {uri:?}"),
                None,
            )));
        }
    };
    let contents = match std::str::from_utf8(&file.bytes) {
        Ok(text) => json!({"uri": uri, "mimeType": mime_type(path), "text": text}),
        Err(_) => json!({
            "uri": uri,
            "mimeType": "application/octet-stream",
            "blob": base64(&file.bytes),
        }),
    };
    Some(wire::from_wire(
        "skill file",
        json!({ "contents": [contents] }),
    ))
}

/// `resources/directory/read` of a skill's folder or a folder below it: its files (with
/// sizes) and folders (`inode/directory`), in path order.
pub(crate) fn read_directory(
    scenario: &Scenario,
    uri: &str,
) -> Result<ReadResourceDirectoryResult, McpError> {
    let not_a_directory =
        || McpError::invalid_params(format!("fake server: not a directory: {uri}"), None);
    let uri = uri.trim_end_matches('/');
    let (spec, dir) = scenario
        .skills
        .iter()
        .find_map(|s| {
            let root = format!("skill://{}", s.name);
            match uri.strip_prefix(&root) {
                Some("") => Some((s, String::new())),
                Some(rest) => rest.strip_prefix('/').map(|d| (s, format!("{d}/"))),
                None => None,
            }
        })
        .ok_or_else(not_a_directory)?;
    let files = spec.served_files();
    let mut folders = BTreeSet::new();
    let mut children = Vec::new();
    let mut found = dir.is_empty();
    for file in &files {
        let Some(rest) = file.path.strip_prefix(&dir) else {
            continue;
        };
        found = true;
        match rest.split_once('/') {
            Some((folder, _)) => {
                folders.insert(folder.to_owned());
            }
            None => children.push(json!({
                "uri": format!("{uri}/{rest}"),
                "name": rest,
                "mimeType": mime_type(rest),
                "size": file.bytes.len(),
            })),
        }
    }
    if !found {
        return Err(not_a_directory());
    }
    for folder in folders {
        children.push(json!({
            "uri": format!("{uri}/{folder}"),
            "name": folder,
            "mimeType": rmcp::model::DIRECTORY_MIME_TYPE,
        }));
    }
    children.sort_by(|a, b| a["uri"].as_str().cmp(&b["uri"].as_str()));
    wire::from_wire("skill directory", json!({ "resources": children }))
}

/// The pages of `skills/list`.
fn pages(scenario: &Scenario) -> Vec<Vec<Skill>> {
    let size = scenario
        .skill_options
        .page_size
        .filter(|s| *s > 0)
        .unwrap_or(usize::MAX);
    let mut pages = Vec::new();
    let mut page = Vec::new();
    let push = |page: &mut Vec<Skill>, pages: &mut Vec<Vec<Skill>>, skill: Skill| {
        if page.len() >= size {
            pages.push(std::mem::take(page));
        }
        page.push(skill);
    };
    for spec in &scenario.skills {
        let files = spec.served_files();
        if spec
            .faults
            .iter()
            .any(|f| matches!(f, SkillFault::SplitAcrossPages))
        {
            // SKILL.md in both halves (each entry must list it), the others divided.
            let (skill_md, others) = files.split_at(1);
            let (first, second) = others.split_at(others.len() / 2);
            push(
                &mut page,
                &mut pages,
                entry(spec, &[skill_md, first].concat()),
            );
            pages.push(std::mem::take(&mut page));
            push(
                &mut page,
                &mut pages,
                entry(spec, &[skill_md, second].concat()),
            );
        } else {
            push(&mut page, &mut pages, entry(spec, &files));
        }
    }
    if !page.is_empty() || pages.is_empty() {
        pages.push(page);
    }
    pages
}

/// The entry of `spec` listing `files` (its faults applied).
fn entry(spec: &SkillSpec, files: &[SkillFileSpec]) -> Skill {
    let mut frontmatter = SkillFrontmatter::new(spec.name.clone(), spec.served_description());
    for (key, value) in &spec.frontmatter {
        frontmatter = frontmatter.with_field(key.clone(), value.clone());
    }
    let mut resources = Vec::new();
    for file in files {
        let mut resource = SkillResource::from_bytes(spec.file_uri(&file.path), &file.bytes);
        for fault in &spec.faults {
            match fault {
                SkillFault::WrongDigest { path } if *path == file.path => {
                    let mut other = file.bytes.clone();
                    other.push(b'!');
                    resource.digest = sha256_digest(&other);
                }
                SkillFault::WrongSize { path } if *path == file.path => resource.size += 1,
                _ => {}
            }
        }
        if spec
            .faults
            .iter()
            .any(|f| matches!(f, SkillFault::Unlisted { path } if *path == file.path))
        {
            continue;
        }
        resources.push(resource);
    }
    for fault in &spec.faults {
        if let SkillFault::FrontmatterMismatch { field, value } = fault {
            match (field.as_str(), value) {
                ("name", Value::String(name)) => frontmatter.name = name.clone(),
                ("description", Value::String(text)) => frontmatter.description = text.clone(),
                _ => {
                    frontmatter.extra.insert(field.clone(), value.clone());
                }
            }
        }
    }
    let resources = if spec.dynamic {
        SkillResources::Dynamic
    } else {
        SkillResources::Files(resources)
    };
    Skill::new(spec.uri(), frontmatter, resources)
}

fn cache_scope(scope: Option<&str>) -> Option<CacheScope> {
    serde_json::from_value(json!(scope?)).ok()
}

fn mime_type(path: &str) -> &'static str {
    if path.ends_with(".md") {
        "text/markdown"
    } else {
        "text/plain"
    }
}

/// Standard base64 with padding, for binary files served as `blob`.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SkillOptions;

    fn skills() -> Scenario {
        Scenario::new("skills")
            .with_skill(
                SkillSpec::new("alpha", "First")
                    .with_file("a.md", "a")
                    .with_file("refs/b.md", "b"),
            )
            .with_skill(SkillSpec::new("beta", "Second"))
    }

    #[test]
    fn base64_pads_like_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xff, 0xfe, 0x00, 0x01]), "//4AAQ==");
    }

    #[test]
    fn every_file_is_listed_with_its_digest_and_size() {
        let page = list(&skills(), None).unwrap();
        assert_eq!(page.next_cursor, None);
        assert_eq!(page.skills.len(), 2);
        let SkillResources::Files(files) = &page.skills[0].resources else {
            panic!("files expected");
        };
        let uris: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://alpha/SKILL.md",
                "skill://alpha/a.md",
                "skill://alpha/refs/b.md"
            ]
        );
        assert_eq!(
            files[1],
            SkillResource::from_bytes("skill://alpha/a.md", b"a")
        );
        assert!(rmcp::model::validate_skills(&page.skills).is_ok());
    }

    #[test]
    fn a_split_entry_lands_on_two_pages() {
        let mut scenario = skills();
        scenario.skills[0].faults.push(SkillFault::SplitAcrossPages);
        let first = list(&scenario, None).unwrap();
        assert_eq!(first.skills.len(), 1);
        assert_eq!(first.next_cursor.as_deref(), Some("1"));
        let second = list(&scenario, Some("1")).unwrap();
        assert_eq!(second.skills[0].uri, "skill://alpha/SKILL.md");
        assert_eq!(second.skills[1].uri, "skill://beta/SKILL.md");
        assert_eq!(second.next_cursor, None);
    }

    #[test]
    fn pages_hold_the_page_size() {
        let scenario = skills().with_skill_options(SkillOptions::new().with_page_size(1));
        assert_eq!(
            list(&scenario, None).unwrap().next_cursor.as_deref(),
            Some("1")
        );
        assert_eq!(list(&scenario, Some("1")).unwrap().next_cursor, None);
        assert!(list(&scenario, Some("2")).is_err());
    }

    #[test]
    fn directories_list_files_and_folders() {
        let listed = read_directory(&skills(), "skill://alpha").unwrap();
        let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://alpha/SKILL.md",
                "skill://alpha/a.md",
                "skill://alpha/refs"
            ]
        );
        assert!(listed.resources[2].is_directory());
        let refs = read_directory(&skills(), "skill://alpha/refs/").unwrap();
        assert_eq!(refs.resources[0].uri, "skill://alpha/refs/b.md");
        assert!(read_directory(&skills(), "skill://alpha/nothing").is_err());
        assert!(read_directory(&skills(), "skill://gamma").is_err());
    }

    #[test]
    fn the_written_skill_md_changes_with_the_revision() {
        let spec = SkillSpec::new("alpha", "First").with_body("Body.");
        let md = |s: &SkillSpec| String::from_utf8(s.served_files()[0].bytes.clone()).unwrap();
        assert_eq!(
            md(&spec),
            "---\nname: \"alpha\"\ndescription: \"First\"\n---\n\nBody.\n"
        );
        let changed = spec.with_revision(2);
        assert!(md(&changed).contains("description: \"First (revision 2)\""));
        assert!(md(&changed).ends_with("Revision 2.\n"));
    }
}

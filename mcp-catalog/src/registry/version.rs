//! Exact versions: what the registry accepts as a pin, and OCI image references.

/// Why `version` is not one exact version, or `None` when it is. The registry rejects
/// `latest` and ranges (`^1.2.3`, `~1.2.3`, `>=1.2.3`, `1.x`, `1.*`); so does this crate.
pub(crate) fn not_exact(version: &str) -> Option<&'static str> {
    let version = version.trim();
    if version.is_empty() {
        return Some("is empty");
    }
    if version.eq_ignore_ascii_case("latest") {
        return Some("is `latest`, which names whatever is newest when it runs");
    }
    if version.starts_with(['^', '~', '>', '<', '=', '!'])
        || version.contains(['*', ' ', ',', '|'])
        || version
            .split(['.', '-', '+'])
            .any(|part| part.eq_ignore_ascii_case("x"))
    {
        return Some("is a range, not one version");
    }
    None
}

/// An OCI image reference split into its parts: `[registry/]repository[:tag][@digest]`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ImageRef<'a> {
    pub(crate) repository: &'a str,
    pub(crate) tag: Option<&'a str>,
    pub(crate) digest: Option<&'a str>,
}

impl<'a> ImageRef<'a> {
    pub(crate) fn parse(reference: &'a str) -> Self {
        let (rest, digest) = match reference.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest)),
            None => (reference, None),
        };
        // A `:` after the last `/` starts the tag; one before it is a registry's port.
        let last_slash = rest.rfind('/').map_or(0, |at| at + 1);
        let (repository, tag) = match rest[last_slash..].rfind(':') {
            Some(at) => (&rest[..last_slash + at], Some(&rest[last_slash + at + 1..])),
            None => (rest, None),
        };
        Self {
            repository,
            tag,
            digest,
        }
    }
}

/// Whether `digest` is `sha256:` and 64 lowercase hex digits (or sha512 and 128).
pub(crate) fn is_image_digest(digest: &str) -> bool {
    let hex = |text: &str, len: usize| {
        text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    match digest.split_once(':') {
        Some(("sha256", value)) => hex(value, 64),
        Some(("sha512", value)) => hex(value, 128),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_versions_and_ranges() {
        for exact in [
            "1.0.2",
            "0.4.0-beta",
            "2.1.0-alpha+build.5",
            "2024.12.1",
            "v1",
        ] {
            assert_eq!(not_exact(exact), None, "{exact}");
        }
        for range in [
            "",
            "latest",
            "LATEST",
            "^1.2.3",
            "~1.2.3",
            ">=1.2.3",
            "1.x",
            "1.*",
            "1.2.X",
            "*",
            "1 - 2",
            "<2",
            "==1.0",
            "~=1.0",
            "1.0 || 2.0",
        ] {
            assert!(not_exact(range).is_some(), "{range}");
        }
    }

    #[test]
    fn image_references() {
        let parse = ImageRef::parse;
        assert_eq!(
            parse("docker.io/mcp/filesystem:1.0.2"),
            ImageRef {
                repository: "docker.io/mcp/filesystem",
                tag: Some("1.0.2"),
                digest: None
            }
        );
        assert_eq!(
            parse("localhost:5000/owner/repo"),
            ImageRef {
                repository: "localhost:5000/owner/repo",
                tag: None,
                digest: None
            }
        );
        assert_eq!(
            parse("owner/repo:v1@sha256:abc"),
            ImageRef {
                repository: "owner/repo",
                tag: Some("v1"),
                digest: Some("sha256:abc")
            }
        );
        assert!(is_image_digest(&format!("sha256:{}", "a".repeat(64))));
        assert!(!is_image_digest(&format!("sha256:{}", "A".repeat(64))));
        assert!(!is_image_digest("sha256:abc"));
    }
}

//! [`RegistryClient`]: the registry's read endpoints over HTTPS, with timeouts, bounded
//! bodies and cached answers.

use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::{FileSha256, McpbBundle, RegistryServer};
use serde_json::Value;
use url::Url;

use crate::answer::{EntryStatus, ServerSummary};
use crate::cache::AnswerCache;
use crate::error::RegistryError;

/// The official MCP Registry.
pub const DEFAULT_REGISTRY_URL: &str = "https://registry.modelcontextprotocol.io";
/// How long one request (connection, answer and body) may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long an answer is kept and reused.
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(300);
/// The largest answer read from the API (a page of servers, one `server.json`).
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;
/// The largest `mcpb` bundle downloaded.
pub const MAX_BUNDLE_BYTES: usize = 256 * 1024 * 1024;
/// How many pages a search follows at most.
pub const MAX_SEARCH_PAGES: usize = 10;
/// The largest page asked for (the registry's maximum `limit`).
pub const MAX_PAGE_LIMIT: usize = 100;

/// Where the registry is and how patiently to ask it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RegistryOptions {
    base_url: String,
    timeout: Duration,
    cache_ttl: Duration,
}

impl Default for RegistryOptions {
    /// The official registry ([`DEFAULT_REGISTRY_URL`]).
    fn default() -> Self {
        Self::new(DEFAULT_REGISTRY_URL)
    }
}

impl RegistryOptions {
    /// A registry at `base_url` (an organisation's subregistry, or the official one),
    /// with [`DEFAULT_TIMEOUT`] and [`DEFAULT_CACHE_TTL`].
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            timeout: DEFAULT_TIMEOUT,
            cache_ttl: DEFAULT_CACHE_TTL,
        }
    }

    /// With a timeout per request.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// With answers kept for `ttl` (zero keeps nothing).
    #[must_use]
    pub fn with_cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    /// The base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }
}

/// A `server.json` fetched from the registry and validated.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FetchedServer {
    /// The document, ready for [`RegistryServer::install_plan`].
    pub server: RegistryServer,
    /// Its status in the registry (a deprecated version says so).
    pub summary: ServerSummary,
    /// The URL it was read from (the origin of its errors' locations).
    pub url: String,
}

/// A client of one registry. Cheap to share behind an `Arc`; answers are cached per URL.
///
/// Deleted versions are never offered: searches and version lists leave them out and
/// fetching one is [`RegistryError::Deleted`]. Deprecated versions are returned with
/// [`EntryStatus::Deprecated`] for the host to show.
#[derive(Debug)]
pub struct RegistryClient {
    base: Url,
    http: reqwest::Client,
    timeout: Duration,
    cache: AnswerCache,
}

impl RegistryClient {
    /// A client for `options`' registry.
    ///
    /// # Errors
    /// [`RegistryError::InvalidUrl`] when the base URL is not `https://` (or `http://` to a
    /// loopback address), and [`RegistryError::Unreachable`] when the HTTP client cannot be
    /// built.
    pub fn new(options: RegistryOptions) -> Result<Self, RegistryError> {
        let base = checked_url(&options.base_url)?;
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::limited(5))
            .user_agent(concat!("mcp-registry/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|source| RegistryError::Unreachable {
                url: options.base_url.clone(),
                source,
            })?;
        Ok(Self {
            base,
            http,
            timeout: options.timeout,
            cache: AnswerCache::new(options.cache_ttl),
        })
    }

    /// The registry's base URL.
    pub fn base_url(&self) -> &str {
        self.base.as_str()
    }

    /// Servers whose name contains `query`, their latest version each, at most `limit`
    /// (pages followed up to [`MAX_SEARCH_PAGES`]); deleted ones left out.
    ///
    /// # Errors
    /// A [`RegistryError`] naming the URL that failed.
    ///
    /// # Cancel safety
    /// Cancel-safe: nothing is kept from an unfinished request.
    pub async fn search(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<ServerSummary>, RegistryError> {
        let mut found = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_SEARCH_PAGES {
            let mut url = self.api(&["servers"]);
            {
                let mut query_pairs = url.query_pairs_mut();
                query_pairs
                    .append_pair("search", query)
                    .append_pair("version", "latest")
                    .append_pair("limit", &limit.clamp(1, MAX_PAGE_LIMIT).to_string());
                if let Some(cursor) = &cursor {
                    query_pairs.append_pair("cursor", cursor);
                }
            }
            let page = self
                .get_json(&url, || format!("servers matching `{query}`"))
                .await?;
            found.extend(summaries(&url, &page)?);
            cursor = page
                .get("metadata")
                .and_then(|m| m.get("nextCursor"))
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_owned);
            if found.len() >= limit || cursor.is_none() {
                break;
            }
        }
        found.truncate(limit);
        Ok(found)
    }

    /// Every version of `name` the registry offers, newest first; deleted ones left out.
    ///
    /// # Errors
    /// [`RegistryError::InvalidName`], [`RegistryError::NotFound`] for a server the
    /// registry does not have, or another [`RegistryError`] naming the URL.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn versions(&self, name: &str) -> Result<Vec<ServerSummary>, RegistryError> {
        check_name(name)?;
        let url = self.api(&["servers", name, "versions"]);
        let list = self.get_json(&url, || format!("server {name}")).await?;
        summaries(&url, &list)
    }

    /// The `server.json` of `name` at `version` (`None`: the latest), validated.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`], [`RegistryError::Deleted`],
    /// [`RegistryError::InvalidDocument`] (each problem at `<url>:line:column`),
    /// [`RegistryError::BadAnswer`] when the answer is about another server or version, or
    /// another [`RegistryError`] naming the URL.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn fetch(
        &self,
        name: &str,
        version: Option<&str>,
    ) -> Result<FetchedServer, RegistryError> {
        check_name(name)?;
        let url = self.api(&["servers", name, "versions", version.unwrap_or("latest")]);
        let what = || match version {
            Some(version) => format!("version {version} of {name}"),
            None => format!("server {name}"),
        };
        let text = self.get_text(&url, what).await?;
        let shown = url.to_string();
        let server = RegistryServer::from_json_str(&text, &shown).map_err(|source| {
            RegistryError::InvalidDocument {
                name: name.to_owned(),
                url: shown.clone(),
                source,
            }
        })?;
        let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let summary = ServerSummary::from_response(&answer)
            .ok_or_else(|| bad(&url, "it has no `server` with a name and version"))?;
        if summary.name != name || version.is_some_and(|v| v != summary.version) {
            return Err(bad(
                &url,
                &format!(
                    "it describes {} {}, not what was asked for",
                    summary.name, summary.version
                ),
            ));
        }
        if summary.status == EntryStatus::Deleted {
            return Err(RegistryError::Deleted {
                name: summary.name,
                version: summary.version,
                message: summary.status_message,
            });
        }
        Ok(FetchedServer {
            server,
            summary,
            url: shown,
        })
    }

    /// Downloads `bundle` and checks its bytes against its `fileSha256`
    /// ([`RegistryClient::download_checked`]).
    ///
    /// # Errors
    /// As [`RegistryClient::download_checked`].
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn download_bundle(&self, bundle: &McpbBundle) -> Result<Vec<u8>, RegistryError> {
        self.download_checked(bundle.url(), bundle.sha256()).await
    }

    /// Downloads `url` (at most [`MAX_BUNDLE_BYTES`]) and returns its bytes only when they
    /// hash to `sha256`. Never cached.
    ///
    /// # Errors
    /// [`RegistryError::BundleMismatch`] when the bytes differ,
    /// [`RegistryError::InvalidUrl`] for a URL that is not `https://` (or loopback), or
    /// another [`RegistryError`] naming the URL.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn download_checked(
        &self,
        url: &str,
        sha256: &FileSha256,
    ) -> Result<Vec<u8>, RegistryError> {
        let checked = checked_url(url)?;
        let bytes = self
            .get_bytes(&checked, MAX_BUNDLE_BYTES, || format!("file {url}"))
            .await?;
        let actual = FileSha256::of(&bytes);
        if actual != *sha256 {
            return Err(RegistryError::BundleMismatch {
                url: url.to_owned(),
                expected: sha256.to_string(),
                actual: actual.to_string(),
            });
        }
        Ok(bytes)
    }

    /// `<base>/v0.1/<segments…>`, each segment URL-encoded (`/` in a name as `%2F`).
    fn api(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().push("v0.1").extend(segments);
        }
        url
    }

    async fn get_json(&self, url: &Url, what: impl Fn() -> String) -> Result<Value, RegistryError> {
        let text = self.get_text(url, what).await?;
        serde_json::from_str(&text).map_err(|e| bad(url, &format!("invalid JSON ({e})")))
    }

    async fn get_text(
        &self,
        url: &Url,
        what: impl Fn() -> String,
    ) -> Result<Arc<String>, RegistryError> {
        self.cache
            .get_or_fetch(url.as_str(), async {
                let bytes = self.get_bytes(url, MAX_ANSWER_BYTES, what).await?;
                String::from_utf8(bytes).map_err(|_| bad(url, "it is not UTF-8 text"))
            })
            .await
    }

    async fn get_bytes(
        &self,
        url: &Url,
        max: usize,
        what: impl Fn() -> String,
    ) -> Result<Vec<u8>, RegistryError> {
        let shown = url.to_string();
        let failed = |source: reqwest::Error| {
            if source.is_timeout() {
                RegistryError::Timeout {
                    url: shown.clone(),
                    seconds: self.timeout.as_secs_f64(),
                }
            } else {
                RegistryError::Unreachable {
                    url: shown.clone(),
                    source,
                }
            }
        };
        let mut response = self
            .http
            .get(url.clone())
            .header("accept", "application/json")
            .timeout(self.timeout)
            .send()
            .await
            .map_err(failed)?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > max {
                return Err(bad(url, &format!("it is larger than {max} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(RegistryError::NotFound {
                what: what(),
                url: shown,
            });
        }
        if !status.is_success() {
            let message = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned));
            return Err(RegistryError::Status {
                url: shown,
                status: status.as_u16(),
                message,
            });
        }
        Ok(body)
    }
}

fn bad(url: &Url, reason: &str) -> RegistryError {
    RegistryError::BadAnswer {
        url: url.to_string(),
        reason: reason.to_owned(),
    }
}

/// The servers of a `ServerList` answer, deleted ones left out.
fn summaries(url: &Url, list: &Value) -> Result<Vec<ServerSummary>, RegistryError> {
    let servers = list
        .get("servers")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(url, "it has no `servers` array"))?;
    Ok(servers
        .iter()
        .filter_map(ServerSummary::from_response)
        .filter(|s| s.status != EntryStatus::Deleted)
        .collect())
}

/// `text` as a URL the client may use: `https://`, or `http://` to a loopback address.
fn checked_url(text: &str) -> Result<Url, RegistryError> {
    let invalid = |reason| RegistryError::InvalidUrl {
        url: text.to_owned(),
        reason,
    };
    let url = Url::parse(text).map_err(|_| invalid("it is not an absolute URL"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(domain)) => domain == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        "http" => Err(invalid(
            "plain http:// lets anyone on the way change what would run; use https://",
        )),
        _ => Err(invalid("give an https:// URL")),
    }
}

/// The registry's `namespace/name` shape: one `/`, `[a-zA-Z0-9.-]` before it and
/// `[a-zA-Z0-9._-]` after.
fn check_name(name: &str) -> Result<(), RegistryError> {
    let valid = name.split_once('/').is_some_and(|(namespace, rest)| {
        !namespace.is_empty()
            && !rest.is_empty()
            && namespace
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    });
    if valid {
        Ok(())
    } else {
        Err(RegistryError::InvalidName {
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn names_and_urls() {
        assert!(check_name("io.github.user/weather").is_ok());
        for bad in [
            "weather",
            "a/b/c",
            "/x",
            "x/",
            "a b/c",
            "io.github.user/../x/",
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert!(checked_url("https://registry.example.com").is_ok());
        assert!(checked_url("http://127.0.0.1:8080").is_ok());
        assert!(checked_url("http://localhost").is_ok());
        assert!(checked_url("http://registry.example.com").is_err());
        assert!(checked_url("file:///etc").is_err());
        let client = RegistryClient::new(RegistryOptions::new("https://r.example/sub/")).unwrap();
        assert_eq!(
            client
                .api(&[
                    "servers",
                    "io.github.user/weather",
                    "versions",
                    "1.0.0+build"
                ])
                .as_str(),
            "https://r.example/sub/v0.1/servers/io.github.user%2Fweather/versions/1.0.0+build"
        );
    }
}

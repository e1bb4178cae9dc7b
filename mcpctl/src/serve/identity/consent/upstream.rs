//! The OAuth client side of a sign-in, against the upstream server's authorization
//! server: discovery (RFC 9728 Protected Resource Metadata, then RFC 8414 metadata or
//! OpenID configuration), dynamic client registration (RFC 7591, once per authorization
//! server and redirect URI), PKCE S256 and the code exchange (with `resource`, RFC 8707).
//!
//! Every request is bounded ([`FETCH_TIMEOUT`], [`MAX_DOCUMENT_BYTES`]), follows no
//! redirect and goes only to `https://` or loopback `http://` URLs.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use mcp_auth::StoredCredentials;
use mcp_key::Secret;
use reqwest::Url;
use serde_json::Value;

use crate::serve::oauth::fetch::{checked, form_encode};

/// How long one request to the upstream's servers may take.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest document read.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// The client name registered with authorization servers.
const CLIENT_NAME: &str = "mcpctl gateway";

/// A client registered with one authorization server.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Client {
    pub(super) id: String,
    pub(super) secret: Option<Secret>,
}

/// What the start page set up and the callback needs: kept sealed in the vault between
/// them ([`Started::to_payload`]), so the callback may reach another instance. The
/// registered client travels with it: the instance that finishes needs no registration
/// of its own.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Started {
    /// SHA-256 (hex) of the cookie the browser that opened the start page carries.
    pub(super) browser: String,
    pub(super) verifier: Secret,
    pub(super) client: Client,
    pub(super) token_endpoint: String,
    pub(super) issuer: Option<String>,
    pub(super) redirect_uri: String,
    pub(super) resource: String,
    pub(super) scopes: Vec<String>,
}

impl Started {
    /// The bytes kept in the vault until the callback.
    pub(super) fn to_payload(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// What [`Started::to_payload`] kept; `None` when it is not that.
    pub(super) fn from_payload(payload: &[u8]) -> Option<Self> {
        serde_json::from_slice(payload).ok()
    }

    /// Whether `cookie` is the one the browser that opened the start page got.
    pub(super) fn is_browser(&self, cookie: &str) -> bool {
        browser_hash(cookie) == self.browser
    }
}

/// What the vault keeps of a browser cookie: its SHA-256, as hex.
pub(super) fn browser_hash(cookie: &str) -> String {
    mcp_key::hex_encode(
        aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, cookie.as_bytes()).as_ref(),
    )
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("token_endpoint", &self.token_endpoint)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// The authorization server of one upstream, as discovered.
struct Discovered {
    issuer: Option<String>,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: Option<String>,
    scopes: Vec<String>,
}

/// The HTTP client and the clients registered so far (per authorization server and
/// redirect URI).
pub(super) struct Upstream {
    http: reqwest::Client,
    clients: Mutex<HashMap<(String, String), Client>>,
}

impl Upstream {
    pub(super) fn new() -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(FETCH_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        Ok(Self {
            http,
            clients: Mutex::new(HashMap::new()),
        })
    }

    /// Discovers `resource`'s authorization server, registers (or reuses) a client for
    /// `redirect_uri`, and returns the authorization URL carrying `state` with what the
    /// callback needs.
    pub(super) async fn start(
        &self,
        resource: &str,
        redirect_uri: &str,
        state: &str,
        browser: String,
    ) -> Result<(String, Started), String> {
        let found = self.discover(resource).await?;
        let client = self.client(&found, redirect_uri).await?;
        let verifier = crate::serve::random_hex(32)
            .map_err(|e| format!("cannot make a PKCE verifier: {e}"))?;
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
            aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes()),
        );
        let mut url = checked(&found.authorization_endpoint)?;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client.id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("state", state)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("resource", resource);
            if !found.scopes.is_empty() {
                query.append_pair("scope", &found.scopes.join(" "));
            }
        }
        let started = Started {
            browser: browser_hash(&browser),
            verifier: Secret::new(verifier),
            client,
            token_endpoint: found.token_endpoint,
            issuer: found.issuer,
            redirect_uri: redirect_uri.to_owned(),
            resource: resource.to_owned(),
            scopes: found.scopes,
        };
        Ok((url.into(), started))
    }

    /// Exchanges `code` (with the verifier) for the credentials to store.
    pub(super) async fn finish(
        &self,
        started: &Started,
        code: &str,
    ) -> Result<StoredCredentials, String> {
        let url = checked(&started.token_endpoint)?;
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", started.redirect_uri.as_str()),
            ("client_id", started.client.id.as_str()),
            ("code_verifier", started.verifier.expose()),
            ("resource", started.resource.as_str()),
        ];
        let mut request = self.http.post(url).form(&form);
        if let Some(secret) = &started.client.secret {
            request = request.basic_auth(
                form_encode(&started.client.id),
                Some(form_encode(secret.expose())),
            );
        }
        let token = self.json(request, "the token endpoint").await?;
        record(started, &token)
    }

    async fn discover(&self, resource: &str) -> Result<Discovered, String> {
        let resource_url = checked(resource)?;
        let prm = self.resource_metadata(&resource_url).await?;
        let issuer = prm
            .get("authorization_servers")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .ok_or_else(|| {
                "its Protected Resource Metadata names no authorization server".to_owned()
            })?;
        let metadata = self.authorization_metadata(issuer).await?;
        let text = |name: &str| {
            metadata
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let need = |name: &str| {
            text(name).ok_or_else(|| format!("the authorization server {issuer} lists no {name}"))
        };
        let scopes = prm
            .get("scopes_supported")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let methods = metadata.get("code_challenge_methods_supported");
        if methods.is_some_and(|m| !m.as_array().is_some_and(|a| a.iter().any(|x| x == "S256"))) {
            return Err(format!(
                "the authorization server {issuer} does not support PKCE S256"
            ));
        }
        Ok(Discovered {
            issuer: text("issuer"),
            authorization_endpoint: need("authorization_endpoint")?,
            token_endpoint: need("token_endpoint")?,
            registration_endpoint: text("registration_endpoint"),
            scopes,
        })
    }

    /// RFC 9728: the path-suffixed well-known URL first, then the root one.
    async fn resource_metadata(&self, resource: &Url) -> Result<Value, String> {
        let origin = resource.origin().ascii_serialization();
        let path = resource.path().trim_end_matches('/');
        let mut last = String::new();
        for candidate in [
            format!("{origin}/.well-known/oauth-protected-resource{path}"),
            format!("{origin}/.well-known/oauth-protected-resource"),
        ] {
            match self
                .get_json(&candidate, "the server's resource metadata")
                .await
            {
                Ok(value) => return Ok(value),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// RFC 8414, then OpenID Connect discovery.
    async fn authorization_metadata(&self, issuer: &str) -> Result<Value, String> {
        let url = checked(issuer)?;
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        let mut last = String::new();
        for candidate in [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!(
                "{}/.well-known/openid-configuration",
                issuer.trim_end_matches('/')
            ),
        ] {
            match self
                .get_json(&candidate, &format!("the authorization server {issuer}"))
                .await
            {
                Ok(value) => return Ok(value),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The client registered for this authorization server and redirect URI, registering
    /// one the first time.
    async fn client(&self, found: &Discovered, redirect_uri: &str) -> Result<Client, String> {
        let key = (found.token_endpoint.clone(), redirect_uri.to_owned());
        if let Some(client) = super::lock(&self.clients).get(&key).cloned() {
            return Ok(client);
        }
        let endpoint = found.registration_endpoint.as_deref().ok_or_else(|| {
            "the authorization server offers no dynamic client registration".to_owned()
        })?;
        let body = serde_json::json!({
            "client_name": CLIENT_NAME,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        let request = self.http.post(checked(endpoint)?).json(&body);
        let registered = self.json(request, "the registration endpoint").await?;
        let id = registered
            .get("client_id")
            .and_then(Value::as_str)
            .ok_or_else(|| "the registration endpoint returned no client_id".to_owned())?;
        let client = Client {
            id: id.to_owned(),
            secret: registered
                .get("client_secret")
                .and_then(Value::as_str)
                .map(Secret::new),
        };
        super::lock(&self.clients).insert(key, client.clone());
        Ok(client)
    }

    async fn get_json(&self, url: &str, what: &str) -> Result<Value, String> {
        let request = self.http.get(checked(url)?);
        self.json(request, what).await
    }

    /// Sends `request` and reads a bounded JSON object; `what` names the other side in
    /// errors (an OAuth `error` in the answer is named too).
    async fn json(&self, request: reqwest::RequestBuilder, what: &str) -> Result<Value, String> {
        let request = request.header(reqwest::header::ACCEPT, "application/json");
        let mut response = request.send().await.map_err(|e| {
            if e.is_timeout() {
                format!("{what} did not answer within {}s", FETCH_TIMEOUT.as_secs())
            } else {
                format!("{what} cannot be reached")
            }
        })?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|_| format!("{what}'s answer broke off"))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!(
                    "{what} answered more than {MAX_DOCUMENT_BYTES} bytes"
                ));
            }
            body.extend_from_slice(&chunk);
        }
        let value = serde_json::from_slice::<Value>(&body).ok();
        if !status.is_success() {
            let error = value
                .as_ref()
                .and_then(|v| v.get("error"))
                .and_then(Value::as_str)
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            return Err(format!("{what} answered HTTP {}{error}", status.as_u16()));
        }
        match value {
            Some(value @ Value::Object(_)) => Ok(value),
            _ => Err(format!("{what} answered no JSON object")),
        }
    }
}

/// The record to store from a token response.
fn record(started: &Started, token: &Value) -> Result<StoredCredentials, String> {
    let text = |name: &str| token.get(name).and_then(Value::as_str);
    let access = text("access_token")
        .ok_or_else(|| "the token endpoint returned no access_token".to_owned())?;
    let method = if started.client.secret.is_some() {
        "client_secret_basic"
    } else {
        "none"
    };
    let mut record = StoredCredentials::new(started.client.id.clone())
        .with_access_token(Secret::new(access))
        .with_token_endpoint(started.token_endpoint.clone())
        .with_token_endpoint_auth_method(method)
        .with_resource(started.resource.clone());
    if let Some(refresh) = text("refresh_token") {
        record = record.with_refresh_token(Secret::new(refresh));
    }
    if let Some(secs) = token.get("expires_in").and_then(Value::as_u64) {
        record = record.with_expires_at(now_unix().saturating_add(secs));
    }
    let scopes: Vec<String> = match text("scope") {
        Some(granted) => granted.split_whitespace().map(str::to_owned).collect(),
        None => started.scopes.clone(),
    };
    record = record.with_scopes(scopes);
    if let Some(secret) = &started.client.secret {
        record = record.with_client_secret(secret.clone());
    }
    if let Some(issuer) = &started.issuer {
        record = record.with_issuer(issuer.clone());
    }
    Ok(record)
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

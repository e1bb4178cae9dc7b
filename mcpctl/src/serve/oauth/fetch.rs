//! Bounded requests to the authorization server: its metadata, its key set, its
//! introspection endpoint. Each request ends within [`FETCH_TIMEOUT`], reads at most
//! [`MAX_DOCUMENT_BYTES`], follows no redirect, and goes only to `https://` or loopback
//! `http://` URLs: an endpoint that hangs, floods or answers garbage costs one bounded
//! wait and is refused.

use std::time::Duration;

use reqwest::Url;
use serde_json::Value;

/// How long one request to the authorization server may take, from connecting to the
/// last byte.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest document read from the authorization server.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// The HTTP client for the authorization server.
#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    /// A client with the bounds above; the text of what went wrong otherwise.
    pub(crate) fn new() -> Result<Self, String> {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(FETCH_TIMEOUT)
            .build()
            .map(|client| Self { client })
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))
    }

    /// GETs `url` as a JSON object.
    pub(crate) async fn get_json(&self, url: &str) -> Result<Value, String> {
        let url = checked(url)?;
        let request = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        self.json(request).await
    }

    /// POSTs `form` to `url` with HTTP Basic client authentication, for a JSON object.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        (client_id, secret): (&str, &str),
    ) -> Result<Value, String> {
        let url = checked(url)?;
        let request = self
            .client
            .post(url)
            .header(reqwest::header::ACCEPT, "application/json")
            // RFC 6749 2.3.1: the id and secret are form-encoded before Basic.
            .basic_auth(form_encode(client_id), Some(form_encode(secret)))
            .form(form);
        self.json(request).await
    }

    async fn json(&self, request: reqwest::RequestBuilder) -> Result<Value, String> {
        let mut response = request
            .send()
            .await
            .map_err(|e| describe(&e, "no answer"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("HTTP {}", status.as_u16()));
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(format!("a document larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| describe(&e, "the answer broke off"))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("a document larger than {MAX_DOCUMENT_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        match serde_json::from_slice::<Value>(&body) {
            Ok(value @ Value::Object(_)) => Ok(value),
            _ => Err("an answer that is no JSON object".to_owned()),
        }
    }
}

/// The error's kind in a few words (timeouts named as such).
fn describe(e: &reqwest::Error, otherwise: &str) -> String {
    if e.is_timeout() {
        format!("no answer within {}s", FETCH_TIMEOUT.as_secs())
    } else if e.is_connect() {
        "cannot connect".to_owned()
    } else {
        otherwise.to_owned()
    }
}

/// `url`, when it is `https://`, or `http://` on a loopback host
/// ([`mcp_auth::may_carry_credentials`], the one rule).
pub(crate) fn checked(url: &str) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|_| format!("`{url}` is not a URL"))?;
    if mcp_auth::may_carry_credentials(parsed.scheme(), parsed.host_str()) {
        Ok(parsed)
    } else {
        Err(format!(
            "`{url}` is neither https:// nor http:// on this machine"
        ))
    }
}

/// `text` form-urlencoded (`application/x-www-form-urlencoded`).
pub(crate) fn form_encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http() {
        assert!(checked("https://idp.example.com/x").is_ok());
        assert!(checked("http://127.0.0.1:8080/jwks").is_ok());
        assert!(checked("http://localhost/jwks").is_ok());
        assert!(checked("http://[::1]:1/jwks").is_ok());
        assert!(checked("http://idp.example.com/jwks").is_err());
        assert!(checked("file:///etc/passwd").is_err());
        assert!(checked("not a url").is_err());
    }
}

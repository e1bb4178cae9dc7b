//! The state a [`FakeAuthServer`](super::FakeAuthServer) shares with its endpoints (the
//! authorization endpoint in `auth_server.rs`, the token endpoint in `token.rs`): clients,
//! codes, tokens, counters and fault switches, and the URLs it advertises.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::common::{Params, random_token, secs};
use super::options::{AuthServerOptions, OAuthClient};

/// Counters of a [`FakeAuthServer`](super::FakeAuthServer). Grant counters count token requests of that grant
/// type, successful or not; `token_errors` counts the failed ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthCounters {
    /// Requests to `/authorize`.
    pub authorize: u64,
    /// Token requests with `grant_type=authorization_code`.
    pub authorization_code: u64,
    /// Token requests with `grant_type=refresh_token`.
    pub refresh_token: u64,
    /// Token requests with `grant_type=client_credentials`.
    pub client_credentials: u64,
    /// Token requests with the JWT-bearer grant (RFC 7523).
    pub jwt_bearer: u64,
    /// Successful dynamic registrations.
    pub registrations: u64,
    /// Token requests answered with an OAuth error.
    pub token_errors: u64,
    /// Metadata requests answered (RFC 8414 and OpenID discovery), with the document or
    /// with its [`MetadataFault`](crate::MetadataFault).
    pub metadata: u64,
    /// Token requests that carried a DPoP proof.
    pub dpop_proofs: u64,
    /// Token requests answered with `use_dpop_nonce`.
    pub dpop_nonce_challenges: u64,
    /// Token requests whose DPoP proof was rejected (`invalid_dpop_proof`).
    pub dpop_rejections: u64,
    /// Workload identity tokens redeemed with the JWT-bearer grant.
    pub workload_grants: u64,
    /// Requests to `/jwks` (answered with the key set or its fault).
    pub jwks: u64,
    /// Requests to `/introspect`.
    pub introspections: u64,
    /// Token requests with the token exchange grant (RFC 8693).
    pub token_exchange: u64,
}

/// What the server knows about an access token it issued.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenInfo {
    /// The client the token was issued to.
    pub client_id: String,
    /// Granted scopes, sorted.
    pub scopes: Vec<String>,
    /// The `resource` (RFC 8707) the token is bound to, if one was requested.
    pub resource: Option<String>,
    /// The grant that produced it (`authorization_code`, `refresh_token`,
    /// `client_credentials`, `jwt_bearer`, `token_exchange`, `minted`).
    pub grant: &'static str,
    /// The thumbprint of the DPoP key the token is bound to (`cnf.jkt`), if bound.
    pub dpop_jkt: Option<String>,
    /// The subject (`sub`): the client for `client_credentials`, the subject token's
    /// subject for `token_exchange`, the login's subject for `refresh_token` (the
    /// subject of the `authorization_code` grant the refresh token came from, kept
    /// through rotations), else the server's subject when it was issued
    /// ([`crate::FakeAuthServer::set_subject`]).
    pub subject: String,
    /// The subject's groups when it was issued.
    pub groups: Vec<String>,
    pub(crate) expires_at: Instant,
}

impl TokenInfo {
    /// True once the token's lifetime has passed (tokio time).
    pub fn is_expired(&self) -> bool {
        Instant::now() >= self.expires_at
    }
}

#[derive(Debug, Clone)]
pub(crate) struct CodeGrant {
    pub(crate) client_id: String,
    pub(crate) redirect_uri: String,
    pub(crate) challenge: String,
    pub(crate) scopes: Vec<String>,
    pub(crate) resource: Option<String>,
    pub(crate) expires_at: Instant,
}

#[derive(Debug, Clone)]
pub(crate) struct RefreshGrant {
    pub(crate) client_id: String,
    pub(crate) scopes: Vec<String>,
    pub(crate) resource: Option<String>,
    /// The subject (and groups) of the login it came from: every token refreshed with
    /// it is for them, whatever [`crate::FakeAuthServer::set_subject`] says since.
    pub(crate) subject: String,
    pub(crate) groups: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct AsInner {
    pub(crate) options: AuthServerOptions,
    pub(crate) clients: BTreeMap<String, OAuthClient>,
    pub(crate) codes: HashMap<String, CodeGrant>,
    pub(crate) access: HashMap<String, TokenInfo>,
    pub(crate) refresh: HashMap<String, RefreshGrant>,
    pub(crate) counters: AuthCounters,
    pub(crate) last_resource: Option<String>,
    pub(crate) last_scope: Option<String>,
    pub(crate) fail_refreshes: usize,
    pub(crate) authorize_requests: Vec<Params>,
    pub(crate) token_requests: Vec<Params>,
    pub(crate) issued: Vec<String>,
    /// `jti`s of DPoP proofs seen at the token endpoint.
    pub(crate) dpop_jtis: std::collections::HashSet<String>,
    /// The key JWT access tokens are signed with, and the JWKS endpoint's fault.
    pub(crate) signing: super::signing::AccessSigning,
    /// Every token exchange request, in arrival order.
    pub(crate) exchanges: Vec<super::exchange::TokenExchangeRecord>,
    /// What token exchanges do instead of their job.
    pub(crate) exchange_fault: Option<super::exchange::ExchangeFault>,
}

impl AsInner {
    /// Issue an access token (and a refresh token when `refresh`), returning the
    /// token response body.
    pub(crate) fn issue(
        &mut self,
        client_id: &str,
        scopes: Vec<String>,
        resource: Option<String>,
        grant: &'static str,
        refresh: bool,
    ) -> Value {
        let access = self.token("at");
        self.issued.push(access.clone());
        let lifetime = self.options.token_lifetime;
        let scope = scopes.join(" ");
        let (subject, groups) = if grant == "client_credentials" {
            (client_id.to_owned(), Vec::new())
        } else {
            (self.options.subject.clone(), self.options.groups.clone())
        };
        self.access.insert(
            access.clone(),
            TokenInfo {
                client_id: client_id.to_owned(),
                scopes: scopes.clone(),
                resource: resource.clone(),
                grant,
                dpop_jkt: None,
                subject: subject.clone(),
                groups: groups.clone(),
                expires_at: Instant::now() + lifetime,
            },
        );
        let mut body = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": secs(lifetime),
        });
        if !scope.is_empty() {
            body["scope"] = json!(scope);
        }
        if refresh {
            let token = self.token("rt");
            self.refresh.insert(
                token.clone(),
                RefreshGrant {
                    client_id: client_id.to_owned(),
                    scopes,
                    resource,
                    subject,
                    groups,
                },
            );
            body["refresh_token"] = json!(token);
        }
        body
    }

    /// A new token, `<planted secret>_<random>` with a planted secret.
    fn token(&self, prefix: &str) -> String {
        match &self.options.planted_secret {
            Some(secret) => format!("{secret}_{}", random_token(prefix)),
            None => random_token(prefix),
        }
    }

    /// `description`, with the planted secret (if any) in it.
    pub(crate) fn describe(&self, description: &str) -> String {
        match &self.options.planted_secret {
            Some(secret) => format!("{description} ({secret})"),
            None => description.to_owned(),
        }
    }

    /// The validity of `token`, if it is a live access token.
    pub(crate) fn live(&self, token: &str) -> Option<&TokenInfo> {
        self.access.get(token).filter(|info| !info.is_expired())
    }

    /// Split `scope` and check every entry is supported.
    pub(crate) fn scopes(&self, scope: Option<&String>) -> Result<Vec<String>, String> {
        let mut scopes: Vec<String> = scope
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        scopes.sort();
        scopes.dedup();
        match scopes
            .iter()
            .find(|s| !self.options.scopes_supported.contains(s))
        {
            Some(unknown) => Err(format!("scope {unknown} is not supported")),
            None => Ok(scopes),
        }
    }
}

/// The URLs a [`FakeAuthServer`](super::FakeAuthServer) advertises: its origin (its
/// own listener's, or that of a protected server serving it on the same origin) and the
/// overrides of the issuer and token endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Advertised {
    /// `http://127.0.0.1:<port>`: where the endpoints are.
    pub(crate) origin: String,
    pub(crate) issuer_override: Option<String>,
    pub(crate) token_endpoint_override: Option<String>,
}

impl Advertised {
    /// The issuer in the metadata and in `iss` parameters.
    pub(crate) fn issuer(&self) -> String {
        self.issuer_override
            .clone()
            .unwrap_or_else(|| self.origin.clone())
    }

    /// The real token endpoint.
    pub(crate) fn token_endpoint(&self) -> String {
        format!("{}/token", self.origin)
    }

    /// The token endpoint named in the metadata.
    pub(crate) fn advertised_token_endpoint(&self) -> String {
        self.token_endpoint_override
            .clone()
            .unwrap_or_else(|| self.token_endpoint())
    }
}

/// State shared by the server's handlers and its handle.
///
/// Lock order: `inner`, then `advertised` (never held while taking `inner`).
#[derive(Debug)]
pub(crate) struct AsShared {
    /// `http://127.0.0.1:<port>` of the server's own listener.
    pub(crate) listener: String,
    pub(crate) advertised: Mutex<Advertised>,
    pub(crate) inner: Mutex<AsInner>,
}

impl AsShared {
    /// A copy of the advertised URLs.
    pub(crate) fn advertised(&self) -> Advertised {
        crate::record::lock(&self.advertised).clone()
    }

    /// The real token endpoint (on the advertised origin).
    pub(crate) fn token_endpoint(&self) -> String {
        self.advertised().token_endpoint()
    }

    /// The audiences a JWT sent to this server may carry: the issuer, the origin and the
    /// token endpoint (of the advertised origin and of the server's own listener).
    pub(crate) fn audiences(&self) -> Vec<String> {
        let advertised = self.advertised();
        let mut audiences = vec![
            advertised.issuer(),
            advertised.origin.clone(),
            advertised.token_endpoint(),
            self.listener.clone(),
            format!("{}/token", self.listener),
        ];
        audiences.sort();
        audiences.dedup();
        audiences
    }
}

//! Configuration of the fake authorization server: [`AuthServerOptions`] and the
//! clients it knows ([`OAuthClient`]).

use std::net::SocketAddr;
use std::time::Duration;

use super::metadata_fault::MetadataFault;

/// The subject (`sub`) of the tokens a [`crate::FakeAuthServer`] issues for a login
/// unless [`crate::AuthServerOptions::with_subject`] or
/// [`crate::FakeAuthServer::set_subject`] says otherwise.
pub const DEFAULT_TOKEN_SUBJECT: &str = "testkit-user";

/// Default lifetime of access tokens: one hour.
pub const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

/// Default `scopes_supported` of a [`crate::FakeAuthServer`].
pub const DEFAULT_SCOPES: &[&str] = &["mcp:read", "mcp:write", "offline_access"];

/// How a client authenticates at the token endpoint
/// (`token_endpoint_auth_method`, RFC 7591).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ClientAuthMethod {
    /// A public client: only `client_id` (with PKCE).
    None,
    /// HTTP Basic with the client secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A signed JWT assertion (RFC 7523 section 2.2).
    PrivateKeyJwt,
}

impl ClientAuthMethod {
    /// The RFC 7591 name (`none`, `client_secret_basic`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// Parse an RFC 7591 name.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "none" => Self::None,
            "client_secret_basic" => Self::ClientSecretBasic,
            "client_secret_post" => Self::ClientSecretPost,
            "private_key_jwt" => Self::PrivateKeyJwt,
            _ => return None,
        })
    }
}

/// A client known to a fake server (pre-registered, or created by `/register`).
///
/// A client with a secret may present it with Basic or in the form, whichever its
/// method says or not: the fake is lenient there. Redirect URIs must be loopback
/// (`http://127.0.0.1`, `[::1]`, `localhost`); an empty list accepts any loopback URI,
/// and the port of a registered loopback URI is not compared (RFC 8252).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthClient {
    /// The client id.
    pub client_id: String,
    /// The client secret, for `client_secret_basic`/`client_secret_post`.
    pub client_secret: Option<String>,
    /// The registered authentication method.
    pub auth_method: ClientAuthMethod,
    /// Registered redirect URIs (empty: any loopback URI).
    pub redirect_uris: Vec<String>,
    /// The public key (SPKI PEM, RSA or P-256) that verifies `private_key_jwt` assertions.
    pub public_key_pem: Option<String>,
    /// The `client_name` a dynamically registered client sent.
    pub client_name: Option<String>,
}

impl OAuthClient {
    /// A public client (method `none`).
    pub fn public(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: ClientAuthMethod::None,
            redirect_uris: Vec::new(),
            public_key_pem: None,
            client_name: None,
        }
    }

    /// A confidential client with a secret (method `client_secret_basic`).
    pub fn confidential(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self {
            client_secret: Some(secret.into()),
            auth_method: ClientAuthMethod::ClientSecretBasic,
            ..Self::public(client_id)
        }
    }

    /// A `private_key_jwt` client whose assertions `public_key_pem` verifies
    /// (for example [`crate::TEST_EC_PUBLIC_KEY_PEM`]).
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        public_key_pem: impl Into<String>,
    ) -> Self {
        Self::public(client_id).with_public_key_pem(public_key_pem)
    }

    /// Set the registered authentication method.
    #[must_use]
    pub fn with_auth_method(mut self, method: ClientAuthMethod) -> Self {
        self.auth_method = method;
        self
    }

    /// Register a redirect URI (loopback only).
    #[must_use]
    pub fn with_redirect_uri(mut self, uri: impl Into<String>) -> Self {
        self.redirect_uris.push(uri.into());
        self
    }

    /// Register a public key for `private_key_jwt` (and switch the method to it).
    #[must_use]
    pub fn with_public_key_pem(mut self, pem: impl Into<String>) -> Self {
        self.public_key_pem = Some(pem.into());
        self.auth_method = ClientAuthMethod::PrivateKeyJwt;
        self
    }

    /// True when the client can hold a credential (secret or key): required for the
    /// `client_credentials` grant.
    pub fn is_confidential(&self) -> bool {
        self.client_secret.is_some() || self.public_key_pem.is_some()
    }
}

/// Options for [`crate::FakeAuthServer::start`].
///
/// Defaults: `127.0.0.1:0`, scopes [`DEFAULT_SCOPES`], tokens valid for
/// [`DEFAULT_TOKEN_LIFETIME`], refresh tokens issued and rotated, registration endpoint
/// on, OpenID discovery on, `iss` sent with authorization responses, authorizations
/// approved, `code_challenge_methods_supported: ["S256"]`, no pre-registered clients,
/// no trusted IdP, no planted secret, metadata served, opaque access tokens for
/// [`crate::DEFAULT_TOKEN_SUBJECT`] without groups.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuthServerOptions {
    /// Address to bind.
    pub bind: SocketAddr,
    /// `scopes_supported`; requests for other scopes fail with `invalid_scope`.
    pub scopes_supported: Vec<String>,
    /// Lifetime of access tokens (`expires_in`); validity is checked against it live.
    pub token_lifetime: Duration,
    /// Replace the refresh token on every refresh; the old one then fails with
    /// `invalid_grant`.
    pub rotate_refresh_tokens: bool,
    /// Serve `/register` and advertise `registration_endpoint`.
    pub registration: bool,
    /// Serve `/.well-known/openid-configuration` too.
    pub openid_configuration: bool,
    /// Put this `issuer` in the metadata and in `iss` redirect parameters instead of
    /// the server's URL (issuer-mismatch tests).
    pub issuer_override: Option<String>,
    /// Answer every authorization with this `error` (e.g. `access_denied`) instead of
    /// a code.
    pub authorize_error: Option<String>,
    /// Redirect with this `state` instead of the client's (CSRF tests).
    pub state_override: Option<String>,
    /// Send this `iss` on redirects instead of the issuer (RFC 9207 mismatch tests).
    pub iss_value_override: Option<String>,
    /// `code_challenge_methods_supported` as advertised (the server itself still
    /// accepts only `S256`).
    pub code_challenge_methods: Vec<String>,
    /// Send `iss` (RFC 9207) with authorization responses, and advertise it.
    pub iss_parameter: bool,
    /// Advertise `iss` but send none (RFC 9207 mix-up tests: a client must refuse it).
    pub omit_iss: bool,
    /// Issue refresh tokens with the authorization-code grant.
    pub refresh_tokens: bool,
    /// Pre-registered clients.
    pub clients: Vec<OAuthClient>,
    /// Issuers whose ID-JAGs the JWT-bearer grant accepts (signed with the test key,
    /// as [`crate::FakeIdp`] does).
    pub trusted_idps: Vec<String>,
    /// Support DPoP (RFC 9449): advertise `dpop_signing_alg_values_supported`, check the
    /// proof of a token request that carries one (400 `invalid_dpop_proof` otherwise) and
    /// bind the token it issues (`token_type: DPoP`).
    pub dpop: bool,
    /// With [`AuthServerOptions::dpop`], require this nonce in token-request proofs: a proof
    /// without it gets 400 `use_dpop_nonce` and the nonce in `DPoP-Nonce`.
    pub dpop_nonce: Option<String>,
    /// Issuers of workload identity tokens the JWT-bearer grant accepts (signed with the
    /// test EC key, see [`crate::mint_workload_token`]).
    pub trusted_workload_issuers: Vec<String>,
    /// Issuers whose JWTs the token exchange grant (RFC 8693) accepts as subject tokens
    /// (signed with the test RSA or EC key, as a [`crate::FakeAuthServer`] with
    /// [`AuthServerOptions::with_jwt_access_tokens`] signs its own); access tokens this
    /// server issued are always accepted.
    pub trusted_subject_issuers: Vec<String>,
    /// A recognisable value put into every access and refresh token (as its prefix) and
    /// every `error_description` of the token endpoint and of authorization redirects, so
    /// a test can check that it never reaches logs, error messages or `Debug` output.
    /// Authorization codes stay as they are.
    pub planted_secret: Option<String>,
    /// Answer requests for the metadata documents (RFC 8414 and OpenID discovery) with
    /// this fault instead.
    pub metadata_fault: Option<MetadataFault>,
    /// Issue access tokens as JWTs (RFC 9068) signed with the key published at `/jwks`,
    /// instead of opaque ones.
    pub jwt_access_tokens: bool,
    /// The subject (`sub`) of tokens issued for a login.
    pub subject: String,
    /// The subject's groups, in the groups claim of JWT access tokens and in
    /// introspection answers.
    pub groups: Vec<String>,
}

impl Default for AuthServerOptions {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            scopes_supported: DEFAULT_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
            token_lifetime: DEFAULT_TOKEN_LIFETIME,
            rotate_refresh_tokens: true,
            registration: true,
            openid_configuration: true,
            issuer_override: None,
            authorize_error: None,
            state_override: None,
            iss_value_override: None,
            code_challenge_methods: vec!["S256".to_owned()],
            iss_parameter: true,
            omit_iss: false,
            refresh_tokens: true,
            clients: Vec::new(),
            trusted_idps: Vec::new(),
            dpop: false,
            dpop_nonce: None,
            trusted_workload_issuers: Vec::new(),
            trusted_subject_issuers: Vec::new(),
            planted_secret: None,
            metadata_fault: None,
            jwt_access_tokens: false,
            subject: DEFAULT_TOKEN_SUBJECT.to_owned(),
            groups: Vec::new(),
        }
    }
}

impl AuthServerOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `scopes_supported`.
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Set the access-token lifetime (e.g. 2 s for expiry tests).
    #[must_use]
    pub fn with_token_lifetime(mut self, lifetime: Duration) -> Self {
        self.token_lifetime = lifetime;
        self
    }

    /// Turn refresh-token rotation on or off.
    #[must_use]
    pub fn with_rotation(mut self, rotate: bool) -> Self {
        self.rotate_refresh_tokens = rotate;
        self
    }

    /// Turn dynamic client registration (and its metadata field) off.
    #[must_use]
    pub fn without_registration(mut self) -> Self {
        self.registration = false;
        self
    }

    /// Do not serve `/.well-known/openid-configuration`.
    #[must_use]
    pub fn without_openid_configuration(mut self) -> Self {
        self.openid_configuration = false;
        self
    }

    /// Advertise a wrong `issuer` (and send it as `iss` on redirects).
    #[must_use]
    pub fn with_issuer_override(mut self, issuer: impl Into<String>) -> Self {
        self.issuer_override = Some(issuer.into());
        self
    }

    /// Deny authorizations (`error=access_denied`).
    #[must_use]
    pub fn with_deny_authorization(mut self, deny: bool) -> Self {
        self.authorize_error = deny.then(|| "access_denied".to_owned());
        self
    }

    /// Answer authorizations with `error=<code>`.
    #[must_use]
    pub fn with_authorize_error(mut self, code: impl Into<String>) -> Self {
        self.authorize_error = Some(code.into());
        self
    }

    /// Redirect with this `state` instead of the client's.
    #[must_use]
    pub fn with_state_override(mut self, state: impl Into<String>) -> Self {
        self.state_override = Some(state.into());
        self
    }

    /// Send this `iss` value on redirects (the metadata keeps the real issuer).
    #[must_use]
    pub fn with_iss_parameter_value(mut self, iss: impl Into<String>) -> Self {
        self.iss_value_override = Some(iss.into());
        self
    }

    /// Advertise `authorization_response_iss_parameter_supported` and still send no `iss`
    /// on redirects: what a response forged by another authorization server looks like.
    #[must_use]
    pub fn with_iss_parameter_omitted(mut self) -> Self {
        self.omit_iss = true;
        self
    }

    /// Advertise these `code_challenge_methods_supported` (e.g. none, or `plain`).
    #[must_use]
    pub fn with_code_challenge_methods<I, S>(mut self, methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.code_challenge_methods = methods.into_iter().map(Into::into).collect();
        self
    }

    /// Leave `iss` out of authorization responses (and the metadata flag).
    #[must_use]
    pub fn without_iss_parameter(mut self) -> Self {
        self.iss_parameter = false;
        self
    }

    /// Issue no refresh tokens: an expired access token then needs a new login.
    #[must_use]
    pub fn without_refresh_tokens(mut self) -> Self {
        self.refresh_tokens = false;
        self
    }

    /// Pre-register a client.
    #[must_use]
    pub fn with_client(mut self, client: OAuthClient) -> Self {
        self.clients.push(client);
        self
    }

    /// Accept ID-JAGs issued by this IdP issuer (see [`crate::FakeIdp::issuer`]).
    #[must_use]
    pub fn with_trusted_idp(mut self, issuer: impl Into<String>) -> Self {
        self.trusted_idps.push(issuer.into());
        self
    }

    /// Support DPoP (see [`AuthServerOptions::dpop`]).
    #[must_use]
    pub fn with_dpop(mut self) -> Self {
        self.dpop = true;
        self
    }

    /// Support DPoP and require `nonce` in token-request proofs.
    #[must_use]
    pub fn with_dpop_nonce(mut self, nonce: impl Into<String>) -> Self {
        self.dpop = true;
        self.dpop_nonce = Some(nonce.into());
        self
    }

    /// Accept workload identity tokens from `issuer` in the JWT-bearer grant.
    #[must_use]
    pub fn with_trusted_workload_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.trusted_workload_issuers.push(issuer.into());
        self
    }

    /// Accept JWTs of `issuer` as subject tokens of the token exchange grant (RFC 8693).
    #[must_use]
    pub fn with_trusted_subject_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.trusted_subject_issuers.push(issuer.into());
        self
    }

    /// Plant `secret` in tokens and error descriptions (see
    /// [`AuthServerOptions::planted_secret`]).
    #[must_use]
    pub fn with_planted_secret(mut self, secret: impl Into<String>) -> Self {
        self.planted_secret = Some(secret.into());
        self
    }

    /// Answer metadata requests with `fault` (see [`AuthServerOptions::metadata_fault`]).
    #[must_use]
    pub fn with_metadata_fault(mut self, fault: MetadataFault) -> Self {
        self.metadata_fault = Some(fault);
        self
    }

    /// Issue JWT access tokens (see [`AuthServerOptions::jwt_access_tokens`]).
    #[must_use]
    pub fn with_jwt_access_tokens(mut self) -> Self {
        self.jwt_access_tokens = true;
        self
    }

    /// Issue tokens for a login to `subject`, a member of `groups`.
    #[must_use]
    pub fn with_subject<I, S>(mut self, subject: impl Into<String>, groups: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.subject = subject.into();
        self.groups = groups.into_iter().map(Into::into).collect();
        self
    }

    /// Bind this address instead of `127.0.0.1:0`.
    #[must_use]
    pub fn with_bind(mut self, bind: SocketAddr) -> Self {
        self.bind = bind;
        self
    }
}

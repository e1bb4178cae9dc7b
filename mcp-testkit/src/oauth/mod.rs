//! Fake OAuth servers: an OAuth 2.1 authorization server ([`FakeAuthServer`]), an
//! MCP server behind its tokens ([`FakeProtectedMcpServer`]) and an enterprise IdP
//! for cross-app access ([`FakeIdp`]).

mod as_state;
mod auth_server;
mod common;
mod dpop;
mod exchange;
mod id_token;
mod idp;
mod jwt_access;
mod keys;
mod metadata_fault;
mod options;
mod protected;
mod signing;
mod token;
mod workload;

pub use as_state::{AuthCounters, TokenInfo};
pub use auth_server::{CODE_LIFETIME, FakeAuthServer};
pub use exchange::{ACCESS_TOKEN_TYPE, ExchangeFault, JWT_TOKEN_TYPE, TokenExchangeRecord};
pub use id_token::{IdTokenAlg, IdTokenFault};
pub use idp::{
    DEFAULT_ID_JAG_LIFETIME, DEFAULT_ID_TOKEN_LIFETIME, DEFAULT_IDP_CLIENT_ID,
    DEFAULT_IDP_CLIENT_SECRET, DEFAULT_SUBJECT, ExchangeRecord, FakeIdp, ID_JAG_TOKEN_TYPE,
    ID_JAG_TYP, ID_TOKEN_TYPE, IdpCounters, IdpOptions, IdpRejection, REFRESH_TOKEN_TYPE,
    TOKEN_EXCHANGE_GRANT, WRONG_AUDIENCE,
};
pub use jwt_access::{AccessTokenClaims, GROUPS_CLAIM};
pub use keys::{
    TEST_EC_KEY_ID, TEST_EC_PRIVATE_KEY_PEM, TEST_EC_PUBLIC_KEY_PEM, TEST_KEY_ID,
    TEST_RSA_PRIVATE_KEY_PEM, TEST_RSA_PUBLIC_KEY_PEM, test_jwks,
};
pub use metadata_fault::MetadataFault;
pub use options::{
    AuthServerOptions, ClientAuthMethod, DEFAULT_SCOPES, DEFAULT_TOKEN_LIFETIME,
    DEFAULT_TOKEN_SUBJECT, OAuthClient,
};
pub use protected::{
    FakeProtectedMcpServer, ProtectedCounters, ProtectedOptions, RESOURCE_METADATA_PATH,
};
pub use signing::{ACCESS_TOKEN_TYP, JwksFault};
pub use token::JWT_BEARER_GRANT;
pub use workload::{WORKLOAD_SUBJECT, mint_workload_token};

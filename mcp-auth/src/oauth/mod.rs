//! OAuth 2.1 client: discovery, registration, PKCE login, refresh, step-up, machine and
//! enterprise-managed logins, status.
//!
//! From the bottom up: the helpers (`http`, `settings`, `workload`, `dpop`, `grant`,
//! `token`, `discovery`, `id_token`, `key_set`, `jwks`, `legacy`, `callback`, `agent`), the state one
//! server's credentials share (`state`), the flows that take that state (`login`,
//! `machine`, `wif`), and on top the facade [`OAuthCredentials`] that calls them, with the
//! enterprise IdP above it.

mod agent;
mod callback;
mod credentials;
mod discovery;
mod dpop;
mod dpop_exchange;
mod enterprise;
mod exchange;
mod grant;
mod http;
mod id_token;
mod jwks;
mod key_set;
mod legacy;
mod login;
mod machine;
mod settings;
mod state;
mod token;
mod wif;
mod workload;

pub use agent::{BrowserAgent, HeadlessAgent, PrintUrlAgent, UserAgent};
pub use credentials::{OAuthCredentials, login};
pub use enterprise::{ENTERPRISE_IDP_NAME, EnterpriseIdp};
pub use exchange::{
    DEFAULT_EXCHANGE_MARGIN, DEFAULT_UNKNOWN_LIFETIME, MAX_CACHED_EXCHANGES, TokenExchanger,
};
pub use key_set::{KeyProblem, KeySetCache, KeySetSource, KeySetTiming};
pub use login::PendingLogin;
pub use machine::{ClientCredentials, EnterpriseGrant};
pub use settings::{
    DEFAULT_CLIENT_NAME, DEFAULT_HTTP_TIMEOUT, DEFAULT_LOGIN_TIMEOUT, DEFAULT_REFRESH_MARGIN_SECS,
    MAX_STEP_UP_ATTEMPTS, OAuthSettings,
};
pub use workload::{WorkloadIdentity, WorkloadTokenSource};

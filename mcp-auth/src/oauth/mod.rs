//! OAuth 2.1 client: discovery, registration, PKCE login, refresh, step-up, machine and
//! enterprise-managed logins, status.

mod agent;
mod callback;
mod credentials;
mod discovery;
mod dpop;
mod dpop_exchange;
mod enterprise;
mod grant;
mod http;
mod id_token;
mod jwks;
mod legacy;
mod login;
mod machine;
mod settings;
mod token;
mod wif;

pub use agent::{BrowserAgent, HeadlessAgent, PrintUrlAgent, UserAgent};
pub use credentials::OAuthCredentials;
pub use enterprise::{ENTERPRISE_IDP_NAME, EnterpriseIdp};
pub use login::{PendingLogin, login};
pub use machine::{ClientCredentials, EnterpriseGrant};
pub use settings::{
    DEFAULT_CLIENT_NAME, DEFAULT_HTTP_TIMEOUT, DEFAULT_LOGIN_TIMEOUT, DEFAULT_REFRESH_MARGIN_SECS,
    MAX_STEP_UP_ATTEMPTS, OAuthSettings,
};
pub use wif::{WorkloadIdentity, WorkloadTokenSource};

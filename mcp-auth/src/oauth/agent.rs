//! [`UserAgent`]: how the authorization URL reaches a user (or a machine).

use url::Url;

use crate::error::AuthError;
use crate::secure_target::is_loopback_host;
use crate::store::BoxFuture;

/// Opens an authorization URL. Implemented by hosts for their own UI.
pub trait UserAgent: Send + Sync {
    /// Shows or follows `url`. Returns once it was handed over; the login itself completes
    /// when the callback arrives.
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), AuthError>>;
}

/// Opens the system browser (`open` on macOS, `xdg-open` elsewhere on Unix, `start` on
/// Windows).
#[derive(Clone, Copy, Debug, Default)]
pub struct BrowserAgent;

impl UserAgent for BrowserAgent {
    #[expect(
        clippy::disallowed_methods,
        reason = "the documented exception to \"only mcp-pool spawns\": opening the user's browser for a login is not starting a server"
    )]
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(async move {
            let mut cmd = if cfg!(target_os = "macos") {
                tokio::process::Command::new("open")
            } else if cfg!(windows) {
                let mut c = tokio::process::Command::new("cmd");
                c.args(["/C", "start", ""]);
                c
            } else {
                tokio::process::Command::new("xdg-open")
            };
            cmd.arg(url)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            match cmd.status().await {
                Ok(status) if status.success() => Ok(()),
                _ => {
                    tracing::warn!("could not open a browser; open the login URL yourself: {url}");
                    Ok(())
                }
            }
        })
    }
}

/// Logs the URL (at `warn`, so a CLI shows it) and waits for the user to open it.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrintUrlAgent;

impl UserAgent for PrintUrlAgent {
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(async move {
            tracing::warn!("open this URL to log in: {url}");
            Ok(())
        })
    }
}

/// For machines and tests: GETs the authorization URL without following redirects and
/// delivers the `Location` it answers with to the loopback callback. Works with
/// authorization servers that approve at once (test servers, pre-approved clients).
#[derive(Clone, Debug, Default)]
pub struct HeadlessAgent {
    _priv: (),
}

impl HeadlessAgent {
    /// A headless agent.
    pub fn new() -> Self {
        Self { _priv: () }
    }
}

fn fail(detail: impl Into<String>) -> AuthError {
    AuthError::Agent {
        detail: detail.into(),
    }
}

impl UserAgent for HeadlessAgent {
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(super::settings::DEFAULT_HTTP_TIMEOUT)
                .build()
                .map_err(|_| fail("headless login: cannot build an HTTP client"))?;
            let response =
                http.get(url).send().await.map_err(|_| {
                    fail("headless login: the authorization endpoint is unreachable")
                })?;
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| {
                    fail(format!(
                        "headless login: the authorization endpoint answered HTTP {} without a redirect",
                        response.status().as_u16()
                    ))
                })?;
            let target = Url::parse(url)
                .and_then(|base| base.join(location))
                .map_err(|_| fail("headless login: the redirect is not a valid URL"))?;
            if target.scheme() != "http" || !target.host_str().is_some_and(is_loopback_host) {
                return Err(fail(
                    "headless login: the authorization server redirected somewhere other than the loopback callback",
                ));
            }
            http.get(target)
                .send()
                .await
                .map_err(|_| fail("headless login: the loopback callback is unreachable"))?;
            Ok(())
        })
    }
}

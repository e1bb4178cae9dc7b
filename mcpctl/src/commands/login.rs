//! `mcpctl login SERVER`: OAuth login to a streamable HTTP server. Probes the server for
//! its `WWW-Authenticate` challenge, shows the authorization URL (and opens a browser on a
//! terminal), waits for the loopback callback and stores the tokens. No server is started.

use std::io::IsTerminal;
use std::time::Duration;

use mcp_auth::{AuthError, BoxFuture, BrowserAgent, HeadlessAgent, OAuthCredentials, UserAgent};
use serde_json::json;

use crate::cli::{GlobalArgs, LoginArgs};
use crate::error::CliError;
use crate::host::auth;
use crate::host::session::Loaded;
use crate::term::style::Style;

/// Runs `login`.
pub(crate) async fn run(global: &GlobalArgs, args: &LoginArgs) -> Result<u8, CliError> {
    let timeout = args.timeout.map(parse_timeout).transpose()?;
    let loaded = Loaded::find(global, false, false).await?;
    let catalog = loaded.catalog();
    let Some(server) = args.server.as_deref().filter(|_| !args.enterprise) else {
        let store = auth::open_store(&catalog, loaded.demo)?;
        let agent = Agent {
            server: "the enterprise identity provider".to_owned(),
            mode: mode(args.headless),
            wait: timeout.unwrap_or(mcp_auth::DEFAULT_LOGIN_TIMEOUT),
        };
        return super::enterprise::login(global.json, &catalog, store, &agent).await;
    };
    let key = auth::resolve(&catalog, server, &loaded.origin())?;
    let config = catalog
        .get(&key)
        .ok_or_else(|| CliError::usage(format!("unknown MCP server `{key}`")))?;
    let http = auth::login_target(&key, config).map_err(|e| {
        if loaded.demo {
            e.with_hint("the embedded demo's servers need no login; pass --config FILE to log in to a server of yours")
        } else {
            e
        }
    })?;
    let store = auth::open_store(&catalog, loaded.demo)?;
    let location = store.location();
    let mut settings = auth::settings(&catalog, http);
    if let Some(timeout) = timeout {
        settings = settings.with_login_timeout(timeout);
    }
    let creds = OAuthCredentials::new(key.clone(), http.url(), settings, store);
    let challenge = creds
        .probe()
        .await
        .map_err(|e| auth::login_error(&e, &key, true))?;
    let agent = Agent {
        server: key.to_string(),
        mode: mode(args.headless),
        wait: creds.settings().login_timeout,
    };
    mcp_auth::login(&creds, &agent, challenge.as_deref())
        .await
        .map_err(|e| auth::login_error(&e, &key, challenge.is_some()))?;
    if global.json {
        crate::term::render::out_json(&json!({
            "server": key,
            "logged_in": true,
            "store": location,
        }));
    } else {
        crate::term::render::out(&format!(
            "{} to `{key}` (credentials stored in {location})\n",
            Style::stdout().green("logged in")
        ));
    }
    Ok(0)
}

fn mode(headless: bool) -> Mode {
    if headless {
        Mode::Headless
    } else if std::io::stderr().is_terminal() {
        Mode::Browser
    } else {
        Mode::Print
    }
}

fn parse_timeout(secs: f64) -> Result<Duration, CliError> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            CliError::usage(format!("--timeout {secs} is not a valid number of seconds"))
                .with_hint("pass a positive number such as --timeout 120")
        })
}

/// How the authorization URL reaches the user.
enum Mode {
    /// Print it and open the system browser.
    Browser,
    /// Print it (no terminal: someone else opens it).
    Print,
    /// Fetch it without a browser and deliver the redirect to the callback.
    Headless,
}

/// The user agent of `mcpctl login`: messages on stderr, then the chosen mode.
struct Agent {
    server: String,
    mode: Mode,
    wait: Duration,
}

impl Agent {
    fn show_url(&self, url: &str, opening: bool) {
        let s = Style::stderr();
        let lead = if opening {
            "Opening the browser to log in; if it does not open, visit this URL:"
        } else {
            "Open this URL in a browser to log in:"
        };
        eprintln!("{lead}\n  {}", s.bold(url));
        let wait = if self.wait.subsec_nanos() == 0 {
            self.wait.as_secs().to_string()
        } else {
            format!("{:.1}", self.wait.as_secs_f64())
        };
        eprintln!(
            "Waiting for the login to `{}` to finish (up to {wait} s; Ctrl-C to stop)...",
            self.server
        );
    }
}

impl UserAgent for Agent {
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(async move {
            match self.mode {
                Mode::Headless => {
                    eprintln!(
                        "Logging in to `{}` without a browser (headless)...",
                        self.server
                    );
                    HeadlessAgent::new().open(url).await
                }
                Mode::Browser => {
                    self.show_url(url, true);
                    BrowserAgent.open(url).await
                }
                Mode::Print => {
                    self.show_url(url, false);
                    Ok(())
                }
            }
        })
    }
}

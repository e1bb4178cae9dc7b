//! `mcpctl gateway`: what a caller (or an administrator) asks of a team gateway
//! (`mcpctl serve --http`) over HTTP, without starting any server.
//!
//! - `sign-out --server S`: the caller's credentials for `S` (an
//!   `upstream_identity = "caller"` server) are removed from the gateway's store; the next
//!   call to `S` asks the caller to sign in again. Authenticated by the caller's own token.
//! - `revoke --caller ID`: every upstream credential of one caller is removed, with the
//!   gateway's admin token.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::error::CliError;
use crate::term::render::terminal_safe;

/// The variable naming the gateway (its base URL, e.g. `https://mcp.example.com`).
pub(crate) const URL_VAR: &str = "MCPCTL_GATEWAY_URL";
/// The variable holding the caller's access token for the gateway.
pub(crate) const TOKEN_VAR: &str = "MCPCTL_GATEWAY_TOKEN";
/// The variable holding the gateway's admin token: `mcpctl serve` reads it to allow
/// `DELETE /connect/callers/{caller}` (re-exported by `serve::identity::consent`), and
/// `gateway revoke` sends it. One home for both sides.
pub(crate) const ADMIN_TOKEN_VAR: &str = "MCPCTL_GATEWAY_ADMIN_TOKEN";

/// How long the gateway may take to answer.
const TIMEOUT: Duration = Duration::from_secs(30);

/// `gateway` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum GatewayCommand {
    /// Sign out of one server at a team gateway: your credentials for it are removed from
    /// the gateway's store, and your next call to it asks you to sign in again.
    SignOut(SignOutArgs),
    /// Remove every upstream credential one caller has at a team gateway (administrators:
    /// the gateway's admin token in $MCPCTL_GATEWAY_ADMIN_TOKEN).
    Revoke(RevokeArgs),
}

/// Where the gateway is.
#[derive(Debug, Args)]
pub(crate) struct GatewayArg {
    /// The gateway's base URL, e.g. `https://mcp.example.com` [default: $MCPCTL_GATEWAY_URL].
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
}

/// Arguments of `gateway sign-out`.
#[derive(Debug, Args)]
pub(crate) struct SignOutArgs {
    /// The server to sign out of (its name in the gateway's configuration).
    #[arg(long, value_name = "SERVER")]
    pub(crate) server: String,
    #[command(flatten)]
    pub(crate) gateway: GatewayArg,
    /// A file holding your access token for the gateway [default: $MCPCTL_GATEWAY_TOKEN].
    #[arg(long, value_name = "FILE")]
    pub(crate) token_file: Option<PathBuf>,
}

/// Arguments of `gateway revoke`.
#[derive(Debug, Args)]
pub(crate) struct RevokeArgs {
    /// The caller whose credentials go, as the gateway names it (`sub:<subject>`).
    #[arg(long, value_name = "CALLER")]
    pub(crate) caller: String,
    #[command(flatten)]
    pub(crate) gateway: GatewayArg,
}

/// Runs a `gateway` subcommand.
pub(crate) async fn run(command: &GatewayCommand) -> Result<u8, CliError> {
    match command {
        GatewayCommand::SignOut(args) => sign_out(args).await,
        GatewayCommand::Revoke(args) => revoke(args).await,
    }
}

async fn sign_out(args: &SignOutArgs) -> Result<u8, CliError> {
    let base = base_url(&args.gateway)?;
    let token = match &args.token_file {
        Some(path) => std::fs::read_to_string(path)
            .map(|t| t.trim().to_owned())
            .map_err(|e| CliError::usage(format!("cannot read --token-file {}: {e}", path.display())))?,
        None => env_token(TOKEN_VAR).ok_or_else(|| {
            CliError::usage("no access token for the gateway").with_hint(format!(
                "pass --token-file FILE or set ${TOKEN_VAR} to the token your MCP client sends the gateway"
            ))
        })?,
    };
    let server = path_segment(&args.server);
    let url = format!("{base}/connect/servers/{server}");
    let answer = delete(&url, &token).await?;
    if answer.get("removed").and_then(serde_json::Value::as_bool) == Some(true) {
        println!("signed out of {}", args.server);
    } else {
        println!("you were not signed in to {}", args.server);
    }
    Ok(0)
}

async fn revoke(args: &RevokeArgs) -> Result<u8, CliError> {
    let base = base_url(&args.gateway)?;
    let token = env_token(ADMIN_TOKEN_VAR).ok_or_else(|| {
        CliError::usage("no admin token").with_hint(format!(
            "set ${ADMIN_TOKEN_VAR} to the admin token the gateway was started with"
        ))
    })?;
    let url = format!("{base}/connect/callers/{}", path_segment(&args.caller));
    let answer = delete(&url, &token).await?;
    let removed = answer
        .get("removed")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    println!("removed {removed} credential(s) of {}", args.caller);
    Ok(0)
}

/// The token in the variable `name`, without the spaces and newline a paste or a file
/// leaves around it; `None` when unset or blank.
fn env_token(name: &str) -> Option<String> {
    let value = std::env::var(name).ok()?;
    let token = value.trim();
    (!token.is_empty()).then(|| token.to_owned())
}

/// `--url`, else `$MCPCTL_GATEWAY_URL`, without a trailing `/`.
fn base_url(arg: &GatewayArg) -> Result<String, CliError> {
    let url = match &arg.url {
        Some(url) => url.clone(),
        None => std::env::var(URL_VAR).map_err(|_| {
            CliError::usage("which gateway?").with_hint(format!(
                "pass --url https://mcp.example.com (the gateway's base URL) or set ${URL_VAR}"
            ))
        })?,
    };
    let parsed = url::Url::parse(&url)
        .map_err(|e| CliError::usage(format!("--url `{url}` is not a URL: {e}")))?;
    if !mcp_auth::may_carry_credentials(parsed.scheme(), parsed.host_str()) {
        return Err(CliError::usage(format!(
            "--url `{url}` would send your token unencrypted: use https://, or http:// on this machine"
        )));
    }
    Ok(url.trim_end_matches('/').to_owned())
}

/// `text` percent-encoded as one path segment.
fn path_segment(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// `DELETE url` with the bearer `token`, for the JSON answer; the gateway's text on
/// failure.
async fn delete(url: &str, token: &str) -> Result<serde_json::Value, CliError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| CliError::failure(format!("cannot set up the HTTP client: {e}")))?;
    let response = client
        .delete(url)
        .bearer_auth(token)
        .send()
        .await
        .map_err(|e| CliError::failure(format!("the gateway at {url} cannot be reached: {e}")))?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(refusal(status.as_u16(), &text));
    }
    serde_json::from_str(&text).map_err(|_| {
        CliError::failure(format!(
            "the gateway's answer is no JSON: {}",
            terminal_safe(text.trim())
        ))
    })
}

/// The error for a gateway that answered `status` with `text`: its text with control
/// characters and terminal escapes shown escaped (it is another program's text).
fn refusal(status: u16, text: &str) -> CliError {
    CliError::failure(format!(
        "the gateway answered HTTP {status}: {}",
        terminal_safe(text.trim())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_shows_the_gateways_escapes_escaped() {
        let error = refusal(401, "\u{1b}]0;owned\u{7}no \u{1b}[2Jadmin token\n");
        assert_eq!(
            error.message(),
            "the gateway answered HTTP 401: \\e]0;owned\\x07no \\e[2Jadmin token"
        );
    }
}

//! Reading `upstream_identity` and `[mcp_servers.<name>.token_exchange]` of an HTTP server
//! (see [`UpstreamIdentity`]).

use toml::de::DeTable;

use crate::diagnostic::ConfigErrorKind;
use crate::formats::collect::{env_var_name_ok, url_problem};
use crate::formats::toml_values::{Reader, Value};
use crate::model::upstream_identity::{TokenExchangeConfig, UpstreamIdentity};

/// The keys of `[mcp_servers.<name>.token_exchange]`.
const EXCHANGE_KEYS: &[&str] = &[
    "token_endpoint",
    "audience",
    "resource",
    "scope",
    "client_id",
    "client_secret_env",
];

/// The identity an HTTP server's table asks for; `Gateway` (with the errors recorded)
/// when it is unusable, so nothing falls back to a caller's credentials by mistake.
pub(crate) fn parse_upstream_identity(
    r: &mut Reader<'_, '_>,
    table: &DeTable<'_>,
) -> UpstreamIdentity {
    let mode = table
        .get("upstream_identity")
        .and_then(|v| Some((r.string("upstream_identity", v)?, v.span().start)));
    let exchange = table.get("token_exchange");
    let name = r.scope_name();
    match mode.as_ref().map(|(m, at)| (m.as_str(), *at)) {
        None | Some(("gateway" | "caller", _)) => {
            if let Some(value) = exchange {
                r.error(
                    "token_exchange",
                    value.span().start,
                    ConfigErrorKind::InvalidValue,
                    "a `token_exchange` table is only read with `upstream_identity = \"exchange\"`",
                    Some(format!(
                        "set `upstream_identity = \"exchange\"` in `[mcp_servers.{name}]`, or \
                         remove `[mcp_servers.{name}.token_exchange]`"
                    )),
                );
            }
            if mode.as_ref().is_some_and(|(m, _)| m == "caller") {
                UpstreamIdentity::Caller
            } else {
                UpstreamIdentity::Gateway
            }
        }
        Some(("exchange", at)) => {
            let Some(value) = exchange else {
                r.error(
                    "upstream_identity",
                    at,
                    ConfigErrorKind::MissingField,
                    "`upstream_identity = \"exchange\"` needs a `token_exchange` table",
                    Some(format!(
                        "add `[mcp_servers.{name}.token_exchange]` with `token_endpoint` and \
                         `audience` or `resource`"
                    )),
                );
                return UpstreamIdentity::Gateway;
            };
            parse_token_exchange(r, value).map_or(UpstreamIdentity::Gateway, |exchange| {
                UpstreamIdentity::Exchange(exchange)
            })
        }
        Some((other, at)) => {
            r.error(
                "upstream_identity",
                at,
                ConfigErrorKind::InvalidValue,
                format!("unknown upstream identity `{other}`"),
                Some("use one of `gateway` (the default), `caller`, `exchange`".to_owned()),
            );
            UpstreamIdentity::Gateway
        }
    }
}

/// `[mcp_servers.<name>.token_exchange]`; `None` when unusable (the errors are recorded).
fn parse_token_exchange(r: &mut Reader<'_, '_>, value: &Value<'_>) -> Option<TokenExchangeConfig> {
    let table = r.table("token_exchange", value)?;
    // An empty endpoint stands for "not written" until the whole table is read.
    let mut exchange = TokenExchangeConfig::new(String::new());
    let mut ok = true;
    for (key, value) in table {
        let name = key.get_ref().as_ref();
        let field = format!("token_exchange.{name}");
        let read = match name {
            "token_endpoint" => {
                let url = r.non_empty_string(&field, value);
                let problem = url.as_deref().and_then(endpoint_problem);
                exchange.token_endpoint = url.clone().unwrap_or_default();
                url_ok(r, &field, value, url.as_deref(), problem, ENDPOINT_HINT)
            }
            "audience" => {
                exchange.audience = r.non_empty_string(&field, value);
                true
            }
            "resource" => {
                exchange.resource = r.non_empty_string(&field, value);
                let url = exchange.resource.as_deref();
                let hint = "write the server's URL, e.g. `https://tickets.example.com/mcp`";
                url_ok(r, &field, value, url, url.and_then(url_problem), hint)
            }
            "scope" => {
                exchange.scope = r.non_empty_string(&field, value);
                true
            }
            "client_id" => {
                exchange.client_id = r.non_empty_string(&field, value);
                true
            }
            "client_secret_env" => {
                exchange.client_secret_env = r.non_empty_string(&field, value);
                secret_env_ok(r, &field, value, exchange.client_secret_env.as_deref())
            }
            "client_secret" => {
                r.error(
                    &field,
                    value.span().start,
                    ConfigErrorKind::InlineSecret,
                    "inline secrets are not accepted",
                    Some(
                        "put the secret in an environment variable and set \
                         `client_secret_env = \"NAME\"`"
                            .to_owned(),
                    ),
                );
                false
            }
            // Refused, not just warned about as elsewhere: a misspelled key here changes
            // what a caller's token is exchanged for.
            _ => {
                r.error(
                    &field,
                    key.span().start,
                    ConfigErrorKind::InvalidValue,
                    format!("unknown key `{name}` in `token_exchange`"),
                    Some(format!("use only {}", EXCHANGE_KEYS.join(", "))),
                );
                false
            }
        };
        ok &= read;
    }
    (whole_table_ok(r, value.span().start, &exchange) && ok).then_some(exchange)
}

/// How to write `token_endpoint`.
const ENDPOINT_HINT: &str = "use the authorization server's `https://` token endpoint (plain \
                             `http://` only to 127.0.0.1, ::1 or localhost)";

/// Records `problem` of the URL-valued `field`, if any; false when there is one.
fn url_ok(
    r: &mut Reader<'_, '_>,
    field: &str,
    value: &Value<'_>,
    url: Option<&str>,
    problem: Option<&str>,
    hint: &str,
) -> bool {
    let (Some(url), Some(problem)) = (url, problem) else {
        return true;
    };
    r.error(
        field,
        value.span().start,
        ConfigErrorKind::InvalidUrl,
        format!("`{url}` {problem}"),
        Some(hint.to_owned()),
    );
    false
}

/// `client_secret_env` names a variable; false (with an error) when it cannot.
fn secret_env_ok(
    r: &mut Reader<'_, '_>,
    field: &str,
    value: &Value<'_>,
    var: Option<&str>,
) -> bool {
    match var {
        Some(var) if !env_var_name_ok(var) => {
            r.error(
                field,
                value.span().start,
                ConfigErrorKind::InvalidValue,
                format!("`{var}` is not an environment variable name"),
                Some("name the variable that holds the gateway's client secret".to_owned()),
            );
            false
        }
        _ => true,
    }
}

/// The checks that need the whole table: an endpoint, a target, a client for a secret.
fn whole_table_ok(r: &mut Reader<'_, '_>, at: usize, exchange: &TokenExchangeConfig) -> bool {
    let (field, message, hint) = if exchange.token_endpoint.is_empty() {
        (
            "token_exchange.token_endpoint",
            "`token_exchange` has no `token_endpoint`",
            "set `token_endpoint` to the authorization server's token endpoint, e.g. \
             `https://idp.example.com/oauth2/token`",
        )
    } else if exchange.audience.is_none() && exchange.resource.is_none() {
        (
            "token_exchange",
            "`token_exchange` names neither an `audience` nor a `resource`",
            "set `audience` (the server's name at the authorization server) and/or \
             `resource` (its URL)",
        )
    } else if exchange.client_secret_env.is_some() && exchange.client_id.is_none() {
        (
            "token_exchange.client_secret_env",
            "`client_secret_env` without `client_id`",
            "set `client_id` to the gateway's client at the token endpoint",
        )
    } else {
        return true;
    };
    r.error(
        field,
        at,
        ConfigErrorKind::MissingField,
        message,
        Some(hint.to_owned()),
    );
    false
}

/// Why `url` cannot be a token endpoint a caller's token is sent to: not an absolute URL,
/// or plain `http` to a host other than loopback.
fn endpoint_problem(url: &str) -> Option<&'static str> {
    if let Some(problem) = url_problem(url) {
        return Some(problem);
    }
    let lower = url.to_ascii_lowercase();
    let rest = lower.strip_prefix("http://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    (!loopback).then_some("sends callers' tokens over plain http to a host that is not loopback")
}

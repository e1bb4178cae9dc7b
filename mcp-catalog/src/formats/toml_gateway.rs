//! The `[gateway]` table of the TOML format (see `model/gateway.rs` for its shape).

use toml::de::DeValue;

use crate::diagnostic::ConfigErrorKind;
use crate::formats::collect::{env_var_name_ok, url_problem};
use crate::formats::toml_values::{Reader, Value, type_name};
use crate::model::gateway::{
    GatewayConfig, GatewayGrant, GatewayLimits, GatewayOAuth, Introspection, TokenValidation,
};

const GATEWAY_KEYS: &[&str] = &["public_url", "oauth", "limits", "grants"];
const OAUTH_KEYS: &[&str] = &[
    "issuer",
    "resource",
    "scopes",
    "groups_claim",
    "algorithms",
    "validation",
    "introspection_endpoint",
    "client_id",
    "client_secret_env",
];
const LIMIT_KEYS: &[&str] = &["clients_per_principal", "calls_per_principal"];
const GRANT_KEYS: &[&str] = &[
    "subjects",
    "groups",
    "scopes",
    "servers",
    "tools",
    "accept_drift",
];

/// The JWS algorithms a gateway may accept: asymmetric ones only (a shared-secret `HS*`
/// key would be the public key, and `none` is no signature).
pub(crate) const JWT_ALGORITHMS: &[&str] = &[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];

/// Reads `[gateway]`; `None` when it is unusable (the errors are recorded).
pub(crate) fn parse_gateway(r: &mut Reader<'_, '_>, value: &Value<'_>) -> Option<GatewayConfig> {
    let table = r.table("gateway", value)?;
    let mut gateway = GatewayConfig::new();
    for (key, value) in table {
        match key.get_ref().as_ref() {
            "public_url" => gateway.public_url = url(r, "gateway.public_url", value),
            "oauth" => gateway.oauth = parse_oauth(r, value),
            "limits" => gateway.limits = parse_limits(r, value),
            "grants" => gateway.grants = parse_grants(r, value),
            _ => r.unknown_key(key, GATEWAY_KEYS),
        }
    }
    Some(gateway)
}

fn parse_oauth(r: &mut Reader<'_, '_>, value: &Value<'_>) -> Option<GatewayOAuth> {
    let table = r.table("gateway.oauth", value)?;
    let mut issuer = None;
    let mut oauth = GatewayOAuth::new(String::new());
    let mut mode = None;
    let mut endpoint = None;
    let mut client_id = None;
    let mut secret_env = None;
    for (key, value) in table {
        let name = key.get_ref().as_ref();
        let field = format!("gateway.oauth.{name}");
        match name {
            "issuer" => issuer = url(r, &field, value),
            "resource" => oauth.resource = url(r, &field, value),
            "scopes" => oauth.scopes = r.string_list(&field, value).unwrap_or_default(),
            "groups_claim" => oauth.groups_claim = r.non_empty_string(&field, value),
            "algorithms" => oauth.algorithms = algorithms(r, &field, value),
            "validation" => mode = r.non_empty_string(&field, value).map(|m| (m, value)),
            "introspection_endpoint" => endpoint = url(r, &field, value).map(|u| (u, value)),
            "client_id" => client_id = r.non_empty_string(&field, value).map(|c| (c, value)),
            "client_secret_env" => {
                secret_env = r.non_empty_string(&field, value).map(|s| (s, value));
                if let Some((name, _)) = &secret_env
                    && !env_var_name_ok(name)
                {
                    r.error(
                        &field,
                        value.span().start,
                        ConfigErrorKind::InvalidValue,
                        format!("`{name}` is not an environment variable name"),
                        Some("name the variable that holds the gateway's client secret".to_owned()),
                    );
                }
            }
            _ => r.unknown_key(key, OAUTH_KEYS),
        }
    }
    let introspection_keys = [
        ("introspection_endpoint", endpoint.as_ref().map(|e| e.1)),
        ("client_id", client_id.as_ref().map(|c| c.1)),
        ("client_secret_env", secret_env.as_ref().map(|s| s.1)),
    ];
    match mode.as_ref().map(|(m, v)| (m.as_str(), *v)) {
        None | Some(("jwt", _)) => {
            for (name, written) in introspection_keys {
                if let Some(value) = written {
                    r.error(
                        &format!("gateway.oauth.{name}"),
                        value.span().start,
                        ConfigErrorKind::InvalidValue,
                        format!("`{name}` is for `validation = \"introspection\"` only"),
                        Some("remove it, or set `validation = \"introspection\"`".to_owned()),
                    );
                }
            }
            oauth.validation = TokenValidation::Jwt;
        }
        Some(("introspection", _)) => {
            let (Some((client_id, _)), Some((secret_env, _))) = (client_id, secret_env) else {
                r.error(
                    "gateway.oauth.validation",
                    value.span().start,
                    ConfigErrorKind::MissingField,
                    "token introspection needs the gateway's `client_id` and `client_secret_env`",
                    Some("set both: the gateway authenticates to the introspection endpoint as that client".to_owned()),
                );
                return None;
            };
            let mut introspection = Introspection::new(client_id, secret_env);
            introspection.endpoint = endpoint.map(|(e, _)| e);
            oauth.validation = TokenValidation::Introspection(introspection);
        }
        Some((other, value)) => {
            r.error(
                "gateway.oauth.validation",
                value.span().start,
                ConfigErrorKind::InvalidValue,
                format!("unknown token validation `{other}`"),
                Some("use one of `jwt`, `introspection`".to_owned()),
            );
            return None;
        }
    }
    let Some(issuer) = issuer else {
        r.error(
            "gateway.oauth.issuer",
            value.span().start,
            ConfigErrorKind::MissingField,
            "`[gateway.oauth]` has no `issuer`",
            Some(
                "set `issuer` to the authorization server's issuer URL (its metadata's `issuer`)"
                    .to_owned(),
            ),
        );
        return None;
    };
    oauth.issuer = issuer;
    Some(oauth)
}

/// A URL-valued field.
fn url(r: &mut Reader<'_, '_>, field: &str, value: &Value<'_>) -> Option<String> {
    let text = r.non_empty_string(field, value)?;
    if let Some(problem) = url_problem(&text) {
        r.error(
            field,
            value.span().start,
            ConfigErrorKind::InvalidUrl,
            format!("`{text}` {problem}"),
            Some("write the whole URL, e.g. `https://idp.example.com`".to_owned()),
        );
        return None;
    }
    Some(text)
}

fn algorithms(r: &mut Reader<'_, '_>, field: &str, value: &Value<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for name in r.string_list(field, value).unwrap_or_default() {
        if JWT_ALGORITHMS.contains(&name.as_str()) {
            out.push(name);
        } else {
            r.error(
                field,
                value.span().start,
                ConfigErrorKind::InvalidValue,
                format!("`{name}` is not an accepted token signature algorithm"),
                Some(format!(
                    "use asymmetric ones: {} (never `none` or a shared-secret HS*)",
                    JWT_ALGORITHMS.join(", ")
                )),
            );
        }
    }
    out
}

fn parse_limits(r: &mut Reader<'_, '_>, value: &Value<'_>) -> GatewayLimits {
    let mut limits = GatewayLimits::new();
    let Some(table) = r.table("gateway.limits", value) else {
        return limits;
    };
    for (key, value) in table {
        let name = key.get_ref().as_ref();
        let field = format!("gateway.limits.{name}");
        match name {
            "clients_per_principal" => limits.clients_per_principal = count(r, &field, value),
            "calls_per_principal" => limits.calls_per_principal = count(r, &field, value),
            _ => r.unknown_key(key, LIMIT_KEYS),
        }
    }
    limits
}

/// A whole number of at least 1.
fn count(r: &mut Reader<'_, '_>, field: &str, value: &Value<'_>) -> Option<usize> {
    let Some(n) = value.get_ref().as_integer() else {
        r.error(
            field,
            value.span().start,
            ConfigErrorKind::WrongType,
            format!("expected a whole number, found {}", type_name(value)),
            Some(format!("write it as `{field} = 8`")),
        );
        return None;
    };
    let n = i64::from_str_radix(n.as_str(), n.radix())
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n > 0);
    if n.is_none() {
        r.error(
            field,
            value.span().start,
            ConfigErrorKind::InvalidValue,
            "must be at least 1",
            Some("remove it for the default".to_owned()),
        );
    }
    n
}

fn parse_grants(r: &mut Reader<'_, '_>, value: &Value<'_>) -> Vec<GatewayGrant> {
    let mut out = Vec::new();
    let Some(items) = value.get_ref().as_array() else {
        r.error(
            "gateway.grants",
            value.span().start,
            ConfigErrorKind::WrongType,
            format!("expected an array of tables, found {}", type_name(value)),
            Some("write each grant as a `[[gateway.grants]]` table".to_owned()),
        );
        return out;
    };
    for (index, item) in items.iter().enumerate() {
        let number = index + 1;
        let Some(DeValue::Table(table)) = Some(item.get_ref()) else {
            r.error(
                "gateway.grants",
                item.span().start,
                ConfigErrorKind::WrongType,
                format!("grant #{number} is {}, not a table", type_name(item)),
                Some("write each grant as a `[[gateway.grants]]` table".to_owned()),
            );
            continue;
        };
        let mut grant = GatewayGrant::default();
        let mut servers = None;
        for (key, value) in table {
            let name = key.get_ref().as_ref();
            let field = format!("gateway.grants[{index}].{name}");
            if !GRANT_KEYS.contains(&name) {
                r.unknown_key(key, GRANT_KEYS);
                continue;
            }
            if name == "accept_drift" {
                grant.accept_drift = r.bool(&field, value).unwrap_or(false);
                continue;
            }
            let list = r.string_list(&field, value);
            match name {
                "subjects" => grant.subjects = list.unwrap_or_default(),
                "groups" => grant.groups = list.unwrap_or_default(),
                "scopes" => grant.scopes = list.unwrap_or_default(),
                "servers" => servers = list,
                _ => grant.tools = list,
            }
        }
        let Some(servers) = servers else {
            r.error(
                &format!("gateway.grants[{index}].servers"),
                item.span().start,
                ConfigErrorKind::MissingField,
                format!("grant #{number} names no `servers`"),
                Some("add `servers = [\"name\", ...]` (`[\"*\"]` for every server)".to_owned()),
            );
            continue;
        };
        grant.servers = servers;
        if grant.subjects.is_empty() && grant.groups.is_empty() && grant.scopes.is_empty() {
            r.error(
                &format!("gateway.grants[{index}]"),
                item.span().start,
                ConfigErrorKind::MissingField,
                format!("grant #{number} is for nobody"),
                Some(
                    "add `subjects`, `groups` or `scopes` (`subjects = [\"*\"]` for everyone with a valid token)"
                        .to_owned(),
                ),
            );
            continue;
        }
        out.push(grant);
    }
    out
}

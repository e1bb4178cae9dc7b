//! Reading `[mcp_servers.<name>.workload_identity]` (see
//! [`WorkloadIdentityConfig`]).

use crate::diagnostic::ConfigErrorKind;
use crate::formats::toml_values::{Reader, Value};
use crate::model::workload::{WorkloadIdentityConfig, WorkloadTokenLocation};

const KEYS: &[&str] = &["token_file", "token_env_var", "client_id"];

/// Parses the `workload_identity` table: exactly one of `token_file` / `token_env_var`.
pub(crate) fn parse_workload_identity(
    r: &mut Reader<'_, '_>,
    value: &Value<'_>,
) -> Option<WorkloadIdentityConfig> {
    let table = r.table("workload_identity", value)?;
    for (key, _) in table {
        if !KEYS.contains(&key.get_ref().as_ref()) {
            r.unknown_key(key, KEYS);
        }
    }
    let at = value.span().start;
    let file = table
        .get("token_file")
        .and_then(|v| r.string("workload_identity.token_file", v));
    let var = table
        .get("token_env_var")
        .and_then(|v| r.string("workload_identity.token_env_var", v));
    let client_id = table
        .get("client_id")
        .and_then(|v| r.string("workload_identity.client_id", v));
    let token = match (file, var) {
        (Some(file), None) => WorkloadTokenLocation::File(file),
        (None, Some(var)) => WorkloadTokenLocation::EnvVar(var),
        (file, _) => {
            r.error(
                "workload_identity",
                at,
                ConfigErrorKind::InvalidValue,
                if file.is_some() {
                    "`token_file` and `token_env_var` exclude each other"
                } else {
                    "`workload_identity` needs `token_file` or `token_env_var`"
                },
                Some("name exactly one place to read the platform identity token from".to_owned()),
            );
            return None;
        }
    };
    let mut config = WorkloadIdentityConfig::new(token);
    config.client_id = client_id;
    Some(config)
}

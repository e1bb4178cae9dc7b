//! The settings a server inherits from the catalog ([`ServerDefaults`]), read from a
//! server's table or from the top level of a configuration: one reader for both.

use crate::formats::toml_values::{Reader, Value};
use crate::model::defaults::{KEYS, ServerDefaults};

/// The name in a server's table of the catalog-wide key `field` (`mcp_startup` ->
/// `startup`), `None` when `field` is no inheritable setting.
pub(crate) fn server_key_of(field: &str) -> Option<&'static str> {
    KEYS.iter()
        .find(|(catalog, _)| *catalog == field)
        .map(|(_, server)| *server)
}

/// Reads `value` into `defaults` when `key` (its name in a server's table) is an
/// inheritable setting; `field` is the name as written, for messages. False otherwise.
pub(crate) fn read_default(
    r: &mut Reader<'_, '_>,
    key: &str,
    field: &str,
    value: &Value<'_>,
    defaults: &mut ServerDefaults,
) -> bool {
    match key {
        "startup" => defaults.startup_policy = r.startup_policy(field, value),
        "protocol" => defaults.protocol = r.protocol(field, value),
        "tool_drift" => defaults.tool_drift = r.tool_drift(field, value),
        "log_level" => defaults.log_level = r.log_level(field, value),
        _ => return false,
    }
    true
}

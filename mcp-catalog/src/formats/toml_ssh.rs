//! Reading `[environments.<id>] ssh = { … }` (see [`crate::SshConfig`]).

use std::path::PathBuf;

use crate::diagnostic::ConfigErrorKind;
use crate::formats::toml_values::{Reader, Value};
use crate::model::ssh::SshConfig;

/// The keys of an `ssh` table.
pub(crate) const SSH_KEYS: &[&str] = &[
    "host",
    "port",
    "user",
    "identity_file",
    "known_hosts",
    "options",
];

/// The `ssh` table of an environment; `None` (with every problem recorded, each naming
/// the environment and the field `ssh.<key>`) when it is unusable.
pub(crate) fn parse_ssh(r: &mut Reader<'_, '_>, value: &Value<'_>) -> Option<SshConfig> {
    let table = r.table("ssh", value)?;
    let mut host = None;
    let mut ssh = SshConfig::new(String::new());
    let mut ok = true;
    for (key, item) in table {
        let name = key.get_ref().as_ref();
        let field = format!("ssh.{name}");
        match name {
            "host" => {
                host = r.non_empty_string(&field, item);
                ok &= host.is_some();
            }
            "port" => {
                ssh.port = port(r, &field, item);
                ok &= ssh.port.is_some();
            }
            "user" => {
                ssh.user = r.non_empty_string(&field, item);
                ok &= ssh.user.is_some();
            }
            "identity_file" => {
                ssh.identity_file = r.non_empty_string(&field, item).map(PathBuf::from);
                ok &= ssh.identity_file.is_some();
            }
            "known_hosts" => {
                ssh.known_hosts = r.non_empty_string(&field, item).map(PathBuf::from);
                ok &= ssh.known_hosts.is_some();
            }
            "options" => match r.string_list(&field, item) {
                Some(options) => ssh.options = options,
                None => ok = false,
            },
            _ => r.unknown_key(key, SSH_KEYS),
        }
    }
    if let Some(host) = &host
        && (host.starts_with('-') || host.contains(char::is_whitespace) || host.contains('@'))
    {
        r.error(
            "ssh.host",
            value.span().start,
            ConfigErrorKind::InvalidValue,
            format!("`ssh.host` `{host}` is not a host name"),
            Some("write the host alone (`host = \"devbox\"`) and the login in `user`".to_owned()),
        );
        ok = false;
    }
    if host.is_none() && ok {
        r.error(
            "ssh.host",
            value.span().start,
            ConfigErrorKind::MissingField,
            "`ssh` has no `host`",
            Some(
                "add `host = \"devbox\"` (a name, an address or a ~/.ssh/config alias)".to_owned(),
            ),
        );
        return None;
    }
    ssh.host = host?;
    ok.then_some(ssh)
}

fn port(r: &mut Reader<'_, '_>, field: &str, value: &Value<'_>) -> Option<u16> {
    let port = value
        .get_ref()
        .as_integer()
        .and_then(|i| i64::from_str_radix(i.as_str(), i.radix()).ok())
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0);
    if port.is_none() {
        r.error(
            field,
            value.span().start,
            ConfigErrorKind::InvalidValue,
            "`ssh.port` must be a number between 1 and 65535",
            Some("write it as `port = 22`, or remove it for ssh's default".to_owned()),
        );
    }
    port
}

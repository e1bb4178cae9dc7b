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
                if let Some(user) = &ssh.user
                    && !is_login_name(user)
                {
                    r.error(
                        &field,
                        item.span().start,
                        ConfigErrorKind::InvalidValue,
                        format!("`ssh.user` `{user}` is not a login name"),
                        Some("write the login alone (`user = \"me\"`): no leading `-`, no `@`, no spaces".to_owned()),
                    );
                    ok = false;
                }
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
                Some(options) => {
                    if let Some((word, why)) = refused_ssh_option(&options) {
                        r.error(
                            &field,
                            item.span().start,
                            ConfigErrorKind::InvalidValue,
                            format!("`ssh.options` `{word}` {why}"),
                            Some(OPTIONS_HINT.to_owned()),
                        );
                        ok = false;
                    }
                    ssh.options = options;
                }
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

/// Whether `user` can only be read as a login name: a leading `-` would be another option
/// of the local ssh, `@` another destination, whitespace or control characters are no
/// login's.
fn is_login_name(user: &str) -> bool {
    !user.starts_with('-')
        && !user.contains('@')
        && !user.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// What to do about a refused `ssh.options` word.
const OPTIONS_HINT: &str = "remove it: allowed are `-o KEY=VALUE` for ConnectTimeout, ConnectionAttempts, ServerAliveInterval, ServerAliveCountMax, TCPKeepAlive, Compression, AddressFamily, IPQoS, RekeyLimit, LogLevel, CheckHostIP, HostKeyAlias, IdentitiesOnly, PreferredAuthentications, PubkeyAuthentication and the algorithm lists, the flags -4 -6 -C -q -v, and `-F none`; set the key with `identity_file`, the known hosts with `known_hosts`, and anything else (a jump host, a proxy) in your own ~/.ssh/config under a `Host` alias named by `host`";

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

/// The `-o` options an ssh environment may set: none of them runs a command, reads or
/// writes a file, opens a forward or changes where ssh connects (lower case; ssh's keys are
/// case-insensitive). `StrictHostKeyChecking` and `BatchMode` only as `yes`, which ssh is
/// always given first anyway.
const ALLOWED_SSH_OPTIONS: &[&str] = &[
    "addressfamily",
    "batchmode",
    "checkhostip",
    "ciphers",
    "compression",
    "connectionattempts",
    "connecttimeout",
    "fingerprinthash",
    "hostkeyalgorithms",
    "hostkeyalias",
    "identitiesonly",
    "ipqos",
    "kexalgorithms",
    "loglevel",
    "macs",
    "numberofpasswordprompts",
    "preferredauthentications",
    "pubkeyacceptedalgorithms",
    "pubkeyacceptedkeytypes",
    "pubkeyauthentication",
    "rekeylimit",
    "serveralivecountmax",
    "serveraliveinterval",
    "stricthostkeychecking",
    "tcpkeepalive",
];

/// The single-letter ssh flags an ssh environment may set, alone or together (`-4C`):
/// address family, compression, quiet and verbose.
const ALLOWED_SSH_FLAGS: &str = "46Cqv";

/// Why `-F FILE` is refused.
const READS_CONFIG: &str = "makes ssh read a configuration file whose content the trust review neither shows nor covers (`Match exec`, `ProxyCommand` there run local commands)";

/// The first refused word of `options` as written (with its value) and why, or `None`
/// when every word is allowed.
///
/// Allowed: `-o KEY=VALUE` (or `-oKEY=VALUE`, `-o "KEY VALUE"`) for a key of
/// [`ALLOWED_SSH_OPTIONS`], the flags of [`ALLOWED_SSH_FLAGS`], and `-F none` / `-F
/// /dev/null` (no configuration file at all). Everything else is refused: `-F FILE`
/// makes ssh read a file nobody reviewed (its `Match exec`, `ProxyCommand`,
/// `KnownHostsCommand`, `LocalCommand` run local commands), as do those options with
/// `-o`; `-J`, `-S`, `-i`, `-E`, `-I`, forwards and file options name files or hosts the
/// trust review does not cover; a plain word would become the destination.
pub(crate) fn refused_ssh_option(options: &[String]) -> Option<(String, &'static str)> {
    let mut words = options.iter();
    while let Some(word) = words.next() {
        let (shown, why) = match word.as_str() {
            "-o" | "-F" => {
                let Some(value) = words.next() else {
                    return Some((word.clone(), "needs a value after it"));
                };
                let why = if word == "-F" {
                    (!reads_no_config(value)).then_some(READS_CONFIG)
                } else {
                    refused_o(value)
                };
                (format!("{word} {value}"), why)
            }
            w if w.starts_with("-o") => (word.clone(), refused_o(&w[2..])),
            w if w.starts_with("-F") => (
                word.clone(),
                (!reads_no_config(&w[2..])).then_some(READS_CONFIG),
            ),
            w if w.len() > 1
                && w.starts_with('-')
                && w[1..].chars().all(|c| ALLOWED_SSH_FLAGS.contains(c)) =>
            {
                (word.clone(), None)
            }
            w if w.starts_with('-') => (
                word.clone(),
                Some(
                    "is not one of the flags allowed here (-4, -6, -C, -q, -v): flags such as -J, -S, -i, -E, -I, -L, -R, -D, -W, -A, -X or -P run commands, read or write files, forward, or reach other hosts",
                ),
            ),
            _ => (
                word.clone(),
                Some("is not an option: ssh would take it for the destination"),
            ),
        };
        if let Some(why) = why {
            return Some((shown, why));
        }
    }
    None
}

/// Whether `-F VALUE` reads no configuration file at all.
fn reads_no_config(value: &str) -> bool {
    value == "none" || value == "/dev/null"
}

/// Why `-o VALUE` is refused, or `None` when it is allowed.
fn refused_o(value: &str) -> Option<&'static str> {
    let value = value.trim_start();
    let end = value
        .find(|c: char| c == '=' || c.is_whitespace())
        .unwrap_or(value.len());
    let key = value[..end].to_ascii_lowercase();
    let setting = value[end..].trim_start().trim_start_matches('=').trim();
    if !ALLOWED_SSH_OPTIONS.contains(&key.as_str()) {
        return Some(
            "is not one of the `-o` options allowed here: options such as ProxyCommand, ProxyJump, LocalCommand, KnownHostsCommand, Match, Include, IdentityFile, UserKnownHostsFile, IdentityAgent or ControlPath run local commands, read files or reach other hosts",
        );
    }
    if matches!(key.as_str(), "stricthostkeychecking" | "batchmode")
        && !setting.eq_ignore_ascii_case("yes")
    {
        return Some("may only be `yes`: host keys are always checked and ssh never prompts");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(words: &[&str]) -> Option<String> {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        refused_ssh_option(&words).map(|(word, _)| word)
    }

    #[test]
    fn options_that_run_commands_or_read_files_are_refused() {
        for words in [
            &["-F", "ssh.cfg"][..],
            &["-Fssh.cfg"],
            &["-o", "ProxyCommand=sh -c id"],
            &["-oProxyCommand=id"],
            &["-o", "proxycommand id"],
            &["-o", "LocalCommand=id"],
            &["-o", "PermitLocalCommand=yes"],
            &["-o", "KnownHostsCommand=/bin/id"],
            &["-o", "Match exec id"],
            &["-o", "Include ssh.cfg"],
            &["-o", "IdentityAgent=/tmp/agent"],
            &["-o", "IdentityFile=k"],
            &["-o", "UserKnownHostsFile=k"],
            &["-o", "ProxyJump=evil"],
            &["-o", "ControlPath=/tmp/x"],
            &["-o", "StrictHostKeyChecking=no"],
            &["-o", "BatchMode=no"],
            &["-J", "jump"],
            &["-S", "/tmp/sock"],
            &["-i", "k"],
            &["-E", "log"],
            &["-L", "1:h:2"],
            &["-4A"],
            &["-o"],
            &["evil"],
        ] {
            assert!(refused(words).is_some(), "{words:?} was allowed");
        }
        assert_eq!(
            refused(&["-o", "ConnectTimeout=5", "-o", "ProxyCommand=id"]).as_deref(),
            Some("-o ProxyCommand=id")
        );
    }

    #[test]
    fn harmless_options_are_allowed() {
        for words in [
            &["-o", "ConnectTimeout=5"][..],
            &["-oServerAliveInterval=5", "-o", "serveralivecountmax 3"],
            &["-F", "none"],
            &["-F", "/dev/null"],
            &["-4C", "-q", "-v"],
            &["-o", "StrictHostKeyChecking=yes", "-o", "BatchMode yes"],
            &[],
        ] {
            assert_eq!(refused(words), None, "{words:?}");
        }
    }
}

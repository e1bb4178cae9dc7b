//! Why an ssh connection did not come up, from ssh's exit status (255 for its own
//! failures) and its stderr, in words that say what to do.

use mcp_catalog::SshConfig;

use crate::environments::ssh_master::MasterFailure;

/// The kinds of ssh startup failure a host can tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SshFailureKind {
    /// Connection refused, timed out, no route, unknown host name.
    Unreachable,
    /// The server refused every key (`Permission denied`).
    AuthRefused,
    /// The host key is not in known_hosts (never accepted silently).
    HostKeyUnknown,
    /// The host key differs from the one in known_hosts.
    HostKeyChanged,
    /// Anything else.
    Other,
}

pub(crate) fn classify(stderr: &str) -> SshFailureKind {
    let s = stderr.to_ascii_lowercase();
    if s.contains("remote host identification has changed")
        || s.contains("host key for") && s.contains("has changed")
    {
        SshFailureKind::HostKeyChanged
    } else if s.contains("host key verification failed")
        || s.contains("no ") && s.contains("host key is known")
    {
        SshFailureKind::HostKeyUnknown
    } else if s.contains("permission denied") {
        SshFailureKind::AuthRefused
    } else if s.contains("connection refused")
        || s.contains("timed out")
        || s.contains("no route to host")
        || s.contains("could not resolve hostname")
        || s.contains("network is unreachable")
        || s.contains("connection closed by")
    {
        SshFailureKind::Unreachable
    } else {
        SshFailureKind::Other
    }
}

/// The failure reason a host branches on.
pub(crate) fn reason(failure: &MasterFailure) -> crate::FailureReason {
    match classify(&failure.stderr) {
        SshFailureKind::Unreachable => crate::FailureReason::HostUnreachable,
        SshFailureKind::AuthRefused => crate::FailureReason::AuthRefused,
        SshFailureKind::HostKeyUnknown | SshFailureKind::HostKeyChanged => {
            crate::FailureReason::HostKeyRejected
        }
        SshFailureKind::Other => crate::FailureReason::Environment,
    }
}

/// The reason of the startup failure: what went wrong, for which target, what to do, and
/// ssh's last stderr line.
pub(crate) fn describe(ssh: &SshConfig, failure: &MasterFailure) -> String {
    let target = ssh.display_target();
    let last = failure
        .stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(no output)");
    let what = match classify(&failure.stderr) {
        SshFailureKind::Unreachable => format!(
            "host unreachable: ssh cannot connect to {target}; check `ssh.host` and `ssh.port` and that sshd runs there"
        ),
        SshFailureKind::AuthRefused => format!(
            "authentication refused by {target}; check `ssh.user` and `ssh.identity_file` (its public key must be in the remote authorized_keys)"
        ),
        SshFailureKind::HostKeyUnknown => format!(
            "the host key of {target} is not known; add it to `ssh.known_hosts` (or ~/.ssh/known_hosts) after checking it, e.g. with ssh-keyscan and its fingerprint"
        ),
        SshFailureKind::HostKeyChanged => format!(
            "the host key of {target} changed since it was recorded; if the change is expected, replace its line in known_hosts, otherwise do not connect"
        ),
        SshFailureKind::Other => match failure.status {
            Some(code) => format!("ssh to {target} exited with status {code}"),
            None => format!("ssh to {target} did not connect"),
        },
    };
    format!("{what} (ssh: {last})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_openssh_messages() {
        let cases = [
            (
                "ssh: connect to host 127.0.0.1 port 1: Connection refused",
                SshFailureKind::Unreachable,
            ),
            (
                "me@127.0.0.1: Permission denied (publickey).",
                SshFailureKind::AuthRefused,
            ),
            (
                "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\r\nHost key verification failed.",
                SshFailureKind::HostKeyUnknown,
            ),
            (
                "@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\nHost key verification failed.",
                SshFailureKind::HostKeyChanged,
            ),
            ("something else", SshFailureKind::Other),
        ];
        for (stderr, kind) in cases {
            assert_eq!(classify(stderr), kind, "{stderr}");
        }
    }
}

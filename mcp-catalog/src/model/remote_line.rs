//! The one translation from a server's command to the line an ssh environment's remote
//! login shell runs.
//!
//! ssh sends its remote command as one string, which the remote login shell splits
//! again. So the argv carries exactly one remote command word, built by [`remote_line`]:
//! every word of the server's command quoted for POSIX `sh` (single quotes, `'` written
//! `'\''`), so spaces, quotes, `$`, `;`, newlines and unicode arrive as written and nothing
//! in them is the remote shell's to read. The trust review shows that line, and the
//! launcher runs it. The server's variables are not on it (a command line is visible to
//! every local user through `ps`): the line says how many there are, and the launcher
//! writes them first on the channel's stdin ([`remote_stdin`]), where the supervisor reads
//! them before it passes the rest on to the server.

use std::collections::BTreeMap;
use std::path::Path;

use crate::model::config::EnvironmentConfig;

/// What runs on the remote side: the server's words, its folder there and its literal
/// variables (sent on stdin by [`remote_stdin`] and set with `env`, since ssh forwards no
/// variable by default).
#[derive(Clone, Copy, Debug)]
pub struct RemoteCommand<'a> {
    /// The program and its arguments.
    pub argv: &'a [String],
    /// The remote working directory, if any.
    pub cwd: Option<&'a Path>,
    /// Literal variables for the server.
    pub env: &'a BTreeMap<String, String>,
}

/// The remote line of a stdio server in an ssh `environment`: its words, its folder
/// (else the environment's), and how many variables (the environment's literal ones
/// overlaid by its own) [`server_remote_stdin`] sends first. The trust review shows it
/// and the launcher runs it: one home for both.
pub fn server_remote_line(
    environment: &EnvironmentConfig,
    argv: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
) -> String {
    remote_line(&RemoteCommand {
        argv,
        cwd: cwd.or(environment.cwd()),
        env: &merged_env(environment, env),
    })
}

/// What the launcher writes on the stdin of [`server_remote_line`]'s ssh before anything
/// else: the variables, the environment's overlaid by the server's (see [`remote_stdin`]).
pub fn server_remote_stdin(
    environment: &EnvironmentConfig,
    env: &BTreeMap<String, String>,
) -> String {
    remote_stdin(&merged_env(environment, env))
}

/// The environment's literal variables overlaid by the server's.
fn merged_env(
    environment: &EnvironmentConfig,
    env: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut merged = environment.env().clone();
    merged.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    merged
}

/// The variables as the supervisor reads them from stdin: per variable a line with the
/// number of lines of `NAME=VALUE`, then `NAME=VALUE` and a newline (so a value may hold
/// newlines, quotes, anything but NUL). Empty without variables.
pub fn remote_stdin(env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for (name, value) in env {
        let entry = format!("{name}={value}");
        let lines = entry.matches('\n').count() + 1;
        out.push_str(&format!("{lines}\n{entry}\n"));
    }
    out
}

/// Quote `word` for a POSIX shell: inside single quotes nothing is special, and a single
/// quote is written `'\''` (end the quote, an escaped quote, reopen).
pub fn quote_sh(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Every word quoted with [`quote_sh`], joined by spaces: a POSIX shell splits the line
/// back into exactly these words and expands nothing.
pub fn quote_words<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote_sh(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The remote supervisor: a POSIX `sh` script sent inside every remote line (nothing is
/// installed on the remote machine), run as `sh -c SCRIPT mcp-remote N PROGRAM ARGS…`.
///
/// It first reads `N` variables from stdin ([`remote_stdin`]'s format; the shell's `read`
/// takes one byte at a time from a pipe, so nothing after them is consumed) and runs the
/// server as `env NAME=VALUE… PROGRAM ARGS…`: the values never sit on a local command line.
///
/// It starts the server in a process group of its own (`setsid`, else `set -m` where the
/// shell allows job control without a terminal), with stdout and stderr straight on the
/// channel and stdin fed through `cat` from a FIFO in a private temporary folder, so that
/// it sees the channel's stdin close. Every ~200 ms it checks whether the server exited,
/// stdin closed, or its parent (the sshd session) is gone. Once stdin closed it gives the
/// server ~0.4 s to exit by itself; then (at once when the parent is gone) it sends
/// SIGTERM to the group, waits ~1 s, sends SIGKILL to the group, removes the folder and
/// exits with the server's status (127: the program was not found; 125: the supervisor
/// could not read its variables or make its folder; 143: the server was killed).
pub const REMOTE_SUPERVISOR: &str = concat!(
    r#"n=$1; shift; c=$#; [ "$n" -gt 0 ] && set -- "$@" env; "#,
    "nl='\n'; ",
    r#"while [ "$n" -gt 0 ]; do IFS= read -r l || exit 125; e=; i=0; "#,
    r#"while [ "$i" -lt "$l" ]; do IFS= read -r x || exit 125; [ "$i" -gt 0 ] && e=$e$nl; e=$e$x; i=$((i+1)); done; "#,
    r#"set -- "$@" "$e"; n=$((n-1)); done; "#,
    r#"while [ "$c" -gt 0 ]; do set -- "$@" "$1"; shift; c=$((c-1)); done; "#,
    r#"d=$(mktemp -d 2>/dev/null) || { d=/tmp/mcp-remote.$$; mkdir -m 700 "$d"; } || exit 125; "#,
    r#"mkfifo "$d/i" || { rm -rf "$d"; exit 125; }; "#,
    r#"p=$PPID; exec 4<&0 5>&1 </dev/null >/dev/null; "#,
    r#"r='f=$MCP_REMOTE_DIR; unset MCP_REMOTE_DIR; "$@" <"$f/i"; echo $? >"$f/rc"'; "#,
    r#"if command -v setsid >/dev/null 2>&1; then "#,
    r#"MCP_REMOTE_DIR=$d setsid sh -c "$r" mcp-remote "$@" >&5 4<&- 5>&- & "#,
    r#"else set -m 2>/dev/null; MCP_REMOTE_DIR=$d sh -c "$r" mcp-remote "$@" >&5 4<&- 5>&- & fi; "#,
    r#"s=$!; set +m 2>/dev/null; "#,
    r#"{ cat; : >"$d/eof"; } 2>/dev/null <&4 >"$d/i" 4<&- 5>&- & exec 4<&- 5>&-; "#,
    r#"alive() { kill -0 "$1" 2>/dev/null || [ -d "/proc/$1" ]; }; "#,
    r#"nap() { sleep 0.2 2>/dev/null || sleep 1; }; "#,
    r#"while [ ! -e "$d/rc" ] && [ ! -e "$d/eof" ] && alive "$p"; do nap; done; "#,
    r#"n=0; while [ -e "$d/eof" ] && [ ! -e "$d/rc" ] && alive "$p" && [ $n -lt 2 ]; do nap; n=$((n+1)); done; "#,
    r#"kill -s TERM -- "-$s" 2>/dev/null || kill -s TERM "$s" 2>/dev/null; "#,
    r#"n=0; while [ ! -e "$d/rc" ] && [ $n -lt 5 ]; do nap; n=$((n+1)); done; "#,
    r#"kill -s KILL -- "-$s" 2>/dev/null || kill -s KILL "$s" 2>/dev/null; "#,
    r#"exec 6<>"$d/i"; rc=$(cat "$d/rc" 2>/dev/null); rm -rf "$d"; exit "${rc:-143}""#,
);

/// The `$0` of the supervisor and of the server's shell (it names them in the remote
/// shell's messages, e.g. `mcp-remote: 1: notes-mcp: not found`).
pub const REMOTE_SUPERVISOR_NAME: &str = "mcp-remote";

/// The one line the remote login shell runs for `command`:
/// `[cd 'DIR' && ] exec sh -c 'SUPERVISOR' mcp-remote 'N' 'program' 'arg'…`, where `N` is
/// the number of variables [`remote_stdin`] writes first on stdin (see
/// [`REMOTE_SUPERVISOR`]). No value is on the line.
pub fn remote_line(command: &RemoteCommand<'_>) -> String {
    let mut words: Vec<String> = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        REMOTE_SUPERVISOR.to_owned(),
        REMOTE_SUPERVISOR_NAME.to_owned(),
        command.env.len().to_string(),
    ];
    words.extend(command.argv.iter().cloned());
    let mut line = String::new();
    if let Some(cwd) = command.cwd {
        line.push_str("cd ");
        line.push_str(&quote_sh(&cwd.to_string_lossy()));
        line.push_str(" && ");
    }
    line.push_str("exec ");
    line.push_str(&quote_words(&words));
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ssh::SshConfig;

    #[test]
    fn stdin_counts_the_lines_of_each_variable() {
        let env = BTreeMap::from([
            ("A".to_owned(), "1 2".to_owned()),
            ("B".to_owned(), "x\ny\n".to_owned()),
        ]);
        assert_eq!(remote_stdin(&env), "1\nA=1 2\n3\nB=x\ny\n\n");
        assert_eq!(remote_stdin(&BTreeMap::new()), "");
    }

    #[test]
    fn quotes_single_quotes_and_leaves_the_rest_literal() {
        assert_eq!(quote_sh("it's $HOME; `x`"), r"'it'\''s $HOME; `x`'");
        assert_eq!(quote_sh(""), "''");
    }

    #[test]
    fn argv_has_fixed_options_first_and_one_remote_word() {
        let ssh = SshConfig::new("127.0.0.1")
            .with_port(2222)
            .with_user("me")
            .with_identity_file("/k/id")
            .with_known_hosts("/k/known")
            .with_options(["-o", "ConnectTimeout=5"]);
        let env = BTreeMap::from([("A".to_owned(), "1 2".to_owned())]);
        let argv = ssh.argv(remote_line(&RemoteCommand {
            argv: &["srv".to_owned(), "a b".to_owned()],
            cwd: Some(Path::new("/w d")),
            env: &env,
        }));
        assert_eq!(
            argv,
            [
                "ssh",
                "-o",
                "StrictHostKeyChecking=yes",
                "-o",
                "BatchMode=yes",
                "-p",
                "2222",
                "-i",
                "/k/id",
                "-o",
                "UserKnownHostsFile=/k/known",
                "-o",
                "ConnectTimeout=5",
                "me@127.0.0.1",
                "--",
                &format!(
                    "cd '/w d' && exec 'sh' '-c' {} 'mcp-remote' '1' 'srv' 'a b'",
                    quote_sh(REMOTE_SUPERVISOR)
                ),
            ]
        );
    }
}
